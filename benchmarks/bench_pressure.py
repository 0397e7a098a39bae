"""Pressure-field timings against the pressure issue's targets.

    .venv/bin/python benchmarks/bench_pressure.py

Prints the median wall time of one 7×7 trial (7 empty cells, pressure-field, 4 rule-based actors; target < 20 ms),
with and without making its puzzle, and of the paper's full 1,078-trial design with rule-based actors (target
< 20 s), with its solve rates.
"""

import time

import numpy as np
from timing import median_ms

from coordkit.pressure.experiments import strategy_table, table2
from coordkit.pressure.model import PressureField
from coordkit.pressure.puzzles import make_puzzle, puzzle_for

if __name__ == "__main__":
    for seed in range(100):
        puzzle_for(7, 7, seed)  # made once, as the experiments do
    trial = median_ms(lambda k: PressureField(rng=k).run(), 100)
    print(f"one 7x7 trial (puzzle cached):   {trial:6.1f} ms  (target < 20 ms)")
    puzzle = median_ms(lambda k: make_puzzle(7, 7, np.random.default_rng(k)), 50)
    print(f"one 7x7 puzzle, made:            {puzzle:6.1f} ms")
    puzzle_for.cache_clear()
    start = time.perf_counter()
    frame = table2(seeds=30)
    print(f"the 1,078-trial design:          {time.perf_counter() - start:6.1f} s   (target < 20 s; puzzles made too)")
    print(strategy_table(frame).to_string(index=False))
