"""How Agora's agents reach each other (§5.1, Appendix B): in process, or over real HTTP on 127.0.0.1.

An agent that serves offers an :class:`Endpoint` (its ``name``, ``handle(envelope) -> Response`` and
``wellknown() -> WellKnown``); an agent that asks uses a transport's ``send(sender, receiver, envelope)`` and
``wellknown(receiver)``. Both transports carry the same bytes through the same code: the envelope's
``to_json()`` as UTF-8, parsed and validated on the receiving side by :func:`serve_envelope`, whose answer is
parsed and validated again on the asking side. So :class:`InProcessTransport` (direct calls, fast, deterministic)
and :class:`HTTPTransport` (each endpoint a real server: ``POST /`` takes an envelope, ``GET /.wellknown`` lists
the protocols, B.3) give the same responses and the same :attr:`Transport.transcript`.

The receiving side never crashes and never shows a traceback: a malformed request is answered with HTTP 400 and
B.1's failure response ``{"status": "failure", "body": "<what was wrong>"}``; a handler that raises, or returns
something other than a Response, with 500 and a failure that names the error's type only (its message may hold
what the agent should not tell a stranger).

Why Tornado (the paper's demo used Flask, a server and a thread per agent): one asyncio loop in a background thread
serves every endpoint's socket, and handlers run the agent's ``handle`` in a thread pool, so that a handler that
itself sends (a taxi server asking the traffic server) cannot deadlock the loop. The client is one keep-alive
``httpx.Client`` that ignores proxy settings (the traffic never leaves 127.0.0.1).
"""

import asyncio
import difflib
import shlex
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple, Protocol, runtime_checkable

import httpx
import tornado.httpserver
import tornado.netutil
import tornado.web

from coordkit.agora.protocol import Envelope, ProtocolError, Response, WellKnown

ENVELOPE_PATH = "/"
WELLKNOWN_PATH = "/.wellknown"
MAX_REQUEST_BYTES = 8_000_000  # a protocol document travels in its data URI: MAX_DOCUMENT_BYTES, quoted
DEFAULT_TIMEOUT_S = 60.0  # an LLM-backed handler may take tens of seconds, a nested one longer
DEFAULT_HANDLER_THREADS = 32  # a chain of nested calls holds one thread per hop
_JSON_HEADERS = {"Content-Type": "application/json"}


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


def serve_envelope(endpoint: Endpoint, request: bytes) -> tuple[int, bytes]:
    """The receiving side of ``POST /``: the HTTP status and the response's UTF-8 JSON, whatever ``request`` holds."""
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
    reason = "it is nested too deeply" if isinstance(error, RecursionError) else str(error)
    return f"envelope: JSON that cannot be read ({reason})"


class Transport:
    """The interface agents use, whatever carries the bytes; a context manager that :meth:`close` s on exit."""

    def __init__(self):
        self._endpoints: dict[str, Endpoint] = {}
        self._exchanges: list[Exchange | None] = []  # in request order; None until the response is back
        self._lock = threading.Lock()
        self._closed = False

    @property
    def names(self) -> tuple[str, ...]:
        """The registered endpoints' names, in registration order."""
        return tuple(self._endpoints)

    @property
    def transcript(self) -> tuple[Exchange, ...]:
        """Every exchange in the order its request was sent (a nested exchange after the one that caused it)."""
        with self._lock:
            return tuple(exchange for exchange in self._exchanges if exchange is not None)

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
        if len(payload) > MAX_REQUEST_BYTES:
            raise ProtocolError(f"the envelope is {len(payload)} bytes; a request is at most {MAX_REQUEST_BYTES}")
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


