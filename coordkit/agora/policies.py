"""Agora's rule-based policies: the stand-ins for what the paper gives to LLMs (§4, Appendix C, D.1). All
deterministic and stateless.

- :class:`SchemaNegotiator` — negotiation (§4.2, Appendix C): from a task's contract, the three messages of
  Appendix C (the user proposes, the server specifies, the user agrees) and the agreed protocol document, written
  with :func:`~coordkit.agora.routines.schema_document` (front matter: the task's name and description).
- :class:`RoutineProgrammer` — implementation (§4.2): :class:`~coordkit.agora.routines.SchemaProgrammer` as a
  policy, a document and a side to routine source (None: no schema block, the agent keeps its LLM).
- :class:`KeywordSuitability` — the check (§4.2, D.1): the first candidate document whose schema block names the
  task and carries exactly its input and output schemas; a document with prose only is never suitable.
- :class:`TemplateQuerier` and :class:`TemplateResponder` — natural language without an LLM: a templated message
  carrying the data as ``key: value`` lines, and a parser for the same template. These templates are all that
  rule-based agents can do: an LLM reads and writes free text, and a rule-based agent reads only what a rule-based
  agent wrote.
"""

import json
import re
from dataclasses import dataclass

from coordkit.agora.protocol import ProtocolDocument
from coordkit.agora.routines import SchemaProgrammer, TaskSchema, schema_document, schema_of
from coordkit.agora.schemas import SchemaError, validate
from coordkit.agora.tasks import Task
from coordkit.llm.parsing import ReplyParseError
from coordkit.policies import Classifier, Policy

USER = "user"
SERVER = "server"
SIDES = (USER, SERVER)

_PAIR = re.compile(r"- ([A-Za-z_][A-Za-z0-9_]*): (.*)")


