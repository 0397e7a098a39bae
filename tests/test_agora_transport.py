"""Agora's transports (issue 12, §5.1, Appendix B): the same code gives the same transcript in process and over real
HTTP on 127.0.0.1, and a malformed request, a failing handler or an unknown receiver gets a clear answer, never a
crash. No network beyond 127.0.0.1 is used."""

import json
import shlex
import shutil
import socket
import subprocess
import threading
import time

import httpx
import pytest

from coordkit.agora.protocol import Envelope, ProtocolDocument, ProtocolError, Response, WellKnown
from coordkit.agora.transport import (
    Endpoint,
    Exchange,
    HTTPTransport,
    InProcessTransport,
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
    outer, inner = transport.transcript
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
    "too many digits": (f'{{{NULL}, "body": {"1" * 5000}}}'.encode(), "cannot be read"),
    "nested too deeply": (b"[" * 100_000, "nested too deeply"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_request_gets_400_and_a_failure_saying_what_was_wrong(served, raw, case):
    request, what = MALFORMED[case]
    weather = Weather("counted")
    served.register(weather)
    answer = raw.post(served.url_of("counted"), content=request, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.headers["Content-Type"] == "application/json; charset=utf-8"
    failure = Response.from_json(answer.content)
    assert failure.status == "failure" and failure.body.startswith("malformed request: ") and what in failure.body
    assert "Traceback" not in failure.body and weather.calls == 0
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
    answer = raw.post(served.url_of("broken"), content=Envelope.natural_language("hi").to_json())
    assert answer.status_code == 500
    assert Response.from_json(answer.content).body == (
        "broken could not handle the request: its handler raised ZeroDivisionError"
    )
    assert SECRET not in answer.text and "Traceback" not in answer.text


def test_a_response_that_cannot_be_encoded_is_a_failure(served, raw):
    echo = Toy("echo", lambda envelope: Response.success(envelope.body))
    served.register(echo)
    request = f'{{{NULL}, "body": "\\ud800"}}'.encode()  # a lone surrogate, in a JSON escape: valid UTF-8 bytes
    answer = raw.post(served.url_of("echo"), content=request)
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
    start = time.monotonic()
    with HTTPTransport(timeout_s=0.2) as transport:
        transport.register(slow)
        with pytest.raises(TransportError, match=r"slow at http://127\.0\.0\.1:\d+ did not answer within 0.2 s"):
            transport.send("alice", "slow", Envelope.natural_language("hi"))
        assert transport.transcript == ()
    assert time.monotonic() - start < 5 and agora_threads() == []  # close waited for the sleeping handler


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
    assert agora_threads() == []


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_curl_command_asks_what_send_would(served):
    envelope = Envelope.in_protocol(FORECAST, '{"location": "l\'Aquila"}')
    command = served.curl_command("weather", envelope)
    assert command.startswith(f"curl -s --noproxy 127.0.0.1 {served.url_of('weather')}/ ")
    by_curl = subprocess.run(shlex.split(command), capture_output=True, text=True, check=True, timeout=10).stdout
    assert Response.from_json(by_curl) == served.send("alice", "weather", envelope)
    listing = subprocess.run(shlex.split(served.curl_command("weather")), capture_output=True, check=True, timeout=10)
    assert WellKnown.from_json(listing.stdout) == served.wellknown("weather")
