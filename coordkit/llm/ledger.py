"""Counting what a run spends, and stopping it before it spends more than allowed.

:class:`MeteredClient` wraps any client: every call goes into a :class:`Ledger` (calls, failures, retries,
tokens and dollars per model, and the decisions that fell back to rules, by reason), and with ``budget_usd`` a
call is refused *before* it is sent if it could take the run over budget. Until a reply reports its real usage,
a call in flight holds a worst-case reservation — its prompt's UTF-8 bytes as input tokens (a token is at least
one byte) plus ``max_tokens`` of output — so concurrent calls cannot overshoot together either.

Retries count the attempts after the first of every call, failed calls included, so that calls + failed +
retries is the number of requests the API received. ``rate_limited`` counts the attempts the provider refused as
over its limit (429, 529), ``peak_in_flight`` the most calls a client had in flight at once (what its
adaptive concurrency reached; see :mod:`coordkit.llm.throttle`), and ``waited_s`` the seconds calls waited
because the provider asked (retry-after, quota resets) or backed off after a failure.

**A budget the provider cannot switch off.** A call is priced by the model the run *asked for*, whose price is
known before the call is sent (a billable call to a model without a price is refused, :class:`UnpricedModel`),
never by the model named in the reply. Token counts are checked whole numbers (an odd count makes the reply an
:class:`LLMError`), so ``spent_usd`` is never NaN or negative. A reply whose usage costs more than the call's
worst case, which no real request can produce, is an :class:`LLMError` too, charged at that worst case: what is
spent never passes the budget.
"""

import math
import threading
from collections import Counter, defaultdict
from collections.abc import Mapping
from contextlib import contextmanager

import pandas as pd

from coordkit.llm.base import BudgetExceeded, LLMClient, LLMError, LLMReply, LLMRequest, UnpricedModel, token_count
from coordkit.llm.prices import PriceTable

# tokens the API adds around the system prompt and each message (role markers), an upper bound
_FRAMING_TOKENS = 16


class Ledger:
    """Calls, tokens and dollars per model. Thread-safe; replayed calls are counted but cost nothing."""

    COLUMNS = (
        "model", "calls", "replayed", "failed", "retries", "rate_limited", "peak_in_flight",
        "input_tokens", "output_tokens", "waited_s", "usd",
    )  # fmt: skip
    FLOATS = ("waited_s", "usd")

    def __init__(self, prices: PriceTable | Mapping[str, tuple[float, float]] | None = None):
        self.prices = prices if isinstance(prices, PriceTable) else PriceTable(prices)
        self._rows: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(self.COLUMNS[1:], 0))
        self.fallbacks: Counter[str] = Counter()  # reason → decisions that fell back to the rules
        self._lock = threading.Lock()

    def cost(self, model: str, reply: LLMReply, billable: bool = True) -> float:
        """What ``reply`` to a call asking for ``model`` costs: 0 unless ``billable`` and not replayed. Raises
        :class:`LLMError` for token counts that are not whole numbers from 0 up, :class:`UnpricedModel` for a
        billable model without a price."""
        input_tokens = token_count(reply.input_tokens, "input token count")
        output_tokens = token_count(reply.output_tokens, "output token count")
        if not billable or reply.metadata.get("replayed"):
            return 0.0
        price = self.prices.get(model)
        if price is None:
            raise UnpricedModel(unpriced(model))
        return price.cost(input_tokens, output_tokens)

    def add(self, reply: LLMReply, billable: bool = True, *, model: str | None = None, usd: float | None = None):
        """Count a reply to a call that asked for ``model`` (default: the reply's own, for replies the kit made
        itself), at ``usd`` (default: :meth:`cost`)."""
        model = model or reply.model
        usd = self.cost(model, reply, billable) if usd is None else usd
        metadata = reply.metadata
        with self._lock:
            row = self._rows[model]
            row["calls"] += 1
            row["replayed"] += bool(metadata.get("replayed"))
            row["retries"] += metadata.get("retries", 0)
            row["rate_limited"] += metadata.get("rate_limited", 0)
            row["peak_in_flight"] = max(row["peak_in_flight"], metadata.get("in_flight", 0))
            row["input_tokens"] += reply.input_tokens
            row["output_tokens"] += reply.output_tokens
            row["waited_s"] += metadata.get("waited_s", 0.0)
            row["usd"] += usd

    def add_failure(
        self, model: str, retries: int = 0, rate_limited: int = 0, waited_s: float = 0.0, usd: float = 0.0
    ) -> None:
        """Count a call that failed after ``retries`` further attempts, ``rate_limited`` of them refused as over
        the provider's limit, having waited ``waited_s``; ``usd`` is charged when the provider may have billed it."""
        with self._lock:
            row = self._rows[model]
            row["failed"] += 1
            row["retries"] += retries
            row["rate_limited"] += rate_limited
            row["waited_s"] += waited_s
            row["usd"] += usd

    def add_fallback(self, reason: str) -> None:
        """Count a decision that fell back to its rules, and why ("unparseable reply", "call failed (...)")."""
        with self._lock:
            self.fallbacks[reason] += 1

    @property
    def spent_usd(self) -> float:
        with self._lock:
            return sum(row["usd"] for row in self._rows.values())

    @property
    def calls(self) -> int:
        with self._lock:
            return int(sum(row["calls"] for row in self._rows.values()))

    def summary(self) -> pd.DataFrame:
        """One row per model asked for: calls (replayed among them), failed calls, retries, rate-limit answers,
        the most calls in flight at once, tokens, seconds waited and dollars."""
        with self._lock:
            rows = [{"model": model, **row} for model, row in sorted(self._rows.items())]
        frame = pd.DataFrame(rows, columns=list(self.COLUMNS))
        counts = [c for c in self.COLUMNS if c not in ("model", *self.FLOATS)]
        return frame.astype({c: int for c in counts} | dict.fromkeys(self.FLOATS, float))

    @property
    def failed(self) -> int:
        with self._lock:
            return int(sum(row["failed"] for row in self._rows.values()))

    @property
    def fallback_count(self) -> int:
        with self._lock:
            return sum(self.fallbacks.values())

    def __str__(self) -> str:
        frame = self.summary()
        if frame.empty:
            return "no LLM calls"
        table = frame.to_string(index=False, formatters={"usd": "${:,.4f}".format, "waited_s": "{:,.1f}".format})
        with self._lock:
            reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(self.fallbacks.items()))
        fell_back = f"{sum(self.fallbacks.values())} decisions fell back to rules ({reasons})" if reasons else ""
        return f"{table}\n{fell_back or 'no decision fell back to rules'}"


