"""How many calls a client keeps in flight: found from the provider's answers, or fixed by the user.

A provider's limit is not known in advance (it depends on the account's tier, the model and the load), so by
default a client finds it from the answers, as TCP finds a network's capacity (RFC 5681; BIC, Xu et al. 2004):

- **slow start**: the limit starts at :data:`INITIAL_LIMIT` and grows by one for every call that succeeds while
  at least half the limit is in use, so it doubles every round trip, up to :data:`MAX_IN_FLIGHT`;
- **multiplicative decrease**: a refusal (HTTP 429: the account's limit) multiplies the limit by :data:`BACKOFF`
  and remembers the number in flight when it came (the level refused). Answers to calls that started before that
  cut do not cut again (one cut per round trip). A refused call gives up its slot while it waits to retry, and
  its retry queues for a slot like a new call, so retries never push past the limit;
- **binary increase**: the limit then climbs halfway to one below the level refused every round trip and stays
  there; after :data:`PROBE_AFTER` round trips it tries one more. A refused probe returns it to the level that
  worked (no cut: the provider has not shrunk, the probe found its edge); a probe that succeeds forgets the level
  and the limit grows by one a round trip (additive increase) until the next refusal;
- **transient overload** (HTTP 529, the provider overloaded as a whole, or an attempt that timed out) cuts the
  limit the same way but remembers no level: it grows back by one a round trip.

The provider's rate-limit headers stop new calls *before* they are refused: when an answer says that no
requests (or tokens) remain, no new call starts before the time it gives. Read: Anthropic's
``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{remaining,reset}`` (reset an RFC 3339 time)
and OpenAI's ``x-ratelimit-remaining-{requests,tokens}`` with ``x-ratelimit-reset-{requests,tokens}`` (a duration:
``1s``, ``6m0s``, ``20ms``). ``retry-after`` belongs to the call that got it: its retry waits that long.

With a fixed ``max_concurrency`` the limit starts there and never goes above it; it still backs off when the
provider refuses, and regrows up to it.

**The invariant**: the limit stays in [1, ceiling] whatever the provider answers, so some call can always start:
a call waiting for a slot is woken as soon as the calls in flight drop below the limit, and a wake meant for a
call that was cancelled passes to the next. A pause the headers ask for is at most ``max_pause_s``, and every
attempt and wait of a call in flight is bounded by its client (:mod:`coordkit.llm.attempts`), so the calls in
flight end and free their slots for the calls waiting; tests/test_llm_throttle.py checks this on thousands of
random answers. Slots are not handed out in order, though (a new call may take a slot that frees up before a woken
call does, and a retry queues again like a new call): this bounds no one call's wait for a slot, only makes a
finite number of calls (a round's) all end.
"""

import asyncio
import math
import re
import threading
import time
from asyncio import sleep  # this module's own name: a test can pause on a clock of its own (with time)
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

INITIAL_LIMIT = 64  # calls in flight before the provider has answered anything
MAX_IN_FLIGHT = 512  # the most an adaptive limit reaches (and the connections a client keeps open)
BACKOFF = 0.7  # the share of the limit kept after an overload answer (CUBIC's; TCP Reno keeps 0.5)
PROBE_AFTER = 5  # round trips at one below the level refused before trying one more: at 50 in flight, one
# refused probe in 5 x 50 requests (0.4%)
REFUSED, OVERLOADED = 429, 529
OVERLOAD_STATUS = frozenset({REFUSED, OVERLOADED})
_REMAINING_HEADERS = {  # remaining-count header → its reset header
    **{
        f"anthropic-ratelimit-{kind}-remaining": f"anthropic-ratelimit-{kind}-reset"
        for kind in ("requests", "tokens", "input-tokens", "output-tokens")
    },
    **{f"x-ratelimit-remaining-{kind}": f"x-ratelimit-reset-{kind}" for kind in ("requests", "tokens")},
}
MAX_PAUSE_S = 60.0  # the longest a reset header can hold new calls (a client may choose less)


