"""Agora's rule-based policies: the schema negotiator, the routine programmer, the suitability check and the
templated querier and responder, each shown a few of the catalogue's tasks; and the LLM policies of each role,
answered by the stand-in."""

import numpy as np

from coordkit.agora import stand_in
from coordkit.agora.llm_policies import (
    negotiator_policy,
    programmer_policy,
    querier_policy,
    responder_policy,
    suitability_policy,
)
from coordkit.agora.policies import (
    SERVER,
    USER,
    Compose,
    KeywordSuitability,
    NegotiationObservation,
    ProgrammingObservation,
    Read,
    RoutineProgrammer,
    SchemaNegotiator,
    SuitabilityObservation,
    TemplateQuerier,
    TemplateResponder,
)
from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.tasks import example_input, load_catalogue

from . import PolicyExample


def tasks():
    catalogue = load_catalogue()
    return [catalogue.task(server, name) for server, name in catalogue.pairs()[:6]]


def documents():
    return [SchemaNegotiator().decide(NegotiationObservation(task)).document for task in tasks()]


PROSE = ProtocolDocument("Send the date and the place; the reply is the forecast.")


def negotiation_observations():
    return [NegotiationObservation(task) for task in tasks()]


def programming_observations():
    return (
        [ProgrammingObservation(d, USER) for d in documents()]
        + [ProgrammingObservation(d, SERVER) for d in documents()]
        + [ProgrammingObservation(PROSE, USER)]
    )


def suitability_observations():
    docs = tuple(documents())
    return [SuitabilityObservation(task, (PROSE, *docs[::-1])) for task in tasks()] + [
        SuitabilityObservation(tasks()[0], (PROSE,))
    ]


def querier_observations():
    rng = np.random.default_rng(0)
    catalogue = load_catalogue()
    observations = []
    for task in tasks():
        instance = example_input(task, rng)
        reply = TemplateResponder().decide(Compose(task, catalogue.answer(task, instance)))
        observations += [Compose(task, instance), Read(task, reply)]
    return observations


def responder_observations():
    rng = np.random.default_rng(1)
    catalogue = load_catalogue()
    observations = []
    for task in tasks():
        instance = example_input(task, rng)
        observations += [
            Read(task, TemplateQuerier().decide(Compose(task, instance))),
            Compose(task, catalogue.answer(task, instance)),
        ]
    return observations


EXAMPLES = [
    PolicyExample("agora_schema_negotiator", lambda rng, client: SchemaNegotiator(), negotiation_observations),
    PolicyExample("agora_routine_programmer", lambda rng, client: RoutineProgrammer(), programming_observations),
    PolicyExample("agora_keyword_suitability", lambda rng, client: KeywordSuitability(), suitability_observations),
    PolicyExample("agora_template_querier", lambda rng, client: TemplateQuerier(), querier_observations),
    PolicyExample("agora_template_responder", lambda rng, client: TemplateResponder(), responder_observations),
    PolicyExample(
        "agora_llm_negotiator",
        lambda rng, client: negotiator_policy(client),
        negotiation_observations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "agora_llm_programmer",
        lambda rng, client: programmer_policy(client),
        programming_observations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "agora_llm_suitability",
        lambda rng, client: suitability_policy(client),
        suitability_observations,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "agora_llm_querier", lambda rng, client: querier_policy(client), querier_observations, reply=stand_in.reply
    ),
    PolicyExample(
        "agora_llm_responder",
        lambda rng, client: responder_policy(client),
        responder_observations,
        reply=stand_in.reply,
    ),
]
