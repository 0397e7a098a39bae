"""Agora's transports (issues 12 and 28, §5.1, Appendix B): the same code gives the same transcript in process and
over real HTTP on 127.0.0.1; a malformed request, a failing handler, an unknown receiver, an outsider without the
run's key or a client that breaks the servers' limits gets a clear answer, never a crash nor a traceback. No network
beyond 127.0.0.1 is used."""

import json
import logging
import os
import re
import resource
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from coordkit.agora.protocol import Envelope, ProtocolDocument, ProtocolError, Response, WellKnown
from coordkit.agora.transport import (
    MAX_REQUEST_BYTES,
    Endpoint,
    Exchange,
    HTTPTransport,
    InProcessTransport,
    ServerLimits,
    TransportError,
    UnknownAgentError,
    serve_envelope,
)

FORECAST = ProtocolDocument.compose(
    'Send {"location": <text>}; the answer is {"temperature": <°C>}.', name="Toy forecast", description="A test."
)
OTHER = ProtocolDocument("A protocol nobody here speaks.")
SECRET = "sk-test-do-not-leak"


class Weather:
    """Answers its protocol in JSON, natural language in templated text, and rejects any other protocol (B.1)."""

    def __init__(self, name="weather"):
        self.name, self.calls = name, 0

    def handle(self, envelope: Envelope) -> Response:
        self.calls += 1
        if envelope.protocol_hash is None:
            return Response.success(f"Mild weather ahead, as you asked: {envelope.body}")
        if envelope.protocol_hash != FORECAST.hash:
            return Response.rejected()
        return Response.success(json.dumps({"temperature": len(json.loads(envelope.body)["location"])}))

    def wellknown(self) -> WellKnown:
        return WellKnown({FORECAST.hash: (FORECAST.data_uri,)})


class Toy:
    """An endpoint whose answer is ``reply(envelope)``, listing no protocol (or raising, if asked to)."""

    def __init__(self, name, reply, listing_raises=False):
        self.name, self.reply, self.listing_raises = name, reply, listing_raises

    def handle(self, envelope: Envelope) -> Response:
        return self.reply(envelope)

    def wellknown(self) -> WellKnown:
        if self.listing_raises:
            raise RuntimeError(SECRET)
        return WellKnown({})


def taxi(transport):
    """A server that asks another while it handles a request: a nested call (Figure 4's taxi → traffic)."""

    def reply(envelope):
        traffic = transport.send("taxi", "traffic", Envelope.natural_language(f"traffic towards {envelope.body}?"))
        return Response.success(f"a taxi to {envelope.body}; traffic says: {traffic.body}")

    return Toy("taxi", reply)


def raises(envelope):
    raise ZeroDivisionError(SECRET)


def network(transport):
    """The toy agents, registered with ``transport``."""
    transport.register(Weather())
    transport.register(taxi(transport))
    transport.register(Toy("traffic", lambda envelope: Response.success(f"light ({len(envelope.body)} characters)")))
    transport.register(Toy("broken", raises, listing_raises=True))
    transport.register(Toy("liar", lambda envelope: envelope.body))
    return transport


def play(transport) -> list:
    """The same sequence of sends and listings, whatever the transport; what each returned."""
    return [
        transport.send("alice", "weather", Envelope.natural_language("Zürich, tomorrow ☀")),
        transport.wellknown("weather", sender="alice"),
        transport.send("alice", "weather", Envelope.in_protocol(FORECAST, '{"location": "Zürich"}')),
        transport.send("alice", "weather", Envelope.in_protocol(OTHER, "{}")),
        transport.send("bob", "taxi", Envelope.natural_language("the station")),
        transport.send("bob", "broken", Envelope.natural_language("hello")),
        transport.send("bob", "liar", Envelope.natural_language("hello")),
        transport.wellknown("traffic"),
        transport.send("bob", "taxi", Envelope.natural_language("the airport, then “home”")),
    ]


def http():
    return HTTPTransport(timeout_s=10)


TRANSPORTS = {"in_process": InProcessTransport, "http": http}


@pytest.fixture(params=list(TRANSPORTS))
def transport(request):
    with network(TRANSPORTS[request.param]()) as transport:
        yield transport


@pytest.fixture
def served():
    with network(http()) as transport:
        yield transport


@pytest.fixture
def raw():
    """A plain HTTP client, to send what an agent's transport never would."""
    with httpx.Client(trust_env=False, timeout=10) as client:
        yield client


def agora_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("agora-")]


def run_key(transport: HTTPTransport) -> dict[str, str]:
    """The header the run's own client sends (read here only to test what its servers do with the run's bodies)."""
    return {"Authorization": f"Bearer {transport._key}"}


# --- same code, same transcript ---------------------------------------------------------------------------------------


