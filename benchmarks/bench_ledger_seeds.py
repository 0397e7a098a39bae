"""Whether the ledger's verdicts depend on the base seed (issue 46): the ledger computed at each figure's default
seeds from base seeds 0, 1 and 2 (or those given), and every claim whose verdict is not the same at all of them.

    .venv/bin/python benchmarks/bench_ledger_seeds.py [--base-seeds 0 1 2] [--write]

Each base seed's ledger is computed cold, into an empty figure cache, with the serial engine; its wall time is
printed. The verdicts compared are the tests' own (``Entry.tested``), before the ledger marks a claim that flips.
``--write`` keeps them in data/ledger_seeds.csv, which the ledger reads: a claim whose verdict changes with the base
seed is *inconclusive* there, its verdict at these seeds being the draw's (``coordkit.replication.ledger``), and
tests/test_replication_ledger.py fails when base seed 0's column is no longer what the ledger computes.
"""

import argparse
import contextlib
import io
import os
import tempfile
import time

import pandas as pd

from coordkit.replication import ledger


def verdicts(base_seeds: list[int]) -> pd.DataFrame:
    """One row per claim, one column per base seed ("base 0"): the test's verdict from that base seed."""
    columns = {}
    for base in base_seeds:
        with tempfile.TemporaryDirectory() as cache, contextlib.redirect_stderr(io.StringIO()):  # (progress bars)
            os.environ["COORDKIT_CACHE"] = cache
            start = time.perf_counter()
            entries = ledger.compute(base_seed=base, progress=False)
            seconds = time.perf_counter() - start
        print(f"base seed {base}: {seconds:5.1f} s", flush=True)
        columns[f"base {base}"] = {e.claim.id: e.tested.verdict for e in entries}
    return pd.DataFrame(columns).rename_axis("id")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--write", action="store_true", help=f"keep the verdicts in {ledger.SEEDS_FILE.name}")
    arguments = parser.parse_args()
    if arguments.write and arguments.base_seeds[0] != 0:
        parser.error("--write needs base seed 0 first: the ledger is computed from it")
    table = verdicts(arguments.base_seeds)
    flips = table[table.nunique(axis=1) > 1]
    print(f"\n{len(flips)} of {len(table)} claims change verdict with the base seed")
    if len(flips):
        with pd.option_context("display.width", 200, "display.max_colwidth", 40):
            print(flips.to_string())
    if arguments.write:
        ledger.write_seeds(table)
        print(f"kept in {ledger.SEEDS_FILE}")
