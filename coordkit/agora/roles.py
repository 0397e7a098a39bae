"""The five decisions the paper gives to an agent's LLM (§4.2, Appendix C–D), each as one record.

A :class:`Role` holds everything the kit knows about one decision: the rule-based policy that stands in for the
LLM (:mod:`~coordkit.agora.policies`), the prompt an LLM is sent (:mod:`~coordkit.agora.llm_policies`), the reply
that carries a decision in the prompt's format, and the LLM policy that falls back to the rule. The rule and the
reply writer let a rule-based run charge each decision as the call it replaces (D.3), from the decision actually
made; the stand-in LLM (:mod:`~coordkit.agora.stand_in`) writes its replies with the same writers.
"""

from collections.abc import Callable
from dataclasses import dataclass

from coordkit.agora import llm_policies as llm
from coordkit.agora.policies import (
    KeywordSuitability,
    RoutineProgrammer,
    SchemaNegotiator,
    TemplateQuerier,
    TemplateResponder,
)
from coordkit.llm import LLMRequest
from coordkit.policies import Policy

CANNOT = "I cannot answer this."  # the reply of a stand-in whose rule cannot decide (the decision raises)


@dataclass(frozen=True)
class Role:
    """One LLM decision: ``rule`` decides without an LLM; ``request(seen)`` is the prompt an LLM gets; ``reply``
    writes a decision as the LLM's reply; ``llm_policy(client, rule)`` decides through an LLM, falling back to the
    rule. The negotiator decides turn by turn: its ``request`` and ``reply`` take ``(seen, turns)`` and a turn."""

    name: str
    rule: Policy
    request: Callable[..., LLMRequest]
    reply: Callable[..., str]
    llm_policy: Callable[[object, Policy], Policy]


def _chosen_hash(chosen) -> str:
    return llm.choice_reply(None if chosen is None else chosen.hash)


QUERIER = Role("querier", TemplateQuerier(), llm.querier_request, llm.natural_language_reply, llm.querier_policy)
RESPONDER = Role(
    "responder", TemplateResponder(), llm.responder_request, llm.natural_language_reply, llm.responder_policy
)
NEGOTIATOR = Role("negotiator", SchemaNegotiator(), llm.negotiation_request, llm.turn_reply, llm.negotiator_policy)
SUITABILITY = Role("suitability", KeywordSuitability(), llm.suitability_request, _chosen_hash, llm.suitability_policy)
PROGRAMMER = Role("programmer", RoutineProgrammer(), llm.programmer_request, llm.routine_reply, llm.programmer_policy)
ROLES = (QUERIER, RESPONDER, NEGOTIATOR, SUITABILITY, PROGRAMMER)
