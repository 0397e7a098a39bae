"""The Policy idea shared by every domain (design: "Policies and LLMs").

A policy turns what an agent observes into a decision. Every decision a paper gives to an LLM goes through an
:class:`LLMPolicy`, which asks its client, parses the reply, and falls back to a rule-based policy when the call
fails or the reply cannot be parsed. Fallbacks are counted by reason, never silent. A call refused by the budget
(:class:`~coordkit.llm.base.BudgetExceeded`) is not a fallback: it stops the run.

Every policy also has ``adecide``, the same decision awaitable, so a model can run one round's LLM calls
concurrently (:mod:`coordkit.llm.aio`).
"""

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from typing import Any

from coordkit.llm.base import BudgetExceeded, LLMClient, LLMReply, LLMRequest


class ReplyParseError(ValueError):
    """An LLM reply that does not have the form the prompt asked for."""


class Policy(ABC):
    """Maps an observation to a decision. Rule-based policies are deterministic given the observation."""

    name: str = "policy"

    @abstractmethod
    def decide(self, observation: Any) -> Any:
        """Return the decision for this observation."""

    async def adecide(self, observation: Any) -> Any:
        """The same decision, awaitable (rule-based policies answer at once)."""
        return self.decide(observation)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class RulePolicy(Policy):
    """A rule-based policy made from a plain function of the observation."""

    def __init__(self, rule: Callable[[Any], Any], name: str | None = None):
        self.rule = rule
        self.name = name or rule.__name__

    def decide(self, observation: Any) -> Any:
        return self.rule(observation)


class LLMPolicy(Policy):
    """An LLM-backed decision with a rule-based fallback.

    ``build_request(observation)`` writes the prompt; ``parse(text, observation)`` turns the reply into a
    decision or raises :class:`ReplyParseError` (any ``ValueError``). A failed call (any exception from the
    client but a budget stop) or an unparseable reply makes the policy return ``fallback.decide(observation)``,
    count why in ``fallbacks`` and keep the latest message in ``last_failure``.
    """

    def __init__(
        self,
        client: LLMClient,
        build_request: Callable[[Any], LLMRequest],
        parse: Callable[[str, Any], Any],
        fallback: Policy,
        name: str = "llm",
    ):
        self.client = client
        self.build_request = build_request
        self.parse = parse
        self.fallback = fallback
        self.name = name
        self.llm_decisions = 0
        self.fallbacks: Counter[str] = Counter()
        self.last_failure: dict[str, str] = {}  # reason → the latest error message (and reply), to show the user

    def decide(self, observation: Any) -> Any:
        try:
            reply = self.client.complete(self.build_request(observation))
        except BudgetExceeded:
            raise
        except Exception as error:  # an API that fails must never crash a run
            return self._fall_back(observation, error)
        return self._read(reply, observation)

    async def adecide(self, observation: Any) -> Any:
        try:
            reply = await self.client.acomplete(self.build_request(observation))
        except BudgetExceeded:
            raise
        except Exception as error:
            return self._fall_back(observation, error)
        return self._read(reply, observation)

    def _read(self, reply: LLMReply, observation: Any) -> Any:
        try:
            decision = self.parse(reply.text, observation)
        except ValueError as error:
            return self._fall_back(observation, error, reply.text)
        self.llm_decisions += 1
        return decision

    def _fall_back(self, observation: Any, error: Exception, reply: str | None = None) -> Any:
        if reply is None:
            cause = error.__cause__ or error
            reason = f"call failed ({type(cause).__name__})"
        else:
            reason = "unparseable reply"
        self.fallbacks[reason] += 1
        self.last_failure[reason] = str(error) if reply is None else f"{error}: {reply[:200]!r}"
        return self.fallback.decide(observation)

    @property
    def fallback_count(self) -> int:
        return sum(self.fallbacks.values())


class LLMUse:
    """For models whose agents decide through policies: their LLM calls and fallbacks, summed.

    A model lists every policy it uses in :meth:`policies`; the LLM ones among them are counted.
    """

    def policies(self) -> list[Policy]:
        raise NotImplementedError

    @property
    def llm_policies(self) -> list[LLMPolicy]:
        return [p for p in self.policies() if isinstance(p, LLMPolicy)]

    @property
    def llm_calls(self) -> int:
        """LLM calls made (those that fell back included)."""
        return sum(p.llm_decisions + p.fallback_count for p in self.llm_policies)

    @property
    def llm_fallbacks(self) -> int:
        return sum(p.fallback_count for p in self.llm_policies)

    @property
    def fallback_reasons(self) -> Counter[str]:
        """Why replies fell back to the rules, e.g. ``{"unparseable reply": 3, "call failed (LLMError)": 1}``."""
        return sum((p.fallbacks for p in self.llm_policies), Counter())
