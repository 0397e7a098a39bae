"""Agora's LLM policies (§4, §5.2, Appendix C–D): the prompts, the reply parsers and the factories.

Each role decides the observations of :mod:`~coordkit.agora.policies` and returns the same decision types as the
rule-based policy that is its fallback. A request's ``purpose`` is one of D.3's four activities
(:data:`PURPOSES`), so that a ledger splits the cost as D.3 does. The paper prints no prompt: every prompt here is
written from its text (the rules Alice states in Appendix C, the routines of §4.1–4.2, the metadata of D.1) and
from the kit's contracts (the event contract of :mod:`~coordkit.agora.routines`, the schema block).

- **Natural language** (§5.2's phases A1 and B2): a querier writes the query from the task's input and reads the
  task's output from the reply; a responder reads the input from the query and writes the reply from the output.
- **Negotiation** (Appendix C) is a dialogue of three turns, one call each, as in the paper: the user proposes, the
  server specifies the messages with their schema block, the user agrees and writes the finalised protocol (name,
  description, text). :class:`NegotiationDialogue` plays the turns and counts calls and fallbacks as an
  :class:`~coordkit.policies.LLMPolicy` does. Three calls rather than one because D.3 calls negotiation "the most
  expensive activity (since it involves several rounds of communication)": one call would hide that, and would make
  one LLM speak for both sides. A turn that does not parse ends the dialogue and the rule negotiator decides.
- **Suitability** (§4.2, D.1): the task's contract and the candidates (name, description, hash, text); the reply
  names a candidate's hash, or NONE.
- **Implementation** (§4.2): the document, the side, its tool and the event contract; the reply is Python source
  in a fenced block defining ``handle(event)``, or NONE. The parser compiles the source to check its syntax and
  never runs it: routines run only in the sandbox.

The builders are pure and need no client, so that the rule-based engine can price the call each stand-in decision
replaces: the prompt :func:`querier_request` (…) would send, and the text :func:`coordkit.agora.stand_in.reply`
writes for it.
"""

import dataclasses
import json
import re
from functools import lru_cache

from coordkit.agora.policies import (
    SERVER,
    USER,
    Compose,
    KeywordSuitability,
    Negotiation,
    NegotiationObservation,
    NegotiationTurn,
    ProgrammingObservation,
    Read,
    RoutineProgrammer,
    SchemaNegotiator,
    SuitabilityObservation,
    TemplateQuerier,
    TemplateResponder,
)
from coordkit.agora.protocol import ProtocolDocument, ProtocolError
from coordkit.agora.routines import SEND, schema_of
from coordkit.agora.schemas import SchemaError, validate
from coordkit.agora.tasks import Task
from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.base import StopRun
from coordkit.llm.parsing import ReplyParseError, json_object, readable
from coordkit.policies import LLMPolicy, Policy

NATURAL_LANGUAGE = "agora.natural_language"
NEGOTIATION = "agora.negotiation"
CHECKS = "agora.checks"
IMPLEMENTATION = "agora.implementation"
PURPOSES = (NATURAL_LANGUAGE, NEGOTIATION, CHECKS, IMPLEMENTATION)  # D.3's four activities, in its order
NONE = "NONE"

# --- the system prompts: who the LLM is in each role (also how the stand-in tells the roles apart) ---------------

