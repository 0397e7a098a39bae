import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pandas.testing import assert_frame_equal
from sweep_targets import CountingEngine, Walk, client_run, coin_run, seed_echo_run, walk_run

from coordkit.parameters import ParameterError
from coordkit.seeds import derive_seeds
from coordkit.sweeps import ProcessEngine, SerialEngine, SweepError, _joined, _plain_rows, sweep, sweep_cells

GRID = {"p": [0.2, 0.8], "flips": [10, 20, 30]}


def test_one_row_per_combination_and_seed_in_grid_then_seed_order():
    result = sweep(coin_run, GRID, seeds=[5, 6], progress=False)
    assert list(result.columns) == ["p", "flips", "seed", "heads", "rate"]
    assert list(result[["p", "flips", "seed"]].itertuples(index=False, name=None)) == [
        (p, flips, seed) for p in [0.2, 0.8] for flips in [10, 20, 30] for seed in [5, 6]
    ]
    assert result.index.equals(pd.RangeIndex(12))


def test_each_row_is_the_run_for_its_parameters_and_seed():
    result = sweep(coin_run, GRID, seeds=2, progress=False)
    for row in result.itertuples(index=False):
        assert row.heads == coin_run(row.p, row.flips, seed=row.seed)["heads"]


def test_int_seeds_are_derived_from_base_seed():
    result = sweep(coin_run, {"p": [0.5], "flips": [10]}, seeds=3, base_seed=9, progress=False)
    assert result["seed"].tolist() == derive_seeds(9, 3)


def test_dataframe_results_are_stacked_with_a_fresh_index():
    result = sweep(walk_run, {"steps": [3, 2]}, seeds=[1, 2], progress=False)
    assert list(result.columns) == ["steps", "seed", "position"]
    assert result[["steps", "seed"]].values.tolist() == ([[3, 1]] * 3 + [[3, 2]] * 3 + [[2, 1]] * 2 + [[2, 2]] * 2)
    assert result.index.equals(pd.RangeIndex(10))
    assert result["position"].tolist()[:3] == walk_run(3, seed=1)["position"].tolist()


@pytest.mark.parametrize("grid", [None, {}])
def test_empty_grid_runs_once_per_seed_without_parameter_columns(grid):
    result = sweep(seed_echo_run, grid, seeds=[3, 10], progress=False)
    assert result.to_dict("list") == {"seed": [-3, -10], "value": [3, 3]}


def test_result_columns_win_over_labels_of_the_same_name():
    result = sweep(seed_echo_run, seeds=[4], progress=False)
    assert list(result.columns) == ["seed", "value"]
    assert result["seed"].tolist() == [-4]


def test_tuple_parameter_values_are_kept_whole():
    def run(shape, seed):
        return {"cells": shape[0] * shape[1]}

    result = sweep(run, {"shape": [(2, 3), (4, 4)]}, progress=False)
    assert result["shape"].tolist() == [(2, 3), (4, 4)]
    assert result["cells"].tolist() == [6, 16]


def test_process_engine_returns_exactly_the_serial_result():
    grid = {"p": [0.3, 0.7], "flips": [50, 100]}
    serial = sweep(coin_run, grid, seeds=2, progress=False)
    parallel = sweep(coin_run, grid, seeds=2, engine="processes", workers=2, progress=False)
    assert_frame_equal(parallel, serial)


def test_any_engine_with_a_map_unordered_method_can_be_plugged_in():
    class ReversingEngine:
        """Computes tasks last to first and yields them in that order, with their positions."""

        def map_unordered(self, fn, tasks):
            return ((i, fn(tasks[i])) for i in reversed(range(len(tasks))))

    grid = {"p": [0.3, 0.7], "flips": [10]}
    expected = sweep(coin_run, grid, seeds=3, progress=False)
    assert_frame_equal(sweep(coin_run, grid, seeds=3, engine=ReversingEngine(), progress=False), expected)
    assert_frame_equal(sweep(coin_run, grid, seeds=3, engine=SerialEngine(), progress=False), expected)


def test_process_engine_with_no_tasks_yields_nothing():
    assert list(ProcessEngine(workers=2).map_unordered(abs, [])) == []


def test_progress_bar_is_shown_only_when_asked(capsys):
    sweep(coin_run, GRID, progress=True, desc="coins")
    assert "coins" in capsys.readouterr().err
    sweep(coin_run, GRID, progress=False, desc="coins")
    assert capsys.readouterr().err == ""


def test_unknown_engine_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown engine 'threads'; choose one of 'serial', 'processes', 'dask'"):
        sweep(coin_run, GRID, engine="threads")


def test_process_engine_rejects_a_lambda():
    with pytest.raises(ValueError, match="<lambda> is a lambda.*move it into a .py file"):
        sweep(lambda seed: {"x": seed}, engine="processes")


