"""The Agora issue's three performance targets, and the cost figures of the rule-based network.

    .venv/bin/python benchmarks/bench_agora.py [--repeats 3]

Prints:
1. 1,000 queries of the 100-agent network (``AgoraNetwork()`` at the paper's settings), in process, rule-based:
   the wall time of each repeat (target < 5 s for the Agora arm), and the natural-language arm's beside it;
2. one routine call in a warm sandbox, from ``bench_agora_sandbox.py``: in a routine's own session process (the
   network's case) and in ``run_routine``'s process forked per call, p50 and p95 over 300 calls (target < 20 ms);
3. one HTTP round trip between two local agents, p50 and p95 over 200 (target < 10 ms), from
   ``bench_agora_transport.py``;
and, from the first repeat, the cost of both arms, their ratio and the break-even query (estimates: rule-based
stand-ins charged at Table 1's prices).
"""

import argparse
import time

import pandas as pd
from bench_agora_sandbox import main as sandbox_figures
from bench_agora_transport import round_trip_ms

from coordkit.agora.experiments import break_even
from coordkit.agora.model import PROTOCOLS, AgoraNetwork


def network(repeats: int) -> pd.DataFrame:
    """Time both arms ``repeats`` times (seed 0); return the first repeat's frames."""
    frames = {}
    for protocol in PROTOCOLS:
        times = []
        for repeat in range(repeats):
            start = time.perf_counter()
            model = AgoraNetwork(protocol=protocol, rng=0).run()
            times.append(time.perf_counter() - start)
            if repeat == 0:
                frames[protocol] = model.frame().assign(protocol=protocol)
        target = "   (target < 5 s)" if protocol == "agora" else ""
        print(f"1,000 queries, {protocol:17} " + ", ".join(f"{t:.2f}" for t in times) + f" s{target}")
    return pd.concat(frames.values(), ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each arm of the network (default 3)")
    args = parser.parse_args()
    frame = network(args.repeats)
    sandbox_figures()
    round_trip_ms(200)
    totals = frame.groupby("protocol")["cost"].sum()
    print(
        f"cost (estimates): natural language {totals['natural_language']:.2f} USD, Agora {totals['agora']:.2f} USD, "
        f"ratio {totals['natural_language'] / totals['agora']:.2f}, break-even at query {break_even(frame)}"
    )


if __name__ == "__main__":
    main()
