"""The `coordkit` command line: list the reproducible paper figures and reproduce one headless.

    coordkit list
    coordkit reproduce rep-beer-fig1 --out out/ --seeds 5 --format svg
"""

import argparse
import sys
from pathlib import Path

from coordkit import figures, viz


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return args.command(args)
    except (KeyError, ValueError) as error:
        print(f"coordkit: {error.args[0] if error.args else error}", file=sys.stderr)
        return 2


def list_figures(args: argparse.Namespace) -> int:
    for figure in figures.all_figures().values():
        print(f"{figure.id:<20} {figure.description}")
    return 0


def reproduce(args: argparse.Namespace) -> int:
    figure = figures.get(args.figure)
    seeds = args.seeds or figure.default_seeds
    if seeds < 1:
        raise ValueError(f"--seeds {seeds}: use at least 1 seed")
    data = figure.compute(seeds, args.base_seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data.to_csv(out / f"{figure.id}.csv", index=False)
    viz.setup()
    viz.save(figure.chart(data), out / f"{figure.id}.{args.format}")
    print(f"{figure.id}: {figure.description}")
    print(f"{seeds} seed(s) from base seed {args.base_seed}; wrote {figure.id}.csv and {figure.id}.{args.format} to {out}/")
    print()
    print(figure.compare(data).to_string(index=False))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="coordkit", description="Reproduce the coordination papers' figures.")
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    listing = commands.add_parser("list", help="every reproducible paper figure, with its id")
    listing.set_defaults(command=list_figures)
    run = commands.add_parser("reproduce", help="regenerate a figure's data (CSV) and chart, and compare")
    run.add_argument("figure", metavar="ID", help="a figure id from `coordkit list`")
    run.add_argument("--out", default="out", help="folder for the CSV and the chart (default: out/)")
    run.add_argument("--seeds", type=int, default=None, help="games per configuration (default: the figure's)")
    run.add_argument("--base-seed", type=int, default=0, help="seed the per-game seeds are derived from")
    run.add_argument("--format", choices=("svg", "png"), default="svg", help="chart format (default: svg)")
    run.set_defaults(command=reproduce)
    return parser


if __name__ == "__main__":
    sys.exit(main())
