"""How long the replication ledger takes at the defaults, against issue 32's target of under 60 s on this machine.

    .venv/bin/python benchmarks/bench_claims.py

Plays `coordkit claims` (every paper, each figure at its default seeds, the serial engine) in fresh processes, with
an empty figure cache (cold: every figure a claim names is computed) and then with the cache that run filled (warm:
as after `coordkit reproduce` or an earlier `coordkit claims`); prints each wall time, and the cold run's time per
figure, measured in this process with an empty cache.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COORDKIT = str(Path(sys.executable).with_name("coordkit"))
TARGET_S = 60


def timed_command(cache: str) -> float:
    start = time.perf_counter()
    subprocess.run([COORDKIT, "claims"], env={**os.environ, "COORDKIT_CACHE": cache}, check=True, capture_output=True)
    return time.perf_counter() - start


def per_figure(cache: str) -> dict[str, float]:
    """Each figure a claim names, computed into an empty cache, in seconds."""
    os.environ["COORDKIT_CACHE"] = cache
    from coordkit import figure_cache, figures
    from coordkit.replication import claims

    seconds = {}
    for figure_id in dict.fromkeys(c.figure for c in claims.claims() if not c.needs_llm):
        figure = figures.get(figure_id)
        start = time.perf_counter()
        figure_cache.computed(figure, figure.default_seeds, 0)
        seconds[figure_id] = time.perf_counter() - start
    return seconds


def main() -> None:
    with tempfile.TemporaryDirectory() as cache:
        cold = timed_command(cache)
        warm = timed_command(cache)
    print(f"coordkit claims, cold (empty figure cache): {cold:6.1f} s   (target < {TARGET_S} s)")
    print(f"coordkit claims, warm (figures kept):        {warm:6.1f} s")
    with tempfile.TemporaryDirectory() as cache:
        for figure_id, seconds in per_figure(cache).items():
            print(f"  {figure_id:28} {seconds:6.1f} s")


if __name__ == "__main__":
    main()
