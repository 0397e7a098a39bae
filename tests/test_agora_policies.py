"""Agora's rule-based policies (coordkit/agora/policies.py): negotiation, programming, suitability, templates."""

import dataclasses

import numpy as np
import pytest

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
from coordkit.agora.routines import SchemaProgrammer, TaskSchema, schema_of
from coordkit.agora.tasks import example_input, load_catalogue
from coordkit.llm.parsing import ReplyParseError

CATALOGUE = load_catalogue()
TASKS = [CATALOGUE.task(server, name) for server, name in CATALOGUE.pairs()]
IDS = [f"{task.server}.{task.name}" for task in TASKS]


def negotiated(task) -> ProtocolDocument:
    return SchemaNegotiator().decide(NegotiationObservation(task)).document


def test_the_catalogue_has_thirty_tasks():
    assert len(TASKS) == 30


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_the_negotiated_document_carries_the_task_schema(task):
    negotiation = SchemaNegotiator().decide(NegotiationObservation(task))
    assert [m.speaker for m in negotiation.turns] == [USER, SERVER, USER]
    assert all(m.text.strip() for m in negotiation.turns)
    assert task.name in negotiation.turns[0].text
    document = negotiation.document
    assert (document.name, document.description) == (task.name, task.description)
    assert schema_of(document) == TaskSchema(task.name, task.input, task.output)
    assert schema_of(ProtocolDocument(document.text)) == schema_of(document)  # from the text alone, as received


def test_negotiation_is_deterministic_and_tasks_get_different_documents():
    first = [SchemaNegotiator().decide(NegotiationObservation(task)) for task in TASKS]
    again = [SchemaNegotiator().decide(NegotiationObservation(task)) for task in TASKS]
    assert first == again
    assert len({n.document.hash for n in first}) == len(TASKS)


@pytest.mark.parametrize("task", TASKS[:3], ids=IDS[:3])
def test_the_programmer_policy_is_the_schema_programmer(task):
    document = negotiated(task)
    programmer = RoutineProgrammer()
    assert programmer.decide(ProgrammingObservation(document, USER)) == SchemaProgrammer().user_routine(document)
    server = programmer.decide(ProgrammingObservation(document, SERVER, "lookup"))
    assert server == SchemaProgrammer().server_routine(document, "lookup")
    assert "TOOL = 'lookup'" in server
    prose = ProtocolDocument.compose("Send the date; get the weather.", name="prose", description="no block")
    assert programmer.decide(ProgrammingObservation(prose, USER)) is None
    assert programmer.decide(ProgrammingObservation(prose, SERVER)) is None


def test_suitability_accepts_the_matching_document_only():
    task, other = TASKS[0], TASKS[1]
    assert task.input == other.input  # the same input, another task: only the name and output tell them apart
    matching, for_other = negotiated(task), negotiated(other)
    changed_output = dict(task.output, required=list(task.output["required"])[:-1])
    changed = ProtocolDocument.compose(
        TaskSchema(task.name, task.input, changed_output).block() + "\n", name=task.name, description="changed"
    )
    prose = ProtocolDocument(SchemaNegotiator().decide(NegotiationObservation(task)).document.body.split("```json")[0])
    policy = KeywordSuitability()
    assert policy.decide(SuitabilityObservation(task, (matching,))) == matching
    assert policy.decide(SuitabilityObservation(task, (for_other, changed, prose, matching))) == matching
    assert policy.decide(SuitabilityObservation(task, (for_other,))) is None
    assert policy.decide(SuitabilityObservation(task, (changed,))) is None
    assert policy.decide(SuitabilityObservation(task, (prose,))) is None
    assert policy.decide(SuitabilityObservation(task, ())) is None
    assert policy.decide(SuitabilityObservation(other, (matching, for_other))) == for_other


