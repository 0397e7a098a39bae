"""The rule-based programmer's routines in the kit's process (issue 48: 06 ran each of its thousands of routine calls
through a sandbox process): the same answers and the same failures as the sandbox, the line budget never passed
over, and every call the budget or a recursion limit could decide sent to the sandbox."""

import hashlib
import json
import sys

import pandas as pd
import pytest

from coordkit.agora import AgoraNetwork
from coordkit.agora.in_process import MAX_BRACKETS, TemplateSession, lines_bound
from coordkit.agora.routines import SchemaProgrammer, TaskSchema, TemplateRoutine, schema_document
from coordkit.agora.sandbox import RoutineError, routine_session
from coordkit.agora.services import Routines
from tests.test_agora_routines import DOCUMENT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the sandbox forks: POSIX only")

NESTED = schema_document(  # arrays, nested objects and enums: the validator's every branch
    TaskSchema(
        "plan_trip",
        {
            "type": "object",
            "properties": {
                "stops": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "city": {"type": "string", "enum": ["Rome", "Oslo"]},
                            "nights": {"type": "integer"},
                        },
                        "required": ["city"],
                    },
                },
                "budget": {"type": "number", "minimum": 0, "maximum": 5000},
            },
            "required": ["stops"],
        },
        {"type": "object", "properties": {"booked": {"type": "boolean"}}, "required": ["booked"]},
    ),
    "Plan a trip.",
    name="Trip",
    description="A trip's stops, booked.",
)


def events(user_input, results=()) -> str:
    return json.dumps({"input": user_input, "results": list(results)})


SERVER_BODIES = [
    events(json.dumps({"stops": [{"city": "Rome", "nights": 2}], "budget": 300})),
    events(json.dumps({"stops": [{"city": "Paris"}]})),  # not in the enum
    events(json.dumps({"stops": [{"nights": 2.5}]})),  # no city, and not an integer
    events(json.dumps({"stops": [], "budget": -1})),  # below its minimum
    events(json.dumps({"stops": "Rome"})),  # not an array
    events("not json"),
    events(json.dumps({"stops": [{"city": "Oslo"}]}), [{"booked": True}]),
    events(json.dumps({"stops": [{"city": "Oslo"}]}), [{"booked": "yes"}]),
    events(json.dumps({"stops": [{"city": "Oslo"}]}), [None]),
    json.dumps({"input": 3}),  # no results
    json.dumps([1, 2]),
    "{",
    "",
]
QUERY = {"date": "2024-01-01", "location": "Oslo"}


def forecast(precipitation=0, condition="sunny") -> str:
    return json.dumps({"temperature": 1, "precipitation": precipitation, "weatherCondition": condition})


USER_BODIES = [
    events(QUERY),
    events({"date": 20240101, "location": "Oslo"}),
    events({"date": "2024-01-01"}),
    events(
        {"date": "2024-01-01", "location": "Oslo"},
        [json.dumps({"temperature": 1, "precipitation": 0, "weatherCondition": "sunny"})],
    ),
    events(
        {"date": "2024-01-01", "location": "Oslo"},
        [json.dumps({"temperature": 1, "precipitation": -2, "weatherCondition": "sunny"})],
    ),
    events(
        {"date": "2024-01-01", "location": "Oslo"},
        [json.dumps({"temperature": 1, "precipitation": 0, "weatherCondition": "foggy"})],
    ),
    events({"date": "2024-01-01", "location": "Oslo"}, ["not json"]),
    events({"date": "2024-01-01", "location": "Oslo"}, [{"not": "a string"}]),
]


@pytest.fixture(scope="module")
def routines_and_bodies():
    programmer = SchemaProgrammer()
    return [
        (programmer.user_routine(DOCUMENT), USER_BODIES),
        (programmer.server_routine(DOCUMENT), [events(json.loads(body)["input"]) for body in USER_BODIES[:3]]),
        (programmer.server_routine(NESTED, "book"), SERVER_BODIES),
        (programmer.user_routine(NESTED), [events({"stops": [{"city": "Rome"}] * 3}), events({"stops": 1})]),
    ]


def outcome(call, body: str):
    try:
        return "result", call(body)
    except RoutineError as error:
        return error.reason, error.message