def test_process_engine_rejects_a_run_defined_in_main():
    def run(seed):
        return {"x": seed}

    run.__module__ = "__main__"
    with pytest.raises(ValueError, match=r"defined in __main__ \(a notebook cell or script\)"):
        sweep(run, engine="processes", progress=False)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"p": []}, r"grid\['p'\] must be a non-empty sequence"),
        ({"p": 0.5}, r"grid\['p'\] must be a non-empty sequence"),
        ({"name": "abc"}, r"grid\['name'\] must be a non-empty sequence"),
        ({"seed": [1, 2]}, "grid must not contain 'seed'; pass seeds="),
    ],
)
def test_bad_grid(grid, message):
    with pytest.raises(ValueError, match=message):
        sweep(coin_run, grid, progress=False)


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        (0, "at least one seed"),
        ([], "non-empty sequence"),
        ([3, -1], r"seeds\[1\] must be a non-negative integer, got -1"),
        ([1.5], r"seeds\[0\] must be a non-negative integer, got 1.5"),
        (True, "non-empty sequence"),
    ],
)
def test_seeds_that_are_not_seeds_are_refused_before_any_run(seeds, message):
    with pytest.raises(ValueError, match=message):
        sweep(seed_echo_run, seeds=seeds, progress=False, engine=CountingEngine())


def test_run_must_return_a_dataframe_or_mapping():
    with pytest.raises(SweepError, match="seed=.*: TypeError: run must return a DataFrame or a Mapping .* got list"):
        sweep(lambda seed: [seed], progress=False)


def test_numpy_arrays_are_accepted_as_grid_values():
    result = sweep(coin_run, {"p": np.linspace(0, 1, 3), "flips": range(1, 3)}, progress=False)
    assert result[["p", "flips"]].values.tolist() == [[p, f] for p in [0, 0.5, 1] for f in [1, 2]]


def test_a_model_class_sweeps_into_one_summary_row_per_run():
    result = sweep(Walk, {"scale": [0.0, 2.0]}, seeds=3, progress=False)
    assert list(result.columns) == ["scale", "seed", "final"] and len(result) == 6
    assert (result.query("scale == 0")["final"] == 0).all()
    again = sweep(Walk, {"scale": [0.0, 2.0]}, seeds=3, progress=False)
    pd.testing.assert_frame_equal(result, again)
    assert result["final"].iloc[3] == Walk(scale=2.0, rng=result["seed"].iloc[3]).run().summary()["final"]


def test_a_model_class_sweeps_into_its_frames_with_fixed_parameters_unlabelled():
    result = sweep(Walk, {"scale": [1.0]}, seeds=2, fixed={"length": 4}, frame=True, progress=False)
    assert list(result.columns) == ["scale", "seed", "step", "position"] and len(result) == 2 * 5


def test_a_model_grid_is_checked_before_anything_runs():
    with pytest.raises(ParameterError, match=r"grid combination \{'scale': 20.0\}: scale=20.0 is out of range"):
        sweep(Walk, {"scale": [1.0, 20.0]}, seeds=1000, progress=False)
    with pytest.raises(ParameterError, match="Walk has no parameter 'scales'; did you mean 'scale'"):
        sweep(Walk, {"scales": [1.0]}, progress=False)
    with pytest.raises(ParameterError, match="length=0 is out of range"):
        sweep(Walk, {"scale": [1.0]}, fixed={"length": 0}, progress=False)


def test_frames_come_from_models_only():
    with pytest.raises(ValueError, match="frame=True collects a model's frame"):
        sweep(coin_run, {"p": [0.5], "flips": [2]}, frame=True, progress=False)


def test_a_model_class_sweeps_in_worker_processes_too():
    serial = sweep(Walk, {"scale": [1.0, 2.0]}, seeds=2, progress=False)
    parallel = sweep(Walk, {"scale": [1.0, 2.0]}, seeds=2, engine="processes", workers=2, progress=False)
    pd.testing.assert_frame_equal(serial, parallel)


def test_an_llm_client_stays_in_this_process_whatever_the_engine():
    """A client's ledger, budget and recording live here: the default engine of ``using`` yields to serial, and an
    engine asked for by name is refused before any run."""
    from coordkit import engines
    from coordkit.llm import ScriptedClient

    client = ScriptedClient(["x"], repeat=True)
    with engines.using(engines.ProcessEngine(2)) as default:
        sweep(client_run, None, 2, fixed={"client": client}, progress=False)
    assert default.sweeps == 0
    with pytest.raises(ValueError, match=r"fixed\['client'\] is an LLM client, which cannot go to another process"):
        sweep(client_run, None, 2, fixed={"client": client}, engine="processes", progress=False)


def test_sweep_cells_plays_every_cell_from_the_same_seed_without_a_seed_column():
    cells = sweep_cells(coin_run, {"p": [0.3, 0.7]}, 5, fixed={"flips": 10}, progress=False)
    one = [sweep(coin_run, {"p": [p]}, [5], fixed={"flips": 10}, progress=False) for p in (0.3, 0.7)]
    assert_frame_equal(cells, pd.concat(one, ignore_index=True).drop(columns="seed"))