@dataclass
class CallRecord:
    """One call as its client sees it across attempts, for the ledger and the concurrency's feedback."""

    ticket: int = 0  # its number in the client's Concurrency (0: a synchronous call, not counted there)
    in_flight: int = 1  # calls in flight when it started, itself included
    holding: bool = False  # it holds a slot (a refused call gives its slot up until it retries)
    waited_s: float = 0.0  # seconds it waited because the provider asked (quota resets, retry-after, backoff)
    attempts: int = 0
    answers: int = 0  # attempts that got an HTTP answer (the others timed out or lost their connection)
    overloads: int = 0  # answers 429 or 529


class Concurrency:
    """The limit on one client's calls in flight, with the most reached (``peak``) and the overloads seen.

    ``max_concurrency`` None adapts (see the module docstring); a number fixes the ceiling. Usable from any
    event loop and thread: a waiting call is woken on its own loop.
    """

    def __init__(self, max_concurrency: int | None = None, max_pause_s: float = MAX_PAUSE_S):
        if max_concurrency is not None and (
            isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or max_concurrency < 1
        ):
            raise ValueError(
                f"max_concurrency={max_concurrency!r}: give a whole number of calls in flight, at least 1, "
                "or None to adapt to the provider's limit"
            )
        self.fixed = max_concurrency
        self.ceiling = max_concurrency or MAX_IN_FLIGHT
        self.limit = float(max_concurrency or INITIAL_LIMIT)
        self.slow_start = max_concurrency is None
        self.refused_at: int | None = None  # calls in flight when the provider last refused (None: not known)
        self._quiet = 0  # successes at one below that level, since the last probe
        self.in_flight = 0
        self.peak = 0  # the most calls in flight at once so far
        self.overloads = 0  # refusals, overloads and timed-out attempts seen
        self._started = 0  # calls started so far (a call's ticket is its number)
        self._last_cut = -1  # the ticket of the last call started before the latest cut
        self._resume_at = 0.0  # time.monotonic() before which no new call starts
        self.max_pause_s = max_pause_s
        self.on_pause: Callable[[float], None] | None = None  # told of each pause the headers ask for, before it
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = deque()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        mode = f"fixed at most {self.fixed}" if self.fixed else "adaptive"
        return f"Concurrency({mode}, limit {int(self.limit)}, {self.in_flight} in flight, peak {self.peak})"

    async def hold(self, call: CallRecord) -> None:
        """Make sure ``call`` holds a slot before its next attempt (a refused call gave its slot up); its first
        slot also sets its ``in_flight``."""
        if not call.holding:
            first = not call.ticket
            call.ticket = await self.acquire(call)
            call.holding = True
            if first:
                call.in_flight = self.in_flight

    def give_up(self, call: CallRecord) -> None:
        """``call`` ended, or was refused and waits to retry: free its slot."""
        if call.holding:
            call.holding = False
            self.release()

    async def acquire(self, call: CallRecord | None = None) -> int:
        """Wait for a free slot (and for any pause the provider asked for, added to ``call.waited_s``); the
        call's ticket."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                pause = self._resume_at - time.monotonic()
                if pause <= 0 and self.in_flight < int(self.limit):
                    self.in_flight += 1
                    self.peak = max(self.peak, self.in_flight)
                    self._started += 1
                    return self._started
                if pause <= 0:
                    waiter = loop.create_future()
                    self._waiters.append((loop, waiter))
            if pause > 0:
                if self.on_pause is not None:
                    self.on_pause(pause)
                await sleep(pause)
                if call is not None:
                    call.waited_s += pause
                continue
            try:
                await waiter
            except asyncio.CancelledError:
                with self._lock:
                    if (loop, waiter) in self._waiters:
                        self._waiters.remove((loop, waiter))
                    else:
                        self._wake()  # it was woken for a slot it will not take: pass the wake on
                raise

    def release(self) -> None:
        """A call ended (replied or failed): its slot is free."""
        with self._lock:
            self.in_flight -= 1
            self._wake()

    def succeeded(self, ticket: int, headers: Mapping[str, str] | None = None) -> None:
        """Call ``ticket`` was answered: grow the limit if it was in use, and honour the provider's quota headers."""
        with self._lock:
            if self.in_flight >= self.limit / 2:
                self.limit = min(self.ceiling, self._grown(ticket))
            pause = min(quota_pause_s(headers or {}), self.max_pause_s)
            if pause:
                self._resume_at = max(self._resume_at, time.monotonic() + pause)
            self._wake()

    def _grown(self, ticket: int) -> float:
        """The limit after one more success while in use (see the module docstring)."""
        if self.slow_start:
            return self.limit + 1
        if self.refused_at is None:
            return self.limit + 1 / self.limit
        if ticket > self._last_cut and self.in_flight >= self.refused_at:  # a probe passed: that level is gone
            self.refused_at = None
            return self.limit + 1 / self.limit
        below = self.refused_at - 1
        if self.limit < below:
            return min(below, self.limit + max((below - self.limit) / 2, 1) / self.limit)
        self._quiet += 1
        if self._quiet < PROBE_AFTER * self.limit:
            return self.limit
        self._quiet = 0
        return self.limit + 1

    def refused(self, ticket: int) -> None:
        """The provider refused call ``ticket`` as over the account's limit (429): cut the limit (once a round
        trip) and remember the level, or, when a probe at or above the level already refused was refused, go back
        below that level."""
        with self._lock:
            self.overloads += 1
            if ticket <= self._last_cut:
                return
            level = self.in_flight
            if self.refused_at is not None and level >= self.refused_at:
                self.limit = max(1.0, min(self.limit, self.refused_at - 1.0))
            else:
                self.refused_at = level
                self.limit = max(1.0, min(self.limit, level) * BACKOFF)
            self._after_cut()

    def overloaded(self, ticket: int) -> None:
        """The provider was overloaded (529) or call ``ticket``'s attempt timed out: cut the limit (once a round
        trip), remembering no level."""
        with self._lock:
            self.overloads += 1
            if ticket <= self._last_cut:
                return
            self.refused_at = None
            self.limit = max(1.0, min(self.limit, self.in_flight) * BACKOFF)
            self._after_cut()

    def _after_cut(self) -> None:
        self.slow_start = False
        self._quiet = 0
        self._last_cut = self._started

    def _wake(self) -> None:
        """Wake as many waiting calls as there are free slots (each checks again, as another may come first)."""
        free = int(self.limit) - self.in_flight
        while free > 0 and self._waiters:
            loop, waiter = self._waiters.popleft()
            loop.call_soon_threadsafe(_resolve, waiter)
            free -= 1


def _resolve(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_result(None)


def quota_pause_s(headers: Mapping[str, str]) -> float:
    """Seconds until a quota the headers say is used up resets (0 when every quota has some left). ``headers`` is
    an answer's, as httpx gives them (names in any case)."""
    pause = 0.0
    for remaining, reset in _REMAINING_HEADERS.items():
        if _number(headers.get(remaining, "")) == 0:
            pause = max(pause, _seconds_until(headers.get(reset, "")))
    return min(pause, MAX_PAUSE_S)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def _seconds_until(reset: str) -> float:
    """A reset header as seconds from now: an RFC 3339 time (Anthropic) or a duration such as ``6m0s`` (OpenAI)."""
    reset = reset.strip()
    parts = _DURATION.findall(reset)
    if parts and "".join(f"{number}{unit}" for number, unit in parts) == reset:
        return sum(float(number) * _UNIT_S[unit] for number, unit in parts)
    try:
        moment = datetime.fromisoformat(reset.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    if moment.tzinfo is None:
        return 0.0
    seconds = moment.timestamp() - time.time()
    return seconds if math.isfinite(seconds) and seconds > 0 else 0.0