def dollars(amount: float) -> str:
    """An amount in dollars with the cents, and more digits where the cents would round it ($0.005, not $0.01)."""
    cents = f"{amount:,.2f}"
    return f"${cents}" if round(amount, 2) == amount else f"${amount:,.6f}".rstrip("0")


def check_budget(budget_usd: float | None) -> None:
    """A budget is a finite number of dollars, 0 or more, or None for no limit: a NaN would compare False with
    every spend and switch the limit off."""
    if budget_usd is None:
        return
    if isinstance(budget_usd, bool) or not isinstance(budget_usd, int | float) or not 0 <= budget_usd < math.inf:
        raise ValueError(
            f"budget_usd={budget_usd!r} is not a budget: give a finite number of dollars, 0 or more (e.g. 1.00), "
            "or None for no limit"
        )


def unpriced(model: str) -> str:
    """Why a call to ``model`` is refused, and how to give its price."""
    return (
        f"model {model!r} has no price in data/llm_prices.csv, so what its calls cost cannot be counted. Give its "
        "dollars per million input and output tokens (0 0 for a local model): on the command line --price INPUT "
        f"OUTPUT, in Python Ledger(prices={{{model!r}: (input_usd_per_mtok, output_usd_per_mtok)}})"
    )


class MeteredClient(LLMClient):
    """``inner`` with every call counted in ``ledger`` and, with ``budget_usd``, a spending limit."""

    def __init__(self, inner: LLMClient, ledger: Ledger | None = None, budget_usd: float | None = None):
        check_budget(budget_usd)
        self.inner = inner
        self.ledger = ledger or Ledger()
        self.budget_usd = budget_usd
        self.default_model = inner.default_model
        self.billable = inner.billable
        self._reserved = 0.0
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMReply:
        with self._metered(request) as count:
            return count(self.inner.complete(request))

    async def complete_async(self, request: LLMRequest) -> LLMReply:
        with self._metered(request) as count:
            return count(await self.inner.complete_async(request))

    @contextmanager
    def _metered(self, request: LLMRequest):
        """Hold the call's worst case while it runs; its real cost is in the ledger before the hold is freed.
        Yields the function that counts the reply (raising :class:`LLMError` for one the ledger cannot price)."""
        model = request.model or self.default_model
        hold = self._reserve(request, model)
        charged = 0.0  # what a failed call is charged (the worst case, when its reply claimed more)

        def count(reply: LLMReply) -> LLMReply:
            nonlocal charged
            usd = self.ledger.cost(model, reply, self.billable)
            if self.budget_usd is not None and usd > hold:
                charged = hold
                raise LLMError(
                    f"the reply to a call on {model!r} reports {reply.input_tokens:,} input and "
                    f"{reply.output_tokens:,} output tokens (${usd:,.4f}), more than the request can use "
                    f"(${hold:.4f}); it is charged at that worst case",
                    cause="OddUsage",
                )
            self.ledger.add(reply, self.billable, model=model, usd=usd)
            return reply

        try:
            yield count
        except Exception as error:
            if getattr(error, "sent", True):  # a call stopped before its first request is no failed call
                retries, rate_limited = getattr(error, "retries", 0), getattr(error, "rate_limited", 0)
                self.ledger.add_failure(model, retries, rate_limited, getattr(error, "waited_s", 0.0), charged)
            raise
        finally:
            with self._lock:
                self._reserved -= hold

    def note_fallback(self, reason: str) -> None:
        self.ledger.add_fallback(reason)

    def worst_case_usd(self, request: LLMRequest) -> float:
        """The most this call can cost: every prompt byte a token, and all of ``max_tokens`` used."""
        model = request.model or self.default_model
        price = self.ledger.prices.get(model)
        if price is None:
            raise UnpricedModel(unpriced(model))
        prompt = request.system + "".join(text for _, text in request.messages)
        input_bound = len(prompt.encode()) + _FRAMING_TOKENS * (1 + len(request.messages))
        return price.cost(input_bound, request.max_tokens)

    def _reserve(self, request: LLMRequest, model: str) -> float:
        """Check before the call is sent: a billable model has a price, and, with a budget, the worst case fits."""
        if not self.billable:
            return 0.0
        if self.ledger.prices.get(model) is None:
            raise UnpricedModel(unpriced(model))
        if self.budget_usd is None:
            return 0.0
        hold = self.worst_case_usd(request)
        with self._lock:
            committed = self.ledger.spent_usd + self._reserved
            if committed + hold > self.budget_usd:
                raise BudgetExceeded(
                    f"stopped before a call that could exceed the budget: ${committed:.4f} spent or in flight, "
                    f"this call up to ${hold:.4f}, budget {dollars(self.budget_usd)}. Raise the budget to go on."
                )
            self._reserved += hold
        return hold
