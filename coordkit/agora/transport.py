"""How Agora's agents reach each other (§5.1, Appendix B): in process, or over real HTTP on 127.0.0.1.

An agent that serves offers an :class:`Endpoint` (its ``name``, ``handle(envelope) -> Response`` and
``wellknown() -> WellKnown``); an agent that asks uses a transport's ``send(sender, receiver, envelope)`` and
``wellknown(receiver)``. Both transports carry the same bytes through the same code: the envelope's
``to_json()`` as UTF-8, parsed and validated on the receiving side by :func:`serve_envelope`, whose answer is
parsed and validated again on the asking side. So :class:`InProcessTransport` (direct calls, fast, deterministic)
and :class:`HTTPTransport` (each endpoint a real server: ``POST /`` takes an envelope, ``GET /.wellknown`` lists
the protocols, B.3) give the same responses and the same :attr:`Transport.transcript`.

The receiving side never crashes and never shows a traceback. Every answer that is not a Response of the agent's
is B.1's failure response ``{"status": "failure", "body": "<what was wrong>"}``, with a status that says why: 400 a
malformed request (its request line, headers, Content-Length, chunked framing or envelope; a number in it with more
digits than Python reads included), 403 a request without the run's key (below), 404 and 405 an unknown route or
method, 408 headers or a body that came too slowly, 413 a body over ``ServerLimits.max_body_bytes``, 431 headers
over ``max_header_bytes``, 500 a handler that raised or returned something other than a Response (the failure names
the error's type only: its message may hold what the agent should not tell a stranger), 503 a connection over the
caps, or a request that arrives as the run closes. A connection that sent nothing is closed without an answer, as
is one that leaves its answer unread: HTTP has nothing to say to either. A client that half-closes its connection
after its request still gets the answer.

Who may ask (threat model). Over HTTP every agent is a server on 127.0.0.1, which every program of every user on the
machine can reach. An *outsider* is anything that reaches those sockets without the run's key: another program,
another user, a student's ``curl``. Each HTTPTransport makes a random key when it is made; its own client sends it
with every request (``Authorization: Bearer <key>``) and a server compares it, once the headers are in and before it
reads any body. An outsider can read any agent's listing (``GET /.wellknown``: B.3's listings are public, and
reading one changes nothing), open connections up to the caps of :class:`ServerLimits`, and be refused; it cannot
make an agent answer, spend an LLM call, or change a frame, a cost, a listing or an adopted protocol, since a request
without the key never reaches the agent. The key does not protect against code running in the kit's own process
(which can read it, or call the agents directly), nor against a process of the same user that can read this
process's memory (a debugger, ``/proc/<pid>/mem``). The key appears in no repr, transcript, error, log or curl
command. :class:`InProcessTransport` has no sockets, so it has no outsiders.

Limits (:class:`ServerLimits`). Outsiders' connections are capped per server and across the transport's servers, well
under the process's open-file limit; a connection over a cap is answered 503 and closed. The run's own exchanges go
first (issue 43: outsiders cannot slow a run, nor so change what it computes). Each server listens on two ports: the
public one (``url_of``), and one where it accepts the run's own connections alone, so that outsiders filling the public
port's accept queue never delay the run's; a connection there that is not the run's is closed at once. The run's client
opens each connection from a local port it records before connecting, so a server knows the run's connections when it
accepts them; this is bookkeeping, not trust: every request still needs the key. And outsiders' work has a budget,
``outsider_work_per_s`` connections and requests a second across the servers: past it, an outsider's next request waits
its turn unread (pipelined ones behind it in the kernel's buffers) and the public ports stop accepting until their next
turn, so that a flood of listings, pipelined or reconnecting, costs the run no time it can measure. An outsider's
connection is closed when it stays idle, sends its headers or its body too slowly, or leaves its answer unread: Tornado
reads a connection's next request only once the last answer is flushed, so a client that never reads holds one answer at
most, for ``reply_timeout_s`` at most. A connection reads ahead ``read_buffer_bytes`` at most. Outsiders' listings are
built in one thread of their own, never in the run's handler threads, and a second after the last outsider leaves the
memory their answers took goes back to the system. When the process runs out of file descriptors the servers stop
accepting for a moment instead of failing on every attempt. Each kind of refusal is logged once per transport (logger
``coordkit.agora.transport``, WARNING); Tornado's own line per event, from the servers' loop, is dropped.

Why Tornado (the paper's demo used Flask, a server and a thread per agent): one asyncio loop in a background thread
serves every endpoint's socket, and handlers run the agent's ``handle`` in a thread pool, so that a handler that
itself sends (a taxi server asking the traffic server) cannot deadlock the loop. The client is one keep-alive
``httpcore`` connection pool, which ignores proxy settings (the traffic never leaves 127.0.0.1).
"""

import asyncio
import ctypes
import difflib
import functools
import hmac
import http
import json
import logging
import re
import resource
import secrets
import select
import socket
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

import httpcore
import tornado.httpserver
import tornado.httputil
import tornado.ioloop
import tornado.iostream
import tornado.netutil
import tornado.web

from coordkit.agora import library_wire
from coordkit.agora.protocol import Envelope, ProtocolError, Response, WellKnown

ENVELOPE_PATH = "/"
WELLKNOWN_PATH = "/.wellknown"
MAX_REQUEST_BYTES = 8_000_000  # a protocol document travels in its data URI: MAX_DOCUMENT_BYTES, quoted
DEFAULT_TIMEOUT_S = 60.0  # an LLM-backed handler may take tens of seconds, a nested one longer
DEFAULT_HANDLER_THREADS = 32  # a chain of nested calls holds one thread per hop
ACCEPT_PAUSE_S = 0.5  # how long a server stops accepting when the process has no file descriptor left
_OUTSIDERS_BURST_S = 0.1  # outsiders may take this long's worth of their turns at once
LOOP_THREAD = "agora-http-loop"
_JSON_TYPE = "application/json; charset=utf-8"
_TORNADO_400 = b"HTTP/1.1 400 Bad Request\r\n\r\n"  # tornado.http1connection's whole answer to a malformed message
_DIGITS = re.compile(r"[0-9]+")

log = logging.getLogger(__name__)


class TransportError(RuntimeError):
    """The request could not travel: the transport is closed, or the receiver did not answer in time."""


class UnknownAgentError(LookupError):
    """No endpoint of that name is registered with the transport."""


