"""Beer Game timings against the foundation issue's targets.

    .venv/bin/python benchmarks/bench_beer_game.py

Prints the median wall time of one default game (20 rounds, 4 stages) per protocol (target < 50 ms each),
and of the notebook panel's control change → new chart in the kernel, i.e. a slider set, the game played and
the notebook's chart built as the Vega-Lite spec the page draws (target < 150 ms; benchmarks/bench_panels.py
times the whole way to the screen).
"""

from functools import partial

from timing import median_ms

from coordkit import viz
from coordkit.rep.beer_game import charts
from coordkit.rep.beer_game.model import PROTOCOLS, BeerGame
from coordkit.ui import model_panel

REPEATS = 30


def one_game(protocol: str, k: int) -> BeerGame:
    return BeerGame(protocol=protocol, rng=0).run()


def main() -> None:
    print("One default game (20 rounds, 4 stages), median of", REPEATS, "runs — target < 50 ms")
    for protocol in PROTOCOLS:
        print(f"  {protocol:<14} {median_ms(partial(one_game, protocol), REPEATS):6.1f} ms")

    viz.setup()
    panel = model_panel(BeerGame, ["protocol"], chart=lambda game: charts.game_view(game.frame()), seeds=(0, 10_000))
    panel.debounce = 0
    seeds = iter(range(1, 10_000))

    def change_control(k: int) -> None:
        panel.controls["seed"].value = next(seeds)
        if panel.last_error:
            raise panel.last_error

    print(f"Panel: control change -> game played, the notebook's chart built as a spec, median of {REPEATS}")
    print("  target < 150 ms")
    print(f"  {median_ms(change_control, REPEATS):6.1f} ms")


if __name__ == "__main__":
    main()
