"""The Policy idea shared by every domain (design: "Policies and LLMs").

A policy turns what an agent observes into a decision. Every decision a paper gives to an LLM goes through an
:class:`LLMPolicy`, which asks its client, parses the reply, and falls back to a rule-based policy when the call
fails or the reply cannot be parsed. Fallbacks are counted by reason, never silent.
"""

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from typing import Any

from coordkit.llm.base import LLMClient, LLMRequest


class ReplyParseError(ValueError):
    """An LLM reply that does not have the form the prompt asked for."""


class Policy(ABC):
    """Maps an observation to a decision. Rule-based policies are deterministic given the observation."""

    name: str = "policy"

    @abstractmethod
    def decide(self, observation: Any) -> Any:
        """Return the decision for this observation."""

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
    client) or an unparseable reply makes the policy return ``fallback.decide(observation)`` and count why.
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

    def decide(self, observation: Any) -> Any:
        try:
            reply = self.client.complete(self.build_request(observation))
        except Exception as error:  # an API that fails must never crash a run
            return self._fall_back(observation, f"call failed ({type(error).__name__})")
        try:
            decision = self.parse(reply.text, observation)
        except ValueError:
            return self._fall_back(observation, "unparseable reply")
        self.llm_decisions += 1
        return decision

    def _fall_back(self, observation: Any, reason: str) -> Any:
        self.fallbacks[reason] += 1
        return self.fallback.decide(observation)

    @property
    def fallback_count(self) -> int:
        return sum(self.fallbacks.values())
