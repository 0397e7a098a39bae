"""The `LLMClient` interface: one request in, one reply out, synchronous or async."""

import asyncio
import os
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

SECRET_VARIABLES = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


def scrub(text: str, *variables: str) -> str:
    """``text`` with the value of every API-key variable (and of ``variables``, a client's own) replaced, so no key
    reaches a file, a log or an error. A value is stripped first; one under 8 characters is no key, and replacing
    it would garble the text."""
    for name in (*SECRET_VARIABLES, *variables):
        secret = os.environ.get(name, "").strip()
        if len(secret) >= 8:
            text = text.replace(secret, f"[{name} redacted]")
    return text


class LLMError(RuntimeError):
    """A call that did not produce a usable reply (network, rate limit, refusal): policies fall back.

    The message is scrubbed of API keys (an upstream may echo the key in its error body), so a client raises it
    ``from None`` and names the underlying error in ``cause`` instead of chaining it. ``retries`` counts the
    attempts after the first that also failed, ``rate_limited`` the attempts the provider refused as over its
    limit (429, 529), and ``waited_s`` the seconds the call waited because the provider asked, for the ledger;
    ``sent`` is False for a call stopped before any request left (the ledger does not count it as a failed call).
    """

    def __init__(
        self,
        message: str = "",
        *,
        cause: str = "",
        retries: int = 0,
        rate_limited: int = 0,
        waited_s: float = 0.0,
        sent: bool = True,
    ):
        super().__init__(scrub(str(message)))
        self.cause = cause or type(self).__name__
        self.retries = retries
        self.rate_limited = rate_limited
        self.waited_s = waited_s
        self.sent = sent


class StopRun(LLMError):
    """A failure that must stop the run rather than fall back: nothing the rules could stand in for.

    One that stops a :func:`coordkit.sweeps.sweep` carries what the sweep had done: ``results``, the runs that had
    finished (a DataFrame, in task order), and ``failures``, the runs that had failed; elsewhere both are None.
    """

    headline = "Run stopped"  # what a notebook or the command line says first
    results = None  # set by coordkit.sweeps.sweep: the finished runs
    failures = None  # set by coordkit.sweeps.sweep: the failed runs (params, seed, error, trace)


class BudgetExceeded(StopRun):
    """A call refused because it could take the run over its budget. It stops the run: it is not a fallback."""

    headline = "Budget reached"


class UnpricedModel(StopRun):
    """A call refused before it was sent because its model has no price, so what it costs could not be counted."""

    headline = "No price for the model"


class ProviderUnavailable(StopRun):
    """The provider failed many calls in a row (see :mod:`coordkit.llm.attempts`): the run stops, naming its last
    answer, rather than fall back on every decision."""

    headline = "Provider unavailable"


MAX_TOKENS_PER_CALL = 10_000_000  # more than any model reads and writes in one call (Claude's context: 1M)


def token_count(value, where: str) -> int:
    """A reply's token count, checked: a whole number from 0 to :data:`MAX_TOKENS_PER_CALL`; otherwise the reply is
    an :class:`LLMError` (a NaN, negative or huge count would switch a budget off or break the ledger)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS_PER_CALL:
        raise LLMError(f"the reply's {where} is {str(value)[:40]!r}, not a count of tokens", cause="OddUsage")
    return value


@dataclass(frozen=True)
class LLMRequest:
    """What a policy asks: a system prompt, the conversation, and sampling parameters.

    The REP paper's experiments use temperature 0.1 and max_tokens 300 (Appendix A, Table 2).
    """

    system: str
    messages: tuple[tuple[str, str], ...]  # (role, text) pairs; role is "user" or "assistant"
    temperature: float = 0.1
    max_tokens: int = 300
    model: str | None = None  # None: the client's default model
    purpose: str = ""  # a short label (e.g. "rep.decide") for ledgers and recordings

    @classmethod
    def user(cls, system: str, prompt: str, **options) -> "LLMRequest":
        """A single-turn request: one user message under a system prompt."""
        return cls(system=system, messages=(("user", prompt),), **options)


@dataclass(frozen=True)
class LLMReply:
    """The model's text and what it cost."""

    text: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    metadata: dict = field(default_factory=dict, compare=False)


class LLMClient(ABC):
    """Anything that answers an :class:`LLMRequest`.

    Implementations raise :class:`LLMError` for every failure they cannot recover from, so that a policy can
    fall back to its rule-based decision.
    """

    default_model: str = "unknown"
    billable: bool = True  # its calls cost money (replays and scripts do not)

    @abstractmethod
    def complete(self, request: LLMRequest) -> LLMReply:
        """Answer one request (blocking)."""

    def note_fallback(self, reason: str) -> None:
        """A policy fell back to its rules after asking this client (a metered client counts it; others ignore it)."""
        return

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        """Answer one request without blocking the event loop (default: the sync call in a worker thread)."""
        return await asyncio.to_thread(self.complete, request)
