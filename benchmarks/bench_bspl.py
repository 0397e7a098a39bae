"""BSPL timings against the Ahoy issue's targets.

    .venv/bin/python benchmarks/bench_bspl.py

Prints the median wall time of one enactment step (Purchase with rule-based decision makers: deliveries, three
agents deciding, emissions checked; target < 1 ms) and of the verifier on the corrected FlexiblePurchase and the
published one (target < 2 s).
"""

import sys
import time
from pathlib import Path

from timing import median_ms

from coordkit.bspl import load
from coordkit.bspl.verifier import verify

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_bspl_kiko import purchase  # noqa: E402  (the tests' three rule-based decision makers)

if __name__ == "__main__":
    start = time.perf_counter()
    steps = sum(purchase(seed).steps for seed in range(200))
    elapsed = time.perf_counter() - start
    print(f"one enactment step (Purchase, 3 agents): {1000 * elapsed / steps:6.3f} ms  (target < 1 ms; {steps} steps)")
    for name in ("flexible_purchase_corrected", "flexible_purchase"):
        protocol = load(name)
        elapsed = median_ms(lambda k, protocol=protocol: verify(protocol), 20)
        print(f"verifier, {name:28}: {elapsed:6.1f} ms  (target < 2 s)")
