"""The kit's models against minimal plain-Mesa models (issue 48: each model run within 3x of one).

    .venv/bin/python benchmarks/bench_minimal_mesa.py [--repeats N]

For each model, one run of the kit's model and one of its minimal counterpart in ``benchmarks/minimal_mesa/``,
alternated ``repeats`` times (so that a shared machine's drift hits both alike); prints each median and their
ratio. The Beer Game (A2A, and REP textual: ``minimal_mesa.beer_game_rep``; both checked first to play the kit's
orders, and θ), Fishbanks (A2A companies, and REP textual: ``minimal_mesa.fishbanks_rep_textual``; both checked
first to play the kit's boats, stock and texts, and θ), movie scheduling (REP numerical, and REP textual:
``minimal_mesa.movies_rep_textual``) and the delay trial are timed against minimal models of the same rules;
Fishbanks and movie scheduling also against Mesa's floor for their agents x steps x reporters
(``minimal_mesa.floor``). Also the Beer Game's ``summary()`` alone, and a run with its summary.
"""

import argparse
import statistics
import time
from collections.abc import Callable

from minimal_mesa import (
    beer_game,
    beer_game_rep,
    delay,
    fishbanks,
    fishbanks_rep_textual,
    floor,
    movies,
    movies_rep_textual,
)

from coordkit.delay import DelayedDilemma
from coordkit.rep.beer_game.model import BeerGame
from coordkit.rep.fishbanks.model import Fishbanks
from coordkit.rep.movies.model import MovieScheduling


def seconds(action: Callable[[int], object], k: int) -> float:
    start = time.perf_counter()
    action(k)
    return time.perf_counter() - start


def alternated(kit: Callable[[int], object], minimal: Callable[[int], object], repeats: int) -> tuple[float, float]:
    """Median milliseconds of ``kit(k)`` and ``minimal(k)``, run one after the other ``repeats`` times."""
    kit(0), minimal(0)  # warm both
    times = [(seconds(kit, k), seconds(minimal, k)) for k in range(1, repeats + 1)]
    return tuple(1000 * statistics.median(column) for column in zip(*times))


def beer_game_summary(k: int) -> dict:
    return GAMES[k % len(GAMES)].summary()


GAMES = [BeerGame(protocol="a2a", rng=k).run() for k in range(5)]

COMPARISONS = {
    "Beer Game, A2A Sterman players (same rules)": (
        lambda k: BeerGame(protocol="a2a", rng=k).run(),
        beer_game.one_game,
    ),
    "Beer Game, REP textual (same rules)": (lambda k: BeerGame(rng=k).run(), beer_game_rep.one_game),
    "Beer Game, A2A run + summary() vs the minimal run": (
        lambda k: BeerGame(protocol="a2a", rng=k).run().summary(),
        beer_game.one_game,
    ),
    "Beer Game summary() alone vs the minimal run": (beer_game_summary, beer_game.one_game),
    "Fishbanks, A2A companies (same rules)": (lambda k: Fishbanks(protocol="a2a", rng=k).run(), fishbanks.one_run),
    "Fishbanks, REP textual (same rules)": (lambda k: Fishbanks(rng=k).run(), fishbanks_rep_textual.one_run),
    "Fishbanks, default (12 x 8 seasons) vs floor": (
        lambda k: Fishbanks(rng=k).run(),
        lambda k: floor.one_run(agents=12, steps=8, model_reporters=6, agent_reporters=16, seed=k),
    ),
    "Movies, REP numerical (default, same rules)": (lambda k: MovieScheduling(rng=k).run(), movies.one_run),
    "Movies, REP textual (same rules)": (
        lambda k: MovieScheduling(protocol="rep_textual", rng=k).run(),
        movies_rep_textual.one_run,
    ),
    "Movies, default (20 agents x 20 rounds) vs floor": (
        lambda k: MovieScheduling(rng=k).run(),
        lambda k: floor.one_run(agents=20, steps=20, model_reporters=6, agent_reporters=6, seed=k),
    ),
    "Delay trial, two simplified players (same rules)": (
        lambda k: DelayedDilemma(delay_a=0, p=0.9, alpha=0.1, rng=k).run(),
        delay.one_trial,
    ),
}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=60)
    repeats = parser.parse_args().repeats
    a2a = BeerGame(protocol="a2a", player_spread=0, rng=0).run().frame()
    assert beer_game.same_columns(beer_game.one_game(0), a2a), "the minimal Beer Game no longer plays the kit's orders"
    rep_textual = BeerGame(protocol="rep_textual", player_spread=0, rng=0).run().frame()
    assert beer_game_rep.same_orders(rep_textual), "the minimal REP textual Beer Game no longer plays the kit's rounds"
    fishbanks_a2a = Fishbanks(protocol="a2a", rng=0).run().frame()
    assert fishbanks.same_game(fishbanks_a2a), "the minimal A2A Fishbanks plays another game"
    fishbanks_rep = Fishbanks(rng=0).run().frame()
    assert fishbanks_rep_textual.same_game(fishbanks_rep), "the minimal REP textual Fishbanks plays another game"
    print(f"{'model run':54} {'kit ms':>8} {'minimal ms':>11} {'ratio':>6}   (medians of {repeats})")
    for label, (kit, minimal) in COMPARISONS.items():
        kit_ms, minimal_ms = alternated(kit, minimal, repeats)
        print(f"{label:54} {kit_ms:8.2f} {minimal_ms:11.2f} {kit_ms / minimal_ms:6.1f}x", flush=True)
