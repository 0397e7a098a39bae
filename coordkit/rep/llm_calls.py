"""The REP paper's two API calls (Appendix A) as LLM policies, one shape for every family.

Call 1 asks an agent for its decision and its message: a REP agent answers ``DECISION`` + ``SENSITIVITY`` (§3.1),
an A2A agent ``DECISION`` + ``REASONING`` (§4). A REP sensitivity's *numbers* (the numerical updater's proposals,
what a family relays to its neighbours) stay the fallback rule's: the LLM writes the text. Call 2 is the textual
updater's synthesiser (§3.2, Appendix A.4.2): the sensitivities' text → new coordination variables θ.

A family supplies only what differs: its prompt builder and the parser of its decision (or of θ). Every call falls
back to the rule it is given when the call fails or the reply cannot be used (:class:`~coordkit.policies.LLMPolicy`).
"""

from collections.abc import Callable
from typing import Any

from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.parsing import labelled_text
from coordkit.policies import LLMPolicy, Policy
from coordkit.rep.protocol import Sensitivity, SynthesisRequest, Theta

SYNTHESIS = "llm_synthesis"  # call 2's name in every family

Request = Callable[[Any], LLMRequest]  # the family's prompt for an observation
Decision = Callable[[str, Any], Any]  # the family's parser: the reply's DECISION, given the observation


def rep_call(client: LLMClient, fallback: Policy, request: Request, parse_decision: Decision, name: str) -> LLMPolicy:
    """Call 1 of a REP agent: ``parse_decision(text, situation)`` reads the DECISION, ``fallback`` (the agent's rule,
    deciding the same situation) gives the sensitivity's numbers and the reply's SENSITIVITY its text."""

    def parse(text: str, situation: Any) -> tuple[Any, Sensitivity]:
        decision = parse_decision(text, situation)
        numbers = fallback.decide(situation)[1].values
        return decision, Sensitivity(numbers, labelled_text(text, "SENSITIVITY"))

    return LLMPolicy(client, request, parse, fallback, name=name)


def a2a_call(client: LLMClient, fallback: Policy, request: Request, parse_decision: Decision, name: str) -> LLMPolicy:
    """Call 1 of an A2A agent: ``parse_decision(text, observation)`` reads the DECISION, and the reply's REASONING
    is the message."""

    def parse(text: str, observation: Any) -> tuple[Any, str]:
        return parse_decision(text, observation), labelled_text(text, "REASONING")

    return LLMPolicy(client, request, parse, fallback, name=name)


def synthesis_call(
    client: LLMClient,
    fallback: Policy,
    request: Callable[[SynthesisRequest], LLMRequest],
    parse: Callable[[str, SynthesisRequest], Theta],
) -> LLMPolicy:
    """Call 2, the textual updater's synthesiser: ``parse(text, request)`` reads θ from the reply; ``fallback`` is
    the family's rule synthesiser."""
    return LLMPolicy(client, request, parse, fallback, name=SYNTHESIS)
