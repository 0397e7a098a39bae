"""Where the wall clock of a round of LLM agents goes (REP paper §7, Insight 6: at 200 agents, LLM inference
38%, waiting 59%, sensitivity sharing 3% of the runtime).

A :class:`~coordkit.rep.movies.model.MovieScheduling` that plays LLM agents keeps a
:class:`~coordkit.rep.movies.model.RoundTiming` per round. The paper does not define its three shares; the kit
reads them as:

- **inference**: the mean over agents of the wall time of the agent's own calls (its decision and, for REP
  textual, its synthesis, each from the moment it is sent), as a share of the round;
- **communication**: the transport's share — every send, the delivery and every receive;
- **waiting**: the rest, the time an agent spends waiting at the round's barrier for the others (and for a free
  slot under ``max_concurrency``), the model's own bookkeeping included.

:func:`round_profile` measures them through the real ``anthropic`` SDK against the local fake server
(:class:`~coordkit.llm.fake_server.FakeLLMServer`, in a process of its own), answering with the stand-in at a
set latency. Wall-clock numbers vary from run to run: they never enter a figure's data.
"""

import functools
import multiprocessing
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pandas as pd

from coordkit.llm.base import LLMClient
from coordkit.papers import numbers
from coordkit.rep.movies import stand_in_server
from coordkit.rep.movies.model import MovieScheduling, RoundTiming

SHARES = ("inference", "waiting", "communication")
STARTUP_S = 30.0  # how long the fake server's process may take to start


def shares(timing: RoundTiming) -> dict[str, float]:
    """The round's inference, waiting and communication shares (they sum to 1)."""
    inference = sum(timing.agent_call_s) / len(timing.agent_call_s) / timing.wall_s
    communication = timing.communication_s / timing.wall_s
    return {"inference": inference, "waiting": 1 - inference - communication, "communication": communication}


@dataclass(frozen=True)
class RoundProfile:
    """One profiled round: its setting, its wall time, its calls and its shares."""

    agents: int
    latency_s: float
    max_concurrency: int
    protocol: str
    round_s: float  # the profiled round's wall time
    warm_up_s: float  # the warm-up round's (max_concurrency agents), which opens the client's connections
    calls: int  # LLM calls in the profiled round
    inference: float
    waiting: float
    communication: float

    def compare_with_paper(self) -> pd.DataFrame:
        """The paper's shares beside the kit's: columns metric, paper, kit."""
        paper = numbers("rep-movies-fig3-scaling")
        kit = {"inference": self.inference, "waiting": self.waiting, "communication": self.communication}
        rows = [(f"{name} share of a round", paper.text("runtime_share", name), f"{kit[name]:.0%}") for name in SHARES]
        rows.append(("round wall time", "(not reported)", f"{self.round_s:.2f} s for {self.agents} agents"))
        return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


def round_profile(
    agents: int = 200,
    latency_s: float = 0.2,
    max_concurrency: int = 64,
    *,
    protocol: str = "rep_numerical",
    seed: int = 0,
) -> RoundProfile:
    """Profile one round of ``agents`` LLM agents through the anthropic SDK against a fake server that answers with
    the stand-in after ``latency_s``, at most ``max_concurrency`` calls in flight.

    A round of ``max_concurrency`` agents first opens the client's connections (as many as the profiled round keeps
    in flight), so that the profiled round, the first of its model, pays none of that: it splits as the rounds after
    it do (checked against a second round when this was written: the same shares within a point). The server runs
    in a process of its own, as a provider's would: in this one, its threads would compete with the agents for the
    interpreter. This one imports the SDK while the server's starts. A dummy key is set for the duration if none is
    (only the fake server sees it).
    """
    with _server_process(latency_s) as server_url:
        from coordkit.llm.anthropic_client import KEY_VARIABLE, AnthropicClient, sdk  # here: the server needs no SDK

        sdk()  # imported while the server starts
        with _a_key(KEY_VARIABLE):
            client = AnthropicClient(base_url=server_url(), timeout_s=10.0)
            warm_up = _one_round(protocol, max(2, min(agents, max_concurrency)), client, max_concurrency, seed)
            model = _one_round(protocol, agents, client, max_concurrency, seed)
    (timing,) = model.round_timings
    return RoundProfile(
        agents=agents,
        latency_s=latency_s,
        max_concurrency=max_concurrency,
        protocol=protocol,
        round_s=timing.wall_s,
        warm_up_s=warm_up.round_timings[0].wall_s,
        calls=model.llm_calls,
        **shares(timing),
    )


def _one_round(protocol: str, agents: int, client: LLMClient, max_concurrency: int, seed: int) -> MovieScheduling:
    """A model of ``agents`` LLM agents asking ``client``, after its first round."""
    model = MovieScheduling(
        protocol=protocol, population=agents, rounds=1, llm=client, max_concurrency=max_concurrency, rng=seed
    )
    model.step()
    return model


@contextmanager
def _server_process(latency_s: float) -> Iterator[Callable[[], str]]:
    """A fake server starting in a fresh process, stopped on exit: the function given waits for its URL."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=stand_in_server.serve, args=(latency_s, theirs), daemon=True)
    process.start()
    theirs.close()  # so that a server process that dies is seen as the end of the pipe

    def url() -> str:
        try:
            if not ours.poll(STARTUP_S):
                raise RuntimeError(f"the fake server process did not start within {STARTUP_S:g} s")
            return ours.recv()
        except EOFError:
            raise RuntimeError(
                "the fake server process stopped before serving (a script read from stdin cannot start processes: "
                "run from a file or a notebook)"
            ) from None

    try:
        yield functools.cache(url)
    finally:
        if process.is_alive():
            ours.send("stop")
        process.join(timeout=STARTUP_S)


@contextmanager
def _a_key(variable: str) -> Iterator[None]:
    """The SDK needs a key even for a local server: a dummy one while none is set."""
    previous = os.environ.get(variable)
    if previous and previous.strip():
        yield
        return
    os.environ[variable] = "sk-ant-profile-not-a-real-key"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[variable]
        else:
            os.environ[variable] = previous
