"""Pressure-field timings against the pressure issues' targets.

    .venv/bin/python benchmarks/bench_pressure.py [--repeats 5] [--no-design]

Prints, as medians over ``--repeats`` interleaved rounds (wall time, and this process's CPU time, which a busy
machine disturbs less), one trial of the kit's model against the same trial of the minimal plain-Mesa model of
the same rules (``benchmarks/minimal_mesa/pressure.py``; issue 48: within 3×), first checking that both play the
same rounds: the 7×7 default trial (7 empty cells, four rule-based actors; target < 20 ms) and notebook 03's Table 7
pressure-field trial (5×5, 5 empty, the calibrated rate of unusable proposals). Then notebook 03's Table 7 cell
(140 trials of five strategies), the puzzle's making, and the paper's full 1,078-trial design with rule-based actors
(target < 20 s), with its solve rates. Puzzles are made once per seed before the trials are timed, as the
experiments make them.
"""

import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd
from minimal_mesa.pressure import MinimalPressureField
from timing import median_ms

from coordkit.pressure import calibration
from coordkit.pressure.experiments import easy, strategy_table, table2
from coordkit.pressure.model import PressureField
from coordkit.pressure.puzzles import make_puzzle, puzzle_for

SEEDS = range(30)


def kit_trial(seed: int, **params) -> pd.DataFrame:
    return PressureField(rng=seed, **params).run().frame()


def minimal_trial(seed: int, **params) -> pd.DataFrame:
    model = MinimalPressureField(seed, **params)
    model.run_model()
    return model.datacollector.get_model_vars_dataframe().reset_index(drop=True)


def per_trial_ms(play, params: dict) -> tuple[float, float]:
    """Wall and CPU milliseconds per trial of ``play`` over :data:`SEEDS`."""
    wall, cpu = time.perf_counter(), time.process_time()
    for seed in SEEDS:
        play(seed, **params)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return 1000 * wall / len(SEEDS), 1000 * cpu / len(SEEDS)


def compare(label: str, kit: dict, minimal: dict, repeats: int) -> None:
    """The kit's trial beside the minimal model's, interleaved, after checking that they play the same rounds."""
    for seed in SEEDS:
        pd.testing.assert_frame_equal(kit_trial(seed, **kit), minimal_trial(seed, **minimal), check_exact=True)
    times = {"kit": [], "minimal Mesa": []}
    for _ in range(repeats):
        times["kit"].append(per_trial_ms(kit_trial, kit))
        times["minimal Mesa"].append(per_trial_ms(minimal_trial, minimal))
    medians = {name: [statistics.median(t[k] for t in runs) for k in (0, 1)] for name, runs in times.items()}
    print(f"{label} (same rounds on {len(SEEDS)} seeds):")
    for name, (wall, cpu) in medians.items():
        print(f"  {name:13} {wall:6.1f} ms wall  {cpu:6.1f} ms CPU")
    ratio = [k / m for k, m in zip(medians["kit"], medians["minimal Mesa"])]
    print(f"  kit / minimal {ratio[0]:6.2f}x wall    {ratio[1]:6.2f}x CPU   (target <= 3x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-design", action="store_true", help="skip the 1,078-trial design")
    arguments = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    failure = calibration.calibrated_failure()
    for seed in SEEDS:
        puzzle_for(7, 7, seed), puzzle_for(5, 5, seed)  # made once, as the experiments do
    compare("one 7x7 trial (target < 20 ms)", {}, {}, arguments.repeats)
    table7 = {"n": 5, "empty": 5, "failure": failure}
    compare("one Table 7 pressure-field trial (5x5, calibrated)", table7, table7, arguments.repeats)
    cell = []
    for _ in range(arguments.repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        easy(seeds=30, failure=failure)
        cell.append((time.perf_counter() - wall, time.process_time() - cpu))
    print(
        f"notebook 03's Table 7 cell (140 trials): {statistics.median(c[0] for c in cell):5.2f} s wall  "
        f"{statistics.median(c[1] for c in cell):5.2f} s CPU"
    )
    puzzle = median_ms(lambda k: make_puzzle(7, 7, np.random.default_rng(k)), 50)
    print(f"one 7x7 puzzle, made:            {puzzle:6.1f} ms")
    if not arguments.no_design:
        puzzle_for.cache_clear()
        start = time.perf_counter()
        frame = table2(seeds=30)
        seconds = time.perf_counter() - start
        print(f"the 1,078-trial design:          {seconds:6.1f} s   (target < 20 s; puzzles made too)")
        print(strategy_table(frame).to_string(index=False))
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
