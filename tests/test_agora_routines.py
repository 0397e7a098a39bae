"""Agora's routines (issue 12, the design's "Routines and tools"): the event contract driven through the sandbox,
schema documents, the rule-based programmer and Appendix C's hand-written routines, where every way a routine can
fail to answer ends in a RoutineError the agent counts."""

import ast
import json
import sys

import pytest

from coordkit.agora import routines
from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.routines import (
    CONTRACT_REASONS,
    WEATHER_ROUTINES,
    ContractError,
    SchemaError,
    SchemaProgrammer,
    TaskSchema,
    human_routines,
    run,
    schema_document,
    schema_of,
    validate,
    weather_forecast_document,
)
from coordkit.agora.sandbox import RoutineError
from coordkit.paths import DATA

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the sandbox forks: POSIX only")

CONDITIONS = ["sunny", "cloudy", "rainy", "snowy"]
WEATHER = TaskSchema(  # Appendix C's input and output messages, as JSON Schema
    "weather_forecast",
    {
        "type": "object",
        "properties": {"date": {"type": "string"}, "location": {"type": "string"}},
        "required": ["date", "location"],
    },
    {
        "type": "object",
        "properties": {
            "temperature": {"type": "number", "description": "°C"},
            "precipitation": {"type": "number", "minimum": 0},
            "weatherCondition": {"type": "string", "enum": CONDITIONS},
        },
        "required": ["temperature", "precipitation", "weatherCondition"],
    },
)
DOCUMENT = schema_document(
    WEATHER,
    "The user sends a date and a location; the server answers with that day's forecast.",
    name="Weather Forecast Query Protocol",
    description="A protocol for querying the weather forecast for a given date and location.",
)
QUERIES = [
    {"date": "2023-10-01", "location": "New York"},
    {"date": "2024-09-27", "location": "London, UK"},
    {"date": "2025-01-15", "location": "Zürich"},
]


def forecast(date: str, location: str) -> dict:
    """A server's tool whose answer depends on both fields, so a routine that drops or swaps one is caught."""
    seed = sum(map(ord, date + "|" + location))
    return {
        "temperature": round(seed % 400 / 10 - 10, 1),
        "precipitation": float(seed % 13),
        "weatherCondition": CONDITIONS[seed % 4],
    }


def through(server_routine, tools: dict, requests: list) -> dict:
    """The user's ``send`` tool: it runs the server's routine on the body, as an agent would, and notes the body."""

    def send(body: str) -> str:
        requests.append(body)
        return run(server_routine, body, tools)

    return {"send": send}


# --- the generated pair, through the sandbox ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pair():
    programmer = SchemaProgrammer()
    return programmer.user_routine(DOCUMENT), programmer.server_routine(DOCUMENT)


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q["location"])
def test_a_generated_pair_gives_the_server_tools_answer(pair, query):
    user, server = pair
    asked, requests = [], []

    def tool(date, location):
        asked.append({"date": date, "location": location})
        return forecast(date, location)

    answer = run(user, query, through(server, {"weather_forecast": tool}, requests))
    assert answer == forecast(**query)
    assert asked == [query]
    assert [json.loads(body) for body in requests] == [query]


def test_the_server_routine_calls_the_tool_it_is_given(pair):
    server = SchemaProgrammer().server_routine(DOCUMENT, tool="get_forecast")
    reply = run(server, json.dumps(QUERIES[0]), {"get_forecast": forecast})
    assert json.loads(reply) == forecast(**QUERIES[0])
    with pytest.raises(ValueError, match="tool"):
        SchemaProgrammer().server_routine(DOCUMENT, tool="get forecast; import os")


def answering(**changes):
    """A forecast tool whose answer has ``changes``: what a faulty server or a faulty reply would give."""
    return lambda date, location: forecast(date, location) | changes


@pytest.mark.parametrize(
    "side, task_input, answer, expected",
    [
        ("user", {"date": "2023-10-01"}, forecast, "has no 'location'"),
        ("user", {"date": 20231001, "location": "Rome"}, forecast, "date is 20231001, not of type string"),
        ("user", QUERIES[0], lambda date, location: {"temperature": 1, "precipitation": 0}, "no 'weatherCondition'"),
        ("user", QUERIES[0], answering(precipitation=-1), "precipitation is -1, below its minimum 0"),
        ("server", QUERIES[0], answering(weatherCondition="foggy"), "weatherCondition is 'foggy', not one of"),
        ("server", QUERIES[0], answering(temperature=True), "temperature is True, not of type number"),
        ("server", {"date": "2023-10-01", "location": None}, forecast, "location is None, not of type string"),
    ],
)
def test_the_generated_routines_validate_what_they_send_and_receive(pair, side, task_input, answer, expected):
    user, server = pair
    tools = {"weather_forecast": answer}
    with pytest.raises(RoutineError) as caught:
        if side == "user":
            run(user, task_input, {"send": lambda body: json.dumps(answer(**json.loads(body)))})
        else:
            run(server, json.dumps(task_input), tools)
    assert caught.value.reason == "crashed" and expected in caught.value.message