@runtime_checkable
class Endpoint(Protocol):
    """What an agent offers to a transport so that others can ask it (B.1, B.3)."""

    name: str

    def handle(self, envelope: Envelope) -> Response: ...

    def wellknown(self) -> WellKnown: ...


class Exchange(NamedTuple):
    """One request and its response, as the UTF-8 JSON text that travelled (a GET's request is ``""``)."""

    sender: str | None
    receiver: str
    path: str
    request: str
    response: str


def serve_envelope(
    endpoint: Endpoint,
    request: bytes,
    conversations: library_wire.Conversations | None = None,
    *,
    from_library: bool = False,
) -> tuple[int, bytes]:
    """The receiving side of ``POST /``: the HTTP status and the response's UTF-8 JSON, whatever ``request`` holds.

    A request of the official library (it carries ``multiround``, or ``from_library``: its HTTP ``User-Agent`` was
    the library's; coordkit/agora/library_wire.py) is answered in the library's form, its conversation kept in
    ``conversations`` (None: a store for this request alone); any other is B.1's."""
    if from_library or b'"multiround"' in request:
        fields = _library_fields(request)
        if from_library or (isinstance(fields, dict) and library_wire.is_library_request(fields)):
            store = library_wire.Conversations() if conversations is None else conversations
            return _serve_library(endpoint, lambda handle: library_wire.serve_request(handle, fields, store))
    try:
        envelope = Envelope.from_json(request)
    except (ValueError, RecursionError) as error:  # ProtocolError, or json's own limits (digits, depth)
        return 400, _failure(f"malformed request: {error if isinstance(error, ProtocolError) else _unreadable(error)}")
    try:
        response = endpoint.handle(envelope)
    except Exception as error:
        return 500, _failure(f"{endpoint.name} could not handle the request: its handler raised {type(error).__name__}")
    if not isinstance(response, Response):
        return 500, _failure(f"{endpoint.name} could not handle the request: its handler returned no Response")
    try:
        return 200, response.to_json().encode("utf-8")
    except UnicodeEncodeError:
        return 500, _failure(f"{endpoint.name} could not handle the request: its response is not valid Unicode")


def serve_conversation(
    endpoint: Endpoint, method: str, conversation_id: str, request: bytes, conversations: library_wire.Conversations
) -> tuple[int, bytes]:
    """The receiving side of the library's ``/conversations/<id>``: a next turn (POST) or its close (DELETE)."""
    if method == "DELETE":
        return 200, library_wire.serve_close(conversation_id, conversations)
    return _serve_library(
        endpoint, lambda handle: library_wire.serve_turn(handle, conversation_id, request, conversations)
    )


def _library_fields(request: bytes) -> Any:
    """The request's JSON (a library request's fields), or None when it is not JSON. Only a request that may be
    the library's is parsed here, so that B.1's requests are read once, as before."""
    try:
        return json.loads(request)
    except (ValueError, RecursionError):
        return None


def _serve_library(endpoint: Endpoint, serve: Callable[[Callable[[Envelope], Response]], bytes]) -> tuple[int, bytes]:
    """200 and ``serve(handle)``'s answer to the library (its sender raises on any other status: transporter.py),
    or the library's error form when the agent's handler raises or returns no Response; the error names the error's
    type only, as B.1's failures do."""

    def handle(envelope: Envelope) -> Response:
        response = endpoint.handle(envelope)
        if not isinstance(response, Response):
            raise _NoResponse
        return response

    try:
        return 200, serve(handle)
    except _NoResponse:
        problem = "its handler returned no Response"
    except Exception as error:
        problem = f"its handler raised {type(error).__name__}"
    return 200, json.dumps(library_wire.error(f"{endpoint.name} could not handle the request: {problem}")).encode()


class _NoResponse(Exception):
    """An agent's handler returned something other than a Response."""


def serve_wellknown(endpoint: Endpoint) -> tuple[int, bytes]:
    """The receiving side of ``GET /.wellknown``: B.3's listing, or 500 and a failure naming the error's type."""
    try:
        listing = endpoint.wellknown()
    except Exception as error:
        return 500, _failure(
            f"{endpoint.name} could not list its protocols: its wellknown() raised {type(error).__name__}"
        )
    if not isinstance(listing, WellKnown):
        return 500, _failure(f"{endpoint.name} could not list its protocols: its wellknown() returned no WellKnown")
    return 200, listing.to_json().encode("utf-8")


def _failure(message: str) -> bytes:
    return Response.failure(message).to_json().encode("utf-8")


def _unreadable(error: Exception) -> str:
    """Why json could not read an envelope, when it is not a syntax error: too deep, or a number too long (json's
    only other ValueError: Python refuses to read an integer of more than ``sys.get_int_max_str_digits()`` digits)."""
    if isinstance(error, RecursionError):
        reason = "it is nested too deeply"
    else:
        reason = f"a number in it is too long: at most {sys.get_int_max_str_digits()} digits; send it as a string"
    return f"envelope: JSON that cannot be read ({reason})"