class HTTPTransport(Transport):
    """Each registered endpoint a real HTTP server on 127.0.0.1 at a free port of its own (see the module's doc).

    ``timeout_s`` bounds each wait for an answer (a nested call's included); ``handler_threads`` bounds the
    handlers that run at once, so a chain of nested calls deeper than that waits until the timeout.
    """

    def __init__(self, *, timeout_s: float = DEFAULT_TIMEOUT_S, handler_threads: int = DEFAULT_HANDLER_THREADS):
        if not (isinstance(timeout_s, int | float) and 0 < timeout_s <= 3600):
            raise ValueError(f"timeout_s: {timeout_s!r} is not a number of seconds in (0, 3600]")
        if not (isinstance(handler_threads, int) and 1 <= handler_threads <= 1024):
            raise ValueError(f"handler_threads: {handler_threads!r} is not a whole number in [1, 1024]")
        super().__init__()
        self._timeout_s = float(timeout_s)
        self._ports: dict[str, int] = {}
        self._servers: list[tornado.httpserver.HTTPServer] = []
        self._executor = ThreadPoolExecutor(handler_threads, thread_name_prefix="agora-handler")
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="agora-http-loop", daemon=True)
        self._thread.start()
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=None, keepalive_expiry=60.0)
        timeout = httpx.Timeout(self._timeout_s, connect=min(5.0, self._timeout_s))
        self._client = httpx.Client(timeout=timeout, limits=limits, trust_env=False)

    def url_of(self, name: str) -> str:
        """The endpoint's base URL, e.g. ``http://127.0.0.1:50123``: POST an envelope there, GET ``/.wellknown``."""
        self._endpoint(name)
        return f"http://127.0.0.1:{self._ports[name]}"

    def curl_command(self, name: str, envelope: Envelope | None = None) -> str:
        """A shell command that asks ``name`` what :meth:`send` would (or reads its listing, with no envelope)."""
        curl = f"curl -s --noproxy 127.0.0.1 {self.url_of(name)}"
        if envelope is None:
            return curl + WELLKNOWN_PATH
        data = shlex.quote(envelope.to_json())
        return f"{curl}{ENVELOPE_PATH} -X POST -H 'Content-Type: application/json' --data-binary {data}"

    def close(self) -> None:
        """Refuse new requests, wait for running handlers to return, then stop the servers, client and threads."""
        if self._closed:
            return
        super().close()  # a running handler's nested send now fails, so no handler waits for long
        self._executor.shutdown(wait=True, cancel_futures=True)
        asyncio.run_coroutine_threadsafe(self._stop_servers(), self._loop).result()
        self._client.close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    def _started(self, endpoint: Endpoint) -> None:
        sockets = tornado.netutil.bind_sockets(0, "127.0.0.1")
        self._ports[endpoint.name] = sockets[0].getsockname()[1]
        asyncio.run_coroutine_threadsafe(self._serve(endpoint, sockets), self._loop).result()

    async def _serve(self, endpoint: Endpoint, sockets: list) -> None:
        arguments = {"endpoint": endpoint, "executor": self._executor}
        application = tornado.web.Application(
            [(r"/", _EnvelopeHandler, arguments), (r"/\.wellknown", _WellKnownHandler, arguments)],
            default_handler_class=_NotFound,
            log_function=lambda handler: None,  # the answer says what went wrong; no log lines in a notebook
        )
        server = tornado.httpserver.HTTPServer(application, max_body_size=MAX_REQUEST_BYTES)
        server.add_sockets(sockets)
        self._servers.append(server)

    async def _stop_servers(self) -> None:
        for server in self._servers:
            server.stop()
            await server.close_all_connections()

    def _post(self, receiver: str, payload: bytes) -> bytes:
        return self._carry(
            receiver, lambda url: self._client.post(url + ENVELOPE_PATH, content=payload, headers=_JSON_HEADERS)
        )

    def _get_wellknown(self, receiver: str) -> bytes:
        return self._carry(receiver, lambda url: self._client.get(url + WELLKNOWN_PATH))

    def _carry(self, receiver: str, request: Callable[[str], httpx.Response]) -> bytes:
        url = self.url_of(receiver)
        try:
            return request(url).content
        except httpx.TimeoutException:
            raise TransportError(f"{receiver} at {url} did not answer within {self._timeout_s:g} s") from None
        except httpx.HTTPError as error:
            raise TransportError(f"could not reach {receiver} at {url}: {type(error).__name__} {error}") from None


class _JSONErrors(tornado.web.RequestHandler):
    """Every error Tornado answers itself (404, 405, …) as B.1's failure response, never an HTML page."""

    def write_error(self, status_code: int, **kwargs) -> None:
        routes = f"POST an envelope to {ENVELOPE_PATH} or GET {WELLKNOWN_PATH}"
        self._answer(status_code, _failure(f"{self.request.method} {self.request.path}: {self._reason}; {routes}"))

    def _answer(self, status_code: int, payload: bytes) -> None:
        self.set_status(status_code)
        self.set_header("Content-Type", "application/json; charset=utf-8")
        self.finish(payload)


class _NotFound(_JSONErrors):
    def prepare(self) -> None:
        raise tornado.web.HTTPError(404)


class _AgentHandler(_JSONErrors):
    def initialize(self, endpoint: Endpoint, executor: ThreadPoolExecutor) -> None:
        self.endpoint, self.executor = endpoint, executor

    async def _run(self, serve: Callable[..., tuple[int, bytes]], *arguments) -> None:
        """``serve`` in the handler threads, so that the loop never waits for an agent."""
        self._answer(*await asyncio.get_running_loop().run_in_executor(self.executor, serve, *arguments))


class _EnvelopeHandler(_AgentHandler):
    async def post(self) -> None:
        await self._run(serve_envelope, self.endpoint, self.request.body)


class _WellKnownHandler(_AgentHandler):
    async def get(self) -> None:
        await self._run(serve_wellknown, self.endpoint)
