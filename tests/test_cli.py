"""`coordkit list`, `coordkit models`, `coordkit run MODEL` with the model's declared parameters, and seeds."""

import subprocess
import sys
from dataclasses import replace

import pandas as pd
import pytest

from coordkit import engines, figures
from coordkit.cli import main
from coordkit.model import Model
from coordkit.parameters import Instance, Parameters, Real
from coordkit.rep.beer_game.model import BeerGame


def test_list_shows_every_figure_and_marks_those_with_llm_agents(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("rep-beer-fig1") and " LLM " in line for line in lines)
    assert any(line.startswith("delay-fig4") and " LLM " not in line for line in lines)


def test_models_lists_every_model_with_its_id(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "beer-game" in out and "coordkit.rep.beer_game.model" in out


def test_run_plays_a_model_with_parameters_from_the_command_line(tmp_path, capsys):
    assert main(["run", "beer-game", "--protocol", "a2a", "--stages", "3", "--seed", "5", "--out", str(tmp_path)]) == 0
    frame = pd.read_csv(tmp_path / "beer-game.csv", keep_default_na=False)
    expected = BeerGame(protocol="a2a", stages=3, rng=5).run()
    assert len(frame) == len(expected.frame()) and frame["order"].tolist() == expected.frame()["order"].tolist()
    assert f"total_cost               {expected.summary()['total_cost']}" in capsys.readouterr().out


def test_run_takes_a_students_policy_by_the_name_its_own_file_registers(tmp_path, capsys):
    rules = tmp_path / "rules.py"
    rules.write_text(
        "from coordkit import BeerGame, register_policy\n\n\n"
        "@register_policy(BeerGame, 'steady_four')\n"
        "def steady_four(view):\n"
        "    return 4\n"
    )
    out = str(tmp_path / "out")
    assert main(["run", "beer-game", "--policy", "steady_four", "--out", out]) == 2
    assert "--policies FILE adds the names a file registers" in capsys.readouterr().err
    assert main(["run", "beer-game", "--policy", "steady_four", "--policies", str(rules), "--out", out]) == 0
    frame = pd.read_csv(tmp_path / "out" / "beer-game.csv", keep_default_na=False)
    assert (frame.query("round > 0")["order"] == 4).all()
    assert main(["run", "beer-game", "--policies", str(tmp_path / "none.py"), "--out", out]) == 2
    assert "--policies" in (said := capsys.readouterr().err) and "no such file" in said


def test_run_help_lists_every_declared_parameter(capsys):
    try:
        main(["run", "beer-game", "--help"])
    except SystemExit as done:
        assert done.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps its help
    for name in BeerGame.parameters.names:
        option = f"--{name.replace('_', '-')}"
        if isinstance(BeerGame.parameters[name], Instance):  # objects (an LLM client, a synthesiser) come from Python
            assert option not in out, name
        else:
            assert option in out, name
    assert "an integer from 2 to 8" in out and "--llm" not in out


def test_run_help_shows_a_percent_sign_in_a_parameters_doc(capsys):
    class PercentProbe(Model):
        """A model whose description speaks in percent (100%)."""

        parameters = Parameters(Real("sparsity", 0.3, 0, 0.9, doc="the share of links deleted (the paper: 30%)"))

    try:
        main(["run", "percent-probe", "--help"])
    except SystemExit as done:
        assert done.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps its help
    assert "(the paper: 30%)" in out and "in percent (100%)" in out


def test_run_refuses_a_bad_value_naming_the_parameter_before_playing(tmp_path, capsys):
    assert main(["run", "beer-game", "--stages", "2.5", "--out", str(tmp_path)]) == 2
    assert "stages=2.5 is not an integer: stages takes an integer from 2 to 8" in capsys.readouterr().err
    for text, problem in [("abc", "'abc' is not a number"), ("nan", "nan is not an integer"), ("inf", "inf is not")]:
        assert main(["run", "beer-game", "--rounds", text, "--out", str(tmp_path)]) == 2
        assert f"rounds={problem}" in capsys.readouterr().err
    assert not (tmp_path / "beer-game.csv").exists()
    assert main(["run", "beer-gam"]) == 2
    assert "no model 'beer-gam'" in capsys.readouterr().err


def test_run_reads_a_negative_number_after_an_option_as_its_value(tmp_path, capsys):
    """argparse alone takes "-inf" and "-1e-3" for options ("expected one argument"); they reach the check."""

    class Shifted(Model):
        """A model that plays one step with the shift it is given."""

        parameters = Parameters(Real("shift", 0.0, -10, 10, doc="a shift, negative or not"))

        def step(self):
            self.running = False

        def frame(self):
            return pd.DataFrame({"step": range(self.steps + 1), "shift": self.shift})

        def summary(self):
            return {"shift": self.shift}

    assert main(["run", "shifted", "--shift", "-1e-3", "--out", str(tmp_path)]) == 0
    assert "shift                    -0.001" in capsys.readouterr().out
    for text, problem in [("-inf", "-inf is not a finite number"), ("-1e3", "-1000.0 is out of range")]:
        assert main(["run", "shifted", "--shift", text, "--out", str(tmp_path)]) == 2
        assert f"argument --shift: shift={problem}: shift takes a number in [-10, 10]" in capsys.readouterr().err


def test_run_plays_minus_zero_as_zero(tmp_path, capsys):
    """A spread of -0 is a spread of 0 (numpy alone says "scale < 0"): the same frame, byte for byte."""
    for spread in ("0", "-0"):
        assert main(["run", "movie-scheduling", "--price-sd", spread, "--out", str(tmp_path / spread)]) == 0
    zero, minus_zero = ((tmp_path / spread / "movie-scheduling.csv").read_bytes() for spread in ("0", "-0"))
    assert minus_zero == zero


@pytest.mark.parametrize("seed", ["-1", "1.5", "-inf", "three"])
def test_run_refuses_a_seed_that_is_not_one_naming_the_option(capsys, seed):
    with pytest.raises(SystemExit) as done:
        main(["run", "beer-game", "--seed", seed])
    assert done.value.code == 2
    assert f"argument --seed: {seed} is not a seed: give a whole number from 0" in capsys.readouterr().err


@pytest.fixture
def no_work(monkeypatch):
    """Make every figure's computation fail loudly: a command refused before any work never reaches it."""
    real = figures.get

    def without_compute(figure_id):
        def compute(*args, **kwargs):
            raise AssertionError("the figure was computed before the destination was checked")

        return replace(real(figure_id), compute=compute)

    monkeypatch.setattr(figures, "get", without_compute)


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("", "--out is empty: name a folder"),
        ("{file}", "this is a file, not a folder"),
        ("{file}/sub", "cannot create this folder"),
    ],
)
def test_reproduce_checks_its_destination_before_any_work(tmp_path, capsys, no_work, out, message):
    (tmp_path / "file").write_text("x")
    assert main(["reproduce", "delay-fig4", "--out", out.format(file=tmp_path / "file")]) == 2
    assert message in capsys.readouterr().err


