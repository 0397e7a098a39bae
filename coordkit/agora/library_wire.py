"""The official Agora library's wire forms (``agora-protocol`` 0.2.0), beside the paper's (Appendix B.1).

The paper's B.1 request is ``{"protocolHash", "protocolSources", "body"}`` and its reply ``{"status", "body"}``
(``rejected`` alone). The library sends and expects a little more (recorded in data/agora/library-0.2.0/):

- a *multiround* request adds ``"multiround": true`` (``agora/sender/components/transporter.py``, ``__call__``); the
  library sends one for every natural-language exchange and every negotiation. Its first reply must carry a
  ``conversationId`` (else the sender raises, transporter.py:81-84); the next turns are posted to
  ``/conversations/<id>`` and the conversation is closed by ``DELETE /conversations/<id>``, acknowledged by
  ``{"status": "success"}`` alone (``agora/receiver/server.py``);
- an error is ``{"status": "error", "message": …}`` (server.py); the sender reads ``status`` and ``body`` of every
  reply (transporter.py:86-89: a reply without ``body`` is a ``KeyError``) and drops every other key;
- a negotiation opens with ``"protocolHash": "negotiation"`` and ``"protocolSources": null``.

How the kit tells the library from a B.1 requester: a request is the library's, and is answered in the library's
form, when it is posted to ``/conversations/<id>``, or to ``/`` with the ``multiround`` key, or over HTTP with a
``User-Agent`` of ``python-requests/…`` (the library's transporter posts with ``requests``, transporter.py:74;
:func:`is_library_agent`): a single-round library request, for a protocol whose front matter says ``multiround:
false``, is B.1's form exactly, and only the header tells it apart. Every other request is B.1's and is answered
exactly as before: the kit's own client sends neither the key nor that header, so nothing the kit's runs send or
record changes. A client that sends B.1's form with ``requests`` gets the library's answers, a superset of B.1's
(an ``error`` that carries its ``body``).

The kit answers the library so that its sender can read every reply: ``success`` with ``body`` (and, on a
multiround request's first turn, the ``conversationId``); a failure or a rejection as ``{"status": "error",
"message": m, "body": m}``, with the ``conversationId`` on a first turn too, since the library's sender raises on a
first reply without one, whatever its status. A rejection's message is ``protocol rejected``, the text the library's
querier turns into its ``ProtocolRejectedError`` (``agora/sender/components/querier.py``, ``parse_and_handle_query``).
Every answer to the library is HTTP 200, as the library's server answers (its sender raises on any other status).
(The library's own sender passes on only ``status`` and ``body``, so its querier never sees that message and its
negotiator raises on any reply that is not a success, negotiator.py:93: the kit's errors reach the library's code
as far as the library lets them.) The kit does not negotiate in the library's way (an LLM conversation that writes a
new document): a negotiation is answered with an error saying so. Each turn of a conversation reaches the kit's
agent as one B.1 envelope in the protocol the conversation opened with (the library's server, too, reads only a
turn's ``body``).
"""

import itertools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coordkit.agora.protocol import Envelope, ProtocolError, Response, _json_object, _preview

LIBRARY = "agora-protocol 0.2.0"
MULTIROUND = "multiround"
LIBRARY_USER_AGENT = "python-requests/"
CONVERSATIONS_PATH = "/conversations/"
NEGOTIATION = "negotiation"
REJECTED_MESSAGE = "protocol rejected"  # querier.py's parse_and_handle_query compares the message with this text
MAX_CONVERSATIONS = 1000  # open conversations an endpoint keeps; the oldest is dropped (the library drops at 300 s)
REQUEST_FIELDS = ("protocolHash", "protocolSources", "body", MULTIROUND)


def is_library_request(fields: Mapping) -> bool:
    """Whether a request's JSON object is the library's rather than B.1's: it carries ``multiround``."""
    return MULTIROUND in fields


def is_library_agent(user_agent: str | None) -> bool:
    """Whether an HTTP request's ``User-Agent`` is that of ``requests``, with which the library posts
    (transporter.py:74: ``requests.post(target_url, json=raw_query)``, ``python-requests/<version>``)."""
    return user_agent is not None and user_agent.startswith(LIBRARY_USER_AGENT)


def read_request(data: str | bytes | Mapping) -> Envelope | None:
    """The B.1 envelope a request to ``/`` in the library's form carries (transporter.py's ``raw_query``), None for
    a negotiation's opening; a ProtocolError names the field that is wrong."""
    fields = _json_object(data, "library request", REQUEST_FIELDS, optional=(MULTIROUND,))
    multiround = fields.get(MULTIROUND, False)
    if not isinstance(multiround, bool):
        raise ProtocolError(f"multiround: {_preview(multiround)} is not true or false; the library sends true")
    if fields["protocolHash"] == NEGOTIATION:
        return None
    return Envelope.from_json({key: fields[key] for key in REQUEST_FIELDS[:3]})


def reply(response: Response, conversation_id: str | None = None) -> dict[str, Any]:
    """``response`` in the form the library's sender reads (module docstring), with ``conversationId`` if given."""
    if response.status == "success":
        fields = {"status": "success", "body": response.body}
    else:
        fields = error(REJECTED_MESSAGE if response.status == "rejected" else response.body)
    return fields | ({} if conversation_id is None else {"conversationId": conversation_id})


def error(message: str) -> dict[str, Any]:
    """The library's error form (server.py), with ``body`` too, which its sender reads on every reply."""
    return {"status": "error", "message": message, "body": message}


