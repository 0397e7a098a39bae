"""The kit as a client of an agent built with the official Agora library (``agora-protocol`` 0.2.0).

The library serves an agent with ``agora.receiver.server.ReceiverServer``: ``POST /`` opens a conversation, the
next turns of a multiround one go to ``/conversations/<id>``, ``DELETE`` there closes it (the forms are in
:mod:`~coordkit.agora.library_wire`). It has no ``/.wellknown``, so the kit names the protocol itself, as the
library's own sender does (``agora/sender/core.py``, ``execute_task``):

- natural language is always multiround;
- a protocol is multiround as its front matter's ``multiround`` says (read as the library reads it,
  :func:`~coordkit.agora.protocol.library_front_matter`), and multiround when the library cannot read it;
- the document travels as a data URI unless sources are given.

:class:`LibraryConversation` sends exactly what the library's sender sends (``SimpleSenderTransporter``; tested
against its recorded requests) and reads every reply the library's server gives: its ``error`` becomes a
``failure`` whose body is the server's message, so a run reads a library agent's answers as it reads a kit agent's.
It never sends the kit's run key: a library agent is an outside service.
"""

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable

from coordkit.agora import library_wire
from coordkit.agora.protocol import (
    MAX_DOCUMENT_BYTES,
    Envelope,
    ProtocolDocument,
    ProtocolError,
    Response,
    library_front_matter,
)
from coordkit.agora.transport import TransportError

USER_AGENT = "coordkit-agora"


class LibraryTransportError(TransportError):
    """A library agent could not be reached, or answered outside its wire forms (not HTTP 200, not JSON)."""


def multiround_for(document: ProtocolDocument | None) -> bool:
    """Whether the library's sender would open a multiround conversation for ``document`` (None: natural language)."""
    if document is None:
        return True
    try:
        metadata = library_front_matter(document.text)
    except ProtocolError:
        return True  # the library cannot read this front matter; core.py's default
    return True if metadata is None else bool(metadata["multiround"])


class LibraryConversation:
    """One conversation with the library agent at ``url``, in natural language (``document`` None) or in
    ``document``'s protocol; ``send`` each turn, then ``close`` (or use ``with``).

    ``multiround`` defaults to the library's choice (:func:`multiround_for`). A first reply without a
    ``conversationId`` opens nothing: the next ``send`` opens the conversation again, as a new request to ``/``.
    """

    def __init__(
        self,
        url: str,
        document: ProtocolDocument | None = None,
        *,
        sources: Iterable[str] = (),
        multiround: bool | None = None,
        timeout_s: float = 30.0,
    ):
        if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
            raise ValueError(
                f"url={url!r} is not an http(s) URL; give the library agent's base URL, e.g. http://127.0.0.1:5000"
            )
        if multiround is not None and not isinstance(multiround, bool):
            raise ValueError(f"multiround={multiround!r} is not True, False or None (None: as the library decides)")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not timeout_s > 0:
            raise ValueError(f"timeout_s={timeout_s!r} is not a positive number of seconds; e.g. 30")
        sources = tuple(sources)
        if document is None and sources:
            raise ValueError(f"sources={list(sources)!r} for natural language; pass the protocol's document too")
        self.url = url.rstrip("/")
        opening = Envelope.natural_language("") if document is None else Envelope.in_protocol(document, "", sources)
        self._protocol_hash = opening.protocol_hash
        self._protocol_sources = list(opening.protocol_sources)
        self.multiround = multiround_for(document) if multiround is None else multiround
        self.timeout_s = float(timeout_s)
        self.conversation_id: str | None = None
        self.closed = False

    def send(self, body: str) -> Response:
        """This turn's reply, as B.1's Response (a library ``error`` is a ``failure`` with its message)."""
        if self.closed:
            raise ProtocolError("the conversation is closed; open a new LibraryConversation to talk again")
        if not isinstance(body, str):
            raise ProtocolError(f"body: {body!r} is {type(body).__name__}; send it as a string")
        request = {"protocolHash": self._protocol_hash, "protocolSources": self._protocol_sources, "body": body}
        if self.multiround:
            request[library_wire.MULTIROUND] = True
        path = "/" if self.conversation_id is None else self._conversation_path()
        reply = library_wire.read_reply(self._carry("POST", path, request))
        if self.multiround and self.conversation_id is None and reply.response.status == "success":
            if reply.conversation_id is None:
                raise ProtocolError(
                    f"{self.url} answered a multiround request without a conversationId; it does not hold "
                    f"conversations: talk to it with multiround=False"
                )
            self.conversation_id = reply.conversation_id
        return reply.response

    def close(self) -> None:
        """Close the conversation on the agent (``DELETE``), if one was opened; closing twice does nothing."""
        if self.closed:
            return
        self.closed = True
        if self.conversation_id is not None:
            library_wire.read_close_acknowledgement(self._carry("DELETE", self._conversation_path(), None))

    def __enter__(self) -> "LibraryConversation":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _conversation_path(self) -> str:
        return library_wire.CONVERSATIONS_PATH + urllib.parse.quote(self.conversation_id, safe="")

    def _carry(self, method: str, path: str, fields: dict | None) -> bytes:
        """The reply's bytes to one HTTP request; LibraryTransportError unless the agent answered 200."""
        data = None if fields is None else json.dumps(fields).encode("utf-8")
        headers = {"User-Agent": USER_AGENT} | ({} if data is None else {"Content-Type": "application/json"})
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                content = answer.read(MAX_DOCUMENT_BYTES + 1)
        except urllib.error.HTTPError as refused:
            raise LibraryTransportError(
                f"{method} {self.url}{path} answered HTTP {refused.code}; the library's server answers 200 to every "
                f"request it reads: is {self.url} a library agent?"
            ) from None
        except (OSError, ValueError) as unreachable:
            raise LibraryTransportError(f"{method} {self.url}{path} failed: {unreachable}") from None
        if len(content) > MAX_DOCUMENT_BYTES:  # the kit's cap on what it reads from outside
            raise LibraryTransportError(f"{method} {self.url}{path} answered more than {MAX_DOCUMENT_BYTES:,} bytes")
        return content
