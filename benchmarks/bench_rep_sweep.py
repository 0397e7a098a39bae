"""A 100-game Beer Game sweep against ``mesa.batch_run`` on the same model (issue 48: no slower than it).

    .venv/bin/python benchmarks/bench_rep_sweep.py [--games N] [--repeats R]

Both serial, in this process, on the same games (seeds 0 to N - 1): ``coordkit.sweep(BeerGame, seeds=range(N))`` (one
``summary()`` row a game) and
``mesa.batch_run(BeerGame, {}, rng=seeds, number_processes=1)`` (the model and agent reporters at the last step,
one dict a stage), alternated ``repeats`` times, the one that goes first changing each time (so that neither always
runs in the other's wake: its garbage, its caches); prints each median and their ratio.
"""

import argparse
import statistics
import time

import mesa

from coordkit import sweep
from coordkit.rep.beer_game.model import BeerGame


def kit(games: int) -> object:
    return sweep(BeerGame, seeds=list(range(games)), progress=False)  # the games batch_run plays


def batch_run(games: int) -> object:
    return mesa.batch_run(BeerGame, {}, rng=range(games), number_processes=1, display_progress=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    times = {"coordkit.sweep": [], "mesa.batch_run": []}
    pair = [("coordkit.sweep", kit), ("mesa.batch_run", batch_run)]
    for repeat in range(arguments.repeats):
        for name, action in pair if repeat % 2 == 0 else pair[::-1]:
            start = time.perf_counter()
            action(arguments.games)
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(seconds) for name, seconds in times.items()}
    for name, seconds in medians.items():
        print(f"{name:16} {seconds:6.2f} s for {arguments.games} games (median of {arguments.repeats})")
    print(f"sweep / batch_run: {medians['coordkit.sweep'] / medians['mesa.batch_run']:.2f}")