QUERIER_SYSTEM = (
    "You are a user agent in Agora, a network of LLM-powered agents. You fulfil tasks by asking the server agent "
    "that performs them, in natural language, and you turn its answers into data that follow the task's schema."
)
RESPONDER_SYSTEM = (
    "You are a server agent in Agora, a network of LLM-powered agents. Users ask you, in natural language, to "
    "perform one of your tasks; you read the data of their request and answer with the result of your tools."
)
NEGOTIATOR_USER_SYSTEM = (
    "You are a user agent in Agora, a network of LLM-powered agents. You negotiate a protocol with the server agent "
    "that performs a task you need often, so that both sides can then exchange structured messages with routines "
    "instead of natural language."
)
NEGOTIATOR_SERVER_SYSTEM = (
    "You are a server agent in Agora, a network of LLM-powered agents. A user agent negotiates with you a protocol "
    "for one of your tasks, so that both sides can then exchange structured messages with routines instead of "
    "natural language."
)
SUITABILITY_SYSTEM = (
    "You are an agent in Agora, a network of LLM-powered agents. Protocols are plain-text documents identified by "
    "their hash. You decide whether an existing protocol is suitable for a task."
)
PROGRAMMER_SYSTEM = (
    "You are an agent in Agora, a network of LLM-powered agents. You write routines: short Python programs that "
    "handle one side of a protocol without an LLM."
)

# Appendix C: the rules Alice states before proposing.
RULES = (
    "The protocol should be simple and unambiguous and specify the exact format of the messages sent and received. "
    "Do not worry about how the messages are delivered: an implementation receives a string and returns a string."
)

_BEGIN = "----- BEGIN {what} {key} -----"
_END = "----- END {what} {key} -----"


def _fenced(what: str, key: str, text: str) -> str:
    """``text`` between two marker lines naming ``what`` and ``key``, so that nothing in it can be read as ours."""
    return "\n".join([_BEGIN.format(what=what, key=key), text, _END.format(what=what, key=key)])


def marked(prompt: str, what: str) -> list[tuple[str, str]]:
    """Every ``(key, text)`` that ``prompt`` marks as ``what``, in order: what the stand-in reads back."""
    begin = re.escape(_BEGIN.format(what=what, key="\x00")).replace("\x00", "(.*?)")
    end = re.escape(_END.format(what=what, key="\x00")).replace("\x00", r"\1")
    return re.findall(f"^{begin}\n(.*?)\n{end}$", prompt, flags=re.MULTILINE | re.DOTALL)


def _contract(task: Task) -> str:
    """The task's contract (name, description, input and output JSON Schemas) as the prompts show it."""
    return _indented_contract(task.name, task.contract_json)


@lru_cache(maxsize=1024)
def _indented_contract(name: str, contract: str) -> str:
    """Indenting JSON runs Python's slow encoder: each contract is indented once (a network asks for thousands)."""
    return _fenced("TASK", name, json.dumps(json.loads(contract), indent=2, ensure_ascii=False))


# --- natural language -----------------------------------------------------------------------------------------------

_COMPOSE_FORM = (
    "Reply with the line MESSAGE: followed by the message, and nothing else: the message is sent as you write it."
)
_READ_FORM = "Reply with the JSON object only."


def querier_request(seen: Compose | Read) -> LLMRequest:
    """A user's natural language (§5.2, phase A1): write the query for the task's input, or read the output from
    the server's reply."""
    task = seen.task
    if isinstance(seen, Compose):
        prompt = (
            f"You need the server to perform this task:\n{_contract(task)}\n\n"
            f"The task's input:\n{_fenced('INPUT', task.name, json.dumps(seen.data, ensure_ascii=False))}\n\n"
            "Write the message that asks the server to perform the task with this input and to answer with every "
            "field of the task's output. There is no agreed format: write in plain English, and give every input "
            f"value exactly.\n\n{_COMPOSE_FORM}"
        )
    else:
        prompt = (
            f"You asked the server to perform this task:\n{_contract(task)}\n\n"
            f"The server's reply:\n{_fenced('MESSAGE', task.name, seen.text)}\n\n"
            "Write the task's output from the reply: a JSON object that follows the output schema, with only the "
            f"values the reply gives.\n\n{_READ_FORM}"
        )
    return LLMRequest.user(QUERIER_SYSTEM, prompt, max_tokens=600, purpose=NATURAL_LANGUAGE)