def _raw_answer(status: int, message: str) -> bytes:
    """A whole HTTP answer carrying B.1's failure, for a connection that is closed after it."""
    body = _failure(message)
    head = (
        f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\nContent-Type: {_JSON_TYPE}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


# --- the transports -------------------------------------------------------------------------------------------------


class Transport:
    """The interface agents use, whatever carries the bytes; a context manager that :meth:`close` s on exit."""

    def __init__(self):
        self._endpoints: dict[str, Endpoint] = {}
        self._exchanges: list[Exchange | None] = []  # in request order; None until the response is back
        self._lock = threading.Lock()
        self._closed = False
        self._max_request_bytes = MAX_REQUEST_BYTES

    @property
    def names(self) -> tuple[str, ...]:
        """The registered endpoints' names, in registration order."""
        return tuple(self._endpoints)

    @property
    def transcript(self) -> tuple[Exchange, ...]:
        """Every exchange in the order its request was sent (a nested exchange after the one that caused it)."""
        with self._lock:
            return tuple(exchange for exchange in self._exchanges if exchange is not None)

    @property
    def sent(self) -> int:
        """How many requests have been sent: where the next one's exchange will be (:meth:`transcript_since`)."""
        with self._lock:
            return len(self._exchanges)

    def transcript_since(self, sent: int) -> tuple[Exchange, ...]:
        """The exchanges of the requests sent after the first ``sent`` (what :attr:`sent` was then), in order: the
        end of :attr:`transcript`, without copying the whole of it."""
        with self._lock:
            return tuple(exchange for exchange in self._exchanges[sent:] if exchange is not None)

    def register(self, endpoint: Endpoint) -> None:
        """Make ``endpoint`` reachable under ``endpoint.name``."""
        self._check_open()
        if not isinstance(endpoint, Endpoint):
            raise TypeError(f"{endpoint!r} is not an Endpoint: it needs a name, handle(envelope) and wellknown()")
        name = endpoint.name
        if not (isinstance(name, str) and name.strip() == name and name):
            raise ValueError(f"an endpoint's name is non-empty text with no surrounding spaces, not {name!r}")
        with self._lock:
            if name in self._endpoints:
                raise ValueError(f"an endpoint named {name!r} is already registered; names are unique")
            self._started(endpoint)
            self._endpoints[name] = endpoint

    def send(self, sender: str, receiver: str, envelope: Envelope) -> Response:
        """``envelope`` from ``sender`` to ``receiver``, and the receiver's response (B.1)."""
        if not isinstance(envelope, Envelope):
            raise TypeError(f"send an Envelope, not {type(envelope).__name__}: e.g. Envelope.natural_language(text)")
        request = envelope.to_json()
        try:
            payload = request.encode("utf-8")
        except UnicodeEncodeError:
            raise ProtocolError("body: not valid Unicode text (it holds a lone surrogate); it cannot travel") from None
        if len(payload) > self._max_request_bytes:
            raise ProtocolError(f"the envelope is {len(payload)} bytes; a request is at most {self._max_request_bytes}")
        text = self._exchange(sender, receiver, ENVELOPE_PATH, request, lambda: self._post(receiver, payload))
        try:
            return Response.from_json(text)
        except ProtocolError as error:
            raise ProtocolError(f"{receiver} answered with a malformed response: {error}") from None

    def wellknown(self, receiver: str, *, sender: str | None = None) -> WellKnown:
        """``receiver``'s ``/.wellknown`` listing (B.3); a ProtocolError if it sent none that can be read."""
        text = self._exchange(sender, receiver, WELLKNOWN_PATH, "", lambda: self._get_wellknown(receiver))
        try:
            return WellKnown.from_json(text)
        except ProtocolError as error:
            try:
                failure = Response.from_json(text)
            except ProtocolError:
                raise ProtocolError(f"{receiver}'s /.wellknown: {error}") from None
            raise ProtocolError(f"{receiver}'s /.wellknown: {failure.body}") from None

    def close(self) -> None:
        """Refuse further requests (and, over HTTP, stop the servers and their threads); calling again is harmless."""
        self._closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _exchange(self, sender: str | None, receiver: str, path: str, request: str, carry: Callable[[], bytes]) -> str:
        """Carry one request, record it in the transcript, and return the response's text."""
        self._check_open()
        if sender is not None and not (isinstance(sender, str) and sender):
            raise ValueError(f"sender: {sender!r} is not an agent's name")
        self._endpoint(receiver)
        with self._lock:
            slot = len(self._exchanges)
            self._exchanges.append(None)
        response = carry()
        try:
            text = response.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError(f"{receiver} answered with bytes that are not UTF-8") from None
        with self._lock:
            self._exchanges[slot] = Exchange(sender, receiver, path, request, text)
        return text

    def _endpoint(self, name: str) -> Endpoint:
        endpoint = self._endpoints.get(name) if isinstance(name, str) else None
        if endpoint is None:
            known = ", ".join(map(repr, self._endpoints)) or "none yet"
            close = difflib.get_close_matches(name, self._endpoints, n=1) if isinstance(name, str) else []
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise UnknownAgentError(f"no endpoint named {name!r} is registered (registered: {known}){hint}")
        return endpoint

    def _check_open(self) -> None:
        if self._closed:
            raise TransportError(f"this {type(self).__name__} is closed; make a new one")

    def _started(self, endpoint: Endpoint) -> None:
        """What a transport does once ``endpoint`` is registered (over HTTP: start its server)."""

    def _post(self, receiver: str, payload: bytes) -> bytes:
        raise NotImplementedError

    def _get_wellknown(self, receiver: str) -> bytes:
        raise NotImplementedError


class InProcessTransport(Transport):
    """Direct calls in the caller's thread: the same bytes and validation as HTTP, and nothing else."""

    def _post(self, receiver: str, payload: bytes) -> bytes:
        return serve_envelope(self._endpoints[receiver], payload)[1]

    def _get_wellknown(self, receiver: str) -> bytes:
        return serve_wellknown(self._endpoints[receiver])[1]


def _descriptor_share(default: int) -> int:
    """``default``, or a quarter of the process's soft open-file limit if that is lower."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return default if soft == resource.RLIM_INFINITY else max(1, min(default, soft // 4))


_COUNTS = ("connections_per_server", "connections_in_total", "max_body_bytes", "max_header_bytes", "read_buffer_bytes")
_SECONDS = ("idle_timeout_s", "header_timeout_s", "body_timeout_s", "reply_timeout_s")


@dataclass(frozen=True)
class ServerLimits:
    """What an :class:`HTTPTransport`'s servers grant the connections that do not come from its run (module doc).

    - ``connections_per_server``: outsiders' connections open at once to one agent's server; one more is answered 503
      and closed (default 64, or a quarter of the process's open-file limit if that is lower);
    - ``connections_in_total``: the same across all of the transport's servers (default 256, or that quarter);
    - ``idle_timeout_s``: a connection that sends nothing this long, since it opened or since its last answer, is
      closed (30 s);
    - ``header_timeout_s``: a request's line and headers must arrive within this long of their first byte, else
      408 (10 s);
    - ``body_timeout_s``: its body within this long of its headers, else 408 (30 s);
    - ``reply_timeout_s``: an answer the client leaves unread this long is dropped with the connection (30 s);
    - ``max_body_bytes``: a larger body is refused with 413, before it is read (``MAX_REQUEST_BYTES``, 8,000,000);
    - ``max_header_bytes``: a larger request line and headers are refused with 431 (16,384);
    - ``read_buffer_bytes``: what a connection reads ahead at most (65,536; at least twice ``max_header_bytes``);
    - ``outsider_work_per_s``: the outsiders' connections accepted (or refused) and requests read, across the
      transport's servers, a second at most (20: a person's curl is answered at once, and a flood costs the run
      nothing ``benchmarks/agora_hostile.py`` can measure, where 200 made it 3 to 5 times slower); past it a request
      waits its turn before it is read and the public sockets stop accepting, so that outsiders cannot take the
      run's time (issue 43).

    The run's own connections are neither capped nor timed. A connection holds at most one unsent answer, since
    Tornado reads its next request only once the last answer is flushed: that is no field.
    """

    connections_per_server: int = field(default_factory=lambda: _descriptor_share(64))
    connections_in_total: int = field(default_factory=lambda: _descriptor_share(256))
    idle_timeout_s: float = 30.0
    header_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    reply_timeout_s: float = 30.0
    max_body_bytes: int = MAX_REQUEST_BYTES
    max_header_bytes: int = 16_384
    read_buffer_bytes: int = 65_536
    outsider_work_per_s: float = 20.0

    def __post_init__(self):
        for name in _COUNTS:
            value = getattr(self, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
                raise ValueError(f"ServerLimits.{name}: {value!r} is not a whole number ≥ 1")
        for name in _SECONDS:
            value = getattr(self, name)
            if not (isinstance(value, int | float) and not isinstance(value, bool) and 0 < value <= 3600):
                raise ValueError(f"ServerLimits.{name}: {value!r} is not a number of seconds in (0, 3600]")
        rate = self.outsider_work_per_s
        if not (isinstance(rate, int | float) and not isinstance(rate, bool) and 0.01 <= rate <= 100_000):
            raise ValueError(
                f"ServerLimits.outsider_work_per_s: {rate!r} is not a number of connections and requests a second in "
                f"[0.01, 100000]; the default, 20, answers a person's curl at once and keeps a flood from the run"
            )
        if self.connections_per_server > self.connections_in_total:
            raise ValueError(
                f"ServerLimits.connections_per_server={self.connections_per_server} is above connections_in_total="
                f"{self.connections_in_total}; lower it, or raise connections_in_total"
            )
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft != resource.RLIM_INFINITY and self.connections_in_total > soft // 2:
            raise ValueError(
                f"ServerLimits.connections_in_total={self.connections_in_total} would let outsiders hold more than "
                f"half of the {soft} files this process may open; lower it, or raise the limit first (ulimit -n)"
            )
        if self.read_buffer_bytes < 2 * self.max_header_bytes:
            raise ValueError(
                f"ServerLimits.read_buffer_bytes={self.read_buffer_bytes} is below twice max_header_bytes="
                f"{self.max_header_bytes}, so a request's headers might not fit; raise it, or lower max_header_bytes"
            )


class HTTPTransport(Transport):
    """Each registered endpoint a real HTTP server on 127.0.0.1 at a free port of its own (see the module's doc).

    ``timeout_s`` bounds each wait for an answer (a nested call's included); ``handler_threads`` bounds the
    handlers that run at once, so a chain of nested calls deeper than that waits until the timeout; ``limits`` are
    what the servers grant outsiders (:class:`ServerLimits`; its defaults when None).
    """

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        handler_threads: int = DEFAULT_HANDLER_THREADS,
        limits: ServerLimits | None = None,
    ):
        if not (isinstance(timeout_s, int | float) and 0 < timeout_s <= 3600):
            raise ValueError(f"timeout_s: {timeout_s!r} is not a number of seconds in (0, 3600]")
        if not (isinstance(handler_threads, int) and 1 <= handler_threads <= 1024):
            raise ValueError(f"handler_threads: {handler_threads!r} is not a whole number in [1, 1024]")
        limits = ServerLimits() if limits is None else limits
        if not isinstance(limits, ServerLimits):
            raise TypeError(f"limits: {limits!r} is not a ServerLimits; e.g. ServerLimits(connections_per_server=8)")
        super().__init__()
        _quiet_tornado()
        self._limits = limits
        self._max_request_bytes = limits.max_body_bytes
        self._timeout_s = float(timeout_s)
        self._key = secrets.token_urlsafe(32)  # the run's: its own client sends it, its servers ask for it
        self._ports: dict[str, int] = {}  # each endpoint's public port, which url_of gives
        self._own_ports: dict[str, int] = {}  # and the port where its server accepts the run's own connections
        self._servers: list[_Server] = []
        self._executor = ThreadPoolExecutor(handler_threads, thread_name_prefix="agora-handler")
        self._outsiders_executor = ThreadPoolExecutor(1, thread_name_prefix="agora-outsiders")  # their listings
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=LOOP_THREAD, daemon=True)
        self._thread.start()
        self._run_sockets = _RunSockets()
        self._outsiders = _Outsiders(limits, self._run_sockets.ports)
        self._pool = httpcore.ConnectionPool(
            max_connections=None, keepalive_expiry=60.0, network_backend=self._run_sockets
        )
        waits = self._timeout_s
        self._timeouts = {"connect": min(5.0, waits), "read": waits, "write": waits, "pool": waits}

    @property
    def limits(self) -> ServerLimits:
        """What the servers grant connections from outside the run."""
        return self._limits

    def url_of(self, name: str) -> str:
        """The endpoint's base URL, e.g. ``http://127.0.0.1:50123``: POST an envelope there, GET ``/.wellknown``."""
        self._endpoint(name)
        return f"http://127.0.0.1:{self._ports[name]}"

    def curl_command(self, name: str) -> str:
        """A shell command that reads ``name``'s listing (``GET /.wellknown``, B.3), which anyone may; a POST needs
        the run's key, which the kit never shows."""
        return f"curl -s --noproxy 127.0.0.1 {self.url_of(name)}{WELLKNOWN_PATH}"

    def close(self) -> None:
        """Refuse new requests, wait for running handlers to return, then stop the servers, client and threads."""
        if self._closed:
            return
        super().close()  # a running handler's nested send now fails, so no handler waits for long
        asyncio.run_coroutine_threadsafe(self._stop_listening(), self._loop).result()
        for executor in (self._executor, self._outsiders_executor):
            executor.shutdown(wait=True, cancel_futures=True)
        asyncio.run_coroutine_threadsafe(self._close_connections(), self._loop).result()
        self._pool.close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def _started(self, endpoint: Endpoint) -> None:
        public, own = tornado.netutil.bind_sockets(0, "127.0.0.1"), tornado.netutil.bind_sockets(0, "127.0.0.1")
        self._ports[endpoint.name] = public[0].getsockname()[1]
        self._own_ports[endpoint.name] = own[0].getsockname()[1]
        asyncio.run_coroutine_threadsafe(self._serve(endpoint, public, own), self._loop).result()

    async def _serve(self, endpoint: Endpoint, sockets: list, own: list) -> None:
        conversations = library_wire.Conversations()  # the official library's multiround conversations
        arguments = {
            "endpoint": endpoint,
            "executors": (self._executor, self._outsiders_executor),
            "conversations": conversations,
        }
        conversation_route = re.escape(library_wire.CONVERSATIONS_PATH) + r"([^/?]+)"
        application = tornado.web.Application(
            [
                (r"/", _EnvelopeHandler, arguments),
                (r"/\.wellknown", _WellKnownHandler, arguments),
                (conversation_route, _ConversationHandler, arguments),
            ],
            default_handler_class=_NotFound,
            log_function=lambda handler: None,  # the answer says what went wrong; no log lines in a notebook
            max_body_bytes=self._limits.max_body_bytes,
        )
        server = _Server(application, name=endpoint.name, key=self._key, outsiders=self._outsiders)
        server.add_sockets(sockets)
        server.add_sockets(own, own=True)
        self._servers.append(server)

    async def _stop_listening(self) -> None:
        for server in self._servers:
            server.stop()

    async def _close_connections(self) -> None:
        for server in self._servers:
            await server.close_all_connections()
            server.close_streams()

    def _post(self, receiver: str, payload: bytes) -> bytes:
        return self._carry(receiver, b"POST", ENVELOPE_PATH, payload)

    def _get_wellknown(self, receiver: str) -> bytes:
        return self._carry(receiver, b"GET", WELLKNOWN_PATH, None)

    def _carry(self, receiver: str, method: bytes, path: str, payload: bytes | None) -> bytes:
        self._endpoint(receiver)
        url = f"http://127.0.0.1:{self._own_ports[receiver]}"
        headers = [(b"Authorization", f"Bearer {self._key}".encode("ascii"))]
        if payload is not None:
            headers.append((b"Content-Type", b"application/json"))
        try:
            answer = self._pool.request(
                method, url + path, headers=headers, content=payload, extensions={"timeout": self._timeouts}
            )
            return answer.content
        except httpcore.TimeoutException:
            raise TransportError(f"{receiver} at {url} did not answer within {self._timeout_s:g} s") from None
        except (httpcore.NetworkError, httpcore.ProtocolError) as error:
            raise TransportError(f"could not reach {receiver} at {url}: {type(error).__name__} {error}") from None


# --- the run's client: connections its servers recognise -------------------------------------------------------------


class _RunSockets(httpcore.NetworkBackend):
    """How the run's client connects: from a local port on 127.0.0.1 recorded in ``ports`` before it connects, so
    that a server knows the run's own connections when it accepts them (they never count against the caps)."""

    def __init__(self):
        self.ports: set[int] = set()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None) -> "_RunStream":
        try:
            stream = _RunStream(self.ports)
        except OSError as error:
            raise httpcore.ConnectError(str(error)) from None
        try:
            stream.connect((host, port), timeout)
        except OSError as error:
            stream.close()
            failure = httpcore.ConnectTimeout if isinstance(error, TimeoutError) else httpcore.ConnectError
            raise failure(str(error)) from None
        return stream

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _RunStream(httpcore.NetworkStream):
    """One of the run's connections: its local port is in ``ports`` from before it connects until it is closed."""

    def __init__(self, ports: set[int]):
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.bind(("127.0.0.1", 0))
        except OSError:
            self._socket.close()
            raise
        self._port, self._ports = self._socket.getsockname()[1], ports
        ports.add(self._port)

    def connect(self, address: tuple[str, int], timeout: float | None) -> None:
        self._socket.settimeout(timeout)
        self._socket.connect(address)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            self._socket.settimeout(timeout)
            return self._socket.recv(max_bytes)
        except TimeoutError as error:
            raise httpcore.ReadTimeout(str(error)) from None
        except OSError as error:
            raise httpcore.ReadError(str(error)) from None

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            self._socket.settimeout(timeout)
            self._socket.sendall(buffer)
        except TimeoutError as error:
            raise httpcore.WriteTimeout(str(error)) from None
        except OSError as error:
            raise httpcore.WriteError(str(error)) from None

    def close(self) -> None:
        self._ports.discard(self._port)
        self._socket.close()

    def get_extra_info(self, info: str):
        if info == "is_readable":  # how the pool finds a kept-alive connection that the server has closed
            poller = select.poll()
            poller.register(self._socket, select.POLLIN)
            return bool(poller.poll(0))
        return None


# --- the servers: limits, phases, refusals ----------------------------------------------------------------------------


class _Outsiders:
    """What a transport's servers share about connections from outside the run: the limits and how many such
    connections are open, the local ports of the run's own, the kinds of refusal already logged, and the memory to
    hand back once outsiders leave (only the servers' loop thread uses it)."""

    def __init__(self, limits: ServerLimits, own_ports: set[int]):
        self.limits, self.own_ports = limits, own_ports
        self.open = 0
        self._logged: set[str] = set()
        self._trim_due = False
        self._due = 0.0  # when the next turn of outsiders' work is due (time.monotonic)

    def are_own(self, address: tuple) -> bool:
        return address[0] == "127.0.0.1" and address[1] in self.own_ports

    def turn(self) -> float:
        """Take the next turn of outsiders' work (a connection accepted or refused, a request read): the seconds it
        waits, 0 for at once. Turns come ``outsider_work_per_s`` a second, a tenth of a second's worth at once."""
        now = time.monotonic()
        due = max(self._due, now - _OUTSIDERS_BURST_S)
        self._due = due + 1 / self.limits.outsider_work_per_s
        if due <= now:
            return 0.0
        self.note(
            "busy",
            f"outsiders asked for more than outsider_work_per_s ({self.limits.outsider_work_per_s:g} connections "
            f"and requests a second): the rest wait their turn, and the run's own exchanges go first",
        )
        return due - now

    def note(self, kind: str, message: str) -> None:
        """Log a refusal, once per kind."""
        if kind not in self._logged:
            self._logged.add(kind)
            log.warning("%s (the run's servers log this kind of refusal once)", message)

    def left(self) -> None:
        """One outsider's connection is closed; a second after the last one, hand their memory back."""
        self.open -= 1
        if self.open == 0 and not self._trim_due:
            self._trim_due = True
            tornado.ioloop.IOLoop.current().call_later(1.0, self._trim)

    def _trim(self) -> None:
        self._trim_due = False
        if self.open == 0:
            _hand_back_freed_memory()


def _libc_malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (macOS, musl): nothing to do
        return None


_MALLOC_TRIM = _libc_malloc_trim()


def _hand_back_freed_memory() -> None:
    """Return to the system the pages that glibc keeps in its arenas once large blocks have come and gone: without
    it, 64 clients that left 1 MB answers unread kept the process up to ~30% larger after they left (0.5 ms)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


class _QuietLoop(logging.Filter):
    """Drops Tornado's line per event (below ERROR) from an Agora servers' loop: the kit logs each kind once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR or record.threadName != LOOP_THREAD


_QUIET_LOOP = _QuietLoop()


def _quiet_tornado() -> None:
    for name in ("tornado.general", "tornado.application", "tornado.access"):
        logger = logging.getLogger(name)
        if _QUIET_LOOP not in logger.filters:
            logger.addFilter(_QUIET_LOOP)


class _Server(tornado.httpserver.HTTPServer):
    """One endpoint's server: it accepts connections within the caps (the run's own always), pauses when the process
    has no file descriptor left, and refuses a request on its headers (framing, size, key) before any body is read."""

    def initialize(self, application, *, name: str, key: str, outsiders: _Outsiders) -> None:
        limits = outsiders.limits
        super().initialize(
            application,
            chunk_size=limits.read_buffer_bytes // 4,
            max_header_size=limits.max_header_bytes,
            max_body_size=sys.maxsize,  # the gate refuses a long Content-Length; the handlers count chunked bodies
        )
        self.name, self.limits, self.outsiders = name, limits, outsiders
        self._expected = f"Bearer {key}".encode("ascii")
        self._listening: list[socket.socket] = []
        self._for_the_run: set[socket.socket] = set()  # listening sockets where the run's own client connects
        self.streams: set[_Stream] = set()
        self.strangers: set[_Stream] = set()  # the outsiders' among them

    # accepting

    def add_sockets(self, sockets: list[socket.socket], *, own: bool = False) -> None:
        """Accept on ``sockets``: outsiders', within the caps and their turns; or, ``own``, the run's alone (its own
        accept queue, which no outsider can fill: any other connection there is closed at once)."""
        for listening in sockets:
            self._listening.append(listening)
            if own:
                self._for_the_run.add(listening)
            self._listen(listening)

    def stop(self) -> None:
        for listening in self._listening:
            tornado.ioloop.IOLoop.current().remove_handler(listening)
            listening.close()
        self._listening = []

    def close_streams(self) -> None:
        """Close the connections Tornado no longer tracks (those refused on their headers, their answer pending)."""
        for stream in list(self.streams):
            stream.close()

    def _listen(self, listening: socket.socket) -> None:
        for_the_run = listening in self._for_the_run

        def accept(fd, events) -> None:
            for _ in range(128):  # a burst at a time, as tornado.netutil does
                try:
                    connection, address = listening.accept()
                except BlockingIOError:
                    return
                except ConnectionAbortedError:
                    continue
                except OSError as error:  # EMFILE, ENFILE, ENOBUFS: no descriptor or memory left for now
                    self._out_of_descriptors(listening, error)
                    return
                if for_the_run:
                    self._admit_own(connection, address)
                    continue
                self._admit(connection, address)
                wait = self.outsiders.turn()
                if wait:  # outsiders have used their turns: the next waits in the kernel's queue
                    self._pause(listening, wait)
                    return

        tornado.ioloop.IOLoop.current().add_handler(listening, accept, tornado.ioloop.IOLoop.READ)

    def _pause(self, listening: socket.socket, seconds: float) -> None:
        io_loop = tornado.ioloop.IOLoop.current()
        io_loop.remove_handler(listening)
        io_loop.call_later(seconds, self._resume, listening)

    def _out_of_descriptors(self, listening: socket.socket, error: OSError) -> None:
        self._pause(listening, ACCEPT_PAUSE_S)
        self.outsiders.note(
            "accept",
            f"{self.name} could not accept a connection ({error.strerror or error}); it waits {ACCEPT_PAUSE_S:g} s "
            f"and tries again, as long as that lasts",
        )

    def _resume(self, listening: socket.socket) -> None:
        if listening in self._listening:
            self._listen(listening)

    def _admit_own(self, connection: socket.socket, address: tuple) -> None:
        """A connection to the run's own port: served if it is the run's, else closed with no answer."""
        if self.outsiders.are_own(address):
            self._admit(connection, address)
            return
        self.outsiders.note("own port", f"closed a connection from outside the run to {self.name}'s run-only port")
        connection.close()

    def _admit(self, connection: socket.socket, address: tuple) -> None:
        own = self.outsiders.are_own(address)
        if not own and self._full():
            self._refuse(connection)
            return
        stream = _Stream(connection, self, own)
        self.streams.add(stream)
        if not own:
            self.strangers.add(stream)
            self.outsiders.open += 1
        self.handle_stream(stream, address)

    def _full(self) -> bool:
        return (
            len(self.strangers) >= self.limits.connections_per_server
            or self.outsiders.open >= self.limits.connections_in_total
        )

    def _refuse(self, connection: socket.socket) -> None:
        caps = f"{self.limits.connections_per_server} a server, {self.limits.connections_in_total} in all"
        self.outsiders.note("connections", f"{self.name} refused a connection: outsiders hold all they may ({caps})")
        message = (
            f"{self.name}'s server holds as many connections from outside its run as it may ({caps}); this one is "
            f"closed and nothing changed: close idle connections and try again"
        )
        connection.setblocking(False)
        try:
            connection.send(_raw_answer(503, message))
        except OSError:
            pass
        connection.close()

    def forget(self, stream: "_Stream") -> None:
        self.streams.discard(stream)
        if stream in self.strangers:
            self.strangers.remove(stream)
            self.outsiders.left()

    # each request

    def start_request(self, server_conn, request_conn) -> "_Gate":
        request_conn.stream.enter("idle")
        return _Gate(self, request_conn, super().start_request(server_conn, request_conn))

    def refusal(self, start_line, headers) -> tuple[str, int, str] | None:
        """(kind, status, message) when a request is refused on its line and headers, before its body; else None."""
        length, encoding = headers.get("Content-Length"), headers.get("Transfer-Encoding")
        if encoding is not None and encoding.strip().lower() != "chunked":
            return "malformed", 400, f"malformed request: Transfer-Encoding {encoding[:40]!r}; send a Content-Length"
        if encoding is not None and length is not None:
            return "malformed", 400, "malformed request: both Content-Length and Transfer-Encoding; send one"
        if length is not None and not _DIGITS.fullmatch(length):
            return "malformed", 400, f"malformed request: Content-Length {length[:40]!r} is not a number of bytes"
        if length is not None and (len(length) > 18 or int(length) > self.limits.max_body_bytes):
            shown = length if len(length) <= 18 else length[:18] + "…"
            return "too large", 413, f"the body is {shown} bytes; a request is at most {self.limits.max_body_bytes}"
        path = start_line.path.partition("?")[0]
        posting = start_line.method == "POST" and path == ENVELOPE_PATH
        posting |= start_line.method in ("POST", "DELETE") and path.startswith(library_wire.CONVERSATIONS_PATH)
        if (posting or _has_body(headers)) and not self._has_key(headers):
            return (
                "outsider",
                403,
                (
                    f"{self.name} answers only its own run's agents: this request does not carry the run's key, so it "
                    f"was not handled and changed nothing (GET {WELLKNOWN_PATH} is open to anyone)"
                ),
            )
        return None

    def _has_key(self, headers) -> bool:
        return hmac.compare_digest(headers.get("Authorization", "").encode("latin-1"), self._expected)


def _has_body(headers) -> bool:
    return "Transfer-Encoding" in headers or headers.get("Content-Length", "0") != "0"


class _Gate(tornado.httputil.HTTPMessageDelegate):
    """Between a connection and the application: a request refused on its headers never reaches the application
    (the connection is detached from Tornado, answered and closed); others move the stream's phase along."""

    def __init__(self, server: _Server, connection, delegate: tornado.httputil.HTTPMessageDelegate):
        self.server, self.connection, self.delegate = server, connection, delegate
        self.stream: _Stream = connection.stream

    def headers_received(self, start_line, headers):
        if self.stream.closed():  # Tornado still parses what a closed connection had read ahead; nobody waits for it
            self.connection.detach()
            return None
        wait = 0.0 if self.stream.own else self.server.outsiders.turn()
        if wait:
            return self._in_turn(wait, start_line, headers)
        return self._received(start_line, headers)

    async def _in_turn(self, wait: float, start_line, headers) -> None:
        """An outsider's request past their budget, taken up when its turn comes: until then its connection reads
        nothing more (its next requests wait in the kernel's buffers) and no timer runs."""
        self.stream.enter("queued")
        await self.stream.turn_in(wait)
        if self.stream.closed():
            self.connection.detach()
            return
        received = self._received(start_line, headers)
        if received is not None:
            await received

    def _received(self, start_line, headers):
        refusal = self.server.refusal(start_line, headers)
        if refusal is not None:
            kind, status, message = refusal
            self.server.outsiders.note(kind, f"{self.server.name} answered {status}: {message}")
            self.connection.detach()
            self.stream.answer_and_close(status, message)
            return None
        self.stream.enter("body" if _has_body(headers) else "handling")
        return self.delegate.headers_received(start_line, headers)

    def data_received(self, chunk: bytes):
        return self.delegate.data_received(chunk)

    def finish(self) -> None:
        self.stream.enter("handling")
        self.delegate.finish()

    def on_connection_close(self) -> None:
        self.delegate.on_connection_close()


_PHASES = {  # phase: (the ServerLimits field that bounds it, the status of the answer when it runs out, what it is)
    "idle": ("idle_timeout_s", None, "sent nothing for {} s"),
    "headers": ("header_timeout_s", 408, "did not send its request line and headers within {} s"),
    "body": ("body_timeout_s", 408, "did not send its body within {} s of its headers"),
    "reply": ("reply_timeout_s", None, "left its answer unread for {} s"),
}


class _Stream(tornado.iostream.IOStream):
    """One accepted connection: the phase its current request is in (idle, headers, body, handling, reply), that
    phase's timer (an outsider's only), and B.1's failure where Tornado would answer bare or not at all."""

    def __init__(self, connection: socket.socket, server: _Server, own: bool):
        limits = server.limits
        super().__init__(
            connection, max_buffer_size=limits.read_buffer_bytes, read_chunk_size=limits.read_buffer_bytes // 4
        )
        self.server, self.own = server, own
        self.phase, self._timer = "", None
        self._turn: tuple[asyncio.Future, object] | None = None  # a queued request's turn, and its timer
        self.enter("idle")

    def enter(self, phase: str) -> None:
        """Move to ``phase``, with its timer if this is an outsider's connection."""
        self._stop_timer()
        self.phase = phase
        if phase in _PHASES and not self.own and not self.closed():
            seconds = getattr(self.server.limits, _PHASES[phase][0])
            self._timer = self.io_loop.call_later(seconds, self._expire)

    def turn_in(self, seconds: float) -> asyncio.Future:
        """A future done in ``seconds``, or as soon as the connection closes (so that closing never waits for it)."""
        turn = asyncio.get_running_loop().create_future()
        self._turn = turn, self.io_loop.call_later(seconds, self._take_turn)
        return turn

    def _take_turn(self) -> None:
        if self._turn is not None:
            turn, timer = self._turn
            self._turn = None
            self.io_loop.remove_timeout(timer)
            if not turn.done():
                turn.set_result(None)

    def answer_and_close(self, status: int, message: str) -> None:
        """B.1's failure with ``status``, then the connection closed once it is sent (or at ``reply_timeout_s``)."""
        if not self.closed():
            self.write(_raw_answer(status, message)).add_done_callback(self._close_when_sent)

    def write(self, data):
        if data == _TORNADO_400:  # Tornado's answer to a request line, header or chunk it cannot read
            data = self._malformed()
        if self.phase != "body":  # an answer while the body still comes (a 413) leaves the body's timer running
            self.enter("reply")
        return super().write(data)

    def read_from_fd(self, buf):
        received = super().read_from_fd(buf)
        if received == 0 and not self.reading():  # the end of file, found while Tornado only watches for a close
            self._stop_watching()
            return None  # nothing for now: Tornado's next read, for the next request, finds the end and closes
        if received and self.phase == "idle":
            self.enter("headers")
        return received

    def close(self, exc_info=False) -> None:
        if self.closed():
            return
        if isinstance(exc_info, tornado.iostream.UnsatisfiableReadError):
            self._too_long()
        self._stop_timer()
        self._take_turn()
        super().close(exc_info)
        self.server.forget(self)

    def _stop_watching(self) -> None:
        """The client has shut its side, maybe after a request still to be answered (a half-close): stop watching
        the socket for reads, or Tornado would take that end of file for a close and drop the answer."""
        events = tornado.ioloop.IOLoop.ERROR | (tornado.ioloop.IOLoop.WRITE if self.writing() else 0)
        self.io_loop.update_handler(self.fileno(), events)

    def _expire(self) -> None:
        self._timer = None
        limit, status, what = _PHASES[self.phase]
        what = what.format(f"{getattr(self.server.limits, limit):g}")
        self.server.outsiders.note(f"{self.phase} timeout", f"closed a connection to {self.server.name} that {what}")
        if status is not None:
            self._send_now(status, f"this connection {what}: it is closed, and nothing changed")
        self.close()

    def _malformed(self) -> bytes:
        if self.phase == "body":
            what = "its chunked body is malformed (a chunk size that is not hexadecimal, or a chunk not ended by CRLF)"
        else:
            what = "its request line or a header is not HTTP/1.1 (e.g. 'POST / HTTP/1.1', then 'Name: value' lines)"
        self.server.outsiders.note("malformed", f"{self.server.name} answered 400: {what}")
        return _raw_answer(400, f"malformed request: {what}")

    def _too_long(self) -> None:
        """Tornado closes a connection whose headers outgrow ``max_header_bytes`` (or a chunk-size line 64 bytes)."""
        if self.phase == "body":
            kind, status, message = "malformed", 400, "malformed request: a chunk-size line is over 64 bytes"
        else:
            kind, status = "headers too large", 431
            message = f"the request line and headers are over {self.server.limits.max_header_bytes} bytes"
        self.server.outsiders.note(kind, f"{self.server.name} answered {status}: {message}")
        self._send_now(status, message)

    def _send_now(self, status: int, message: str) -> None:
        """Best effort, on a connection about to close: what the socket takes at once."""
        try:
            self.socket.send(_raw_answer(status, message))
        except OSError:
            pass

    def _close_when_sent(self, sent: asyncio.Future) -> None:
        if not sent.cancelled():
            sent.exception()  # retrieved: a client that left makes it StreamClosedError, which is no news
        self.close()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self.io_loop.remove_timeout(self._timer)
            self._timer = None


# --- the application: answers as B.1's failures -----------------------------------------------------------------------


@tornado.web.stream_request_body
class _JSONHandler(tornado.web.RequestHandler):
    """Every error Tornado answers itself (404, 405, …) as B.1's failure response, never an HTML page; a body (only
    the run's requests carry one) is kept up to the server's ``max_body_bytes``, and a longer one refused with 413."""

    def initialize(
        self,
        endpoint: Endpoint | None = None,
        executors: tuple[ThreadPoolExecutor, ...] = (),
        conversations: library_wire.Conversations | None = None,
    ) -> None:
        """``executors``: the run's handler threads, and the one thread that builds outsiders' listings;
        ``conversations``: the endpoint's multiround conversations with the official library's agents."""
        self.endpoint, self.executors, self.conversations = endpoint, executors, conversations
        self.body: bytearray | None = bytearray()  # None once refused

    def data_received(self, chunk: bytes) -> None:
        if self.body is None:
            return
        limit = self.settings["max_body_bytes"]
        if len(self.body) + len(chunk) > limit:
            self.body = None
            self._answer(413, _failure(f"the body is over {limit} bytes; a request is at most {limit}"))
            return
        self.body += chunk

    def write_error(self, status_code: int, **kwargs) -> None:
        routes = f"POST an envelope to {ENVELOPE_PATH} or GET {WELLKNOWN_PATH}"
        self._answer(status_code, _failure(f"{self.request.method} {self.request.path}: {self._reason}; {routes}"))

    def _answer(self, status_code: int, payload: bytes) -> None:
        self.set_status(status_code)
        self.set_header("Content-Type", _JSON_TYPE)
        self.finish(payload)

    async def _run(self, serve: Callable[..., tuple[int, bytes]], *arguments) -> None:
        """``serve`` in a handler thread, so that the loop never waits for an agent; 503 once the run closes. An
        outsider's request (a listing) runs in a thread of its own: outsiders never hold the run's handler threads,
        and the memory their answers take comes from one allocator arena, which the system gets back."""
        closing = 503, _failure(f"{self.endpoint.name}'s run is closing: it answers no more requests")
        try:
            run_threads, outsiders_thread = self.executors
            executor = run_threads if self.request.connection.stream.own else outsiders_thread
            work = asyncio.get_running_loop().run_in_executor(executor, serve, *arguments)
        except RuntimeError:  # the handler threads are shut down
            self._answer(*closing)
            return
        try:
            self._answer(*await work)
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():
                raise
            self._answer(*closing)  # the transport cancelled the work still queued


class _NotFound(_JSONHandler):
    def prepare(self) -> None:
        raise tornado.web.HTTPError(404)


class _EnvelopeHandler(_JSONHandler):
    async def post(self) -> None:
        if self.body is not None:
            from_library = library_wire.is_library_agent(self.request.headers.get("User-Agent"))
            await self._run(
                functools.partial(serve_envelope, from_library=from_library),
                self.endpoint,
                bytes(self.body),
                self.conversations,
            )


class _ConversationHandler(_JSONHandler):
    """The official library's ``/conversations/<id>``: a next turn (POST) and its close (DELETE), library_wire.py."""

    async def post(self, conversation_id: str) -> None:
        if self.body is not None:
            await self._run(
                serve_conversation, self.endpoint, "POST", conversation_id, bytes(self.body), self.conversations
            )

    async def delete(self, conversation_id: str) -> None:
        await self._run(serve_conversation, self.endpoint, "DELETE", conversation_id, b"", self.conversations)


class _WellKnownHandler(_JSONHandler):
    async def get(self) -> None:
        await self._run(serve_wellknown, self.endpoint)
