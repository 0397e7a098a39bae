"""Routines (Agora paper, §4.1–4.2, Appendix D.1): code that handles a protocol's messages instead of an LLM.

**The contract.** A sandboxed routine is a function of one string (:mod:`~coordkit.agora.sandbox`), but the paper's
routines call tools: a server's database, another agent. So a routine's source defines ``handle(event: str) -> str``,
where the event is JSON ``{"input": <the routine's input>, "results": [<each tool call's result so far>]}`` and the
reply is JSON ``{"call": <tool name>, "arguments": {...}}`` or ``{"return": <the routine's output>}``. :func:`run`
plays the loop: it calls the routine, runs each tool it asks for (a kit function the agent gives) and calls it again
with the result appended, until it returns. A routine keeps nothing between calls: the event holds all it knows. A
user's routine gets the task's input, calls ``send`` with the protocol's request body and returns the task's output
from the reply's body; a server's routine gets the request body, calls the server's tool with the request's fields
and returns the reply's body.

Everything that keeps a routine from answering raises :class:`~coordkit.agora.sandbox.RoutineError`: the sandbox's
failures (a breach, a budget run out, a timeout, a crash, which includes a routine that raises on data it refuses) and a
:class:`ContractError`, its subclass, for a routine that breaks the contract or whose tool refuses the call. The
agent catches ``RoutineError``, counts it and falls back to natural language (§4.1: "when a routine fails
unexpectedly").

**Schema documents.** A negotiated document carries the task it serves in one fenced ``json`` block,
``{"task": <name>, "input": <JSON Schema>, "output": <JSON Schema>}`` (:func:`schema_document`, :func:`schema_of`), in
the subset of JSON Schema that the kit's tasks use (:mod:`~coordkit.agora.schemas`). The :class:`SchemaProgrammer`,
the rule-based stand-in for the LLM that writes routines, fills a template from that block and copies
:func:`~coordkit.agora.schemas.validate` into the source, so that the routine checks what it sends and what it
receives. A document with no block gets no routine: the agent keeps its LLM.

**Human routines.** §4.1's standard case, a protocol with a human-written implementation: Appendix C's weather
forecast protocol, written by hand against the same contract (:func:`human_routines`). They are trusted kit code, so
:func:`run` calls them in the kit's process.
"""

import inspect
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache
from typing import Any

from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.sandbox import DEFAULT_MAX_LINES, DEFAULT_MEMORY_MB, DEFAULT_TIMEOUT_S, RoutineError, run_routine
from coordkit.agora.sandbox_worker import MAX_TEXT_CHARS
from coordkit.agora.schemas import SchemaError, check_schema, preview, validate
from coordkit.paths import DATA

DEFAULT_MAX_CALLS = 10  # tool calls in one run; a schema routine makes one
CONTRACT_REASONS = ("bad_reply", "unknown_tool", "bad_arguments", "tool_refused", "too_many_calls", "too_large")
SEND = "send"  # the user's tool: send(body) gives the body of the server's reply