def responder_request(seen: Compose | Read) -> LLMRequest:
    """A server's natural language (§5.2, phases B1 and B2): read the task's input from a user's query, or write
    the reply from the output its tools gave."""
    task = seen.task
    if isinstance(seen, Read):
        prompt = (
            f"A user asks you to perform this task of yours:\n{_contract(task)}\n\n"
            f"The user's message:\n{_fenced('MESSAGE', task.name, seen.text)}\n\n"
            "Write the input your tools need from the message: a JSON object that follows the input schema, with "
            f"only the values the message gives.\n\n{_READ_FORM}"
        )
    else:
        prompt = (
            f"A user asked you to perform this task of yours:\n{_contract(task)}\n\n"
            f"Your tools' result:\n{_fenced('OUTPUT', task.name, json.dumps(seen.data, ensure_ascii=False))}\n\n"
            "Write the reply to the user. There is no agreed format: write in plain English, and give every value "
            f"of the result exactly.\n\n{_COMPOSE_FORM}"
        )
    return LLMRequest.user(RESPONDER_SYSTEM, prompt, max_tokens=600, purpose=NATURAL_LANGUAGE)


def parse_message(text: str, seen: Compose | None = None) -> str:
    """The message after the ``MESSAGE:`` line (the rest of the reply, trimmed); ReplyParseError without one."""
    match = re.search(r"^\W*MESSAGE\W*:[ \t]*", readable(text), flags=re.MULTILINE | re.IGNORECASE)
    message = text[match.end() :].strip() if match else ""
    if not message:
        raise ReplyParseError("no message after a MESSAGE: line")
    return message


def message_reply(message: str) -> str:
    """The reply in which an LLM writes ``message`` (what :func:`parse_message` reads back)."""
    return f"MESSAGE: {message}"


def natural_language_reply(decision: str | dict) -> str:
    """The reply that carries a querier's or responder's decision: a message written, or the data read (JSON)."""
    return message_reply(decision) if isinstance(decision, str) else json.dumps(decision, ensure_ascii=False)


def _parser(side: str):
    """The parser of ``side``'s natural language: a message for Compose; for Read, the data, checked against the
    schema of what ``side`` reads (a user the task's output, a server its input)."""

    def parse(text: str, seen: Compose | Read):
        if isinstance(seen, Compose):
            return parse_message(text, seen)
        schema = seen.task.output if side == USER else seen.task.input
        data = json_object(text)
        unknown = sorted(set(data) - set(schema.get("properties", {})))
        if unknown:
            raise ReplyParseError(f"{unknown} are not fields of the task {seen.task.name}")
        try:
            validate(data, schema, f"the task's {'output' if side == USER else 'input'}")
        except ValueError as error:
            raise ReplyParseError(str(error)) from None
        return data

    return parse


def querier_policy(client: LLMClient, fallback: Policy | None = None) -> LLMPolicy:
    """A user's natural language through ``client``; ``fallback`` (the template querier) when the reply is unusable."""
    fallback = TemplateQuerier() if fallback is None else fallback
    return LLMPolicy(client, querier_request, _parser(USER), fallback, name="llm_querier")


def responder_policy(client: LLMClient, fallback: Policy | None = None) -> LLMPolicy:
    """A server's natural language through ``client``; ``fallback`` (the template responder) when it is unusable."""
    fallback = TemplateResponder() if fallback is None else fallback
    return LLMPolicy(client, responder_request, _parser(SERVER), fallback, name="llm_responder")


# --- negotiation (Appendix C): three turns --------------------------------------------------------------------------

TURNS = (USER, SERVER, USER)  # who speaks at each turn: the user proposes, the server specifies, the user finalises
_LABELS = ("AGREEMENT", "NAME", "DESCRIPTION", "PROTOCOL")


