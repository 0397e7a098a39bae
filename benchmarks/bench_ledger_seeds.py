"""Whether the ledger's verdicts depend on the base seed (issue 46): the ledger computed at each figure's default
seeds from base seeds 0, 1 and 2 (or those given), and every claim whose verdict is not the same at all of them.

    .venv/bin/python benchmarks/bench_ledger_seeds.py [--base-seeds 0 1 2] [--seeds N] [--paper PAPER]

Each base seed's ledger is computed cold, into an empty figure cache, with the serial engine; its wall time is
printed. A claim that flips is listed with its verdict at each base seed; the default seeds should leave none.
"""

import argparse
import os
import tempfile
import time

import pandas as pd

from coordkit.replication import PAPERS, ledger


def verdicts(base_seeds: list[int], seeds: int | None, paper: str | None) -> pd.DataFrame:
    """One row per claim, one column per base seed: the verdict computed from it."""
    columns = {}
    for base in base_seeds:
        with tempfile.TemporaryDirectory() as cache:
            os.environ["COORDKIT_CACHE"] = cache
            start = time.perf_counter()
            entries = ledger.compute(paper, seeds, base, progress=False)
            print(f"base seed {base}: {time.perf_counter() - start:5.1f} s", flush=True)
        columns[f"base {base}"] = {e.claim.id: e.decision.verdict for e in entries}
    return pd.DataFrame(columns)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--seeds", type=int, help="seeds for every figure (default: each figure's own)")
    parser.add_argument("--paper", choices=PAPERS)
    arguments = parser.parse_args()
    table = verdicts(arguments.base_seeds, arguments.seeds, arguments.paper)
    flips = table[table.nunique(axis=1) > 1]
    print(f"\n{len(flips)} of {len(table)} claims change verdict with the base seed")
    if len(flips):
        with pd.option_context("display.width", 200, "display.max_colwidth", 40):
            print(flips.to_string())