def test_both_transports_carry_the_same_bytes_and_give_the_same_transcript():
    with network(InProcessTransport()) as local, network(http()) as remote:
        assert play(local) == play(remote)
        assert local.transcript == remote.transcript
    transcript = local.transcript
    assert len(transcript) == 11  # nine requests and two nested ones
    assert transcript[0] == Exchange(
        "alice",
        "weather",
        "/",
        '{"protocolHash": null, "protocolSources": [], "body": "Zürich, tomorrow ☀"}',
        '{"status": "success", "body": "Mild weather ahead, as you asked: Zürich, tomorrow ☀"}',
    )
    assert transcript[1] == (
        "alice",
        "weather",
        "/.wellknown",
        "",
        Weather().wellknown().to_json(),
    )
    assert json.loads(transcript[3].response) == {"status": "rejected"}


def test_a_nested_exchange_follows_the_request_that_caused_it(transport):
    transport.send("bob", "taxi", Envelope.natural_language("the station"))
    sent = transport.sent
    transport.send("bob", "taxi", Envelope.natural_language("the airport"))
    assert transport.transcript_since(sent) == transport.transcript[2:]
    outer, inner = transport.transcript[:2]
    assert (outer.sender, outer.receiver, inner.sender, inner.receiver) == ("bob", "taxi", "taxi", "traffic")
    assert json.loads(inner.response)["body"] in json.loads(outer.response)["body"]


@pytest.mark.parametrize("kind", list(TRANSPORTS))
def test_a_transport_is_deterministic(kind):
    transcripts = []
    for _ in range(2):
        with network(TRANSPORTS[kind]()) as transport:
            play(transport)
        transcripts.append(transport.transcript)
    assert transcripts[0] == transcripts[1]


def test_the_answers_are_validated_responses(transport):
    weather, listing, forecast, rejected, nested, broken, liar, empty, _ = play(transport)
    assert forecast == Response.success('{"temperature": 6}')
    assert rejected == Response.rejected()
    assert listing.protocols == {FORECAST.hash: (FORECAST.data_uri,)} and empty.protocols == {}
    assert nested.status == "success" and "traffic says: light" in nested.body
    assert broken == Response.failure("broken could not handle the request: its handler raised ZeroDivisionError")
    assert liar == Response.failure("liar could not handle the request: its handler returned no Response")
    assert all(SECRET not in exchange.response for exchange in transport.transcript)


def test_threads_sending_at_once_are_all_answered_and_recorded(served):
    answers = []

    def user(k):
        for n in range(10):
            answers.append(served.send(f"user{k}", "taxi", Envelope.natural_language(f"stop {n}")))

    users = [threading.Thread(target=user, args=(k,)) for k in range(8)]
    for thread in users:
        thread.start()
    for thread in users:
        thread.join()
    assert len(answers) == 80 and all(answer.status == "success" for answer in answers)
    assert len(served.transcript) == 160


# --- malformed input over real HTTP -----------------------------------------------------------------------------------