def _check(observation: object, kind: type | tuple[type, ...], policy: str) -> None:
    """TypeError unless ``observation`` is of ``kind`` (the policy's observation dataclasses)."""
    if not isinstance(observation, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise TypeError(f"{policy} decides from {names}, not {type(observation).__name__}")


def _check_task(task: object, where: str) -> None:
    if not isinstance(task, Task):
        raise TypeError(f"{where}.task is a tasks.Task (from the catalogue), not {type(task).__name__}")


# --- negotiation ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NegotiationObservation:
    """What a negotiating user knows: the task it needs a protocol for (its contract: name, description, schemas)."""

    task: Task

    def __post_init__(self):
        _check_task(self.task, "NegotiationObservation")


@dataclass(frozen=True)
class NegotiationTurn:
    """One turn of a negotiation (Appendix C): who says it (``user`` or ``server``) and the text; the last turn
    carries the finalised protocol ``document``. ``fallback``: the rule's turn, said because this speaker's LLM
    turn could not be used (its later turns are the rule's too)."""

    speaker: str
    text: str
    document: ProtocolDocument | None = None
    fallback: bool = False


@dataclass(frozen=True)
class Negotiation:
    """A whole negotiation: its turns in order, the last carrying the protocol document both sides agreed on."""

    turns: tuple[NegotiationTurn, ...]

    @property
    def document(self) -> ProtocolDocument:
        return self.turns[-1].document


def _field_lines(schema: dict) -> list[str]:
    """One line per field of an object schema: its name, type, allowed values and description."""
    lines = []
    for name, field in schema.get("properties", {}).items():
        kind = field.get("type", "any JSON value")
        if kind == "array" and "type" in field.get("items", {}):
            kind = f"array of {field['items']['type']}"
        details = []
        for source, each in ((field, ""), (field.get("items", {}), "each ")):
            if "enum" in source:
                details.append(each + "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in source["enum"]))
            if "minimum" in source or "maximum" in source:
                details.append(f"from {source.get('minimum', '-inf')} to {source.get('maximum', 'inf')}")
        if "description" in field:
            details.append(field["description"])
        suffix = (": " + "; ".join(details).rstrip(".")) if details else ""
        need = "required" if name in schema.get("required", []) else "optional"
        lines.append(f"- **{name}** ({kind}, {need}){suffix}.")
    return lines


def _names(schema: dict) -> str:
    names = [f'"{name}"' for name in schema.get("properties", {})]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@dataclass(frozen=True)
class SchemaNegotiator(Policy):
    """Negotiation by template (Appendix C's three messages): the user proposes a JSON protocol with the task's
    fields, the server replies with the full specification, the user agrees. The document is the specification's
    prose and the task's schema block (:func:`~coordkit.agora.routines.schema_document`), its front matter the
    task's name and description. The same task gives the same messages and the same document, byte for byte."""

    name = "schema_negotiator"
    classifier = Classifier()

    def decide(self, seen: NegotiationObservation) -> Negotiation:
        _check(seen, NegotiationObservation, type(self).__name__)
        task = seen.task
        schema = TaskSchema(task.name, task.input, task.output)
        specification = "\n".join(
            [
                f"Protocol for the task {task.name}: {task.description}",
                "",
                "Input message: a JSON object with these fields:",
                *_field_lines(task.input),
                "",
                "Output message: a JSON object with these fields:",
                *_field_lines(task.output),
                "",
                "The JSON block below gives both messages' JSON Schemas.",
            ]
        )
        proposal = (
            f"Hello. I'm here to negotiate a protocol for the task {task.name}: {task.description}\n\n"
            "Before we start, the rules: the protocol should be simple and unambiguous and specify the exact format "
            "of the messages; we do not worry about delivery, and an implementation receives a string and returns "
            "a string.\n\n"
            f"I propose a JSON-based protocol. The input message is a JSON object with the properties "
            f"{_names(task.input)}; the output message a JSON object with the properties {_names(task.output)}.\n\n"
            "What are your thoughts on this proposal?"
        )
        reply = (
            "Your proposal is simple and unambiguous. Here is a more detailed specification:\n\n"
            f"{specification}\n\n{schema.block()}\n\nIf you agree with this structure, we can finalize the protocol."
        )
        agreement = "I agree with the proposed protocol structure. It is simple and unambiguous."
        document = schema_document(schema, specification, name=task.name, description=task.description)
        turns = (
            NegotiationTurn(USER, proposal),
            NegotiationTurn(SERVER, reply),
            NegotiationTurn(USER, agreement, document),
        )
        return Negotiation(turns)

    def turn(self, seen: NegotiationObservation, turns: tuple[NegotiationTurn, ...] = ()) -> NegotiationTurn:
        """The turn after ``turns`` (the rule's turns do not depend on what was said before)."""
        return self.decide(seen).turns[len(turns)]


# --- implementation -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProgrammingObservation:
    """What a programmer is asked: a routine for ``side`` (``user`` or ``server``) of ``document``; a server's
    routine calls ``tool`` (None: the tool named as the task)."""

    document: ProtocolDocument
    side: str
    tool: str | None = None

    def __post_init__(self):
        if not isinstance(self.document, ProtocolDocument):
            raise TypeError(
                f"ProgrammingObservation.document is a ProtocolDocument, not {type(self.document).__name__}"
            )
        if self.side not in SIDES:
            raise ValueError(f"ProgrammingObservation.side is {self.side!r}; choose one of {', '.join(SIDES)}")
        if self.side == USER and self.tool is not None:
            raise ValueError(
                f"ProgrammingObservation.tool is {self.tool!r}: a user's routine calls only send, give no tool"
            )


@dataclass(frozen=True)
class RoutineProgrammer(Policy):
    """The routine programmer as a policy: :class:`~coordkit.agora.routines.SchemaProgrammer` fills a template from
    the document's schema block; a document with no block (or a malformed one) gets None, and the agent keeps its
    LLM."""

    name = "routine_programmer"
    classifier = Classifier()

    def decide(self, seen: ProgrammingObservation) -> str | None:
        _check(seen, ProgrammingObservation, type(self).__name__)
        programmer = SchemaProgrammer()
        if seen.side == USER:
            return programmer.user_routine(seen.document)
        return programmer.server_routine(seen.document, seen.tool)


# --- suitability ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuitabilityObservation:
    """What a checking agent has: the task it needs a protocol for and the candidate documents, in the order found
    (the server's ``/.wellknown``, then the database's search)."""

    task: Task
    candidates: tuple[ProtocolDocument, ...]

    def __post_init__(self):
        _check_task(self.task, "SuitabilityObservation")
        if not (isinstance(self.candidates, tuple) and all(isinstance(d, ProtocolDocument) for d in self.candidates)):
            raise TypeError("SuitabilityObservation.candidates is a tuple of ProtocolDocument")


@dataclass(frozen=True)
class KeywordSuitability(Policy):
    """The check without an LLM: the first candidate whose schema block names the task and whose input and output
    schemas equal the task's, else None. A document with no block, or a malformed one, is never suitable: rules
    cannot read prose."""

    name = "keyword_suitability"
    classifier = Classifier()

    def decide(self, seen: SuitabilityObservation) -> ProtocolDocument | None:
        _check(seen, SuitabilityObservation, type(self).__name__)
        wanted = TaskSchema(seen.task.name, seen.task.input, seen.task.output)
        for document in seen.candidates:
            try:
                schema = schema_of(document)
            except SchemaError:
                continue
            if schema == wanted:
                return document
        return None


# --- natural language by template -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Compose:
    """A message to write for ``task``: a querier carries its input, a responder its output."""

    task: Task
    data: dict

    def __post_init__(self):
        _check_task(self.task, "Compose")
        if not isinstance(self.data, dict):
            raise TypeError(f"Compose.data is the task's data, a dict, not {type(self.data).__name__}")


@dataclass(frozen=True)
class Read:
    """A message received about ``task``: a querier reads the reply, a responder the query."""

    task: Task
    text: str

    def __post_init__(self):
        _check_task(self.task, "Read")
        if not isinstance(self.text, str):
            raise TypeError(f"Read.text is the message, a str, not {type(self.text).__name__}")


def _query_opening(task: Task) -> str:
    return f"Hello. I would like an answer for the task {task.name}:"


def _reply_opening(task: Task) -> str:
    return f"Here is the answer for the task {task.name}:"


def _pairs(data: dict) -> list[str]:
    return [f"- {key}: {json.dumps(value, ensure_ascii=False)}" for key, value in data.items()]


def _write(opening: str, data: dict, schema: dict, what: str, closing: str) -> str:
    try:
        validate(data, schema, what)
    except ValueError as error:
        raise ValueError(f"cannot write the message: {error}") from None
    unknown = sorted(set(data) - set(schema.get("properties", {})))
    if unknown:
        raise ValueError(f"cannot write the message: {what} has fields {unknown} that the task does not have")
    lines = [opening, "One `key: value` pair a line, each value in JSON:", *_pairs(data)]
    return "\n".join([*lines, closing] if closing else lines)


def _parse(text: str, opening: str, schema: dict, what: str) -> dict:
    """The data in a templated message; ReplyParseError when the text is not the template or the data do not fit."""
    lines = text.strip().splitlines()
    if not lines or lines[0].strip() != opening:
        first = lines[0] if lines else ""
        raise ReplyParseError(f"the message does not open with {opening!r} (it opens with {first[:80]!r})")
    data: dict = {}
    for line in lines[1:]:
        match = _PAIR.fullmatch(line.strip())
        if match is None:
            continue
        key, value = match.groups()
        if key in data:
            raise ReplyParseError(f"{what}: {key!r} appears twice")
        try:
            data[key] = json.loads(value)
        except ValueError:
            raise ReplyParseError(f"{what}: the value of {key!r}, {value[:60]!r}, is not JSON") from None
    unknown = sorted(set(data) - set(schema.get("properties", {})))
    if unknown:
        raise ReplyParseError(f"{what}: {unknown} are not fields of the task")
    try:
        validate(data, schema, what)
    except ValueError as error:
        raise ReplyParseError(str(error)) from None
    return data


@dataclass(frozen=True)
class TemplateQuerier(Policy):
    """A user's natural language without an LLM. ``Compose(task, input)`` → the query: an opening that names the
    task, the input as ``key: value`` lines (values in JSON), the output fields asked for. ``Read(task, reply)`` →
    the output dict, parsed from :class:`TemplateResponder`'s reply and checked against the task's output schema
    (:class:`~coordkit.llm.parsing.ReplyParseError` otherwise).

    These templates are all that rule-based agents can do: an LLM would read and write free text; this querier
    reads only a reply in the responder's template."""

    name = "template_querier"
    classifier = Classifier()

    def decide(self, seen: Compose | Read) -> str | dict:
        _check(seen, (Compose, Read), type(self).__name__)
        task = seen.task
        if isinstance(seen, Read):
            return _parse(seen.text, _reply_opening(task), task.output, f"the reply to {task.name}")
        closing = f"Please reply with {_names(task.output)}."
        return _write(_query_opening(task), seen.data, task.input, f"the input of {task.name}", closing)


@dataclass(frozen=True)
class TemplateResponder(Policy):
    """A server's natural language without an LLM. ``Read(task, query)`` → the task's input, parsed from
    :class:`TemplateQuerier`'s query and checked against the task's input schema
    (:class:`~coordkit.llm.parsing.ReplyParseError` otherwise); ``Compose(task, output)`` → the reply, the output as
    ``key: value`` lines.

    These templates are all that rule-based agents can do: an LLM would read and write free text; this responder
    reads only a query in the querier's template."""

    name = "template_responder"
    classifier = Classifier()

    def decide(self, seen: Compose | Read) -> str | dict:
        _check(seen, (Compose, Read), type(self).__name__)
        task = seen.task
        if isinstance(seen, Read):
            return _parse(seen.text, _query_opening(task), task.input, f"the query for {task.name}")
        return _write(_reply_opening(task), seen.data, task.output, f"the output of {task.name}", "")
