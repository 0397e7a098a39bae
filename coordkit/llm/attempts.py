"""One call to a provider, as both HTTP clients make it: a slot, attempts with a deadline each, bounded waits
between them, and an answer or a clear :class:`~coordkit.llm.base.LLMError` at the end.

**Bounds.** Each attempt (connection, headers *and* body) has one deadline, ``timeout_s``: a body that trickles
in a byte at a time is abandoned when it passes (the SDKs' own timeouts only bound each read). A wait between
attempts is what the provider asks for (``retry-after-ms``, ``retry-after`` in seconds or as an HTTP date) or
exponential backoff with jitter, and never more than ``max_wait_s``; quota headers pause new attempts for at most
as long each time (:mod:`coordkit.llm.throttle`). A call makes at most ``max_retries + 1`` attempts. That is what
is bounded, not a call's whole time: between attempts a call gives its slot up and queues for one again like a new
call, and a new call may take a slot that frees up before a waiting call does. Some call can always start (the
throttle's invariant), so the calls of a round all end; a typical refusal costs seconds.

**Waits are said.** A wait of :data:`LONG_WAIT_S` or more is told to the user once per client and reason
(a line on stderr: the notebook's cell output, or the terminal), and every call's waits add up in its
``waited_s``, which the ledger shows. A told line, like an error, is cleaned of API keys first: it quotes the
provider's own message, which can echo the key.

**A provider that refuses everything stops the run.** After :data:`FAILED_CALLS_TO_STOP` calls in a row have
failed (no answer in between), the next attempt raises :class:`~coordkit.llm.base.ProviderUnavailable`, a
:class:`~coordkit.llm.base.StopRun` naming the provider's last answer, and so does every call for the next
``max_wait_s``; then one may try again.
"""

import asyncio
import email.utils
import json
import math
import random
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from coordkit.llm.base import LLMError, LLMReply, ProviderUnavailable, scrub
from coordkit.llm.throttle import MAX_PAUSE_S, OVERLOAD_STATUS, REFUSED, CallRecord, Concurrency

INITIAL_RETRY_DELAY_S = 0.5  # the first backoff without a retry-after, doubled after every retry ...
MAX_RETRY_DELAY_S = 8.0  # ... up to this
MAX_WAIT_S = MAX_PAUSE_S  # the longest the provider's headers can make a call wait, by default
LONG_WAIT_S = 5.0  # a wait this long is told to the user (once per client and reason)
FAILED_CALLS_TO_STOP = 8  # calls failed in a row, with no answer between, before the run is stopped
RETRYABLE_STATUS = frozenset({408, 409, 429})  # and every 5xx


@dataclass(frozen=True)
class Answer:
    """One attempt's HTTP answer: its status, headers (looked up in any case) and body."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def provider_message(self) -> str:
        """The provider's own explanation: ``error.message`` when the body has one (both APIs), else its start.
        (JSON nested too deep for the parser raises RecursionError, not ValueError.)"""
        try:
            error = json.loads(self.body)["error"]
            return str(error["message"] if isinstance(error, dict) else error)[:300]
        except (ValueError, KeyError, TypeError, RecursionError):
            return self.body[:200].decode("utf-8", "replace") or f"HTTP {self.status}"


class AttemptFailed(Exception):
    """An attempt that got no HTTP answer: ``timed_out`` (its deadline passed) or a lost connection."""

    def __init__(self, problem: str, *, timed_out: bool, cause: str):
        super().__init__(problem)
        self.timed_out = timed_out
        self.cause = cause


class Exchange:
    """What a client adds to the shared loop: how to send one attempt, read a reply, and explain a refusal."""

    provider: str  # how errors name it: "the Anthropic API", "http://localhost:11434/v1/chat/completions"

    async def send(self, request, retry: int) -> Answer:
        """One attempt (``retry`` 0 for the first), no retries of its own; raises :class:`AttemptFailed` when no
        answer came."""
        raise NotImplementedError

    def read(self, answer: Answer, request) -> LLMReply:
        """The reply in a successful answer; raises :class:`LLMError` for one that cannot be read."""
        raise NotImplementedError

    def rejected(self, answer: Answer, request) -> str:
        """Why an answer that is not retried (401, 404, ...) failed, with the fix."""
        return f"HTTP {answer.status}: {answer.provider_message()}"

    def mask(self, text: str) -> str:
        """``text`` with any secret of the client's own hidden (the usual API-key variables always are)."""
        return text


