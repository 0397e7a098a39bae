"""LLM-layer timings against the LLM issue's targets, through the real anthropic SDK and the local fake server.

    .venv/bin/python benchmarks/bench_llm.py

1. 200 calls with 200 ms of server latency each: sequentially, and concurrently at most 64 at a time
   (targets: concurrent <= 1.5 s and >= 25x faster).
2. The overhead the kit adds per call over the raw SDK (server latency 0): the SDK's ``messages.create``
   alone, the kit's AnthropicClient, and the full stack a notebook uses (ledger + budget + recorder).
3. A Beer Game with LLM players (8 stages, 20 rounds) at 200 ms per call, one call at a time vs a round at once.
"""

import os
import statistics
import tempfile
import time
from pathlib import Path

import anthropic

from coordkit.llm import LLMRequest, MeteredClient, RecordingClient, aio
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.fake_server import FakeLLMServer
from coordkit.rep.beer_game import stand_in
from coordkit.rep.beer_game.model import BeerGame

os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-benchmark-not-a-real-key")
CALLS, LATENCY_S, CONCURRENCY = 200, 0.2, 64
REQUEST = LLMRequest.user("You order beer.", "Order received this round: 8 cases. How many do you order?")


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def concurrency() -> None:
    with FakeLLMServer(latency_s=LATENCY_S) as server:
        client = AnthropicClient(base_url=server.url)
        client.complete(REQUEST)  # warm the connection pool
        sequential = timed(lambda: [client.complete(REQUEST) for _ in range(CALLS)])
        concurrent = timed(lambda: aio.complete_all(client, [REQUEST] * CALLS, max_concurrency=CONCURRENCY))
        peak = server.peak_in_flight
    print(f"{CALLS} calls at {LATENCY_S * 1000:.0f} ms each:")
    print(f"  sequential:         {sequential:6.2f} s")
    print(f"  concurrency {CONCURRENCY}:     {concurrent:6.2f} s   (target <= 1.5 s; peak in flight {peak})")
    print(f"  speed-up:           {sequential / concurrent:6.1f}x  (target >= 25x)")


def per_call_ms(action, repeats: int = 300) -> float:
    for _ in range(20):
        action()
    times = [timed(action) for _ in range(repeats)]
    return 1000 * statistics.median(times)


def overhead() -> None:
    with FakeLLMServer() as server, tempfile.TemporaryDirectory() as folder:
        raw = anthropic.Anthropic(base_url=server.url, max_retries=4, timeout=60.0)
        kit = AnthropicClient(base_url=server.url)
        stack = MeteredClient(
            RecordingClient(AnthropicClient(base_url=server.url), Path(folder) / "r.jsonl"), budget_usd=100.0
        )
        messages = [{"role": "user", "content": REQUEST.messages[0][1]}]
        sdk = per_call_ms(
            lambda: raw.messages.create(
                model="claude-haiku-5-5", system=REQUEST.system, messages=messages, max_tokens=300
            )
        )
        client = per_call_ms(lambda: kit.complete(REQUEST))
        full = per_call_ms(lambda: stack.complete(REQUEST))
    print("per call, server latency 0 (median of 300):")
    print(f"  raw SDK messages.create:           {sdk:6.2f} ms")
    print(f"  AnthropicClient.complete:          {client:6.2f} ms  (+{client - sdk:.2f} ms)")
    print(f"  + ledger, budget and recorder:     {full:6.2f} ms  (+{full - sdk:.2f} ms over the raw SDK)")


def beer_game() -> None:
    with FakeLLMServer(lambda r: stand_in.reply(LLMRequest(r.system, r.messages)), latency_s=LATENCY_S) as server:
        client = AnthropicClient(base_url=server.url)
        one_at_a_time = timed(lambda: BeerGame(protocol="a2a", stages=8, llm=client, max_concurrency=1, rng=0).run())
        round_at_once = timed(lambda: BeerGame(protocol="a2a", stages=8, llm=client, max_concurrency=16, rng=0).run())
    print(f"A2A Beer Game, 8 LLM players x 20 rounds = 160 calls at {LATENCY_S * 1000:.0f} ms:")
    print(f"  one call at a time: {one_at_a_time:6.2f} s;  a round at once: {round_at_once:6.2f} s")


if __name__ == "__main__":
    concurrency()
    overhead()
    beer_game()
