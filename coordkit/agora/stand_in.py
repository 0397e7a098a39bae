"""A rule-based stand-in answering Agora's LLM prompts (:mod:`~coordkit.agora.llm_policies`) in their format — not
an LLM.

It reads the prompt's marked blocks back (the task's contract, the data, the message, the candidates, the protocol)
and answers with what the rule-based policy of :mod:`~coordkit.agora.policies` decides: the templated query and
reply, the schema negotiator's turns and document, the keyword check's choice, the schema programmer's source in a
fenced block. So the LLM path (prompts, parsers, recordings, replay, fallbacks) can run without a key, and it
decides as the rules do. Like the rules, it reads only what rules wrote: a message in free prose gets an answer
that does not parse, and the policy falls back, counted. In the negotiation it writes the rule's document for the
task whatever the server said.
"""

import json
import re

from coordkit.agora import llm_policies as prompts
from coordkit.agora.policies import (
    SERVER,
    USER,
    Compose,
    NegotiationObservation,
    NegotiationTurn,
    ProgrammingObservation,
    Read,
    SuitabilityObservation,
)
from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.roles import CANNOT, NEGOTIATOR, PROGRAMMER, QUERIER, RESPONDER, SUITABILITY, Role
from coordkit.agora.tasks import Task
from coordkit.llm import LLMRequest
from coordkit.llm.parsing import ReplyParseError


def reply(request: LLMRequest) -> str:
    """The stand-in's answer to one of Agora's prompts, told apart by its system prompt."""
    prompt = request.messages[-1][1]
    answer = _ROLES.get(request.system)
    try:
        return answer(prompt) if answer is not None else CANNOT
    except (ReplyParseError, KeyError, ValueError):
        return CANNOT


def _task(prompt: str) -> Task:
    """The task of the prompt's contract (what the rule policies read of a task: name, description, schemas)."""
    contract = json.loads(prompts.marked(prompt, "TASK")[0][1])
    return Task("", contract["name"], contract["description"], contract["input"], contract["output"], {}, ())


def _natural_language(role: Role, data_block: str):
    """A querier's or responder's answer: a templated message for the data, or the data read from a message."""

    def answer(prompt: str) -> str:
        task = _task(prompt)
        data = prompts.marked(prompt, data_block)
        if data:
            seen = Compose(task, json.loads(data[0][1]))
        else:
            seen = Read(task, prompts.marked(prompt, "MESSAGE")[0][1])
        return role.reply(role.rule.decide(seen))

    return answer


def _negotiator(prompt: str) -> str:
    """The schema negotiator's turn after the turns the prompt quotes: the user's proposal, the server's
    specification, or the user's agreement with the finalised document."""
    turns = tuple(NegotiationTurn(speaker, text) for speaker, text in prompts.marked(prompt, "MESSAGE"))
    return NEGOTIATOR.reply(NEGOTIATOR.rule.turn(NegotiationObservation(_task(prompt)), turns))


def _suitability(prompt: str) -> str:
    """The keyword check's choice among the listed candidates (their bodies: what it reads), by hash."""
    listed = prompts.marked(prompt, "PROTOCOL")
    candidates = tuple(ProtocolDocument(body) for _, body in listed)
    chosen = SUITABILITY.rule.decide(SuitabilityObservation(_task(prompt), candidates))
    return prompts.choice_reply(None if chosen is None else listed[candidates.index(chosen)][0])


def _programmer(prompt: str) -> str:
    """The schema programmer's routine for the side asked, in a fenced block; NONE when it writes none."""
    key, text = prompts.marked(prompt, "PROTOCOL")[0]
    document = ProtocolDocument(text)
    if document.hash != key:
        return prompts.NONE
    side = USER if "You write the user's side" in prompt else SERVER
    tool = None if side == USER else re.search(r"Its one tool is (\w+)\(", prompt).group(1)
    return PROGRAMMER.reply(PROGRAMMER.rule.decide(ProgrammingObservation(document, side, tool)))


_ROLES = {
    prompts.QUERIER_SYSTEM: _natural_language(QUERIER, "INPUT"),
    prompts.RESPONDER_SYSTEM: _natural_language(RESPONDER, "OUTPUT"),
    prompts.NEGOTIATOR_USER_SYSTEM: _negotiator,
    prompts.NEGOTIATOR_SERVER_SYSTEM: _negotiator,
    prompts.SUITABILITY_SYSTEM: _suitability,
    prompts.PROGRAMMER_SYSTEM: _programmer,
}