class CallPolicy:
    """The attempts of every call of one client: its :class:`Concurrency`, deadlines, waits and stop."""

    def __init__(
        self,
        exchange: Exchange,
        concurrency: Concurrency,
        *,
        timeout_s: float,
        max_retries: int,
        max_wait_s: float = MAX_WAIT_S,
        tell: Callable[[str], None] | None = None,
    ):
        for name, value, low in (("timeout_s", timeout_s, 0), ("max_wait_s", max_wait_s, 0)):
            if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < math.inf:
                raise ValueError(f"{name}={value!r}: give a finite number of seconds above 0")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise ValueError(f"max_retries={max_retries!r}: give a whole number of retries, 0 or more")
        self.exchange = exchange
        self.concurrency = concurrency
        concurrency.max_pause_s = min(concurrency.max_pause_s, max_wait_s)
        concurrency.on_pause = lambda seconds: self._say_wait(seconds, "its rate-limit headers say a quota is used up")
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_wait_s = max_wait_s
        self.tell = tell or _to_stderr
        self._told: set[str] = set()
        self.failed_in_a_row = 0
        self.last_failure = ""  # the provider's last answer that failed a call
        self._stopped_until = 0.0  # time.monotonic() before which every call stops at once
        self._lock = threading.Lock()

    async def call(self, request) -> LLMReply:
        """Answer ``request``, or raise :class:`LLMError`: at most ``max_retries + 1`` attempts of ``timeout_s``
        each, with waits of at most ``max_wait_s`` between them (see the module docstring)."""
        call = CallRecord()
        self._check_running(call)
        try:
            await self.concurrency.hold(call)
            started = time.perf_counter()  # latency counts from the slot
            while True:
                self._check_running(call)
                await self.concurrency.hold(call)  # a retry after a refusal queues for a slot again
                outcome = await self._attempt(request, call)
                if isinstance(outcome, Answer) and outcome.ok:
                    self._answered()
                    reply = self._read(outcome, request, call)
                    return _with_metadata(reply, call, time.perf_counter() - started)
                problem, wait = self._problem(outcome, request, call)
                if wait is None:
                    raise self._failed(problem, call, outcome) from None
                self._say_wait(wait, f"it asked to wait ({problem})")
                await asyncio.sleep(wait)
                call.waited_s += wait
        finally:
            self.concurrency.give_up(call)

    async def _attempt(self, request, call: CallRecord) -> Answer | AttemptFailed:
        """One attempt within its deadline; what it taught the concurrency is told to it."""
        call.attempts += 1
        try:
            async with asyncio.timeout(self.timeout_s):
                outcome = await self.exchange.send(request, call.attempts - 1)
        except TimeoutError:
            outcome = AttemptFailed(f"did not answer within {self.timeout_s:g} s", timed_out=True, cause="Timeout")
        except AttemptFailed as failed:
            outcome = failed
        self._learn(outcome, call)
        return outcome

    def _learn(self, outcome: Answer | AttemptFailed, call: CallRecord) -> None:
        if isinstance(outcome, Answer):
            call.answers += 1
            if outcome.ok:
                self.concurrency.succeeded(call.ticket, outcome.headers)
                return
            if outcome.status not in OVERLOAD_STATUS:
                return  # another failure says nothing of the provider's load
            call.overloads += 1
            if outcome.status == REFUSED:
                self.concurrency.refused(call.ticket)
            else:
                self.concurrency.overloaded(call.ticket)
        elif outcome.timed_out:
            self.concurrency.overloaded(call.ticket)
        self.concurrency.give_up(call)  # while it waits to retry

    def _problem(self, outcome: Answer | AttemptFailed, request, call: CallRecord) -> tuple[str, float | None]:
        """What went wrong, and how long to wait before retrying (None: not retried)."""
        if isinstance(outcome, AttemptFailed):
            problem, retryable, headers = str(outcome), True, {}
        else:
            retryable = outcome.status in RETRYABLE_STATUS or outcome.status >= 500
            headers = outcome.headers
            if retryable:
                problem = f"answered HTTP {outcome.status}: {outcome.provider_message()}"
            else:
                problem = f"rejected the request: {self.exchange.rejected(outcome, request)}"
        if not retryable:
            return problem, None
        if call.attempts > self.max_retries:
            return f"{problem} (gave up after {call.attempts} attempt{'s' if call.attempts > 1 else ''})", None
        return problem, self.retry_delay(call.attempts - 1, headers)

    def retry_delay(self, attempt: int, headers: Mapping[str, str]) -> float:
        """Seconds before retry ``attempt + 1``: what the provider asks for, else backoff with jitter; at most
        ``max_wait_s``."""
        asked = _asked_wait_s(headers)
        if asked is None:
            asked = min(INITIAL_RETRY_DELAY_S * 2**attempt, MAX_RETRY_DELAY_S) * (1 - 0.25 * random.random())
        return min(asked, self.max_wait_s)

    def _read(self, answer: Answer, request, call: CallRecord) -> LLMReply:
        try:
            return self.exchange.read(answer, request)
        except LLMError as error:
            raise self._error(str(error), call, error.cause) from None

    def _failed(self, problem: str, call: CallRecord, outcome: Answer | AttemptFailed) -> LLMError:
        """The error ending a call, counted towards stopping the run."""
        cause = outcome.cause if isinstance(outcome, AttemptFailed) else f"HTTP {outcome.status}"
        error = self._error(problem, call, cause)
        with self._lock:
            self.failed_in_a_row += 1
            self.last_failure = str(error)
            if self.failed_in_a_row >= FAILED_CALLS_TO_STOP:
                self._stopped_until = time.monotonic() + self.max_wait_s
        return error

    def _answered(self) -> None:
        with self._lock:
            self.failed_in_a_row = 0
            self._stopped_until = 0.0

    def _check_running(self, call: CallRecord) -> None:
        """Stop here if the provider has failed :data:`FAILED_CALLS_TO_STOP` calls in a row just now."""
        with self._lock:
            if time.monotonic() < self._stopped_until:
                raise ProviderUnavailable(
                    f"{self.failed_in_a_row} calls in a row failed, so the run stops rather than fall back on every "
                    f"decision. The last: {self.last_failure}",
                    retries=max(call.attempts - 1, 0),
                    rate_limited=call.overloads,
                    waited_s=call.waited_s,
                    sent=call.attempts > 0,
                )

    def _clean(self, text: str) -> str:
        """``text`` without any API key: what every error and every told line passes through (a provider's own
        message can echo the key)."""
        return scrub(self.exchange.mask(text))

    def _tell(self, line: str) -> None:
        """Say ``line`` to the user (stderr, or the ``tell`` given), cleaned of keys."""
        self.tell(self._clean(line))

    def _error(self, problem: str, call: CallRecord, cause: str = "") -> LLMError:
        message = self._clean(f"{self.exchange.provider} {problem}")
        return LLMError(
            message,
            cause=cause,
            retries=max(call.attempts - 1, 0),
            rate_limited=call.overloads,
            waited_s=call.waited_s,
        )

    def _say_wait(self, seconds: float, why: str) -> None:
        """Tell the user of a long wait, once per reason."""
        reason = why.split("(")[0]
        if seconds < LONG_WAIT_S or reason in self._told:
            return
        self._told.add(reason)
        cap = f"at most {self.max_wait_s:g} s" if seconds >= self.max_wait_s else "as asked"
        self._tell(f"coordkit: {self.exchange.provider} is making calls wait {round(seconds, 2):g} s ({cap}): {why}")


def _asked_wait_s(headers: Mapping[str, str]) -> float | None:
    """The wait a refusal asks for, in seconds: ``retry-after-ms``, else ``retry-after`` (seconds or an HTTP
    date); None when it asks for none we can read."""
    for name, unit_s in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        text = headers.get(name)
        if text is None:
            continue
        try:
            asked = float(text) * unit_s
        except ValueError:
            asked = _seconds_until_http_date(text) if name == "retry-after" else math.nan
        if asked >= 0:  # NaN compares False
            return asked
    return None


def _seconds_until_http_date(text: str) -> float:
    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return math.nan
    return max(moment.timestamp() - time.time(), 0.0) if moment.tzinfo else math.nan


def _with_metadata(reply: LLMReply, call: CallRecord, latency_s: float) -> LLMReply:
    metadata = {
        "retries": call.attempts - 1,
        "rate_limited": call.overloads,
        "in_flight": call.in_flight,
        "waited_s": round(call.waited_s, 3),
    }
    return LLMReply(reply.text, reply.model, reply.input_tokens, reply.output_tokens, latency_s, metadata)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