def test_the_programmer_writes_template_routines_that_read_as_the_source():
    routine = SchemaProgrammer().server_routine(NESTED, "book")
    assert isinstance(routine, TemplateRoutine) and isinstance(routine, str)
    assert routine.tool == "book" and f"TOOL = {'book'!r}" in routine and routine.endswith(routine.handle)
    assert f"INPUT = json.loads({routine.input_json!r})" in routine


def test_a_template_session_answers_and_fails_as_the_sandbox_does(routines_and_bodies):
    for routine, bodies in routines_and_bodies:
        here = TemplateSession(routine, max_lines=1_000_000, timeout_s=30.0)
        with routine_session(routine) as sandboxed:
            for body in bodies:
                assert outcome(here, body) == outcome(sandboxed, body), body
        assert (here.in_process, here.sandboxed) == (len(bodies), 0)
    reasons = {outcome(TemplateSession(r, 1_000_000, 30.0), b)[0] for r, bodies in routines_and_bodies for b in bodies}
    assert reasons == {"result", "crashed"}  # both ways are compared


def lines_run(routine: TemplateRoutine, body: str) -> int:
    """The LINE and JUMP events the routine's call runs, counted as the sandbox's budget counts them."""
    from coordkit.agora.in_process import compiled_handle
    from coordkit.agora.sandbox_worker import call_loaded

    monitoring, tool, counted = sys.monitoring, 3, [0]

    def count(*_event):
        counted[0] += 1

    monitoring.use_tool_id(tool, "test line count")
    try:
        for event in (monitoring.events.LINE, monitoring.events.JUMP):
            monitoring.register_callback(tool, event, count)
        monitoring.set_events(tool, monitoring.events.LINE | monitoring.events.JUMP)
        call_loaded(compiled_handle(routine), body)
    finally:
        monitoring.set_events(tool, 0)
        monitoring.free_tool_id(tool)
    return counted[0]


def test_the_line_bound_holds_on_the_validators_costliest_bodies(routines_and_bodies):
    wide = events(json.dumps({"stops": [{"city": "Oslo", "nights": 1}] * 40, "budget": 1}))
    long = events(json.dumps({"stops": [{}] * 20}))
    server = SchemaProgrammer().server_routine(NESTED, "book")
    checked = [(server, wide), (server, long)] + [(r, b) for r, bodies in routines_and_bodies for b in bodies]
    for routine, body in checked:
        assert lines_run(routine, body) <= lines_bound(routine, body), body
    assert lines_run(server, wide) > 40 * 20  # a long body runs long: the bound is not loose for nothing


def test_calls_the_budget_or_recursion_could_decide_go_to_the_sandbox():
    server = SchemaProgrammer().server_routine(NESTED, "book")
    body = events(json.dumps({"stops": [{"city": "Oslo"}] * 30}))
    tight = TemplateSession(server, max_lines=lines_bound(server, body) - 1, timeout_s=30.0)
    try:
        with routine_session(server) as sandboxed:
            assert tight(body) == sandboxed(body)
        assert (tight.in_process, tight.sandboxed) == (0, 1)
    finally:
        tight.close()
    starved = TemplateSession(server, max_lines=20, timeout_s=30.0)
    try:
        assert outcome(starved, body)[0] == "budget"
    finally:
        starved.close()
    budget = []
    for _ in range(MAX_BRACKETS):
        budget = [budget]
    deep = events(json.dumps({"stops": [{"city": "Oslo"}], "budget": budget}))
    nested = TemplateSession(server, max_lines=1_000_000, timeout_s=30.0)
    try:
        assert outcome(nested, deep)[0] == "crashed" and nested.sandboxed == 1
    finally:
        nested.close()


def fingerprint(model) -> tuple[str, str]:
    frame = model.frame()
    rows = pd.util.hash_pandas_object(frame, index=True).values.tobytes()
    return hashlib.sha256(rows).hexdigest(), hashlib.sha256(repr(model.transcript()).encode()).hexdigest()


@pytest.mark.parametrize("params", [dict(rng=3, users=10, queries=200, failure_rate=0.2), dict(rng=0, queries=150)])
def test_a_network_plays_the_same_with_every_routine_call_in_the_sandbox(params, monkeypatch):
    fast = AgoraNetwork(protocol="agora", **params)
    fast.run()
    monkeypatch.setattr(Routines, "templates_in_process", False)
    sandboxed = AgoraNetwork(protocol="agora", **params)
    sandboxed.run()
    assert fingerprint(fast) == fingerprint(sandboxed)
    assert fast.frame()["routine_calls"].sum() > 0
