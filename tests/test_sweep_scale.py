"""Sweeps that outgrow one machine: the Dask engine gives the serial frame, a failed run is reported by its
parameters and seed, and a store keeps every finished run so that a killed sweep resumes to the same frame.
Dask runs on a local cluster of 2 workers on 127.0.0.1; nothing needs the network."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pandas.testing import assert_frame_equal
from sweep_targets import SLOW_RUNS, CountingEngine, Walk, coin_run, dying_run, failing_run, slow_run

from coordkit import engines
from coordkit.delay.model import DelayedDilemma
from coordkit.engines import DaskEngine
from coordkit.sweep_store import MANIFEST, PARTIAL, RUNS, StoreError
from coordkit.sweeps import SweepError, sweep

TESTS = Path(__file__).parent
GRID = {"p": [0.3, 0.7], "flips": [10, 50]}


@pytest.fixture(scope="module")
def dask():
    with DaskEngine(workers=2) as engine:
        yield engine


def test_dask_gives_the_serial_frame(dask):
    assert_frame_equal(sweep(coin_run, GRID, seeds=5, engine=dask, progress=False), sweep(coin_run, GRID, seeds=5))
    model_grid = {"delay_a": [0, 5], "policy_a": ["simplified", "persona"]}
    serial = sweep(DelayedDilemma, model_grid, seeds=3, progress=False)
    assert_frame_equal(sweep(DelayedDilemma, model_grid, seeds=3, engine=dask, progress=False), serial)
    assert_frame_equal(sweep(Walk, {"scale": [1.0]}, seeds=2, frame=True, engine=dask, progress=False),
                       sweep(Walk, {"scale": [1.0]}, seeds=2, frame=True, progress=False))  # fmt: skip


def test_a_dask_engine_by_name_starts_and_stops_its_own_cluster():
    assert_frame_equal(
        sweep(coin_run, GRID, seeds=2, engine="dask", workers=1, progress=False), sweep(coin_run, GRID, seeds=2)
    )


@pytest.mark.parametrize("engine", ["serial", "processes", "dask"])
def test_a_failed_run_is_named_by_its_parameters_and_seed_and_the_others_are_collected(engine, request):
    chosen = request.getfixturevalue("dask") if engine == "dask" else engine
    with pytest.raises(SweepError) as raised:
        sweep(failing_run, {"x": [1, 2, 3, 4]}, seeds=[7, 8], engine=chosen, workers=2, progress=False)
    error = raised.value
    assert str(error).splitlines()[:3] == [
        "2 of 8 runs failed:",
        "  x=3, seed=7: ZeroDivisionError: x=3 divides by zero",
        "  x=3, seed=8: ZeroDivisionError: x=3 divides by zero",
    ]
    assert [(f["params"], f["seed"]) for f in error.failures] == [({"x": 3}, 7), ({"x": 3}, 8)]
    assert "in failing_run" in error.failures[0]["trace"]
    expected = sweep(failing_run, {"x": [1, 2, 4]}, seeds=[7, 8], progress=False)
    assert_frame_equal(error.results, expected)


def test_using_sets_the_default_engine_of_every_sweep_inside(dask):
    counting = CountingEngine()
    with engines.using(counting):
        sweep(coin_run, GRID, seeds=2, progress=False)
    assert counting.runs == 8
    sweep(coin_run, GRID, seeds=2, progress=False)
    assert counting.runs == 8  # outside the block: serial again


def test_a_stored_sweep_is_the_same_frame_and_a_rerun_reads_it_back_without_running(tmp_path):
    expected = sweep(DelayedDilemma, {"delay_a": [0, 5]}, seeds=4, progress=False)
    stored = sweep(DelayedDilemma, {"delay_a": [0, 5]}, seeds=4, store=tmp_path / "s", progress=False)
    assert_frame_equal(stored, expected)
    assert len(list((tmp_path / "s" / RUNS).glob("*.parquet"))) == 8
    counting = CountingEngine()
    again = sweep(DelayedDilemma, {"delay_a": [0, 5]}, seeds=4, store=tmp_path / "s", engine=counting, progress=False)
    assert_frame_equal(again, expected)
    assert counting.runs == 0
    wider = sweep(
        DelayedDilemma, {"delay_a": [0, 5, 10]}, seeds=4, store=tmp_path / "s", engine=counting, progress=False
    )
    assert counting.runs == 4 and len(wider) == 12  # the grid grew: only the new runs ran
    manifest = json.loads((tmp_path / "s" / MANIFEST).read_text())
    assert manifest["run"] == "coordkit.delay.model:DelayedDilemma" and manifest["coordkit"] and manifest["code"]


def test_a_sweep_killed_half_way_resumes_to_the_uninterrupted_frame(tmp_path):
    store = tmp_path / "store"
    script = (
        f"import sys; sys.path.insert(0, {str(TESTS)!r}); from sweep_targets import slow_run; "
        "from coordkit.sweeps import sweep; "
        f"sweep(slow_run, {{'x': list(range(40))}}, seeds=2, store={str(store)!r}, progress=False)"
    )
    process = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, SLOW_RUNS: "1"})
    deadline = time.monotonic() + 300  # a hang guard: a child that imports pandas on a loaded machine starts slowly
    while len(list((store / RUNS).glob("*.parquet"))) < 30 and time.monotonic() < deadline:
        time.sleep(0.01)
    process.kill()
    process.wait()
    kept = len(list((store / RUNS).glob("*.parquet")))
    assert 30 <= kept < 80, f"{kept} runs stored when the sweep was killed"
    counting = CountingEngine()
    resumed = sweep(slow_run, {"x": list(range(40))}, seeds=2, store=store, engine=counting, progress=False)
    assert counting.runs == 80 - kept
    assert_frame_equal(resumed, sweep(slow_run, {"x": list(range(40))}, seeds=2, progress=False))
    assert not list((store / RUNS).glob(f"{PARTIAL}*"))  # the killed writer's partial file is gone


def test_failed_runs_are_not_stored_and_a_rerun_retries_only_them(tmp_path):
    with pytest.raises(SweepError, match="The 6 finished runs are in the error's .results, and in"):
        sweep(failing_run, {"x": [1, 2, 3, 4]}, seeds=[7, 8], store=tmp_path, progress=False)
    counting = CountingEngine()
    with pytest.raises(SweepError):
        sweep(failing_run, {"x": [1, 2, 3, 4]}, seeds=[7, 8], store=tmp_path, engine=counting, progress=False)
    assert counting.runs == 2


def stored(tmp_path, **options):
    return sweep(coin_run, GRID, seeds=2, store=tmp_path / "s", progress=False, **options)


def test_a_store_of_another_sweep_is_refused(tmp_path):
    stored(tmp_path)
    with pytest.raises(StoreError, match="holds another sweep: its runs 'sweep_targets:coin_run', this sweep's"):
        sweep(failing_run, {"x": [1]}, store=tmp_path / "s", progress=False)
    with pytest.raises(StoreError, match="its fixed parameters"):
        sweep(coin_run, {"p": [0.5]}, fixed={"flips": 3}, store=tmp_path / "s", progress=False)


def test_a_store_written_by_other_code_is_refused(tmp_path):
    stored(tmp_path)
    manifest = tmp_path / "s" / MANIFEST
    manifest.write_text(manifest.read_text().replace('"code": "', '"code": "0ther'))
    with pytest.raises(StoreError, match=r"written by coordkit .* \(code 0ther.*so they are not mixed"):
        stored(tmp_path)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda s: (s / MANIFEST).write_text("{not json"), "coordkit-sweep.json is damaged"),
        (lambda s: (s / MANIFEST).write_text("[]"), "is not a coordkit sweep manifest"),
    ],
    ids=["manifest-not-json", "manifest-a-list"],
)
def test_a_damaged_manifest_is_refused_naming_the_file(tmp_path, damage, message):
    """(A damaged run file is not refused but computed again: tests/test_sweep_store.py.)"""
    stored(tmp_path)
    damage(tmp_path / "s")
    with pytest.raises(StoreError, match=message):
        stored(tmp_path)


def test_a_folder_that_is_not_a_store_is_refused(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "notes.txt").write_text("mine")
    with pytest.raises(StoreError, match="is not a sweep store .* and is not empty: give a new folder"):
        stored(tmp_path)
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreError, match="is a file: give a folder"):
        sweep(coin_run, GRID, store=tmp_path / "f", progress=False)


def test_a_store_in_use_by_another_sweep_is_refused(tmp_path):
    from coordkit.sweep_store import SweepStore

    with SweepStore(tmp_path / "s", coin_run, fixed={}, frame=False):
        with pytest.raises(StoreError, match="is in use by another sweep"):
            stored(tmp_path)
    stored(tmp_path)  # free once the first is done


def test_values_a_store_cannot_keep_exactly_are_refused_before_any_run(tmp_path):
    counting = CountingEngine()
    with pytest.raises(StoreError, match=r"shape=\(2, 3\) is a tuple"):
        sweep(lambda shape, seed: {"n": 1}, {"shape": [(2, 3)]}, store=tmp_path, engine=counting, progress=False)
    assert counting.runs == 0


def test_a_worker_that_dies_ends_the_sweep_with_a_clear_error_keeping_what_finished(tmp_path):
    with pytest.raises(SweepError, match="a worker process died .*killed, or out of memory") as raised:
        sweep(dying_run, {"x": [1, 2, 3]}, seeds=2, engine="processes", workers=2, store=tmp_path, progress=False)
    assert "run the same sweep again to redo only what is missing" in str(raised.value)
    assert len(list((tmp_path / RUNS).glob("*.parquet"))) == len(raised.value.results)
