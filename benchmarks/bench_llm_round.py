"""One round of LLM calls by N agents (one call each), through the kit's clients at their defaults.

    .venv/bin/python benchmarks/bench_llm_round.py

The fake server (``python -m coordkit.llm.fake_server``) runs in a process of its own, 200 ms a request, the same
reply every time, so that the time and CPU measured are the client's. Each client is new for its first round.

1. **Defaults, no server limit:** N = 20, 200, 1,000 with the Anthropic client (through the SDK) and the
   OpenAI-compatible client: the first round and the median of the later ones, against the ideal (one latency).
   Targets: N = 200 under 0.5 s, N = 1,000 under 2 s, a first round at most 1.5x a later one.
2. **The server limited to 50 requests in flight** (429 with retry-after beyond): ideal ceil(N / 50) x 0.2 s.
   Targets: later rounds within 1.3x the ideal; rate-limit answers under 5% of the requests after the first round.
3. **CPU per call** at 200 in flight, no latency (the server's CPU is another process's): target at most 1 ms.
   The raw SDK's own (``AsyncAnthropic.messages.create`` on the same transport) is printed beside it.

Connections opened per round (from the server's count) show the pool kept across rounds.
"""

import asyncio
import math
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager

import anthropic
import httpx
import pandas as pd

from coordkit.llm import LLMRequest, aio
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.openai_compat import OpenAICompatibleClient

os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-benchmark-not-a-real-key")
LATENCY_S = 0.2
ROUNDS = 8
REQUEST = LLMRequest.user("You order beer.", "Order received this round: 8 cases. How many do you order?")
CLIENTS = {
    "Anthropic": lambda url: AnthropicClient(base_url=url),
    "OpenAI-compatible": lambda url: OpenAICompatibleClient("llama3.2", url + "/v1"),
}


@contextmanager
def fake_server(*options: str):
    """The fake server in a child process; its URL."""
    command = [sys.executable, "-m", "coordkit.llm.fake_server", *options]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        yield server.stdout.readline().strip()
    finally:
        server.stdin.close()
        server.wait(10)


STATS = httpx.Client()  # one kept connection, opened before the first round: the rounds' counts are the clients'


def server_stats(url: str) -> dict[str, int]:
    return STATS.get(url + "/fake/stats").json()


def rounds(client, url: str, agents: int) -> list[dict]:
    """Play ``ROUNDS`` rounds; per round its time, CPU, the server's requests, refusals and new connections."""
    played = []
    for _ in range(ROUNDS):
        before = server_stats(url)
        cpu, start = time.process_time(), time.perf_counter()
        aio.complete_all(client, [REQUEST] * agents)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        after = server_stats(url)
        played.append(
            {"s": wall, "cpu_ms": 1000 * cpu / agents}
            | {key: after[key] - before[key] for key in after if key != "peak_in_flight"}
        )
    return played


def show(rows: list[dict]) -> None:
    """Rows as an indented table."""
    print("   " + pd.DataFrame(rows).to_string(index=False).replace("\n", "\n   "))


def defaults() -> None:
    print(f"1. One round at defaults, {LATENCY_S * 1000:.0f} ms a call, no server limit (ideal {LATENCY_S:.2f} s)")
    rows = []
    with fake_server("--latency-s", str(LATENCY_S)) as url:
        for name, make in CLIENTS.items():
            for agents in (20, 200, 1000):
                client = make(url)
                played = rounds(client, url, agents)
                first, later = played[0]["s"], statistics.median(r["s"] for r in played[1:])
                reopened = statistics.median(r["connections"] for r in played[1:])
                rows.append({
                    "client": name,
                    "N": agents,
                    "first": f"{first:.2f} s",
                    "later": f"{later:.2f} s",
                    "x ideal": f"{later / LATENCY_S:.1f}x",
                    "first/later": f"{first / later:.2f}x",
                    "peak in flight": client.concurrency.peak,
                    "connections opened": f"{played[0]['connections']}, then {reopened:.0f} a round",
                })  # fmt: skip
    show(rows)


def limited(limit: int = 50) -> None:
    print(f"\n2. The server limited to {limit} in flight (429 + retry-after beyond it)")
    rows = []
    with fake_server("--latency-s", str(LATENCY_S), "--max-in-flight", str(limit)) as url:
        for name, make in CLIENTS.items():
            for agents in (200, 1000):
                client = make(url)
                played = rounds(client, url, agents)
                ideal = math.ceil(agents / limit) * LATENCY_S
                later = statistics.median(r["s"] for r in played[1:])
                refused = sum(r["rate_limited"] for r in played[1:])
                asked = sum(r["rate_limited"] + r["requests"] for r in played[1:])
                first_refused = played[0]["rate_limited"] / (played[0]["rate_limited"] + played[0]["requests"])
                rows.append({
                    "client": name,
                    "N": agents,
                    "ideal": f"{ideal:.1f} s",
                    "first": f"{played[0]['s']:.2f} s",
                    "later": f"{later:.2f} s",
                    "x ideal": f"{later / ideal:.2f}x",
                    "429s, first round": f"{first_refused:.1%}",
                    "429s after": f"{refused / asked:.1%}",
                    "limit": int(client.concurrency.limit),
                })  # fmt: skip
    show(rows)


def cpu_per_call(agents: int = 200) -> None:
    print(f"\n3. CPU per call, {agents} in flight, no latency (median of {ROUNDS} rounds; target <= 1 ms)")
    with fake_server() as url:
        for name, make in CLIENTS.items():
            client = make(url)
            rounds(client, url, agents)  # warm: the pool open, the limit grown
            cpu = [r["cpu_ms"] for r in rounds(client, url, agents)]
            print(f"   {name:<18} {statistics.median(cpu):5.2f} ms   (rounds: {', '.join(f'{c:.2f}' for c in cpu)})")
        raw = aio.run(_raw_sdk(url))
        body = {"model": "claude-haiku-5-5", "max_tokens": 300, "messages": [{"role": "user", "content": "8 cases?"}]}

        async def raw_round():
            await asyncio.gather(*(raw.messages.create(**body) for _ in range(agents)))

        aio.run(raw_round())
        cpu = []
        for _ in range(ROUNDS):
            start = time.process_time()
            aio.run(raw_round())
            cpu.append(1000 * (time.process_time() - start) / agents)
        print(f"   {'the SDK alone':<18} {statistics.median(cpu):5.2f} ms   (AsyncAnthropic over aiohttp, no kit code)")
        aio.run(raw.close())


async def _raw_sdk(url: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=url, http_client=anthropic.DefaultAioHttpClient())


if __name__ == "__main__":
    defaults()
    limited()
    cpu_per_call()