NULL = '"protocolHash": null, "protocolSources": []'
MALFORMED = {
    "bad JSON": (b'{"protocolHash": null,', "not JSON"),
    "empty body": (b"", "not JSON"),
    "not an object": (b"[]", "is not a JSON object"),
    "missing body": (f"{{{NULL}}}".encode(), "the field body is missing"),
    "missing hash": (b'{"protocolSources": [], "body": "hi"}', "the field protocolHash is missing"),
    "unknown field": (f'{{{NULL}, "body": "hi", "sender": "eve"}}'.encode(), "unknown field 'sender'"),
    "body not text": (f'{{{NULL}, "body": 42}}'.encode(), "send it as a string"),
    "hex hash": (f'{{"protocolHash": "{"ab" * 20}", "protocolSources": ["data:,x"], "body": ""}}'.encode(), "hex"),
    "sources without a hash": (b'{"protocolHash": null, "protocolSources": ["https://x"], "body": ""}', "null"),
    "a hash without sources": (
        f'{{"protocolHash": "{FORECAST.hash}", "protocolSources": [], "body": ""}}'.encode(),
        "[]",
    ),
    "sources not a list": (
        f'{{"protocolHash": "{FORECAST.hash}", "protocolSources": "x:y", "body": ""}}'.encode(),
        "array",
    ),
    "not UTF-8": (b'{"protocolHash": null, "protocolSources": [], "body": "\xff"}', "not UTF-8"),
    "too many digits": (f'{{{NULL}, "body": {"1" * 100_000}}}'.encode(), "a number in it is too long"),
    "nested too deeply": (b"[" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_request_gets_400_and_a_failure_saying_what_was_wrong(served, raw, case):
    request, what = MALFORMED[case]
    weather = Weather("counted")
    served.register(weather)
    answer = raw.post(served.url_of("counted"), content=request, headers=run_key(served))
    assert answer.status_code == 400
    assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
    failure = Response.from_json(answer.content)
    assert failure.status == "failure" and failure.body.startswith("malformed request: ") and what in failure.body
    assert "Traceback" not in failure.body and "set_int_max_str_digits" not in failure.body and weather.calls == 0
    assert serve_envelope(weather, request) == (400, answer.content)  # the in-process side answers the same bytes
    assert served.send("alice", "counted", Envelope.natural_language("still there?")).status == "success"


def test_routes_and_methods_that_are_not_served_get_json_failures(served, raw):
    url = served.url_of("weather")
    for method, path, code in [("GET", "/", 405), ("POST", "/.wellknown", 405), ("GET", "/nope", 404)]:
        answer = raw.request(method, url + path)
        assert answer.status_code == code
        failure = Response.from_json(answer.content)
        assert failure.status == "failure" and f"{method} {path}" in failure.body and "/.wellknown" in failure.body


def test_a_handler_that_raises_answers_500_and_names_the_error_type_only(served, raw):
    answer = raw.post(
        served.url_of("broken"), content=Envelope.natural_language("hi").to_json(), headers=run_key(served)
    )
    assert answer.status_code == 500
    assert Response.from_json(answer.content).body == (
        "broken could not handle the request: its handler raised ZeroDivisionError"
    )
    assert SECRET not in answer.text and "Traceback" not in answer.text


def test_a_response_that_cannot_be_encoded_is_a_failure(served, raw):
    echo = Toy("echo", lambda envelope: Response.success(envelope.body))
    served.register(echo)
    request = f'{{{NULL}, "body": "\\ud800"}}'.encode()  # a lone surrogate, in a JSON escape: valid UTF-8 bytes
    answer = raw.post(served.url_of("echo"), content=request, headers=run_key(served))
    assert answer.status_code == 500 and "its response is not valid Unicode" in Response.from_json(answer.content).body
    assert serve_envelope(echo, request) == (500, answer.content)


def test_an_envelope_that_cannot_be_encoded_is_refused_before_it_travels(transport):
    with pytest.raises(ProtocolError, match="lone surrogate"):
        transport.send("alice", "weather", Envelope.natural_language("\ud800"))
    assert transport.transcript == ()


def test_wellknown_serves_b3s_plain_listing(served, raw):
    answer = raw.get(served.url_of("weather") + "/.wellknown")
    assert answer.status_code == 200
    assert answer.json() == {FORECAST.hash: [FORECAST.data_uri]}


def test_a_listing_that_fails_is_a_protocol_error_naming_the_receiver(transport):
    with pytest.raises(
        ProtocolError,
        match="broken.s /.wellknown: broken could not list its protocols: its wellknown.. raised RuntimeError",
    ):
        transport.wellknown("broken")
    assert SECRET not in transport.transcript[-1].response


# --- names, registration, timeouts and closing ------------------------------------------------------------------------


def test_an_unknown_receiver_is_a_clear_error_naming_it_and_the_registered_ones(transport):
    expected = r"no endpoint named 'wether' is registered \(registered: 'weather', 'taxi', .*'liar'\).*'weather'\?"
    with pytest.raises(UnknownAgentError, match=expected):
        transport.send("alice", "wether", Envelope.natural_language("hi"))
    with pytest.raises(UnknownAgentError, match="'nobody'"):
        transport.wellknown("nobody")
    assert transport.transcript == ()


def test_registration_refuses_what_is_not_a_new_endpoint(transport):
    with pytest.raises(TypeError, match="not an Endpoint"):
        transport.register(object())
    with pytest.raises(ValueError, match="'weather' is already registered"):
        transport.register(Weather())
    with pytest.raises(ValueError, match="non-empty text"):
        transport.register(Toy(" spaced ", lambda envelope: Response.success("")))
    with pytest.raises(TypeError, match="send an Envelope"):
        transport.send("alice", "weather", '{"body": "hi"}')
    assert isinstance(Weather(), Endpoint) and transport.names[:2] == ("weather", "taxi")


def test_an_endpoint_that_does_not_answer_in_time_is_a_transport_error():
    slow = Toy("slow", lambda envelope: time.sleep(1.0) or Response.success("late"))
    with HTTPTransport(timeout_s=0.2) as transport:
        transport.register(slow)
        with pytest.raises(TransportError, match=r"slow at http://127\.0\.0\.1:\d+ did not answer within 0.2 s"):
            transport.send("alice", "slow", Envelope.natural_language("hi"))
        assert transport.transcript == ()
    assert agora_threads() == []  # close waited for the sleeping handler


def test_close_stops_every_server_and_thread_and_refuses_further_requests():
    before = threading.active_count()
    transport = network(http())
    play(transport)
    ports = [int(transport.url_of(name).rsplit(":", 1)[1]) for name in transport.names]
    transport.close()
    transport.close()  # harmless
    assert agora_threads() == [] and threading.active_count() == before
    for port in ports:
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
    with pytest.raises(TransportError, match="HTTPTransport is closed"):
        transport.send("alice", "weather", Envelope.natural_language("hi"))
    with pytest.raises(TransportError, match="closed"):
        transport.register(Toy("late", lambda envelope: Response.success("")))


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="timeout_s"):
        HTTPTransport(timeout_s=0)
    with pytest.raises(ValueError, match="handler_threads"):
        HTTPTransport(handler_threads=0)
    with pytest.raises(TypeError, match=r"limits: .* is not a ServerLimits; e\.g\. ServerLimits\("):
        HTTPTransport(limits={"connections_per_server": 8})
    assert agora_threads() == []


SOFT_FILES = resource.getrlimit(resource.RLIMIT_NOFILE)[0]


@pytest.mark.parametrize(
    "fields, words",
    [
        ({"connections_per_server": 0}, ["ServerLimits.connections_per_server: 0 is not a whole number ≥ 1"]),
        ({"connections_in_total": 2.5}, ["ServerLimits.connections_in_total: 2.5"]),
        ({"max_body_bytes": True}, ["ServerLimits.max_body_bytes: True"]),
        ({"idle_timeout_s": 0}, ["ServerLimits.idle_timeout_s: 0 is not a number of seconds in (0, 3600]"]),
        ({"reply_timeout_s": "30"}, ["ServerLimits.reply_timeout_s: '30'"]),
        (
            {"connections_per_server": 9, "connections_in_total": 8},
            ["connections_per_server=9", "raise connections_in"],
        ),
        ({"connections_in_total": SOFT_FILES}, ["connections_in_total", "more than half", "ulimit -n"]),
        ({"max_header_bytes": 40_000}, ["read_buffer_bytes=65536 is below twice max_header_bytes=40000"]),
        ({"outsider_work_per_s": 0}, ["ServerLimits.outsider_work_per_s: 0 is not a number", "the default, 20,"]),
    ],
)
def test_server_limits_are_checked_with_errors_naming_the_field_and_the_fix(fields, words):
    with pytest.raises(ValueError) as error:
        ServerLimits(**fields)
    assert all(word in str(error.value) for word in words)


def test_the_default_limits_leave_most_descriptors_to_the_process():
    limits = ServerLimits()
    assert limits.connections_per_server <= limits.connections_in_total <= min(256, SOFT_FILES // 4)
    assert limits.max_body_bytes == MAX_REQUEST_BYTES


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_curl_command_reads_the_listing_and_a_curl_post_is_refused(served):
    command = served.curl_command("weather")
    assert command == f"curl -s --noproxy 127.0.0.1 {served.url_of('weather')}/.wellknown"
    listing = subprocess.run(shlex.split(command), capture_output=True, check=True, timeout=10)
    assert WellKnown.from_json(listing.stdout) == served.wellknown("weather")
    envelope = Envelope.in_protocol(FORECAST, '{"location": "l\'Aquila"}').to_json()
    post = shlex.split(command.removesuffix("/.wellknown") + "/ -w %{http_code}") + ["--data-binary", envelope]
    by_curl = subprocess.run(post, capture_output=True, text=True, check=True, timeout=10).stdout
    assert by_curl.endswith("403") and "answers only its own run's agents" in Response.from_json(by_curl[:-3]).body


# --- outsiders and limits (issue 28) ----------------------------------------------------------------------------------

SLOW = {"idle_timeout_s": 0.5, "header_timeout_s": 0.5, "body_timeout_s": 0.5, "reply_timeout_s": 0.5}
# How long a test waits for the server to act on one of SLOW's half-second timeouts: a hang guard, not a speed (the
# idle timeout's default, 30 s, is past it; the others' messages name the limit that acted)
GAVE_UP_S = 20.0
SMALL = {"max_body_bytes": 200_000, "max_header_bytes": 2048, "read_buffer_bytes": 8192}
# caps alone: no outsider waits for a turn of their work (that budget is tested on its own, NO_TURNS below)
CAPS = {"connections_per_server": 8, "connections_in_total": 12, "outsider_work_per_s": 100_000}


@pytest.fixture
def limited():
    """The toy network behind small limits and half-second timeouts."""
    with network(HTTPTransport(timeout_s=10, limits=ServerLimits(**CAPS, **SLOW, **SMALL))) as transport:
        yield transport


def port_of(transport: HTTPTransport, name: str) -> int:
    return int(transport.url_of(name).rsplit(":", 1)[1])


def exchange(port: int, request: bytes, *, half_close: bool = False, timeout_s: float = 5.0):
    """Send ``request`` on a new connection: the answer's status and parsed JSON body, or (None, None) when the
    connection closed with no answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as connection:
        try:
            connection.sendall(request)
            if half_close:
                connection.shutdown(socket.SHUT_WR)
        except OSError:  # the server answered and closed before taking all of it
            pass
        return read_answer(connection)


def read_answer(connection: socket.socket):
    """The status and JSON body of the answer ``connection`` receives next, or (None, None) if it closes first."""
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
            head, found, body = received.partition(b"\r\n\r\n")
            length = re.search(rb"(?im)^content-length: *(\d+)", head)
            if found and length and len(body) >= int(length[1]):
                break
    except ConnectionResetError:
        pass
    if not received:
        return None, None
    head, _, body = received.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


KEY = "{key}"  # where a request carries the run's key (see with_key)


def post(length: int | str, body: bytes = b"", *, headers: str = "") -> bytes:
    return f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n{headers}\r\n".encode() + body


def chunked(body: bytes) -> bytes:
    return f"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n{KEY}\r\n".encode() + body


def with_key(transport: HTTPTransport, request: bytes) -> bytes:
    """``request`` with the run's key where it has ``KEY``."""
    lines = "".join(f"{name}: {value}\r\n" for name, value in run_key(transport).items())
    return request.replace(KEY.encode(), lines.encode())


NATURAL = Envelope.natural_language("Zürich").to_json().encode()
DIGITS = f'{{{NULL}, "body": {"1" * 100_000}}}'.encode()
MULTIPART = b'--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nhello\r\n'  # no closing boundary
MALFORMED_HTTP = {  # case: (the request, the answer's status, words in its failure); only the run's bodies are read
    "a body over the limit": (post(300_000), 413, "the body is 300000 bytes; a request is at most 200000"),
    "a Content-Length of 30 digits": (post("9" * 30), 413, "is 999999999999999999… bytes; a request is at most"),
    "a chunked body over the limit": (
        chunked((b"10000\r\n" + b"x" * 0x10000 + b"\r\n") * 4 + b"0\r\n\r\n"),
        413,
        "the body is over 200000 bytes",
    ),
    "a bad Content-Length": (post("12abc", b"{}"), 400, "Content-Length '12abc' is not a number"),
    "a bad chunk size": (chunked(b"zz\r\n{}\r\n0\r\n\r\n"), 400, "its chunked body is malformed"),
    "a chunk-size line over 64 bytes": (chunked(b"0" * 100 + b"\r\n"), 400, "a chunk-size line"),
    "Transfer-Encoding gzip": (
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
        400,
        "Transfer-Encoding 'gzip'; send a Content-Length",
    ),
    "both Content-Length and Transfer-Encoding": (
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
        400,
        "both Content-Length and Transfer-Encoding",
    ),
    "a garbage request line": (b"\x16\x03\x01\x02\x00 hello\r\n\r\n", 400, "its request line or a header"),
    "headers over the limit": (
        b"GET /.wellknown HTTP/1.1\r\nX-Big: " + b"a" * 5000 + b"\r\n\r\n",
        431,
        "the request line and headers are over 2048 bytes",
    ),
    "a multipart body": (
        post(len(MULTIPART), MULTIPART, headers=f"Content-Type: multipart/form-data; boundary=xyz\r\n{KEY}"),
        400,
        "malformed request: envelope: not JSON",
    ),
    "a 100,000-digit number": (post(len(DIGITS), DIGITS, headers=KEY), 400, "a number in it is too long"),
    "an outsider's envelope": (post(len(NATURAL), NATURAL), 403, "answers only its own run's agents"),
}


@pytest.mark.parametrize("case", list(MALFORMED_HTTP))
def test_each_malformed_request_gets_b1s_failure_with_a_fitting_status(limited, case):
    request, status, words = MALFORMED_HTTP[case]
    answer = exchange(port_of(limited, "weather"), with_key(limited, request))
    assert answer[0] == status and answer[1]["status"] == "failure" and words in answer[1]["body"], answer
    assert "set_int_max_str_digits" not in answer[1]["body"] and "Traceback" not in answer[1]["body"]
    assert limited.send("alice", "weather", Envelope.natural_language("still there?")).status == "success"


def test_a_client_that_half_closes_after_its_request_still_gets_the_answer(limited):
    request = with_key(limited, post(len(NATURAL), NATURAL, headers=KEY))
    assert exchange(port_of(limited, "weather"), request, half_close=True) == (
        200,
        {"status": "success", "body": "Mild weather ahead, as you asked: Zürich"},
    )
    listing = exchange(port_of(limited, "weather"), b"GET /.wellknown HTTP/1.1\r\nHost: x\r\n\r\n", half_close=True)
    assert listing == (200, {FORECAST.hash: [FORECAST.data_uri]})


def test_an_outsiders_post_is_refused_before_its_body_and_never_reaches_the_agent(limited, raw):
    counted = Weather("counted")
    limited.register(counted)
    url, port = limited.url_of("counted"), port_of(limited, "counted")
    for headers in (
        {},
        {"Authorization": "Bearer not-the-key"},
        {"Authorization": run_key(limited)["Authorization"][:-1]},
    ):
        answer = raw.post(url, content=NATURAL, headers=headers)
        assert answer.status_code == 403 and "changed nothing" in Response.from_json(answer.content).body
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:  # headers alone: no body awaited
        connection.sendall(post(150_000))
        assert read_answer(connection)[0] == 403
    assert raw.get(url + "/.wellknown").json() == {FORECAST.hash: [FORECAST.data_uri]}  # listings are public
    assert [raw.request(method, url + path).status_code for method, path in [("GET", "/"), ("GET", "/x")]] == [405, 404]
    assert counted.calls == 0 and limited.transcript == ()


class HeldListing(Toy):
    """An endpoint whose listing is made only once the test lets it (``release``); ``making`` is set meanwhile."""

    def __init__(self, name, reply):
        super().__init__(name, reply)
        self.making, self.release = threading.Event(), threading.Event()

    def wellknown(self) -> WellKnown:
        self.making.set()
        self.release.wait(60)  # (only a hung test waits this long)
        return WellKnown({})


def test_outsiders_listings_never_hold_the_runs_handler_threads():
    """While outsiders' listings are held half-made, the run's one handler thread still answers its send: a listing
    made in it would hold the send until its timeout. (Ordered by events, not timed.)"""
    with network(HTTPTransport(timeout_s=10, handler_threads=1)) as transport:
        held = HeldListing("slow", lambda envelope: Response.success(""))
        transport.register(held)
        url = transport.url_of("slow") + "/.wellknown"
        readers = [threading.Thread(target=httpx.get, args=(url,), kwargs={"timeout": 120}) for _ in range(4)]
        for reader in readers:
            reader.start()
        try:
            assert held.making.wait(60), "no outsider's listing was asked for"
            assert transport.send("alice", "weather", Envelope.natural_language("Zürich")).status == "success"
        finally:
            held.release.set()
            for reader in readers:
                reader.join()


def test_the_key_appears_in_no_repr_transcript_error_log_or_command(limited, raw, caplog):
    key = run_key(limited)["Authorization"].removeprefix("Bearer ")
    play(limited)
    raw.post(limited.url_of("weather"), content=NATURAL)
    with pytest.raises(UnknownAgentError) as unknown:
        limited.send("alice", "wether", Envelope.natural_language("hi"))
    shown = [repr(limited), repr(limited.limits), repr(limited.transcript), limited.curl_command("weather")]
    shown += [str(unknown.value), caplog.text]
    limited.close()
    with pytest.raises(TransportError) as closed:
        limited.send("alice", "weather", Envelope.natural_language("hi"))
    assert len(key) >= 40 and not any(key in text for text in [*shown, str(closed.value)])


def idle_sockets(port: int, n: int) -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(n)]


def send_all(transport: HTTPTransport, receiver: str, n: int = 30) -> None:
    """``n`` sends of the run to ``receiver``, each answered."""
    for _ in range(n):
        assert transport.send("alice", receiver, Envelope.natural_language("x")).status == "success"


def test_connections_over_the_caps_get_503_and_the_runs_own_still_go_through():
    with network(HTTPTransport(timeout_s=10, limits=ServerLimits(**CAPS))) as transport:
        held = idle_sockets(port_of(transport, "weather"), 8) + idle_sockets(port_of(transport, "taxi"), 4)
        for name, cap in (("weather", "8 a server"), ("traffic", "12 in all")):
            status, failure = exchange(port_of(transport, name), b"")
            assert status == 503 and cap in failure["body"] and "nothing changed" in failure["body"]
        send_all(transport, "weather")  # the run's first connections, opened with every slot taken
        send_all(transport, "taxi")  # (and a nested call's; their speed: benchmarks/bench_agora_transport.py)
        for connection in held:
            connection.close()
        assert exchange(port_of(transport, "weather"), b"GET /.wellknown HTTP/1.1\r\nHost: x\r\n\r\n")[0] == 200


# --- the run's exchanges first (issue 43): outsiders' work waits its turn, the run's never does --------------------

LISTING_GET = b"GET /.wellknown HTTP/1.1\r\nHost: x\r\n\r\n"
NO_TURNS = {"outsider_work_per_s": 0.01}  # a turn every 100 s: past the first, outsiders' work waits far past a test


def test_outsiders_work_past_its_budget_waits_unanswered_while_the_runs_goes_through(caplog):
    with network(HTTPTransport(timeout_s=10, limits=ServerLimits(**NO_TURNS))) as transport:
        outsiders = idle_sockets(port_of(transport, "weather"), 3)  # the third waits to be accepted
        for connection in outsiders:
            connection.sendall(LISTING_GET * 3)  # pipelined
        send_all(transport, "weather")
        send_all(transport, "taxi")  # and a nested call's
        for connection in outsiders:
            connection.setblocking(False)
            with pytest.raises(BlockingIOError):  # no answer: each request waits for a turn 100 s or more away
                connection.recv(1)
            connection.close()
    assert "outsider_work_per_s" in caplog.text and "the run's own exchanges go first" in caplog.text


def test_outsiders_pipelined_requests_past_the_budget_are_all_answered_in_their_turn():
    with network(HTTPTransport(timeout_s=10, limits=ServerLimits(outsider_work_per_s=20))) as transport:
        with socket.create_connection(("127.0.0.1", port_of(transport, "weather")), timeout=GAVE_UP_S) as pipelining:
            pipelining.sendall(LISTING_GET * 30)  # a second and a half of turns, past the tenth of one taken at once
            received = b""
            while received.count(b"HTTP/1.1 200") < 30:
                chunk = pipelining.recv(65536)
                assert chunk, "the server closed a connection whose requests waited their turn"
                received += chunk
        send_all(transport, "weather")


def test_the_runs_own_port_closes_any_other_connection_unanswered():
    with network(HTTPTransport(timeout_s=10)) as transport:
        own_port = transport._own_ports["weather"]  # not published: url_of gives the public port
        assert str(own_port) not in transport.url_of("weather") + transport.curl_command("weather")
        assert exchange(own_port, LISTING_GET) == (None, None)
        send_all(transport, "weather")


IDLE_CLIENTS = """
import json, resource, socket, sys, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(1100)]
time.sleep(0.5)
refused = 0
for connection in held:
    connection.setblocking(False)
    try:
        refused += connection.recv(100).startswith(b"HTTP/1.1 503")
    except BlockingIOError:  # admitted, and waiting for a request
        pass
print(json.dumps({"held": len(held), "refused": refused}), flush=True)
sys.stdin.read()
"""


def admitted(port: int) -> bool:
    """Whether a new connection is kept open, waiting for a request (not answered 503 and closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        time.sleep(0.1)
        connection.setblocking(False)
        try:
            connection.recv(100)
        except BlockingIOError:
            return True
    return False


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(resource.getrlimit(resource.RLIMIT_NOFILE)[1] < 1200, reason="the hard open-file limit is < 1,200")
def test_1100_idle_connections_from_another_process_leave_the_run_its_descriptors_and_its_speed(tmp_path):
    with network(HTTPTransport(timeout_s=10, limits=ServerLimits(**CAPS))) as transport:
        send_all(transport, "taxi")
        before = open_descriptors()
        clients = subprocess.Popen(
            [sys.executable, "-c", IDLE_CLIENTS, str(port_of(transport, "weather"))],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            counts = json.loads(clients.stdout.readline())
            assert counts == {"held": 1100, "refused": 1100 - 8}
            assert open_descriptors() <= before + 2 + 8  # the clients' two pipes and the connections admitted
            (tmp_path / "frame.csv").write_text("still writing files\n")
            send_all(transport, "taxi")  # (its speed meanwhile: benchmarks/agora_hostile.py's 5.)
        finally:
            clients.communicate("", timeout=10)
        time.sleep(0.2)
        assert open_descriptors() <= before and admitted(port_of(transport, "weather"))


def test_an_idle_connection_is_closed_at_the_idle_timeout_with_no_answer(limited):
    start = time.monotonic()
    assert exchange(port_of(limited, "weather"), b"", timeout_s=GAVE_UP_S) == (None, None)  # the server closed it
    assert time.monotonic() - start > 0.4  # (a lower bound: a loaded machine only closes it later)


def test_slow_headers_and_a_slow_body_get_408_at_their_timeouts(limited):
    with socket.create_connection(("127.0.0.1", port_of(limited, "weather")), timeout=GAVE_UP_S) as slowloris:
        start = time.monotonic()
        slowloris.sendall(b"GET /.wellknown HTTP/1.1\r\nX-Slow: ")
        with pytest.raises(OSError):  # the server closes the connection while a byte is still sent every 0.1 s
            for _ in range(10 * round(GAVE_UP_S)):
                time.sleep(0.1)
                slowloris.sendall(b"a")
        status, failure = read_answer(slowloris)
    assert status == 408 and "did not send its request line and headers within 0.5 s" in failure["body"]
    assert time.monotonic() - start > 0.4
    start = time.monotonic()
    request = with_key(limited, post(1000, b"{", headers=KEY))
    status, failure = exchange(port_of(limited, "weather"), request, timeout_s=GAVE_UP_S)
    assert status == 408 and "did not send its body within 0.5 s of its headers" in failure["body"]
    assert time.monotonic() - start > 0.4


class Lister:
    """An endpoint whose listing is ``documents`` documents of 10 KB each (its answers are served, never read)."""

    def __init__(self, name: str, documents: int):
        texts = [ProtocolDocument(f"{i}\n" + "x" * 10_000) for i in range(documents)]
        self.name, self.listing = name, WellKnown({d.hash: (d.data_uri,) for d in texts})

    def handle(self, envelope: Envelope) -> Response:
        return Response.failure("lists only")

    def wellknown(self) -> WellKnown:
        return self.listing


def test_an_answer_left_unread_is_dropped_at_the_reply_timeout(limited, caplog):
    limited.register(Lister("lister", 400))  # 4 MB answers: the kernel's buffers fill at once
    with socket.create_connection(("127.0.0.1", port_of(limited, "lister")), timeout=5) as reader:
        reader.sendall(b"GET /.wellknown HTTP/1.1\r\nHost: x\r\n\r\n" * 20)
        deadline = time.monotonic() + GAVE_UP_S
        while "left its answer unread for 0.5 s" not in caplog.text and time.monotonic() < deadline:
            time.sleep(0.1)
    assert "closed a connection to lister that left its answer unread for 0.5 s" in caplog.text


PIPELINED_SERVER = """
import json, sys, time
from coordkit.agora.protocol import Envelope, ProtocolDocument, Response, WellKnown
from coordkit.agora.transport import HTTPTransport

texts = [ProtocolDocument(f"{i}\\n" + "x" * 10_000) for i in range(100)]  # a listing of 1 MB
listing = WellKnown({d.hash: (d.data_uri,) for d in texts})

class Lister:
    name = "lister"
    def handle(self, envelope): return Response.failure("lists only")
    def wellknown(self): return listing

with HTTPTransport() as transport:  # ServerLimits' defaults: 64 connections from outsiders to a server
    transport.register(Lister())
    for _ in range(20):  # the process as it runs: its own requests have come and gone
        transport.wellknown("lister")
    print(transport.url_of("lister").rsplit(":", 1)[1], flush=True)
    sys.stdin.read()
"""


def resident_mb(pid: int, field: str = "VmRSS") -> float:
    return int(re.search(rf"{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())[1]) / 1024


def test_200_clients_pipelining_unread_requests_keep_the_servers_memory_bounded_and_it_comes_back():
    server = subprocess.Popen([sys.executable, "-c", PIPELINED_SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        port = int(server.stdout.readline())
        time.sleep(0.5)
        start = resident_mb(server.pid)
        clients = idle_sockets(port, 200)
        requests = b"GET /.wellknown HTTP/1.1\r\nHost: x\r\n\r\n" * 100
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            for client in clients:
                client.setblocking(False)
                try:
                    client.send(requests)
                except OSError:  # its buffers are full, or it was refused
                    pass
            time.sleep(0.05)
        peak = resident_mb(server.pid, "VmHWM")
        for client in clients:
            client.close()
        deadline = time.monotonic() + 60  # (it comes back in a second or two; a loaded machine may take longer)
        while resident_mb(server.pid) > 1.1 * start and time.monotonic() < deadline:
            time.sleep(0.2)
        after = resident_mb(server.pid)
    finally:
        server.communicate(b"", timeout=30)
    assert peak - start < 64 * 3, (start, peak, after)  # 64 connections, each one 1 MB answer and its copies
    assert after <= 1.1 * start, (start, peak, after)


DESCRIPTORS_SERVER = """
import json, os, resource, sys, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))
from coordkit.agora.protocol import Response, WellKnown
from coordkit.agora.transport import HTTPTransport, ServerLimits

