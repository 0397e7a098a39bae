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
    NegotiationView,
    ProgrammingView,
    Read,
    RoutineProgrammer,
    SchemaNegotiator,
    SuitabilityView,
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
    return [SchemaNegotiator().decide(NegotiationView(task)).document for task in tasks()]


PROSE = ProtocolDocument("Send the date and the place; the reply is the forecast.")


def negotiation_views():
    return [NegotiationView(task) for task in tasks()]


def programming_views():
    return (
        [ProgrammingView(d, USER) for d in documents()]
        + [ProgrammingView(d, SERVER) for d in documents()]
        + [ProgrammingView(PROSE, USER)]
    )


def suitability_views():
    docs = tuple(documents())
    return [SuitabilityView(task, (PROSE, *docs[::-1])) for task in tasks()] + [SuitabilityView(tasks()[0], (PROSE,))]


def querier_views():
    rng = np.random.default_rng(0)
    catalogue = load_catalogue()
    views = []
    for task in tasks():
        instance = example_input(task, rng)
        reply = TemplateResponder().decide(Compose(task, catalogue.answer(task, instance)))
        views += [Compose(task, instance), Read(task, reply)]
    return views


def responder_views():
    rng = np.random.default_rng(1)
    catalogue = load_catalogue()
    views = []
    for task in tasks():
        instance = example_input(task, rng)
        views += [
            Read(task, TemplateQuerier().decide(Compose(task, instance))),
            Compose(task, catalogue.answer(task, instance)),
        ]
    return views


EXAMPLES = [
    PolicyExample("agora_schema_negotiator", lambda rng, client: SchemaNegotiator(), negotiation_views),
    PolicyExample("agora_routine_programmer", lambda rng, client: RoutineProgrammer(), programming_views),
    PolicyExample("agora_keyword_suitability", lambda rng, client: KeywordSuitability(), suitability_views),
    PolicyExample("agora_template_querier", lambda rng, client: TemplateQuerier(), querier_views),
    PolicyExample("agora_template_responder", lambda rng, client: TemplateResponder(), responder_views),
    PolicyExample(
        "agora_llm_negotiator", lambda rng, client: negotiator_policy(client), negotiation_views, reply=stand_in.reply
    ),
    PolicyExample(
        "agora_llm_programmer", lambda rng, client: programmer_policy(client), programming_views, reply=stand_in.reply
    ),
    PolicyExample(
        "agora_llm_suitability", lambda rng, client: suitability_policy(client), suitability_views, reply=stand_in.reply
    ),
    PolicyExample("agora_llm_querier", lambda rng, client: querier_policy(client), querier_views, reply=stand_in.reply),
    PolicyExample(
        "agora_llm_responder", lambda rng, client: responder_policy(client), responder_views, reply=stand_in.reply
    ),
]
