"""`coordkit list`, `coordkit models`, `coordkit run MODEL` with the model's declared parameters, and seeds."""

import pandas as pd

from coordkit.cli import main
from coordkit.model import Model
from coordkit.parameters import Parameters, Real
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


def test_run_help_lists_every_declared_parameter(capsys):
    try:
        main(["run", "beer-game", "--help"])
    except SystemExit as done:
        assert done.code == 0
    out = " ".join(capsys.readouterr().out.split())  # argparse wraps its help
    for name in BeerGame.parameters.names:
        if name != "llm":  # objects are set from Python
            assert f"--{name.replace('_', '-')}" in out, name
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
    assert not (tmp_path / "beer-game.csv").exists()
    assert main(["run", "beer-gam"]) == 2
    assert "no model 'beer-gam'" in capsys.readouterr().err


def test_zero_seeds_is_an_error_not_the_default(capsys):
    assert main(["reproduce", "rep-beer-fig1", "--seeds", "0"]) == 2
    assert "--seeds 0: use at least 1 seed" in capsys.readouterr().err
