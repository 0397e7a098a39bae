"""Runs under a flaky API: wall time and fallbacks at 0/10/30/60% faults, through the real anthropic SDK.

    .venv/bin/python benchmarks/bench_faults.py

One seed of the Beer Game (rep-beer-fig1), the delay game (delay-fig3) and Ahoy (ahoy-scenarios), each agent an
"LLM" answered by the figure's rule-based stand-in behind the local fake server. A share of the requests fails,
the same ones every run, the four kinds in turn: a 429 and a 500 (retried by the SDK after 20 ms, up to 2 times),
a cut-off body and an empty reply (never retried: the decision falls back to the rules). For each run it prints
the requests the server received, the ledger's calls, failed calls and retries (calls + failed + retries must
equal the requests), and the decisions that fell back, with their reasons.
"""

import os
import time
from collections import Counter

from coordkit import figures
from coordkit.llm import LLMRequest, MeteredClient
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.fake_server import FakeLLMServer, FakeRequest, SpreadFaults

os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-benchmark-not-a-real-key")
FIGURES = ("rep-beer-fig1", "delay-fig3", "ahoy-scenarios")
PERCENTS = (0, 10, 30, 60)
MODEL = "claude-haiku-4-5"


def stand_in_behind_the_server(figure: figures.Figure):
    """The server's reply function: the figure's stand-in, reading the text the server received."""

    def reply(request: FakeRequest) -> str:
        return figure.stand_in(LLMRequest(request.system, request.messages))

    return reply


def run(figure: figures.Figure, percent: int) -> dict:
    faults = SpreadFaults(percent)
    with FakeLLMServer(stand_in_behind_the_server(figure), faults=faults) as server:
        client = MeteredClient(AnthropicClient(MODEL, base_url=server.url, max_retries=2))
        start = time.perf_counter()
        figure.compute(1, 0, llm=client)
        seconds = time.perf_counter() - start
    ledger = client.ledger
    retries = int(ledger.summary()["retries"].sum())
    return {
        "seconds": seconds,
        "injected": len(faults.injected),
        "requests": len(server.requests),
        "calls": ledger.calls,
        "failed": ledger.failed,
        "retries": retries,
        "reconciles": ledger.calls + ledger.failed + retries == len(server.requests),
        "fallbacks": ledger.fallbacks,
    }


def main() -> None:
    print(f"one seed per figure, {MODEL} via the SDK against the fake server; faults: 429, 500, cut body, empty\n")
    header = f"{'figure':<15} {'faults':>6} {'wall s':>7} {'injected':>8} {'requests':>8} {'calls':>6} {'failed':>6}"
    print(f"{header} {'retries':>7} {'sum ok':>6} {'fell back':>9}  reasons")
    for figure_id in FIGURES:
        figure = figures.get(figure_id)
        for percent in PERCENTS:
            row = run(figure, percent)
            fallbacks: Counter = row["fallbacks"]
            reasons = ", ".join(f"{reason}: {n}" for reason, n in sorted(fallbacks.items())) or "-"
            print(
                f"{figure_id:<15} {percent:>5}% {row['seconds']:>7.2f} {row['injected']:>8} {row['requests']:>8} "
                f"{row['calls']:>6} {row['failed']:>6} {row['retries']:>7} {'yes' if row['reconciles'] else 'NO':>6} "
                f"{sum(fallbacks.values()):>9}  {reasons}"
            )


if __name__ == "__main__":
    main()
