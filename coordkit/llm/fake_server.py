"""A local fake of the Anthropic Messages API and of OpenAI chat completions, for tests, benchmarks and notebooks.

It lets the real ``anthropic`` SDK (or any OpenAI-compatible client) run without network or key, with replies,
latency and faults (rate limits, server errors, hangs, bad bodies) chosen by the caller::

    with FakeLLMServer("DECISION: 4", faults=[Fault("rate_limit")]) as server:
        client = anthropic.Anthropic(api_key="sk-test", base_url=server.url)

Token counts are a deterministic rough count: whitespace-separated words x 4/3, rounded up, at least 1 — of the
system prompt and messages for input, and of the reply for output.

Hostile behaviours, each a :class:`Fault` kind: refusals with any ``retry-after`` (``"1e12"``, ``"inf"``), a body
that drips in a byte at a time (``drip``), quota headers saying nothing is left until far ahead (``quota_exhausted``),
token counts or usage objects no API sends (``odd_tokens``, ``odd_usage``: negative, NaN, huge, a string, a list),
a model name the caller did not ask for (``odd_model``) and a body of valid JSON nested deeper than Python's ``json``
reads (``deep_json``: it raises RecursionError, not ValueError). A burst is a sequence of faults; refusing forever,
a function that always returns one.

Like a provider, it can enforce limits: ``max_in_flight`` (a request beyond it is answered 429 at once, with
``retry-after`` one request's latency) and ``requests_per_s`` (a token bucket holding one second of requests; every
answer then carries the quota headers, Anthropic's ``anthropic-ratelimit-requests-*`` or OpenAI's
``x-ratelimit-*-requests``). :attr:`FakeLLMServer.stats` counts requests, refusals and connections opened; a server
in another process serves the same at ``GET /fake/stats``. ``python -m coordkit.llm.fake_server --help`` runs one.
"""

import argparse
import json
import math
import socket
import socketserver
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DEFAULT_REPLY = "DECISION: 4\nREASONING: steady demand."

_ERROR_STATUS = {"rate_limit": 429, "server_error": 500, "overloaded": 529}
_ODD_REPLIES = ("odd_tokens", "odd_usage", "odd_model")
FAULT_KINDS = (*_ERROR_STATUS, "timeout", "malformed", "empty", "drip", "quota_exhausted", *_ODD_REPLIES, "deep_json")
A_YEAR_S = 365 * 24 * 3600.0
DEEP_JSON_LEVELS = 100_000  # a "deep_json" body's arrays in arrays: valid JSON, deeper than Python's parser goes


@dataclass(frozen=True)
class Fault:
    """How to misbehave on one request: an HTTP error, a hang of ``hang_s`` seconds, a non-JSON or empty reply, a
    body dripping in a byte every ``drip_s``, quota headers with nothing left for ``reset_s``, a reply whose
    token counts (``odd_tokens``), usage object (``odd_usage``) or model (``odd_model``) is ``value``, or a body of
    JSON arrays nested :data:`DEEP_JSON_LEVELS` deep (``deep_json``) with the HTTP status ``value`` (None: 200)."""

    kind: str
    retry_after_ms: int = 20  # the retry-after-ms header of an HTTP error (the SDK waits this long before retrying)
    retry_after: str | None = None  # if given, an HTTP error's retry-after header instead (seconds, any text)
    hang_s: float = 5.0  # how long "timeout" waits before answering
    drip_s: float = 2.0  # a "drip" body's pause between bytes
    reset_s: float = A_YEAR_S  # when a "quota_exhausted" answer says the quota comes back
    value: object = None  # what an odd reply puts in place of the token counts, the usage or the model; a
    # "deep_json" answer's HTTP status

    def __post_init__(self):
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; valid kinds are {', '.join(FAULT_KINDS)}")


@dataclass(frozen=True)
class FakeRequest:
    """What the server received, normalised across both APIs (system prompt and messages as plain text)."""

    path: str
    model: str
    system: str
    messages: tuple[tuple[str, str], ...]
    temperature: float | None
    max_tokens: int | None
    headers: dict[str, str]  # lower-case names
    attempt: int  # the SDK's x-stainless-retry-count header: 0 for a first try


