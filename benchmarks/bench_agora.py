"""The Agora issue's three performance targets, and the cost figures of the rule-based network.

    .venv/bin/python benchmarks/bench_agora.py [--repeats 3]

Prints:
1. 1,000 queries of the 100-agent network (``AgoraNetwork()`` at the paper's settings), in process, rule-based:
   the wall time of each repeat (target < 5 s for the Agora arm), and the natural-language arm's beside it;
2. one routine call in a warm sandbox (the network's case: a routine's own session process; and ``run_routine``'s
   process forked per call), p50 and p95 over 300 calls (target < 20 ms);
3. one HTTP round trip between two local agents, p50 and p95 over 200 (target < 10 ms), from
   ``bench_agora_transport.py``;
and, from the first repeat, the cost of both arms, their ratio and the break-even query (estimates: rule-based
stand-ins charged at Table 1's prices).
"""

import argparse
import json
import statistics
import time

import pandas as pd
from bench_agora_transport import percentile, round_trip_ms

from coordkit.agora.experiments import break_even
from coordkit.agora.model import PROTOCOLS, AgoraNetwork
from coordkit.agora.routines import SchemaProgrammer, TaskSchema, schema_document
from coordkit.agora.sandbox import routine_session, run_routine
from coordkit.agora.tasks import example_input, keyed_rng, load_catalogue


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


def routine_call(calls: int = 300) -> None:
    """A server routine the rule-based programmer wrote for the weather task, called on one request."""
    task = load_catalogue().task("weather", "queryWeather")
    schema = TaskSchema(task.name, task.input, task.output)
    source = SchemaProgrammer().server_routine(schema_document(schema, "The weather.", name="w", description="w"))
    request = json.dumps({"input": json.dumps(example_input(task, keyed_rng(0))), "results": []})
    for label, call in (("session", routine_session(source)), ("run_routine", lambda body: run_routine(source, body))):
        call(request)  # warm: the worker started, the session's process forked
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            call(request)
            times.append(1000 * (time.perf_counter() - start))
        print(
            f"routine call, {label:12} p50 {statistics.median(times):6.2f} ms, p95 {percentile(times, 0.95):6.2f} ms"
            "   (target < 20 ms)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs of each arm of the network (default 3)")
    args = parser.parse_args()
    frame = network(args.repeats)
    routine_call()
    round_trip_ms(200)
    totals = frame.groupby("protocol")["cost"].sum()
    print(
        f"cost (estimates): natural language {totals['natural_language']:.2f} USD, Agora {totals['agora']:.2f} USD, "
        f"ratio {totals['natural_language'] / totals['agora']:.2f}, break-even at query {break_even(frame)}"
    )


if __name__ == "__main__":
    main()