def test_generated_source_uses_json_alone_and_is_deterministic(pair):
    for source in pair:
        imports = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import | ast.ImportFrom)]
        assert [alias.name for node in imports for alias in node.names] == ["json"]
    again = SchemaProgrammer()
    copy = ProtocolDocument(DOCUMENT.text)
    assert (again.user_routine(copy), again.server_routine(copy)) == pair
    assert DOCUMENT.hash in pair[0] and "TOOL" not in pair[0] and "TOOL = 'weather_forecast'" in pair[1]
    answers = [run(pair[0], q, through(pair[1], {"weather_forecast": forecast}, [])) for q in QUERIES * 2]
    assert answers[:3] == answers[3:]


def test_the_validator_is_the_schema_subset():
    number = {"type": "number", "minimum": 0, "maximum": 10}
    for value in (0, 10, 2.5):
        validate(value, number, "x")
    for value, schema, message in [
        (True, number, "not of type number"),
        (-0.5, number, "below its minimum 0"),
        (float("nan"), number, "below its minimum"),
        (3.5, {"type": "integer"}, "not of type integer"),
        (True, {"enum": [1, 2]}, "not one of"),
        ({"a": [1, "2"]}, {"properties": {"a": {"items": {"type": "integer"}}}}, "x.a[1] is '2'"),
        (None, {"type": "string"}, "not of type string"),
    ]:
        with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
            validate(value, schema, "x")
    validate(3.0, {"type": "integer"}, "x")
    validate(1, {"enum": [1.0, True]}, "x")


# --- the contract: every failure is a RoutineError ------------------------------------------------------------------


def calls(tool: str, arguments: object) -> str:
    return f"import json\ndef handle(event):\n    return json.dumps({{'call': {tool!r}, 'arguments': {arguments!r}}})\n"


def refuse(date, location):
    raise ValueError("no forecast for that place")


BROKEN = {
    "unknown tool": (calls("delete_everything", {}), "unknown_tool"),
    "bad arguments": (calls("weather_forecast", {"city": "Rome"}), "bad_arguments"),
    "tool refuses": (calls("refusing_forecast", {"date": "2023-10-01", "location": "Mars"}), "tool_refused"),
    "loops past max_calls": (calls("weather_forecast", {"date": "2023-10-01", "location": "Rome"}), "too_many_calls"),
    "malformed JSON": ("def handle(event):\n    return '{\"return\": '\n", "bad_reply"),
    "both call and return": ('def handle(event):\n    return \'{"call": "send", "return": 1}\'\n', "bad_reply"),
    "arguments not an object": (calls("weather_forecast", ["2023-10-01", "Rome"]), "bad_reply"),
    "a list": ("def handle(event):\n    return '[1]'\n", "bad_reply"),
    "an empty tool name": (calls("", {}), "bad_reply"),
    "event grows too large": (calls("huge", {}), "too_large"),
    "opens a socket": ("import socket\ndef handle(event):\n    socket.socket()\n", "forbidden"),
    "reads the environment": ("import os\ndef handle(event):\n    return os.environ['HOME']\n", "forbidden"),
    "never returns": ("def handle(event):\n    while True:\n        pass\n", "budget"),
    "returns bytes": ("def handle(event):\n    return b'{}'\n", "bad_return"),
    "does not compile": ("def handle(event) return 1\n", "syntax"),
}


@pytest.mark.parametrize("source, reason", BROKEN.values(), ids=BROKEN.keys())
def test_every_failure_is_a_counted_routine_error(source, reason):
    made = []

    def counted(date, location):
        made.append(date)
        return forecast(date, location)

    tools = {"weather_forecast": counted, "refusing_forecast": refuse, "huge": lambda: "x" * 400_000}
    with pytest.raises(RoutineError) as caught:
        run(source, QUERIES[0], tools, max_calls=3, max_lines=10_000)
    assert caught.value.reason == reason, caught.value
    assert isinstance(caught.value, ContractError) == (reason in CONTRACT_REASONS)
    assert len(made) == (3 if reason == "too_many_calls" else 0)


def test_human_routines_fail_the_same_way():
    with pytest.raises(RoutineError) as caught:
        run(WEATHER_ROUTINES.user, {"date": "2023-02-30", "location": "Rome"}, {"send": lambda body: "{}"})
    assert caught.value.reason == "crashed" and "day is out of range" in caught.value.message
    with pytest.raises(ContractError, match="unknown_tool"):
        run(WEATHER_ROUTINES.server, json.dumps(QUERIES[0]), {"forecast": forecast})
    with pytest.raises(RoutineError, match="bad_return"):
        run(lambda event: None, {}, {})
    with pytest.raises(RoutineError, match="crashed.*weatherCondition"):
        run(WEATHER_ROUTINES.user, QUERIES[0], {"send": lambda body: '{"temperature": 1, "precipitation": 0}'})


