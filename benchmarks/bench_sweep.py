"""Sweeps at scale: a 2,000-run grid of the delay game and of the Beer Game on each engine, a resumed sweep, and
the pressure-field paper's 1,078-trial Table 2 on 2 worker processes.

    .venv/bin/python benchmarks/bench_sweep.py [--runs 2000] [--parts engines resume table2] [--repeats 2]

For each model it prints the wall time of the same sweep serially, in local processes and on a local Dask
cluster (one worker per CPU; the cluster's start-up timed apart), and each engine's speed-up over serial. The
per-task overhead of each engine is measured on runs that do nothing. Then a stored delay sweep is killed half
way (SIGKILL, from another process) and resumed: the time to resume against an uninterrupted stored sweep, and
whether the resumed frame is identical. Last, ``pressure-table2`` at its default design, computed as ``coordkit
reproduce pressure-table2 --engine processes --workers 2`` computes it: serially and on 2 worker processes, in
turn, ``--repeats`` times each, with the spread (the issue's target: processes faster than serial on 2 cores;
the pool's start-up is counted, as a user waits for it).
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from noop import nothing
from pandas.testing import assert_frame_equal

from coordkit import engines, figures
from coordkit.delay.model import DelayedDilemma
from coordkit.engines import DaskEngine, ProcessEngine, SerialEngine
from coordkit.pressure.puzzles import puzzle_for
from coordkit.rep.beer_game.model import BeerGame
from coordkit.sweep_store import RUNS
from coordkit.sweeps import sweep

CPUS = os.cpu_count() or 1


def delay_grid(runs: int) -> tuple[dict, int]:
    grid = {"delay_a": [0.0, 5.0, 10.0, 15.0, 20.0], "delay_b": [0.0, 5.0, 10.0, 20.0]}  # 20 combinations
    return grid, max(1, runs // 20)


def beer_grid(runs: int) -> tuple[dict, int]:
    grid = {"protocol": ["a2a", "rep_textual", "rep_numerical", "base_stock"], "stages": [4, 6]}  # 8 combinations
    return grid, max(1, runs // 8)


def timed(action, *args, **kwargs):
    """Seconds taken by ``action(*args, **kwargs)``, and its result."""
    start = time.perf_counter()
    result = action(*args, **kwargs)
    return time.perf_counter() - start, result


def engines_compared(runs: int) -> None:
    start = time.perf_counter()
    with DaskEngine() as dask:
        started = time.perf_counter() - start
        print(f"Dask LocalCluster of {CPUS} workers started in {started:.2f} s (not counted below)\n")
        print(f"{'model':<16} {'runs':>5} {'engine':<10} {'wall s':>7} {'speed-up':>8} {'same as serial':>15}")
        for name, model, (grid, seeds) in (
            ("delay game", DelayedDilemma, delay_grid(runs)),
            ("Beer Game", BeerGame, beer_grid(runs)),
        ):
            serial_s, serial = timed(sweep, model, grid, seeds, engine=SerialEngine(), progress=False)
            total = len(serial)
            for label, engine in (("serial", None), ("processes", ProcessEngine()), ("dask", dask)):
                if engine is None:
                    seconds, same = serial_s, True
                else:
                    seconds, frame = timed(sweep, model, grid, seeds, engine=engine, progress=False)
                    same = frame.equals(serial)
                print(f"{name:<16} {total:>5} {label:<10} {seconds:>7.2f} {serial_s / seconds:>7.2f}x {str(same):>15}")
        print(f"\nper-task overhead ({runs} runs that do nothing):")
        for label, engine in (("serial", SerialEngine()), ("processes", ProcessEngine()), ("dask", dask)):
            seconds, _ = timed(sweep, nothing, seeds=runs, engine=engine, progress=False)
            print(f"  {label:<10} {1000 * seconds / runs:7.3f} ms per run ({seconds:.2f} s in all)")


def resumed(runs: int) -> None:
    grid, seeds = delay_grid(runs)
    with tempfile.TemporaryDirectory() as folder:
        whole = Path(folder) / "whole"
        uninterrupted_s, uninterrupted = timed(sweep, DelayedDilemma, grid, seeds, store=whole, progress=False)
        plain_s, _ = timed(sweep, DelayedDilemma, grid, seeds, progress=False)
        cut = Path(folder) / "cut"
        script = (
            "from coordkit.delay.model import DelayedDilemma; from coordkit.sweeps import sweep; "
            f"sweep(DelayedDilemma, {grid!r}, {seeds}, store={str(cut)!r}, progress=False)"
        )
        process = subprocess.Popen([sys.executable, "-c", script])
        total = len(uninterrupted)
        while len(list((cut / RUNS).glob("*.parquet"))) < total // 2 and process.poll() is None:
            time.sleep(0.005)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        kept = len(list((cut / RUNS).glob("*.parquet")))
        resume_s, frame = timed(sweep, DelayedDilemma, grid, seeds, store=cut, progress=False)
        assert_frame_equal(frame, uninterrupted)
        reread_s, _ = timed(sweep, DelayedDilemma, grid, seeds, store=cut, progress=False)
    print(f"\nstored delay sweep of {total} runs (serial):")
    print(f"  without a store {plain_s:6.2f} s; with one {uninterrupted_s:6.2f} s (writing each run as it finishes)")
    print(f"  killed after {kept} runs; resuming took {resume_s:6.2f} s; the resumed frame is identical")
    print(f"  a finished store read back (nothing to run): {reread_s:6.2f} s")


def table2_on_processes(repeats: int) -> None:
    """Each engine in turn (so that both see the same drift of a shared machine), checked for the same frame. Every
    run starts without a puzzle made, as a fresh ``coordkit reproduce`` does (worker processes always do)."""
    figure = figures.get("pressure-table2")
    seeds = figure.default_seeds
    print(f"\npressure-table2 at {seeds} seeds (the paper's 1,078 trials), serial and on 2 worker processes:")
    times: dict[str, list[float]] = {"serial": [], "processes": []}
    serial = None
    for _ in range(repeats):
        for label, engine in (("serial", SerialEngine()), ("processes", ProcessEngine(workers=2))):
            puzzle_for.cache_clear()
            with engines.using(engine) as default:
                seconds, frame = timed(figure.compute, seeds, 0)
            assert default.sweeps > 0, "pressure-table2 did not reach the engine"
            serial = frame if serial is None else serial
            assert_frame_equal(frame, serial)
            times[label].append(seconds)
            print(f"  {label:<10} {seconds:7.2f} s")
    for label, taken in times.items():
        print(f"  {label:<10} min {min(taken):7.2f} s, max {max(taken):7.2f} s over {len(taken)} runs")
    speed_up = min(times["serial"]) / min(times["processes"])
    print(f"  speed-up of processes over serial, best against best: {speed_up:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="runs per grid (default: 2000)")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=("engines", "resume", "table2"),
        default=("engines", "resume", "table2"),
        help="what to measure (default: all)",
    )
    parser.add_argument("--repeats", type=int, default=2, help="table2: times each engine plays it (default: 2)")
    args = parser.parse_args()
    print(f"{CPUS} CPUs\n")
    if "engines" in args.parts:
        engines_compared(args.runs)
    if "resume" in args.parts:
        resumed(args.runs)
    if "table2" in args.parts:
        table2_on_processes(args.repeats)


if __name__ == "__main__":
    main()