def negotiation_request(seen: NegotiationObservation, turns: tuple[NegotiationTurn, ...] = ()) -> LLMRequest:
    """The request of the dialogue's next turn after ``turns`` (none: the user's opening).

    Turn 1, the user: the task's contract and Appendix C's rules; propose a protocol. Turn 2, the server: the
    proposal; specify the messages, ending with the schema block. Turn 3, the user: the server's specification;
    agree, and write the finalised protocol with a name and a one-line description (D.1's metadata).
    """
    task, turn = seen.task, len(turns)
    if turn == 0:
        prompt = (
            f"You need this task often:\n{_contract(task)}\n\n"
            f"Write your opening message to the server. Greet it, say what the task is, state the rules of the "
            f"negotiation ({RULES}) and propose a protocol whose messages carry the task's input and output.\n\n"
            f"{_COMPOSE_FORM}"
        )
        return LLMRequest.user(NEGOTIATOR_USER_SYSTEM, prompt, max_tokens=800, purpose=NEGOTIATION)
    if turn == 1:
        prompt = (
            f"You perform this task:\n{_contract(task)}\n\n"
            f"A user opens a negotiation:\n{_fenced('MESSAGE', 'user', turns[0].text)}\n\n"
            "Reply with a detailed specification of the protocol: the input message and the output message, field "
            "by field. End the specification with one fenced block (a line ```json, the JSON, a line ```) holding "
            'an object with exactly the keys "task" (the task\'s name), "input" and "output" (the JSON Schemas of '
            "the two messages, using only type, properties, required, enum, items, minimum, maximum, title and "
            "description). Then ask the user whether it agrees.\n\n"
            f"Reply with the message only: it is sent as you write it. {RULES}"
        )
        return LLMRequest.user(NEGOTIATOR_SERVER_SYSTEM, prompt, max_tokens=1500, purpose=NEGOTIATION)
    if turn == 2:
        prompt = (
            f"You need this task often:\n{_contract(task)}\n\n"
            f"Your opening message:\n{_fenced('MESSAGE', 'user', turns[0].text)}\n\n"
            f"The server's reply:\n{_fenced('MESSAGE', 'server', turns[1].text)}\n\n"
            "If the specification serves the task, agree and write the finalised protocol: a document that anyone "
            "can implement from alone, ending with the server's fenced json block unchanged. Reply in this form:\n"
            "AGREEMENT: <your message to the server, one paragraph>\n"
            "NAME: <the protocol's name, one line>\n"
            "DESCRIPTION: <what the protocol is for, one line>\n"
            "PROTOCOL:\n<the protocol's text>"
        )
        return LLMRequest.user(NEGOTIATOR_USER_SYSTEM, prompt, max_tokens=1800, purpose=NEGOTIATION)
    raise ValueError(f"a negotiation has {len(TURNS)} turns; turns has {turn}")


def parse_turn(text: str, seen: NegotiationObservation, turns: tuple[NegotiationTurn, ...] = ()) -> NegotiationTurn:
    """The turn said after ``turns``: the proposal, the server's specification (it must carry a schema block), or
    the agreement with the finalised protocol document."""
    turn = len(turns)
    if turn == 0:
        return NegotiationTurn(USER, parse_message(text))
    if turn == 1:
        try:
            schema_of(readable(text))
        except SchemaError as error:
            raise ReplyParseError(f"the server's specification has no usable schema block: {error}") from None
        return NegotiationTurn(SERVER, text.strip())
    sections = _sections(text)
    try:
        document = ProtocolDocument.compose(
            sections["PROTOCOL"] + "\n", name=sections["NAME"], description=sections["DESCRIPTION"]
        )
        schema_of(document)
    except (ProtocolError, SchemaError) as error:
        raise ReplyParseError(f"the finalised protocol is not usable: {error}") from None
    return NegotiationTurn(USER, sections["AGREEMENT"], document)


