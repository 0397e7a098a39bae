"""A 100-game Beer Game sweep against ``mesa.batch_run`` on the same model (issue 48: no slower than it).

    .venv/bin/python benchmarks/bench_rep_sweep.py [--games N] [--repeats R]

Both serial, in this process, on the same games (seeds 0 to N - 1): ``coordkit.sweep(BeerGame, seeds=range(N))`` (one
``summary()`` row a game) and
``mesa.batch_run(BeerGame, {}, rng=seeds, number_processes=1)`` (the model and agent reporters at the last step,
one dict a stage). Beside them, the work each does whatever its machinery: the games alone (made and run), and the
games with their ``summary()``, which the sweep computes and ``batch_run`` does not; each one's overhead is its time
less that work. All four alternate ``repeats`` times, in an order reversed each time (so that none always runs in
another's wake: its garbage, its caches); prints each median and the ratio of the sweep to ``batch_run``.
"""

import argparse
import statistics
import time

import mesa

from coordkit import sweep
from coordkit.rep.beer_game.model import BeerGame


def games(count: int) -> None:
    for seed in range(count):
        BeerGame(rng=seed).run()


def games_and_summaries(count: int) -> None:
    for seed in range(count):
        BeerGame(rng=seed).run().summary()


def kit(count: int) -> object:
    return sweep(BeerGame, seeds=list(range(count)), progress=False)  # the games batch_run plays


def batch_run(count: int) -> object:
    return mesa.batch_run(BeerGame, {}, rng=range(count), number_processes=1, display_progress=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=9)
    arguments = parser.parse_args()
    actions = {
        "the games alone": games,
        "games + summary()": games_and_summaries,
        "coordkit.sweep": kit,
        "mesa.batch_run": batch_run,
    }
    times = {name: [] for name in actions}
    for repeat in range(arguments.repeats):
        for name in list(actions) if repeat % 2 == 0 else list(actions)[::-1]:
            start = time.perf_counter()
            actions[name](arguments.games)
            times[name].append(time.perf_counter() - start)
    ms = {name: 1000 * statistics.median(seconds) for name, seconds in times.items()}
    for name, median in ms.items():
        print(f"{name:18} {median:7.1f} ms for {arguments.games} games (median of {arguments.repeats})")
    print(f"sweep / batch_run: {ms['coordkit.sweep'] / ms['mesa.batch_run']:.2f}")
    print(
        f"machinery: the sweep {ms['coordkit.sweep'] - ms['games + summary()']:+.1f} ms over the games and their "
        f"summaries, batch_run {ms['mesa.batch_run'] - ms['the games alone']:+.1f} ms over the games; "
        f"the summaries {ms['games + summary()'] - ms['the games alone']:+.1f} ms"
    )