def test_record_checks_its_recording_and_figure_destinations_before_any_call(tmp_path, capsys, no_work):
    assert main(["record", "rep-beer-fig1", "--stand-in", "--out", str(tmp_path)]) == 2
    assert "this is a folder; name a file in it" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    arguments = ["record", "rep-beer-fig1", "--stand-in", "--out", str(tmp_path / "r.jsonl")]
    assert main([*arguments, "--figures-out", str(tmp_path / "file")]) == 2
    assert "--figures-out" in capsys.readouterr().err and not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("--base-seed", "-1", "-1 is not a seed"), ("--workers", "-inf", "invalid int value: '-inf'")],
)
def test_reproduce_refuses_a_negative_number_by_its_option(capsys, no_work, option, value, message):
    with pytest.raises(SystemExit):
        main(["reproduce", "delay-fig4", option, value])
    assert f"argument {option}: {message}" in capsys.readouterr().err


@pytest.mark.parametrize("seeds", ["0", "-3", "10001", "1000000000"])
def test_a_number_of_seeds_out_of_range_is_refused_before_any_work(capsys, no_work, seeds):
    assert main(["reproduce", "delay-fig4", "--seeds", seeds]) == 2
    assert f"--seeds {seeds}: use 1 to 10,000 seeds" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["reproduce", "delay-fig4"], ["claims", "--paper", "delay"]])
@pytest.mark.parametrize("workers", ["0", "100000"])
def test_a_number_of_workers_out_of_range_is_refused_before_any_work(capsys, no_work, command, workers):
    """As --seeds is bounded: at most engines.WORKERS_PER_CPU processes per CPU, said with the option and the fix."""
    assert main([*command, "--engine", "processes", "--workers", workers]) == 2
    bound = engines.max_workers()
    assert f"--workers {workers}: use 1 to {bound:,} worker processes (4 per CPU" in capsys.readouterr().err


def test_an_engine_refuses_more_workers_than_the_bound():
    bound = engines.max_workers()
    assert engines.resolve("processes", bound).workers == bound
    for make in (lambda: engines.resolve("processes", bound + 1), lambda: engines.ProcessEngine(bound + 1)):
        with pytest.raises(ValueError, match=f"workers={bound + 1}: give a number of worker processes from 1 to"):
            make()


def test_run_checks_its_destination_before_playing(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert main(["run", "beer-game", "--out", str(tmp_path / "file")]) == 2
    assert "this is a file, not a folder" in capsys.readouterr().err


def test_concurrent_runs_into_one_folder_leave_every_file_whole_and_from_one_run(tmp_path):
    """Three processes write the same figure's CSV and chart at once, each with other seeds."""
    runs = {seeds: figures.get("delay-fig4").compute(seeds, 0).to_csv(index=False) for seeds in (2, 3, 4)}
    command = [sys.executable, "-m", "coordkit.cli", "reproduce", "delay-fig4", "--out", str(tmp_path)]
    started = [subprocess.Popen([*command, "--seeds", str(s)], stdout=subprocess.DEVNULL) for s in runs]
    assert [process.wait(timeout=300) for process in started] == [0, 0, 0]
    assert (tmp_path / "delay-fig4.csv").read_text() in runs.values()
    chart = (tmp_path / "delay-fig4.svg").read_text()
    assert chart.startswith("<svg") and chart.rstrip().endswith("</svg>")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["delay-fig4.csv", "delay-fig4.svg"]


def test_reproduce_runs_a_figures_sweeps_on_the_chosen_engine_with_the_same_result(tmp_path):
    arguments = ["reproduce", "rep-fishbanks-fig2", "--seeds", "2"]
    assert main([*arguments, "--out", str(tmp_path / "serial")]) == 0
    assert main([*arguments, "--engine", "processes", "--workers", "2", "--out", str(tmp_path / "processes")]) == 0
    serial, processes = (tmp_path / name / "rep-fishbanks-fig2.csv" for name in ("serial", "processes"))
    assert serial.read_text() == processes.read_text()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--engine", "processes", "--workers", "0"], "--workers 0: use 1 to "),
        (["--engine", "dask", "--replay", "data/recordings/rep-beer-fig1.jsonl"], "--engine dask cannot replay"),
    ],
)
def test_reproduce_refuses_engine_options_it_cannot_honour(tmp_path, capsys, no_work, options, message):
    assert main(["reproduce", "rep-beer-fig1", *options, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
