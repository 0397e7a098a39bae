"""Routine-sandbox timings against the Agora issue's target.

    .venv/bin/python benchmarks/bench_agora_sandbox.py

Prints the cold start (a new pool's first call: a worker interpreter started, namespaces entered, modules imported),
and the p50/p95 of one routine call in a warm sandbox (a Bob-side weather routine of Appendix C's protocol: parse the
JSON query, answer in JSON; target < 20 ms), over 300 calls.
"""

import statistics
import time

from coordkit.agora.sandbox import SandboxPool

WEATHER = """
import json

FORECASTS = {("London, UK", "2024-09-27"): {"temperature": 11, "precipitation": 12, "weatherCondition": "rainy"}}

def handle(body):
    query = json.loads(body)
    return json.dumps(FORECASTS.get((query["location"], query["date"]), {"error": "unknown location or date"}))
"""
QUERY = '{"location": "London, UK", "date": "2024-09-27"}'


def percentile(values: list[float], share: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(100 * share) - 1]


if __name__ == "__main__":
    with SandboxPool(1) as pool:
        start = time.perf_counter()
        assert '"rainy"' in pool.run(WEATHER, QUERY)
        cold = 1000 * (time.perf_counter() - start)
        times = []
        for _ in range(300):
            start = time.perf_counter()
            pool.run(WEATHER, QUERY)
            times.append(1000 * (time.perf_counter() - start))
    print(f"cold start (first call of a new pool):  {cold:6.1f} ms")
    print(f"one routine call, warm sandbox, p50:    {statistics.median(times):6.2f} ms   (target < 20 ms)")
    print(f"one routine call, warm sandbox, p95:    {percentile(times, 0.95):6.2f} ms")