def asking_run(seed: int, client) -> dict[str, str]:
    """One LLM call a run (the client is a fixed parameter)."""
    from coordkit.llm import LLMRequest

    return {"answer": client.complete(LLMRequest.user("You order beer.", "How many cases?")).text}


def test_a_sweep_stopped_by_the_budget_raises_the_stop_with_the_runs_that_finished():
    from coordkit.llm import Ledger, LLMRequest, MeteredClient, ScriptedClient
    from coordkit.llm.base import BudgetExceeded

    class Billed(ScriptedClient):
        billable = True

    def metered(budget_usd=None):
        return MeteredClient(Billed(["4"], repeat=True, model="m"), Ledger({"m": (1.0, 5.0)}), budget_usd)

    probe = metered()
    asking_run(0, probe)
    call_usd = probe.ledger.spent_usd  # what one run spends; a call is let through while its worst case fits
    worst_usd = probe.worst_case_usd(LLMRequest.user("You order beer.", "How many cases?"))
    client = metered(budget_usd=worst_usd + 2.5 * call_usd)  # room for three runs, not four
    with pytest.raises(BudgetExceeded, match="stopped before a call that could exceed the budget") as stopped:
        sweep(asking_run, None, seeds=5, fixed={"client": client}, progress=False)
    assert stopped.value.headline == "Budget reached"
    finished = stopped.value.results
    assert finished["seed"].tolist() == derive_seeds(0, 5)[:3] and finished["answer"].tolist() == ["4"] * 3
    assert stopped.value.failures == []


def test_a_list_of_settings_sweeps_each_as_given_in_its_order_with_the_same_seeds():
    settings = [{"length": 5, "scale": 2.0}, {"length": 7}, {"scale": 0.5, "length": 3}]
    swept = sweep(Walk, settings, seeds=3, progress=False)
    one_by_one = [sweep(Walk, {name: [value] for name, value in s.items()}, seeds=3, progress=False) for s in settings]
    assert_frame_equal(swept, pd.concat(one_by_one, ignore_index=True))
    assert list(swept.columns[:3]) == ["length", "scale", "seed"]
    assert swept["scale"].isna().tolist() == [False] * 3 + [True] * 3 + [False] * 3, "a setting without a scale"


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ([], "grid is an empty list: give at least one setting"),
        ([{"p": 0.5}, 0.5], r"grid\[1\] is 0.5: a list grid holds settings, each a dict"),
        ([{"p": 0.5, "seed": 3}], r"grid\[0\] must not contain 'seed'; pass seeds="),
    ],
)
def test_a_bad_list_of_settings_is_refused_before_any_run(grid, message):
    with pytest.raises(ValueError, match=message):
        sweep(coin_run, grid, progress=False)


VALUES = st.one_of(
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.none(),
    st.builds(np.float64, st.floats()),
    st.builds(np.int64, st.integers(-(2**63), 2**63 - 1)),
    st.builds(np.bool_, st.booleans()),
)
ROWS = st.lists(st.dictionaries(st.sampled_from(["seed", "a", "b", "c"]), VALUES, min_size=1), min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
@given(ROWS, st.none() | st.integers(0, 6))
@example([{"a": 2**63}, {"a": 1}], None).via("a uint64 row and an int64 row: concat makes float64")
def test_rows_join_into_the_frame_their_one_row_frames_concatenate_to(rows, frame_at):
    """A sweep keeps one-row results as dicts and makes them a frame at the end: whatever the rows (a mix of
    types, a None, a missing column, a huge int, a frame between them), the frame is the one pd.concat makes of
    their one-row frames, dtypes included."""
    results = [*rows]
    if frame_at is not None:
        results.insert(frame_at, pd.DataFrame({"a": [1.5, 2.5], "d": ["x", "y"]}))
    one_row_frames = [pd.DataFrame([result]) if isinstance(result, dict) else result for result in results]
    assert_frame_equal(_joined(results), pd.concat(one_row_frames, ignore_index=True), check_exact=True)


def test_only_rows_of_plain_uniform_columns_take_the_one_frame_path():
    plain = [{"seed": seed, "cost": 1.5 * seed, "won": seed % 2 == 0, "name": f"n{seed}"} for seed in range(3)]
    assert _plain_rows(plain)
    assert not _plain_rows([*plain, {"seed": 3, "cost": 3, "won": True, "name": "n3"}])  # an int among floats
    assert not _plain_rows([*plain, {"seed": 3, "cost": None, "won": True, "name": "n3"}])
    assert not _plain_rows([*plain, {"cost": 4.5, "seed": 3, "won": True, "name": "n3"}])  # another column order
    assert not _plain_rows([{"seed": 2**64}])