Faults = Sequence[Fault | None] | Callable[[int, FakeRequest], Fault | None]
SOME_OF_EACH = ("rate_limit", "server_error", "malformed", "empty")


class SpreadFaults:
    """Faults on ``percent`` of the requests, spread evenly and the same in every run, for ``faults=``.

    Request i is hit when 37·i mod 100 < ``percent`` (so exactly ``percent`` of every hundred), with the ``kinds``
    in turn; ``injected`` lists the kinds sent, in order.
    """

    def __init__(self, percent: int, kinds: Sequence[str] = SOME_OF_EACH, retry_after_ms: int = 20):
        if isinstance(percent, bool) or not isinstance(percent, int) or not 0 <= percent <= 100:
            raise ValueError(f"percent={percent!r}: give a whole percentage from 0 to 100")
        self.percent = percent
        self.faults = [Fault(kind, retry_after_ms=retry_after_ms) for kind in kinds]
        self.injected: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, index: int, request: FakeRequest) -> Fault | None:
        if (index * 37) % 100 >= self.percent:
            return None
        fault = self.faults[(index // 2) % len(self.faults)]
        with self._lock:
            self.injected.append(fault.kind)
        return fault


class FakeLLMServer:
    """An HTTP server on 127.0.0.1 answering ``POST /v1/messages`` and ``POST /v1/chat/completions``.

    ``reply`` is the text of every answer, or a function of the request. ``faults`` is either a sequence used
    one entry per arriving request (``None``: answer normally; once it runs out, every request is answered) or
    a function of (request index, request). Request indices count from the server's creation; :meth:`reset`
    clears the record of requests but does not rewind the faults. With ``echo_key``, every error body repeats
    the API key the request carried, as a careless upstream or proxy might. ``max_in_flight`` and
    ``requests_per_s`` are a provider's limits (see the module docstring); a refused request is not recorded in
    :attr:`requests` and takes no fault.
    """

    def __init__(
        self,
        reply: str | Callable[[FakeRequest], str] = DEFAULT_REPLY,
        *,
        latency_s: float = 0.0,
        faults: Faults = (),
        echo_key: bool = False,
        max_in_flight: int | None = None,
        requests_per_s: float | None = None,
    ):
        self.reply = reply
        self.latency_s = latency_s
        self.faults = faults
        self.echo_key = echo_key
        self.max_in_flight = max_in_flight
        self.requests_per_s = requests_per_s
        self.requests: list[FakeRequest] = []
        self.peak_in_flight = 0
        self.rate_limited = 0  # requests refused as over a limit
        self.connections = 0  # connections opened by clients
        self._in_flight = 0
        self._arrivals = 0
        self._bucket = requests_per_s or 0.0  # requests allowed now (a second's worth when full)
        self._bucket_time = time.monotonic()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None

    @property
    def url(self) -> str:
        """The base URL for ``anthropic.Anthropic(base_url=...)``; OpenAI clients use ``url + "/v1"``."""
        if self._server is None:
            raise RuntimeError("the fake server is not running; call start() or use it in a with block")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> "FakeLLMServer":
        """Listen on a free port and serve from a background thread."""
        if self._server is None:
            self._stopping.clear()
            self._server = _Server(self)
            threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving and close every connection, waking requests that are hanging or sleeping."""
        if self._server is not None:
            self._stopping.set()
            self._server.shutdown()
            self._server.server_close()
            self._server.close_connections()
            self._server = None

    def reset(self) -> None:
        """Forget the requests received so far, the peak concurrency and the counts of :attr:`stats`."""
        with self._lock:
            self.requests.clear()
            self.peak_in_flight = self.rate_limited = self.connections = 0

    @property
    def stats(self) -> dict[str, int]:
        """Requests answered, requests refused as over a limit, connections opened, the most requests at once."""
        with self._lock:
            return {
                "requests": len(self.requests),
                "rate_limited": self.rate_limited,
                "connections": self.connections,
                "peak_in_flight": self.peak_in_flight,
            }

    def __enter__(self) -> "FakeLLMServer":
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def _admit(self, request: FakeRequest) -> tuple[int, Fault | None]:
        """Record an arriving request; its index and its fault."""
        with self._lock:
            index = self._arrivals
            self._arrivals += 1
            self.requests.append(request)
        if callable(self.faults):
            return index, self.faults(index, request)
        return index, self.faults[index] if index < len(self.faults) else None

    @contextmanager
    def _in_flight_request(self):
        """Admit a request within the limits, counted for :attr:`peak_in_flight`; yields the seconds after which
        to retry when it is refused (None when admitted), and the quota headers of its answer."""
        with self._lock:
            retry_after_s = self._over_limit()
            admitted = retry_after_s is None
            if admitted:
                self._in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            else:
                self.rate_limited += 1
            quota = self._quota()
        try:
            yield retry_after_s, quota
        finally:
            if admitted:
                with self._lock:
                    self._in_flight -= 1

    def _over_limit(self) -> float | None:
        """With the lock held: None if a request may start now, else seconds to wait before retrying."""
        if self.max_in_flight is not None and self._in_flight >= self.max_in_flight:
            return max(self.latency_s, 0.01)
        if self.requests_per_s is None:
            return None
        now = time.monotonic()
        self._bucket = min(self.requests_per_s, self._bucket + (now - self._bucket_time) * self.requests_per_s)
        self._bucket_time = now
        if self._bucket < 1:
            return (1 - self._bucket) / self.requests_per_s
        self._bucket -= 1
        return None

    def _quota(self) -> dict[str, float] | None:
        """With the lock held: the requests-per-second quota now (limit, remaining, seconds until full)."""
        if self.requests_per_s is None:
            return None
        full_in_s = (self.requests_per_s - self._bucket) / self.requests_per_s
        return {"limit": self.requests_per_s, "remaining": math.floor(self._bucket), "reset_s": full_in_s}

    def _answer(self, api: "_Api", body: dict, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        """Status, extra headers and body for one well-formed request."""
        request = api.parse(body, headers)
        index, fault = self._admit(request)
        kind = fault.kind if fault else None
        self._stopping.wait(self.latency_s)
        if kind in _ERROR_STATUS:
            extra = {"retry-after-ms": str(fault.retry_after_ms)}
            if fault.retry_after is not None:
                extra = {"retry-after": fault.retry_after}
            message = f"{kind} (a fault injected by the fake server)"
            if self.echo_key:
                key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")
                message += f" for the request with key {key}"
            return _ERROR_STATUS[kind], extra, _json(api.error(kind, message))
        if kind == "deep_json":
            status = 200 if fault.value is None else int(fault.value)
            extra = {} if status == 200 else {"retry-after-ms": str(fault.retry_after_ms)}
            return status, extra, b"[" * DEEP_JSON_LEVELS + b"]" * DEEP_JSON_LEVELS
        if kind == "timeout":
            self._stopping.wait(fault.hang_s)
        if kind == "malformed":  # a body cut short, under a JSON content type
            return 200, {}, b'{"id": "msg_fake_cut", "content": [{"type": "te'
        text = self.reply(request) if callable(self.reply) else self.reply
        message = api.message(request, text, index, empty=kind == "empty")
        if kind in _ODD_REPLIES:
            api.make_odd(message, kind, fault.value)
        extra = {}
        if kind == "quota_exhausted":
            extra = api.quota_headers({"limit": 50, "remaining": 0, "reset_s": fault.reset_s})
        if kind == "drip":
            extra = {"x-fake-drip-s": str(fault.drip_s)}  # read by the handler, which sends the body slowly
        return 200, extra, _json(message)


def _text(content) -> str:
    """Plain text from a string or a list of content blocks (non-text blocks are skipped)."""
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content or () if block.get("type") == "text")


def rough_tokens(text: str) -> int:
    """A deterministic stand-in for a tokenizer: words x 4/3, rounded up, at least 1."""
    return max(1, math.ceil(len(text.split()) * 4 / 3))


def _input_tokens(request: FakeRequest) -> int:
    return rough_tokens(" ".join([request.system, *(text for _, text in request.messages)]))


def _json(data: dict) -> bytes:
    return json.dumps(data).encode()


class _Api:
    """How one endpoint reads requests and shapes answers."""

    usage_fields: tuple[str, str]  # the names of its input and output token counts

    def __init__(self, path: str):
        self.path = path

    def parse(self, body: dict, headers: dict[str, str]) -> FakeRequest:
        system, messages = self.conversation(body)
        return FakeRequest(
            path=self.path,
            model=str(body.get("model", "")),
            system=system,
            messages=messages,
            temperature=body.get("temperature"),
            max_tokens=body.get("max_tokens", body.get("max_completion_tokens")),
            headers=headers,
            attempt=int(headers.get("x-stainless-retry-count", 0)),
        )

    def make_odd(self, message: dict, kind: str, value: object) -> None:
        """Put ``value`` in place of the reply's token counts, usage object or model."""
        if kind == "odd_model":
            message["model"] = value
        elif kind == "odd_usage":
            message["usage"] = value
        else:
            message["usage"].update(dict.fromkeys(self.usage_fields, value))


class _Messages(_Api):
    usage_fields = ("input_tokens", "output_tokens")

    def quota_headers(self, quota: dict[str, float]) -> dict[str, str]:
        reset = datetime.fromtimestamp(time.time() + quota["reset_s"], UTC).isoformat(timespec="milliseconds")
        return {
            "anthropic-ratelimit-requests-limit": str(math.floor(quota["limit"])),
            "anthropic-ratelimit-requests-remaining": str(quota["remaining"]),
            "anthropic-ratelimit-requests-reset": reset.replace("+00:00", "Z"),
        }

    error_types = {
        "rate_limit": "rate_limit_error",
        "server_error": "api_error",
        "overloaded": "overloaded_error",
        "bad_request": "invalid_request_error",
    }

    def conversation(self, body: dict) -> tuple[str, tuple[tuple[str, str], ...]]:
        messages = tuple((m["role"], _text(m.get("content"))) for m in body.get("messages", ()))
        return _text(body.get("system", "")), messages

    def message(self, request: FakeRequest, text: str, number: int, empty: bool) -> dict:
        return {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "model": request.model,
            "content": [] if empty else [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": _input_tokens(request), "output_tokens": 0 if empty else rough_tokens(text)},
        }

    def error(self, kind: str, message: str) -> dict:
        return {"type": "error", "error": {"type": self.error_types[kind], "message": message}}


class _ChatCompletions(_Api):
    usage_fields = ("prompt_tokens", "completion_tokens")

    def quota_headers(self, quota: dict[str, float]) -> dict[str, str]:
        return {
            "x-ratelimit-limit-requests": str(math.floor(quota["limit"])),
            "x-ratelimit-remaining-requests": str(quota["remaining"]),
            "x-ratelimit-reset-requests": f"{math.ceil(quota['reset_s'] * 1000)}ms",
        }

    error_types = {
        "rate_limit": "rate_limit_exceeded",
        "server_error": "server_error",
        "overloaded": "server_error",
        "bad_request": "invalid_request_error",
    }

    def conversation(self, body: dict) -> tuple[str, tuple[tuple[str, str], ...]]:
        messages = [(m["role"], _text(m.get("content"))) for m in body.get("messages", ())]
        system = "\n".join(text for role, text in messages if role in ("system", "developer"))
        return system, tuple((role, text) for role, text in messages if role not in ("system", "developer"))

    def message(self, request: FakeRequest, text: str, number: int, empty: bool) -> dict:
        prompt, completion = _input_tokens(request), 0 if empty else rough_tokens(text)
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        return {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": 0,
            "model": request.model,
            "choices": [] if empty else [choice],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def error(self, kind: str, message: str) -> dict:
        return {"error": {"message": message, "type": self.error_types[kind], "code": None}}


_APIS = {"/v1/messages": _Messages("/v1/messages"), "/v1/chat/completions": _ChatCompletions("/v1/chat/completions")}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the SDKs' connection pools expect
    disable_nagle_algorithm = True  # headers and body leave at once, not 40 ms apart (Nagle + delayed ACK)
    server: "_Server"

    def setup(self):
        super().setup()
        self.server.track(self.connection)

    def finish(self):
        self.server.untrack(self.connection)
        super().finish()

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        api = _APIS.get(self.path.split("?")[0])
        if api is None:
            return self._send(404, {}, _json({"error": {"type": "not_found_error", "message": f"no {self.path}"}}))
        try:
            payload = json.loads(body)
        except ValueError:
            return self._send(400, {}, _json(api.error("bad_request", "the request body is not JSON")))
        if not isinstance(payload, dict) or not payload.get("model") or not isinstance(payload.get("messages"), list):
            return self._send(400, {}, _json(api.error("bad_request", "the request needs a model and a messages list")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        with self.server.fake._in_flight_request() as (retry_after_s, quota):
            limits = api.quota_headers(quota) if quota else {}
            if retry_after_s is not None:
                wait_ms = math.ceil(retry_after_s * 1000)
                limits |= {"retry-after": f"{retry_after_s:.3f}", "retry-after-ms": str(wait_ms)}
                message = "rate limit: too many requests (a limit of the fake server)"
                status, extra, body = 429, {}, _json(api.error("rate_limit", message))
            else:
                try:
                    status, extra, body = self.server.fake._answer(api, payload, headers)
                except Exception as error:  # a failing reply function: answer, so the client is not left hanging
                    status, extra = 500, {}
                    body = _json(api.error("server_error", f"the fake server's reply failed: {error!r}"))
        self._send(status, limits | extra, body)  # the request no longer counts in flight once its answer leaves

    def do_GET(self):
        if self.path == "/fake/stats":
            return self._send(200, {}, _json(self.server.fake.stats))
        self._send(404, {}, _json({"error": {"type": "not_found_error", "message": f"no GET {self.path}"}}))

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        drip_s = float(headers.pop("x-fake-drip-s", 0))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if not drip_s:
            self.wfile.write(body)
            return
        for byte in range(len(body)):  # one byte at a time, until the client hangs up or the server stops
            self.wfile.write(body[byte : byte + 1])
            self.wfile.flush()
            if self.server.fake._stopping.wait(drip_s):
                return

    def log_message(self, format, *args):
        """Stay silent: tests and notebooks should not see access logs."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # the listen backlog: a client may open hundreds of connections at the same moment

    def __init__(self, fake: FakeLLMServer):
        self.fake = fake
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def server_bind(self):
        """Bind without HTTPServer's reverse DNS lookup of the host name, which can stall offline."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def track(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(connection)
        with self.fake._lock:
            self.fake.connections += 1

    def untrack(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(connection)

    def close_connections(self) -> None:
        """End kept-alive connections, so no client keeps talking to a stopped server."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address):
        """Stay silent when a client hangs up (e.g. after its own timeout)."""


def main(argv: Sequence[str] | None = None) -> None:
    """Serve until stdin closes (so a server started by another process ends with it), printing the URL first."""
    parser = argparse.ArgumentParser(prog="python -m coordkit.llm.fake_server", description=__doc__.split("\n")[0])
    parser.add_argument("--latency-s", type=float, default=0.0, help="seconds before every answer")
    parser.add_argument("--max-in-flight", type=int, help="answer 429 beyond this many requests at once")
    parser.add_argument("--requests-per-s", type=float, help="answer 429 beyond this many requests a second")
    parser.add_argument("--reply", default=DEFAULT_REPLY, help="the text of every answer")
    options = parser.parse_args(argv)
    limits = {"max_in_flight": options.max_in_flight, "requests_per_s": options.requests_per_s}
    with FakeLLMServer(options.reply, latency_s=options.latency_s, **limits) as server:
        print(server.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