class Conversations:
    """The multiround conversations an endpoint holds for library requesters: each id and the protocol it opened
    with (hash and sources, None for natural language). Ids count up (``conversation-1``, …), so runs repeat."""

    def __init__(self, limit: int = MAX_CONVERSATIONS):
        self._open: OrderedDict[str, Envelope] = OrderedDict()
        self._ids = itertools.count(1)
        self._limit = limit
        self._lock = threading.Lock()

    def new_id(self) -> str:
        with self._lock:
            return f"conversation-{next(self._ids)}"

    def keep(self, conversation_id: str, opening: Envelope) -> None:
        """Remember the conversation's opening envelope, dropping the oldest past the limit."""
        with self._lock:
            self._open[conversation_id] = opening
            while len(self._open) > self._limit:
                self._open.popitem(last=False)

    def turn(self, conversation_id: str, body: str) -> Envelope | None:
        """The envelope for a next turn: the opening's protocol and ``body``; None if no such conversation is open."""
        with self._lock:
            opening = self._open.get(conversation_id)
        return None if opening is None else Envelope(opening.protocol_hash, opening.protocol_sources, body)

    def close(self, conversation_id: str) -> None:
        """Forget the conversation; closing one that is not open is harmless (server.py does the same)."""
        with self._lock:
            self._open.pop(conversation_id, None)


def serve_request(handle: Callable[[Envelope], Response], data: Any, conversations: Conversations) -> bytes:
    """The kit's answer to the library's request to ``/`` (``data``: its parsed JSON), as UTF-8 JSON."""
    if not isinstance(data, Mapping):
        return _encode(error(f"malformed request: {_preview(data)} is not a JSON object; send {{...}}"))
    multiround = bool(data.get(MULTIROUND))  # read as the library's server reads it (server.py:32)
    conversation_id = conversations.new_id() if multiround else None
    try:
        envelope = read_request(data)
    except ProtocolError as problem:
        return _encode(error(f"malformed request: {problem}") | _conversation(conversation_id))
    if envelope is None:
        message = (
            f"this agent does not negotiate protocols in {LIBRARY}'s way; send a request in one of the protocols it "
            f"lists at /.wellknown, or in natural language (protocolHash null)"
        )
        return _encode(error(message) | _conversation(conversation_id))
    response = handle(envelope)
    if conversation_id is not None and response.status == "success":
        conversations.keep(conversation_id, envelope)
    return _encode(reply(response, conversation_id))


def serve_turn(
    handle: Callable[[Envelope], Response], conversation_id: str, data: str | bytes, conversations: Conversations
) -> bytes:
    """The kit's answer to a next turn, ``POST /conversations/<id>`` (server.py reads only the turn's ``body``)."""
    try:
        body = json.loads(data)["body"]
    except (ValueError, TypeError, KeyError, RecursionError):
        return _encode(error('malformed turn: send a JSON object with a "body" string'))
    if not isinstance(body, str):
        return _encode(error(f"malformed turn: body {_preview(body)} is {type(body).__name__}; send a string"))
    envelope = conversations.turn(conversation_id, body)
    if envelope is None:
        return _encode(error("Conversation not found."))  # server.py's own message
    return _encode(reply(handle(envelope)))


def serve_close(conversation_id: str, conversations: Conversations) -> bytes:
    """The kit's answer to ``DELETE /conversations/<id>``: the library's acknowledgement, ``{"status": "success"}``."""
    conversations.close(conversation_id)
    return _encode({"status": "success"})


@dataclass(frozen=True)
class LibraryReply:
    """A reply from the library's server, as B.1's Response (``error`` becomes a failure whose body is the
    message), and the conversation it opened, if any."""

    response: Response
    conversation_id: str | None


def read_reply(data: str | bytes | Mapping) -> LibraryReply:
    """A reply of the library's server (server.py): a success (with ``conversationId`` on a first multiround turn)
    or ``{"status": "error", "message": …}``; B.1's forms too. A ProtocolError names what is wrong."""
    fields = _json_object(
        data,
        "library reply",
        ("status", "body", "message", "conversationId"),
        optional=("body", "message", "conversationId"),
    )
    conversation_id = fields.get("conversationId")
    if conversation_id is not None and not isinstance(conversation_id, str):
        raise ProtocolError(f"conversationId: {_preview(conversation_id)} is not a string; the library sends a UUID")
    if fields["status"] == "error":
        message = fields.get("message")
        if not isinstance(message, str):
            raise ProtocolError(f'message: {_preview(message)} in an error reply; the library sends {{"message": "…"}}')
        return LibraryReply(Response.failure(message), conversation_id)
    b1 = {key: fields[key] for key in ("status", "body") if key in fields}
    return LibraryReply(Response.from_json(b1), conversation_id)


def read_close_acknowledgement(data: str | bytes | Mapping) -> None:
    """Nothing if ``data`` is the library's answer to a DELETE, ``{"status": "success"}``; else a ProtocolError."""
    fields = _json_object(data, "close acknowledgement", ("status", "message"), optional=("message",))
    if fields["status"] != "success":
        raise ProtocolError(f"the conversation was not closed: status {_preview(fields['status'])}, {fields}")


def _conversation(conversation_id: str | None) -> dict[str, str]:
    return {} if conversation_id is None else {"conversationId": conversation_id}


def _encode(fields: Mapping) -> bytes:
    """UTF-8 JSON with non-ASCII escaped, as the library's Flask server writes it (``jsonify``)."""
    return json.dumps(fields).encode("utf-8")