def test_run_refuses_its_callers_mistakes():
    with pytest.raises(ValueError, match="max_calls"):
        run("def handle(event):\n    return '{}'\n", {}, {}, max_calls=0)
    with pytest.raises(TypeError, match="tools"):
        run("def handle(event):\n    return '{}'\n", {}, [forecast])
    with pytest.raises(TypeError, match="routine"):
        run(42, {}, {})


# --- schema documents -----------------------------------------------------------------------------------------------


def test_schema_of_reads_back_the_block():
    assert schema_of(DOCUMENT) == WEATHER
    assert schema_of(DOCUMENT.text) == WEATHER
    assert DOCUMENT.name == "Weather Forecast Query Protocol" and DOCUMENT.body.endswith("```\n")


def block(fields: object) -> str:
    return "Prose first.\n\n```json\n" + json.dumps(fields) + "\n```\n"


FIELDS = {"task": WEATHER.task, "input": WEATHER.input, "output": WEATHER.output}
BAD_DOCUMENTS = {
    "no block": ("Send a date and a location.\n```\n{}\n```\n", "0 fenced json blocks"),
    "two blocks": (block(FIELDS) + block(FIELDS), "2 fenced json blocks"),
    "not JSON": ("```json\n{'task': 'x'}\n```", "not JSON"),
    "a key missing": (block({"task": "x", "input": WEATHER.input}), "exactly the keys"),
    "a key too many": (block(FIELDS | {"version": 2}), "exactly the keys"),
    "an empty task": (block(FIELDS | {"task": ""}), "task: ''"),
    "input not an object": (block(FIELDS | {"input": {"type": "array"}}), "input: a request is an object"),
    "outside the subset": (block(FIELDS | {"output": {"type": "string", "pattern": "^a"}}), "['pattern']"),
    "unknown type": (block(FIELDS | {"output": {"type": "float"}}), "output.type is 'float'"),
    "required not a property": (
        block(FIELDS | {"input": {"type": "object", "required": ["date"]}}),
        "input.required",
    ),
    "a bound not a number": (block(FIELDS | {"output": {"type": "number", "minimum": "0"}}), "output.minimum"),
    "an empty enum": (block(FIELDS | {"output": {"enum": []}}), "output.enum"),
    "a nested bad schema": (
        block(FIELDS | {"output": {"type": "array", "items": {"type": "object", "properties": {"a": 1}}}}),
        "output.items.properties.a is '1'",
    ),
}


@pytest.mark.parametrize("text, message", BAD_DOCUMENTS.values(), ids=BAD_DOCUMENTS.keys())
def test_schema_of_says_what_is_wrong_and_the_programmer_writes_nothing(text, message):
    with pytest.raises(SchemaError) as caught:
        schema_of(text)
    assert message in str(caught.value)
    document = ProtocolDocument(text)
    assert SchemaProgrammer().user_routine(document) is None
    assert SchemaProgrammer().server_routine(document) is None


# --- human routines: Appendix C by hand -----------------------------------------------------------------------------


def test_appendix_c_has_human_routines_and_others_do_not():
    paper = (DATA / "agora" / "weather_forecast_protocol.txt").read_text()
    composed = ProtocolDocument.compose(  # as tests/test_agora_protocol.py composes it
        paper.split("\n", 4)[4],
        name="Weather Forecast Query Protocol",
        description="A protocol for querying the weather forecast for a given date and location.",
    )
    assert weather_forecast_document() == composed
    assert human_routines(composed) is WEATHER_ROUTINES
    assert human_routines(DOCUMENT) is None
    with pytest.raises(SchemaError):  # the paper's document is prose: the rule-based programmer cannot read it
        schema_of(composed)


def test_human_routines_run_in_process_and_agree_with_the_generated_pair(pair, monkeypatch):
    generated = [run(pair[0], q, through(pair[1], {"weather_forecast": forecast}, [])) for q in QUERIES]

    def no_sandbox(*args, **kwargs):
        raise AssertionError("a human routine ran in the sandbox")

    monkeypatch.setattr(routines, "run_routine", no_sandbox)
    requests = []
    tools = {WEATHER_ROUTINES.tool: forecast}
    by_hand = [run(WEATHER_ROUTINES.user, q, through(WEATHER_ROUTINES.server, tools, requests)) for q in QUERIES]
    assert by_hand == generated == [forecast(**q) for q in QUERIES]
    assert [json.loads(body) for body in requests] == QUERIES


def test_tools_made_afresh_from_one_closure_are_checked_alike():
    """An agent makes its tool afresh for each task (the same code): its signature, made once, still refuses
    arguments it cannot take and lets through those it can."""

    def make():
        def tool(date, location):
            return forecast(date, location)

        return tool

    for _ in range(2):
        with pytest.raises(RoutineError) as refused:
            run(BROKEN["bad arguments"][0], QUERIES[0], {"weather_forecast": make()}, max_lines=10_000)
        assert refused.value.reason == "bad_arguments"
        with pytest.raises(RoutineError) as called:
            run(BROKEN["loops past max_calls"][0], QUERIES[0], {"weather_forecast": make()}, max_calls=1)
        assert called.value.reason == "too_many_calls"  # its one call was taken