Routine = str | Callable[[str], str]  # source run in the sandbox, or a human routine run in process
_SCHEMA_BLOCK = re.compile(r"^```json[ \t]*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL)


class ContractError(RoutineError):
    """A routine that broke the event contract or whose tool refused the call; ``reason`` is in CONTRACT_REASONS."""


# --- the contract ---------------------------------------------------------------------------------------------------


def run(
    routine: Routine,
    input: Any,
    tools: Mapping[str, Callable[..., Any]],
    *,
    max_calls: int = DEFAULT_MAX_CALLS,
    max_lines: int = DEFAULT_MAX_LINES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
) -> Any:
    """What ``routine`` returns for ``input`` (a JSON value), running the tools it calls; else ``RoutineError``.

    Source runs in the sandbox, a process forked for each call, within ``max_lines`` lines of Python (the budget
    that decides), ``timeout_s`` of wall time (the safety net) and ``memory_mb``. A callable
    is called here: a :class:`~coordkit.agora.sandbox.RoutineSession` (sandboxed, under its own limits), or a human
    routine, which runs in the kit's process (a ValueError it raises is a crash, as in the sandbox). ``tools`` maps
    a name to a kit function that takes the routine's arguments as keywords and returns a JSON value, or raises
    ValueError when it cannot act on them. A routine may call tools ``max_calls`` times in all.
    """
    _check_run(routine, tools, max_calls)
    results = []
    while True:
        event = json.dumps({"input": input, "results": results}, ensure_ascii=False)
        if len(event) > MAX_TEXT_CHARS:
            raise ContractError("too_large", f"the event grew to {len(event):,} characters, over {MAX_TEXT_CHARS:,}")
        limits = {"max_lines": max_lines, "timeout_s": timeout_s, "memory_mb": memory_mb}
        tool, value = _reply(_handle(routine, event, limits))
        if tool is None:
            return value
        if len(results) == max_calls:
            raise ContractError("too_many_calls", f"the routine asked for call {max_calls + 1}, over max_calls")
        results.append(_call_tool(tools, tool, value))


def _check_run(routine: object, tools: object, max_calls: object) -> None:
    if not (isinstance(routine, str) or callable(routine)):
        raise TypeError(f"a routine is source (str) or a function handle(event) -> str, not {type(routine).__name__}")
    if not isinstance(tools, Mapping) or not all(isinstance(n, str) and callable(t) for n, t in tools.items()):
        raise TypeError("tools maps each tool's name (str) to the kit function that runs it")
    if isinstance(max_calls, bool) or not isinstance(max_calls, int) or max_calls < 1:
        raise ValueError(f"max_calls is a whole number of tool calls, at least 1, not {max_calls!r}")


def _handle(routine: Routine, event: str, limits: dict) -> str:
    """The routine's reply to ``event``: from the sandbox for source (within ``limits``), from this process for a
    human routine."""
    if isinstance(routine, str):
        return run_routine(routine, event, **limits)
    try:
        reply = routine(event)
    except ValueError as error:
        raise RoutineError("crashed", f"the routine raised {type(error).__name__}: {error}") from None
    if not isinstance(reply, str):
        raise RoutineError("bad_return", f"handle(event) returned {type(reply).__name__}, not str")
    return reply


def _reply(text: str) -> tuple[str | None, Any]:
    """``(tool, arguments)`` for a call, ``(None, value)`` for a return; a ContractError for anything else."""
    try:
        reply = json.loads(text)
    except ValueError:
        reply = None
    if isinstance(reply, dict) and reply.keys() == {"return"}:
        return None, reply["return"]
    if isinstance(reply, dict) and reply.keys() in ({"call"}, {"call", "arguments"}):
        tool, arguments = reply["call"], reply.get("arguments", {})
        if isinstance(tool, str) and tool and isinstance(arguments, dict):
            return tool, arguments
    raise ContractError(
        "bad_reply",
        f'handle(event) returned {preview(text)}; a reply is JSON {{"call": <tool name>, "arguments": {{...}}}} '
        f'or {{"return": <value>}}',
    )


def _call_tool(tools: Mapping[str, Callable[..., Any]], name: str, arguments: dict) -> Any:
    tool = tools.get(name)
    if tool is None:
        raise ContractError("unknown_tool", f"the routine called {preview(name)}; its tools are {sorted(tools)}")
    try:
        _signature(tool).bind(**arguments)
    except TypeError as error:
        raise ContractError("bad_arguments", f"{name} cannot take {preview(arguments)}: {error}") from None
    try:
        return tool(**arguments)
    except ValueError as error:
        raise ContractError("tool_refused", f"{name} refused {preview(arguments)}: {error}") from None


def _signature(tool: Callable[..., Any]) -> inspect.Signature:
    """``inspect.signature(tool)``; for a plain function without defaults, made once per code object (an agent makes
    its tool afresh for each task, the same closure each time, and a network calls tools thousands of times)."""
    plain = inspect.isfunction(tool) and tool.__defaults__ is None and tool.__kwdefaults__ is None
    if not plain or hasattr(tool, "__wrapped__") or hasattr(tool, "__signature__"):
        return inspect.signature(tool)
    signature = _SIGNATURES.get(tool.__code__)
    if signature is None:
        if len(_SIGNATURES) >= 256:
            _SIGNATURES.clear()
        signature = _SIGNATURES[tool.__code__] = inspect.signature(tool)
    return signature


_SIGNATURES: dict = {}  # by code object: what inspect.signature reads of a plain function without defaults


# --- schema documents -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskSchema:
    """A schema block: the task's name, the JSON Schema of its input (an object of fields) and of its output."""

    task: str
    input: dict
    output: dict

    def __post_init__(self):
        if not (isinstance(self.task, str) and self.task.strip() and self.task.isprintable()):
            raise SchemaError(f"task: {self.task!r} must be a task's name, one line of text")
        check_schema(self.input, "input")
        if self.input.get("type") != "object":
            raise SchemaError('input: a request is an object of fields; give it "type": "object" and its properties')
        check_schema(self.output, "output")

    def block(self) -> str:
        """The fenced ``json`` block that a document carries."""
        fields = {"task": self.task, "input": self.input, "output": self.output}
        return "```json\n" + json.dumps(fields, indent=2, ensure_ascii=False) + "\n```"


def schema_document(schema: TaskSchema, prose: str, *, name: str, description: str) -> ProtocolDocument:
    """A protocol document: front matter, ``prose`` for whoever reads it, and ``schema``'s block to end it."""
    return ProtocolDocument.compose(f"{prose.rstrip()}\n\n{schema.block()}\n", name=name, description=description)


def schema_of(document: ProtocolDocument | str) -> TaskSchema:
    """The task schema in a document's one fenced ``json`` block; SchemaError when it has none or a bad one."""
    if not isinstance(document, ProtocolDocument):
        document = ProtocolDocument(document)
    blocks = _SCHEMA_BLOCK.findall(document.body)
    if len(blocks) != 1:
        raise SchemaError(
            f"the document has {len(blocks)} fenced json blocks (a line ```json, the JSON, a line ```); a schema "
            f'document has exactly one, {{"task": <name>, "input": <JSON Schema>, "output": <JSON Schema>}}'
        )
    try:
        fields = json.loads(blocks[0])
    except ValueError as error:
        raise SchemaError(f"the document's json block is not JSON: {error}") from None
    if not (isinstance(fields, dict) and fields.keys() == {"task", "input", "output"}):
        raise SchemaError(
            f"the document's json block is {preview(blocks[0])}; it must be an object with exactly the keys "
            f"task, input and output"
        )
    return TaskSchema(fields["task"], fields["input"], fields["output"])


# --- the rule-based programmer --------------------------------------------------------------------------------------

USER_HANDLE = '''
def handle(event):
    """The user's side: the task's input is the request's body; the reply's body is the task's output."""
    event = json.loads(event)
    if not event["results"]:
        validate(event["input"], INPUT, "the task's input")
        body = json.dumps(event["input"], sort_keys=True)
        return json.dumps({"call": "send", "arguments": {"body": body}})
    reply = json.loads(event["results"][-1])
    validate(reply, OUTPUT, "the reply")
    return json.dumps({"return": reply})
'''

SERVER_HANDLE = '''
def handle(event):
    """The server's side: the request's fields go to the tool; the tool's answer is the reply's body."""
    event = json.loads(event)
    if not event["results"]:
        request = json.loads(event["input"])
        validate(request, INPUT, "the request")
        fields = {name: request[name] for name in INPUT.get("properties", {}) if name in request}
        return json.dumps({"call": TOOL, "arguments": fields})
    answer = event["results"][-1]
    validate(answer, OUTPUT, "the tool's answer")
    return json.dumps({"return": json.dumps(answer, sort_keys=True)})
'''


class SchemaProgrammer:
    """The rule-based stand-in for the LLM that writes routines (§4.2): routine source from a document's schema.

    Each side's routine is a template filled with the schema block (see the module docstring); a document with no
    block, or a malformed one (:func:`schema_of` says why), gets None: no routine, the agent keeps its LLM. The same
    document gives the same source, byte for byte.
    """

    name = "schema programmer"

    def user_routine(self, document: ProtocolDocument) -> str | None:
        """The user's routine: the task's input out through ``send``, the reply back as the task's output."""
        schema = _schema_or_none(document)
        return None if schema is None else _source(schema, document, "user", None, USER_HANDLE)

    def server_routine(self, document: ProtocolDocument, tool: str | None = None) -> str | None:
        """The server's routine: a request's fields to ``tool`` (by default named as the task), its answer back."""
        schema = _schema_or_none(document)
        if schema is None:
            return None
        tool = schema.task if tool is None else tool
        if not (isinstance(tool, str) and tool.isidentifier()):
            raise ValueError(f"tool: {tool!r} must be the name of one of the server's tools")
        return _source(schema, document, "server", tool, SERVER_HANDLE)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def _schema_or_none(document: ProtocolDocument) -> TaskSchema | None:
    try:
        return schema_of(document)
    except SchemaError:
        return None


class TemplateRoutine(str):
    """The source a :class:`SchemaProgrammer` writes (a ``str``, as an LLM's would be), which also says what filled
    its template: the ``handle`` it ends with (``USER_HANDLE`` or ``SERVER_HANDLE``), its schemas as the JSON it
    reads them from, and the server's ``tool``. Kit code, not a stranger's: :mod:`~coordkit.agora.in_process` runs
    it in the kit's process when that gives the sandbox's answer."""

    handle: str
    input_json: str
    output_json: str
    tool: str | None


def _source(schema: TaskSchema, document: ProtocolDocument, side: str, tool: str | None, handle: str) -> str:
    """A routine's source: its schemas and the server's ``tool``, the validator, then the side's ``handle``."""
    input_json, output_json = (json.dumps(part, sort_keys=True) for part in (schema.input, schema.output))
    header = [
        f"# The {side}'s routine for the task {schema.task!r} in the protocol {document.hash},",
        "# written from the document's schema by coordkit's SchemaProgrammer (a rule-based stand-in for an LLM).",
        "import json",
        "",
        f"INPUT = json.loads({input_json!r})",
        f"OUTPUT = json.loads({output_json!r})",
        *([] if tool is None else [f"TOOL = {tool!r}"]),
        "",
        "",
        "",
    ]
    routine = TemplateRoutine("\n".join(header) + _validator_source() + "\n" + handle)
    routine.handle, routine.input_json, routine.output_json, routine.tool = handle, input_json, output_json, tool
    return routine


@cache
def _validator_source() -> str:
    """The validator's source, which every generated routine carries (read once: ``inspect`` tokenizes the file)."""
    return inspect.getsource(validate)


# --- human routines: Appendix C's weather forecast protocol, by hand ------------------------------------------------

WEATHER_TOOL = "weather_forecast"  # the server's tool: weather_forecast(date, location) -> the day's forecast
WEATHER_CONDITIONS = ("sunny", "cloudy", "rainy", "snowy")


@dataclass(frozen=True)
class RoutinePair:
    """Both sides of one protocol: the user's routine, the server's, and the server tool the server's calls."""

    user: Routine
    server: Routine
    tool: str


def weather_user_routine(event: str) -> str:
    """Alice's side of Appendix C's protocol, by hand: a date and a location go out, the day's forecast comes back."""
    event = json.loads(event)
    if not event["results"]:
        body = json.dumps(_weather_query(event["input"]))
        return json.dumps({"call": SEND, "arguments": {"body": body}})
    return json.dumps({"return": _forecast(json.loads(event["results"][-1]))})


def weather_server_routine(event: str) -> str:
    """Bob's side, by hand: the request's date and location go to his forecast tool, whose answer is the reply."""
    event = json.loads(event)
    if not event["results"]:
        return json.dumps({"call": WEATHER_TOOL, "arguments": _weather_query(json.loads(event["input"]))})
    return json.dumps({"return": json.dumps(_forecast(event["results"][-1]))})


def _weather_query(query: Any) -> dict:
    """The protocol's input message, ``{"date": "YYYY-MM-DD", "location": <text>}``; ValueError otherwise."""
    if not (isinstance(query, dict) and isinstance(query.get("date"), str) and isinstance(query.get("location"), str)):
        raise ValueError(f'a weather query is {{"date": "YYYY-MM-DD", "location": <text>}}, not {preview(query)}')
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", query["date"]):
        raise ValueError(f"date: {query['date']!r} is not YYYY-MM-DD")
    date.fromisoformat(query["date"])  # a real day: ValueError for 2023-02-30
    if not query["location"].strip():
        raise ValueError("location: empty")
    return {"date": query["date"], "location": query["location"]}


def _forecast(forecast: Any) -> dict:
    """The protocol's output message: temperature (°C) and precipitation (mm), numbers, and one of four conditions."""
    if not (isinstance(forecast, dict) and forecast.get("weatherCondition") in WEATHER_CONDITIONS):
        raise ValueError(f"a forecast's weatherCondition is one of {WEATHER_CONDITIONS}: {preview(forecast)}")
    for name in ("temperature", "precipitation"):
        value = forecast.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise ValueError(f"a forecast's {name} is a number: {preview(forecast)}")
    return {name: forecast[name] for name in ("temperature", "precipitation", "weatherCondition")}


WEATHER_ROUTINES = RoutinePair(weather_user_routine, weather_server_routine, WEATHER_TOOL)


@cache
def weather_forecast_document() -> ProtocolDocument:
    """Appendix C's finalised protocol, its ``Name:`` and ``Description:`` lines as front matter (D.1's metadata)."""
    text = (DATA / "agora" / "weather_forecast_protocol.txt").read_text(encoding="utf-8")
    name, _, description, _, body = text.split("\n", 4)
    return ProtocolDocument.compose(
        body, name=name.removeprefix("Name: "), description=description.removeprefix("Description: ")
    )


def human_routines(document: ProtocolDocument) -> RoutinePair | None:
    """The hand-written routines the kit has for ``document`` (§4.1's standard case), or None."""
    return WEATHER_ROUTINES if document.hash == weather_forecast_document().hash else None