class Quiet:
    name = "quiet"
    def handle(self, envelope): return Response.failure("quiet")
    def wellknown(self): return WellKnown({})

with HTTPTransport(limits=ServerLimits(outsider_work_per_s=100_000)) as transport:
    transport.register(Quiet())
    held = []
    try:
        while True:
            held.append(open(os.devnull))
    except OSError:
        pass
    print(transport.url_of("quiet").rsplit(":", 1)[1], flush=True)
    time.sleep(2)  # connections arrive while no descriptor is left
    for file in held:
        file.close()
    print("freed", flush=True)
    sys.stdin.read()
"""


def test_accepting_survives_running_out_of_file_descriptors_with_one_log_line():
    server = subprocess.Popen(
        [sys.executable, "-c", DESCRIPTORS_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = int(server.stdout.readline())
        waiting = idle_sockets(port, 3)
        for connection in waiting:
            connection.sendall(b"GET /.wellknown HTTP/1.1\r\nHost: x\r\n\r\n")
        assert server.stdout.readline() == "freed\n"
        assert [read_answer(connection) for connection in waiting] == [(200, {})] * 3
    finally:
        _, stderr = server.communicate("", timeout=30)
    assert stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert "quiet could not accept a connection (Too many open files); it waits 0.5 s and tries again" in stderr


def test_each_kind_of_refusal_is_logged_once_and_nothing_reaches_stderr(limited, caplog, capfd):
    caplog.set_level(logging.INFO)
    port = port_of(limited, "weather")
    held = idle_sockets(port, 8)
    for _ in range(2):
        exchange(port, b"")  # 503
        exchange(port_of(limited, "taxi"), post(len(NATURAL), NATURAL))  # 403
        exchange(port_of(limited, "taxi"), b"nonsense\r\n\r\n")  # 400
        exchange(port_of(limited, "taxi"), post(10**9))  # 413
        exchange(port_of(limited, "taxi"), b"GET / HTTP/1.1\r\nX: " + b"a" * 5000 + b"\r\n\r\n")  # 431
        exchange(port_of(limited, "traffic"), b"GET / HTTP/1.1\r\n")  # 408 (headers)
    time.sleep(0.7)  # the idle ones time out
    for connection in held:
        connection.close()
    ours = [record.getMessage() for record in caplog.records if record.name == "coordkit.agora.transport"]
    kinds = ["refused a connection", "answered 403", "answered 400", "answered 413", "answered 431"]
    kinds += ["traffic that did not send its request line and headers within 0.5 s", "that sent nothing for 0.5 s"]
    assert len(ours) == len(kinds) and all(sum(kind in message for message in ours) == 1 for kind in kinds), ours
    assert all(record.levelno == logging.WARNING for record in caplog.records if record.name.startswith("coordkit"))
    assert not [record for record in caplog.records if record.name.startswith("tornado")]
    assert capfd.readouterr().err == ""