def turn_reply(said: NegotiationTurn) -> str:
    """The reply in which an LLM says ``said`` (what :func:`parse_turn` reads back): the user's proposal, the
    server's specification, or the user's agreement with the finalised document."""
    if said.speaker == SERVER:
        return said.text
    document = said.document
    if document is None:
        return message_reply(said.text)
    return (
        f"AGREEMENT: {said.text}\nNAME: {document.name}\nDESCRIPTION: {document.description}\n"
        f"PROTOCOL:\n{document.body}"
    )


def _sections(text: str) -> dict[str, str]:
    """The reply's AGREEMENT, NAME, DESCRIPTION and PROTOCOL, each the text after its label (the protocol: to the
    end); ReplyParseError unless all four are there, in that order, and not empty."""
    pattern = r"^\W*{}\W*:[ \t]*".format
    starts = [re.search(pattern(label), readable(text), flags=re.MULTILINE | re.IGNORECASE) for label in _LABELS]
    if any(start is None for start in starts) or [s.start() for s in starts] != sorted(s.start() for s in starts):
        raise ReplyParseError(f"the reply must have {', '.join(_LABELS)}: in this order")
    ends = [s.start() for s in starts[1:]] + [len(text)]
    sections = {label: text[s.end() : end].strip() for label, s, end in zip(_LABELS, starts, ends, strict=True)}
    empty = [label for label, value in sections.items() if not value]
    if empty:
        raise ReplyParseError(f"the reply's {', '.join(empty)} is empty")
    return sections


class NegotiationDialogue(LLMPolicy):
    """Appendix C's negotiation through ``client``: three calls, user, server, user (module docstring).

    Counts like an :class:`~coordkit.policies.LLMPolicy`: ``llm_calls`` every turn's call, ``llm_decisions``
    negotiations the LLMs concluded, and ``fallbacks`` by reason, one per turn that a failed call or an unusable
    reply ended; that turn, and the speaker's later ones, are then the rule negotiator's (``fallback``).
    """

    def __init__(self, client: LLMClient, fallback: Policy, name: str = "llm_negotiator"):
        super().__init__(client, negotiation_request, parse_turn, fallback, name=name)

    def turn(self, seen: NegotiationObservation, turns: tuple[NegotiationTurn, ...] = ()) -> NegotiationTurn:
        """The turn after ``turns``: the LLM's, or the rule's (marked ``fallback``) when its call failed or its
        reply could not be used."""
        try:
            reply = self.ask(negotiation_request(seen, turns))
        except StopRun:
            raise
        except Exception as error:  # an API that fails must never crash a run
            return self._rule_turn(seen, turns, error)
        return self._turn(reply.text, seen, turns)

    def decide(self, seen: NegotiationObservation) -> Negotiation:
        turns: tuple[NegotiationTurn, ...] = ()
        while len(turns) < len(TURNS):
            said = self.turn(seen, turns)
            if said.fallback:
                return self.fallback.decide(seen)
            turns = (*turns, said)
        return Negotiation(turns)

    async def decide_async(self, seen: NegotiationObservation) -> Negotiation:
        turns: tuple[NegotiationTurn, ...] = ()
        while len(turns) < len(TURNS):
            try:
                reply = await self.ask_async(negotiation_request(seen, turns))
            except StopRun:
                raise
            except Exception as error:
                return self._fall_back(seen, error)
            said = self._turn(reply.text, seen, turns)
            if said.fallback:
                return self.fallback.decide(seen)
            turns = (*turns, said)
        return Negotiation(turns)

    def _turn(self, text: str, seen: NegotiationObservation, turns: tuple[NegotiationTurn, ...]) -> NegotiationTurn:
        """The turn the reply says, or the rule's after a reply that cannot be used."""
        try:  # through self.parse, (reply, observation) like every LLMPolicy's, with the turns so far if any
            said = self.parse(text, seen, turns) if turns else self.parse(text, seen)
        except Exception as error:  # a reply must never crash a run
            return self._rule_turn(seen, turns, error, text)
        if said.document is not None:
            self.llm_decisions += 1
        return said

    def _rule_turn(self, seen, turns, error: Exception, reply: str | None = None) -> NegotiationTurn:
        """The rule negotiator's turn in place of the LLM's, counted as a fallback."""
        negotiation = self._fall_back(seen, error, reply)
        return dataclasses.replace(negotiation.turns[len(turns)], fallback=True)