@pytest.mark.parametrize("task", TASKS, ids=IDS)
def test_the_natural_language_round_trip_gives_the_catalogue_answer(task):
    querier, responder = TemplateQuerier(), TemplateResponder()
    rng = np.random.default_rng(7)
    for _ in range(3):
        instance = example_input(task, rng)
        query = querier.decide(Compose(task, instance))
        assert isinstance(query, str) and task.name in query
        heard = responder.decide(Read(task, query))
        assert heard == instance
        reply = responder.decide(Compose(task, CATALOGUE.answer(task, heard, seed=3)))
        assert querier.decide(Read(task, reply)) == CATALOGUE.answer(task, instance, seed=3)


def test_templates_refuse_what_they_cannot_read():
    task, other = TASKS[0], TASKS[1]
    querier, responder = TemplateQuerier(), TemplateResponder()
    instance = example_input(task, np.random.default_rng(0))
    query = querier.decide(Compose(task, instance))
    with pytest.raises(ReplyParseError, match="does not open with"):
        responder.decide(Read(other, query))  # a query for another task
    with pytest.raises(ReplyParseError, match="does not open with"):
        responder.decide(Read(task, "What is the weather in Paris tomorrow?"))  # free text: rules cannot read it
    with pytest.raises(ReplyParseError, match="does not open with"):
        querier.decide(Read(task, query))  # a query is not a reply
    first_key = next(iter(instance))
    with pytest.raises(ReplyParseError, match=f"has no '{first_key}'"):
        responder.decide(Read(task, "\n".join(line for line in query.splitlines() if f"- {first_key}:" not in line)))
    with pytest.raises(ReplyParseError, match="appears twice"):
        responder.decide(Read(task, query + f"\n- {first_key}: {'"x"'}"))
    with pytest.raises(ReplyParseError, match="not JSON"):
        responder.decide(Read(task, query.replace(f'- {first_key}: "', f"- {first_key}: ")))
    with pytest.raises(ReplyParseError, match="not fields of the task"):
        responder.decide(Read(task, query + '\n- colour: "red"'))
    with pytest.raises(ValueError, match="cannot write the message"):
        querier.decide(Compose(task, {}))
    with pytest.raises(ValueError, match="does not have"):
        querier.decide(Compose(task, instance | {"colour": "red"}))


def test_bad_observations_give_clear_errors():
    task = TASKS[0]
    document = negotiated(task)
    with pytest.raises(TypeError, match="decides from NegotiationObservation, not dict"):
        SchemaNegotiator().decide(task.contract())
    with pytest.raises(TypeError, match="tasks.Task"):
        NegotiationObservation(task.contract())
    with pytest.raises(TypeError, match="decides from ProgrammingObservation"):
        RoutineProgrammer().decide(document)
    with pytest.raises(TypeError, match="ProtocolDocument, not str"):
        ProgrammingObservation(document.text, USER)
    with pytest.raises(ValueError, match="choose one of user, server"):
        ProgrammingObservation(document, "client")
    with pytest.raises(ValueError, match="calls only send"):
        ProgrammingObservation(document, USER, "lookup")
    with pytest.raises(ValueError, match="name of one of the server's tools"):
        RoutineProgrammer().decide(ProgrammingObservation(document, SERVER, "not a tool"))
    with pytest.raises(TypeError, match="tuple of ProtocolDocument"):
        SuitabilityObservation(task, [document])
    with pytest.raises(TypeError, match="decides from SuitabilityObservation"):
        KeywordSuitability().decide((task, (document,)))
    with pytest.raises(TypeError, match="decides from Compose or Read"):
        TemplateQuerier().decide("hello")
    with pytest.raises(TypeError, match="Compose.data is the task's data"):
        Compose(task, [1])
    with pytest.raises(TypeError, match="Read.text is the message"):
        Read(task, {"location": "Paris"})


def test_the_policies_are_frozen_deterministic_and_stateless():
    for policy in (
        SchemaNegotiator(),
        RoutineProgrammer(),
        KeywordSuitability(),
        TemplateQuerier(),
        TemplateResponder(),
    ):
        assert dataclasses.is_dataclass(policy) and type(policy).__dataclass_params__.frozen
        assert not (policy.classifier.stochastic or policy.classifier.stateful or policy.classifier.calls_llm)
        assert isinstance(policy.name, str) and policy.name
