"""The peer's row of bench_llm_round.py: one round of N mesa-llm agents, one LLM call each, stepped by
mesa-llm's ``step_agents_parallel_sync``, against the kit's fake server (its own process, 200 ms a request).

mesa-llm is not a dependency of the kit: run this with a scratch environment's Python, beside the kit's .venv::

    python3.12 -m venv /tmp/mesa-llm && /tmp/mesa-llm/bin/pip install "mesa-llm==0.3.2"
    /tmp/mesa-llm/bin/python benchmarks/peer_mesa_llm_round.py

Each agent asks through mesa-llm's ``ModuleLLM.agenerate`` (litellm, OpenAI-compatible endpoint), the same prompt
as bench_llm_round.py's. Prints the first round, the median of the later ones and the CPU per call.
"""

import os
import statistics
import subprocess
import time
from pathlib import Path

import mesa
from mesa_llm.module_llm import ModuleLLM
from mesa_llm.parallel_stepping import step_agents_parallel_sync

os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-not-a-real-key")
ROOT = Path(__file__).resolve().parent.parent
LATENCY_S, ROUNDS = 0.2, 8


class Asker(mesa.Agent):
    """An agent whose step is one LLM call."""

    def __init__(self, model: mesa.Model, llm: ModuleLLM):
        super().__init__(model)
        self.llm = llm

    async def astep(self) -> None:
        await self.llm.agenerate("Order received this round: 8 cases. How many do you order?")


def main() -> None:
    command = [str(ROOT / ".venv/bin/python"), "-m", "coordkit.llm.fake_server", "--latency-s", str(LATENCY_S)]
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    url = server.stdout.readline().strip()
    try:
        for agents in (20, 200, 1000):
            model = mesa.Model(rng=0)
            llm = ModuleLLM("openai/llama3.2", api_base=url + "/v1", system_prompt="You order beer.")
            askers = [Asker(model, llm) for _ in range(agents)]
            played = []
            for _ in range(ROUNDS):
                cpu, start = time.process_time(), time.perf_counter()
                step_agents_parallel_sync(askers)
                played.append((time.perf_counter() - start, 1000 * (time.process_time() - cpu) / agents))
            later = statistics.median(seconds for seconds, _ in played[1:])
            cpu_ms = statistics.median(ms for _, ms in played[1:])
            first = played[0][0]
            print(f"mesa-llm N={agents:>5}: first {first:.2f} s, later {later:.2f} s, CPU per call {cpu_ms:.2f} ms")
    finally:
        server.stdin.close()
        server.wait(10)


if __name__ == "__main__":
    main()