def negotiator_policy(client: LLMClient, fallback: Policy | None = None) -> NegotiationDialogue:
    """Appendix C's negotiation through ``client``; ``fallback`` (the schema negotiator) when a turn fails."""
    return NegotiationDialogue(client, SchemaNegotiator() if fallback is None else fallback)


# --- suitability (§4.2, D.1) ----------------------------------------------------------------------------------------

_HASH = re.compile(r"[A-Za-z0-9+/]{27}=")


def _listing(document: ProtocolDocument, number: int) -> str:
    """One candidate as the check shows it: D.1's metadata (name, description), its hash and its text."""
    return "\n".join(
        [
            f"Candidate {number}",
            f"name: {document.name or '(none)'}",
            f"description: {document.description or '(none)'}",
            f"hash: {document.hash}",
            _fenced("PROTOCOL", document.hash, document.body),
        ]
    )


def suitability_request(seen: SuitabilityObservation) -> LLMRequest:
    """The check (§4.2: "Alice checks if Bob already supports a suitable protocol"): the task's contract and the
    candidates, each with D.1's metadata; the reply names one candidate's hash, or NONE."""
    listing = "\n\n".join(_listing(document, i) for i, document in enumerate(seen.candidates, start=1))
    prompt = (
        f"You need a protocol for this task:\n{_contract(seen.task)}\n\n"
        f"The candidates ({len(seen.candidates)}):\n\n{listing or '(none)'}\n\n"
        "A protocol is suitable if its messages carry exactly the task's input and the task's output, in a format "
        "precise enough to implement without asking anyone. Reply with one line, PROTOCOL: followed by the hash of "
        f"the first suitable candidate, or PROTOCOL: {NONE} if none is suitable."
    )
    return LLMRequest.user(SUITABILITY_SYSTEM, prompt, max_tokens=100, purpose=CHECKS)


def parse_choice(text: str, seen: SuitabilityObservation) -> ProtocolDocument | None:
    """The candidate whose hash follows ``PROTOCOL:``, or None for NONE; ReplyParseError for anything else."""
    line = re.search(r"^\W*PROTOCOL\W*:(.*)$", readable(text), flags=re.MULTILINE | re.IGNORECASE)
    if line is None:
        raise ReplyParseError("no PROTOCOL: line in the reply")
    chosen = _HASH.search(line.group(1))
    if chosen is None and re.search(rf"\b{NONE}\b", line.group(1), flags=re.IGNORECASE):
        return None
    for document in seen.candidates:
        if chosen is not None and document.hash == chosen.group(0):
            return document
    raise ReplyParseError(f"{line.group(1).strip()[:40]!r} is not the hash of a candidate, nor {NONE}")


def choice_reply(chosen: str | None) -> str:
    """The reply that names the candidate of hash ``chosen``, or none (what :func:`parse_choice` reads back)."""
    return f"PROTOCOL: {NONE if chosen is None else chosen}"


def suitability_policy(client: LLMClient, fallback: Policy | None = None) -> LLMPolicy:
    """The suitability check through ``client``; ``fallback`` (the keyword check) when the reply is unusable."""
    fallback = KeywordSuitability() if fallback is None else fallback
    return LLMPolicy(client, suitability_request, parse_choice, fallback, name="llm_suitability")


# --- implementation (§4.2) ------------------------------------------------------------------------------------------

EVENT_CONTRACT = """\
Define a function handle(event) that takes a string and returns a string. It is called once, and again after each
tool call it asks for, until it returns. It keeps nothing between calls: the event holds all it knows.
- The event is JSON: {"input": <the routine's input>, "results": [<the result of each tool call so far, in order>]}.
- To call a tool, return JSON {"call": "<tool name>", "arguments": {<the tool's arguments by name>}}.
- To finish, return JSON {"return": <the routine's output>}.
- Raise ValueError for data it refuses. It may import the standard library only; it has no files and no network."""

_SIDES = {
    USER: (
        "You write the user's side. The routine's input is the task's input (a JSON object). Its one tool is "
        f"{SEND}(body): it sends body (a string, the request message of the protocol) to the server and its result "
        "is the body of the server's reply (a string, the reply message of the protocol). Return the task's output "
        "as a JSON object read from that reply."
    ),
    SERVER: (
        "You write the server's side. The routine's input is the body of a request message of the protocol (a "
        "string). Its one tool is {tool}(...): it takes the request's fields as arguments by name and its result is "
        "the answer (a JSON object). Return the body of the protocol's reply message (a string)."
    ),
}


def _tool(seen: ProgrammingObservation) -> str:
    """The server's tool: the one given, else the task named in the document's schema block, else the document's
    name."""
    if seen.tool is not None:
        return seen.tool
    try:
        return schema_of(seen.document).task
    except SchemaError:
        return seen.document.name or "perform"


def programmer_request(seen: ProgrammingObservation) -> LLMRequest:
    """The routine's commission (§4.2, Bob "can use the LLM to write a routine"): the document, the side and its
    tool, and the event contract of :mod:`~coordkit.agora.routines`; the reply is source in a fenced block."""
    side = _SIDES[seen.side].format(tool=_tool(seen))
    prompt = (
        f"The protocol (hash {seen.document.hash}):\n{_fenced('PROTOCOL', seen.document.hash, seen.document.text)}"
        f"\n\n{side}\n\nThe routine's contract:\n{EVENT_CONTRACT}\n\nCheck what you send and what you receive "
        "against the protocol, and raise ValueError when a message does not follow it. Reply with the whole source "
        "in one fenced block (a line ```python, the source, a line ```), or with the word "
        f"{NONE} if the protocol does not say exactly what the messages are."
    )
    return LLMRequest.user(PROGRAMMER_SYSTEM, prompt, max_tokens=4000, purpose=IMPLEMENTATION)


_CODE_BLOCK = re.compile(r"^```(?:python|py)?[ \t]*\n(.*?)\n```[ \t]*$", re.MULTILINE | re.DOTALL | re.IGNORECASE)


def parse_routine(text: str, seen: ProgrammingObservation | None = None) -> str | None:
    """The source in the reply's first fenced block, or None for NONE. The source is compiled to check its syntax
    only, never run; it must define ``handle(event)`` at the top level."""
    block = _CODE_BLOCK.search(readable(text))
    if block is None:
        if text.strip().strip("*.`").upper() == NONE:
            return None
        raise ReplyParseError("no fenced code block in the reply")
    source = block.group(1) + "\n"
    try:
        compile(source, "<routine>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        raise ReplyParseError(f"the routine does not compile: {error}") from None
    if not re.search(r"^def handle\(", source, flags=re.MULTILINE):
        raise ReplyParseError("the routine does not define handle(event) at the top level")
    return source


def routine_reply(source: str | None) -> str:
    """The reply that gives ``source`` (what :func:`parse_routine` reads back)."""
    return NONE if source is None else f"```python\n{source.rstrip()}\n```"


def programmer_policy(client: LLMClient, fallback: Policy | None = None) -> LLMPolicy:
    """The routine programmer through ``client``; ``fallback`` (the schema programmer) when the reply is unusable."""
    fallback = RoutineProgrammer() if fallback is None else fallback
    return LLMPolicy(client, programmer_request, parse_routine, fallback, name="llm_programmer")
