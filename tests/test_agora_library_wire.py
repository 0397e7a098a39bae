"""The kit against the official Agora library (agora-protocol 0.2.0) on the wire, both ways, from the messages the
library's own code sent and answered (data/agora/library-0.2.0/, recorded by tools/record_agora_library.py). The
library is never imported: what it reads is cited from its source, and checked against its recorded readings
(reply_reading.json: what its sender returned or raised on each reply form). Loopback only, no API key."""

import functools
import http.server
import json
import threading
from pathlib import Path

import httpx
import pytest

from coordkit.agora import library_wire
from coordkit.agora.protocol import (
    MAX_DOCUMENT_BYTES,
    ProtocolDocument,
    ProtocolError,
    Response,
    WellKnown,
    fetch,
    from_data_uri,
    http_get,
    library_front_matter,
    protocol_hash,
    to_data_uri,
)
from coordkit.agora.transport import HTTPTransport, serve_conversation, serve_envelope

RECORDS = Path(__file__).resolve().parent.parent / "data" / "agora" / "library-0.2.0"
EXCHANGES = json.loads((RECORDS / "exchanges.json").read_text(encoding="utf-8"))
READINGS = json.loads((RECORDS / "reply_reading.json").read_text(encoding="utf-8"))
FRONT_MATTER = json.loads((RECORDS / "front_matter.json").read_text(encoding="utf-8"))
DOCUMENTS = json.loads((RECORDS / "documents.json").read_text(encoding="utf-8"))
HEADERS = json.loads((RECORDS / "headers.json").read_text(encoding="utf-8"))
REPLY = "Sunny, 21 degrees."  # what the recording's fake toolformer answered, and what the kit's agent answers here


class Forecaster:
    """A kit agent: natural language and any protocol whose document it can fetch are answered REPLY; a protocol
    whose document no source gives is rejected (B.1)."""

    name = "forecaster"

    def __init__(self):
        self.seen = []

    def handle(self, envelope):
        self.seen.append(envelope)
        if envelope.protocol_hash is not None:
            try:
                fetch(envelope.protocol_sources, envelope.protocol_hash, fetcher=lambda uri: "")
            except ProtocolError:
                return Response.rejected()
        return Response.success(REPLY)

    def wellknown(self):
        return WellKnown({})


def kit_answers(kind, serve):
    """The kit's answer to each recorded request of ``kind``, in order: ``serve(method, path, request) -> (status,
    reply)``; the recorded conversation id in a path is replaced by the one the kit gave."""
    answers, ids = [], {}
    for step in EXCHANGES[kind]:
        path = step["path"]
        for recorded, given in ids.items():
            path = path.replace(recorded, given)
        status, reply = serve(step["method"], path, step["request"])
        if "conversationId" in step["reply"] and "conversationId" in reply:
            ids[step["reply"]["conversationId"]] = reply["conversationId"]
        answers.append((step, status, reply))
    return answers


def in_process(endpoint):
    """``serve(method, path, request)`` through the kit's receiving functions, one conversation store."""
    store = library_wire.Conversations()

    def serve(method, path, request):
        payload = b"" if request is None else json.dumps(request).encode()
        if path == "/":  # over HTTP, the library's User-Agent says it is the library (test_over_http_…)
            status, answer = serve_envelope(endpoint, payload, store, from_library=True)
        else:
            conversation_id = path.removeprefix(library_wire.CONVERSATIONS_PATH)
            status, answer = serve_conversation(endpoint, method, conversation_id, payload, store)
        return status, json.loads(answer)

    return serve


def library_reading(reply, multiround_first_turn):
    """What the library's sender did, as recorded, with a reply of the same keys and status as ``reply``."""
    mode = "multiround" if multiround_first_turn else "single"
    for name, reading in READINGS.items():
        form = reading["reply"]
        if name.endswith("/" + mode) and set(form) == set(reply) and form["status"] == reply["status"]:
            return reading
    raise AssertionError(f"no recorded reading of a reply shaped like {reply}; add it to tools/record_agora_library.py")


def assert_the_library_reads(step, status, reply):
    """The reply to a recorded request has what the library's sender reads:
    transporter.py:76 raises ProtocolTransportError unless the HTTP status is 200;
    transporter.py:81-84 raises unless a multiround conversation's first reply has a conversationId;
    transporter.py:86-89 reads reply['status'] and reply['body'] (a KeyError without body);
    transporter.py:94-97 (close) reads the DELETE's HTTP status only;
    and the recorded sender returned (did not raise) on a reply of the same shape."""
    assert status == 200, (step, reply)
    if step["method"] == "DELETE":
        assert reply == {"status": "success"}  # server.py's acknowledgement
        return
    first_turn = step["path"] == "/" and step["request"].get("multiround") is True
    assert "status" in reply and "body" in reply, (step, reply)
    if first_turn:
        assert isinstance(reply.get("conversationId"), str), (step, reply)
    assert "returns" in library_reading(reply, first_turn), (step, reply)


# --- the library asks, the kit answers ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(EXCHANGES))
def test_the_kit_answers_every_recorded_library_request_in_a_form_the_library_reads(kind):
    for step, status, reply in kit_answers(kind, in_process(Forecaster())):
        assert_the_library_reads(step, status, reply)


@pytest.mark.parametrize("kind", ["natural_language", "protocol_quoted_uri", "protocol_base64_uri"])
def test_where_the_library_succeeded_the_kit_answers_what_its_server_answered(kind):
    for step, _, reply in kit_answers(kind, in_process(Forecaster())):
        assert reply == step["reply"]  # the kit's ids count as the recording's do: conversation-1, …


def test_each_turn_reaches_the_agent_as_a_b1_envelope_in_the_conversations_protocol():
    agent = Forecaster()
    kit_answers("natural_language", in_process(agent))
    turns = [step["request"]["body"] for step in EXCHANGES["natural_language"] if step["method"] == "POST"]
    assert [(e.protocol_hash, e.protocol_sources, e.body) for e in agent.seen] == [(None, (), body) for body in turns]


def test_a_refusal_tells_the_library_protocol_rejected_with_a_body_and_the_conversation():
    # the recorded library server answered this request {"status": "error", "message": ...}, and its own sender
    # raised KeyError: 'body' (transporter.py:88); the kit's rejection carries the body, and querier.py:74 reads
    # the message "protocol rejected" as its ProtocolRejectedError
    (step,) = EXCHANGES["protocol_unreadable"]
    assert step["sender_raises"].startswith("KeyError: 'body'")
    ((_, status, reply),) = kit_answers("protocol_unreadable", in_process(Forecaster()))
    assert reply == {"status": "error", "message": "protocol rejected", "body": "protocol rejected"}
    rejected_first_turn = library_wire.reply(Response.rejected(), "conversation-1")
    assert "returns" in library_reading(rejected_first_turn, multiround_first_turn=True)


@pytest.mark.parametrize("response", [Response.rejected(), Response.failure("the tool failed")])
def test_the_b1_replies_the_library_crashed_on_are_answered_in_its_form(response):
    b1 = json.loads(response.to_json())
    assert "raises" in library_reading(b1, multiround_first_turn=True)  # no conversationId: transporter.py:83
    for first_turn in (False, True):
        answer = library_wire.reply(response, "conversation-1" if first_turn else None)
        assert answer["status"] == "error" and answer["body"] == answer["message"]
        assert "returns" in library_reading(answer, first_turn)


def test_the_b1_requests_of_the_kit_are_answered_as_before():
    # a request without "multiround" is B.1's: the same bytes as before the library's forms were read
    envelope = json.dumps({"protocolHash": None, "protocolSources": [], "body": "hi"}).encode()
    assert serve_envelope(Forecaster(), envelope) == (200, Response.success(REPLY).to_json().encode())
    status, answer = serve_envelope(Forecaster(), b'{"protocolHash": null, "protocolSources": [], "body": 1}')
    assert status == 400 and Response.from_json(answer).status == "failure"


def test_a_malformed_library_request_is_an_error_that_names_the_field():
    request = {"protocolHash": None, "protocolSources": [], "body": "hi", "multiround": "yes"}
    status, answer = serve_envelope(Forecaster(), json.dumps(request).encode())
    reply = json.loads(answer)
    assert status == 200 and reply["status"] == "error" and "multiround: 'yes'" in reply["message"]
    assert reply["conversationId"] == "conversation-1"  # else the library's sender raises (transporter.py:83)


def test_a_closed_or_unknown_conversation_is_the_librarys_conversation_not_found():
    serve = in_process(Forecaster())
    status, opened = serve("POST", "/", EXCHANGES["natural_language"][0]["request"])
    path = library_wire.CONVERSATIONS_PATH + opened["conversationId"]
    assert serve("DELETE", path, None) == (200, {"status": "success"})
    status, reply = serve("POST", path, {"body": "still there?"})
    assert (status, reply["message"]) == (200, EXCHANGES["unknown_conversation"][0]["reply"]["message"])


def test_over_http_the_library_conversation_needs_the_runs_key_and_then_runs():
    with HTTPTransport(timeout_s=10) as transport, httpx.Client(trust_env=False, timeout=10) as client:
        transport.register(Forecaster())
        url = transport.url_of("forecaster")
        first, turn, close = EXCHANGES["natural_language"]
        assert client.post(url + "/", json=first["request"]).status_code == 403  # an outsider changes nothing
        assert client.delete(url + "/conversations/conversation-1").status_code == 403
        key = {"Authorization": f"Bearer {transport._key}"}  # the run's own client sends it (transport.py)
        opened = client.post(url + "/", json=first["request"], headers=key).json()
        assert opened == first["reply"]
        path = f"{url}/conversations/{opened['conversationId']}"
        assert client.post(path, json=turn["request"], headers=key).json() == turn["reply"]
        assert client.delete(path, headers=key).json() == close["reply"]


def test_over_http_a_single_round_library_request_is_told_by_its_user_agent():
    # B.1's form exactly (no "multiround"): only the User-Agent of requests (transporter.py:74) tells the library
    (step,) = EXCHANGES["protocol_unreadable"]
    with HTTPTransport(timeout_s=10) as transport, httpx.Client(trust_env=False, timeout=10) as client:
        transport.register(Forecaster())
        url, key = transport.url_of("forecaster") + "/", {"Authorization": f"Bearer {transport._key}"}
        library = client.post(url, json=step["request"], headers=HEADERS | key)
        kit = client.post(url, json=step["request"], headers=key)
    assert library.json() == {"status": "error", "message": "protocol rejected", "body": "protocol rejected"}
    assert (kit.status_code, kit.json()) == (200, {"status": "rejected"})  # B.1's answer to any other client


# --- the kit reads what the library sends and answers ----------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(EXCHANGES))
def test_the_kit_reads_every_recorded_library_reply(kind):
    for step in EXCHANGES[kind]:
        reply = step["reply"]
        if step["method"] == "DELETE":
            library_wire.read_close_acknowledgement(reply)
            continue
        read = library_wire.read_reply(reply)
        assert read.conversation_id == reply.get("conversationId")
        expected = (
            Response.success(reply["body"]) if reply["status"] == "success" else Response.failure(reply["message"])
        )
        assert read.response == expected


def test_a_library_reply_that_says_nothing_is_refused_naming_the_field():
    with pytest.raises(ProtocolError, match="message: None in an error reply"):
        library_wire.read_reply({"status": "error"})
    with pytest.raises(ProtocolError, match="conversationId: 7 is not a string"):
        library_wire.read_reply({"status": "success", "body": "x", "conversationId": 7})
    with pytest.raises(ProtocolError, match="not closed"):
        library_wire.read_close_acknowledgement({"status": "error", "message": "no"})


@pytest.mark.parametrize("kind", ["protocol_quoted_uri", "protocol_base64_uri"])
def test_the_kit_fetches_the_document_from_the_librarys_data_uris(kind):
    request = EXCHANGES[kind][0]["request"]
    document = fetch(request["protocolSources"], request["protocolHash"])
    assert document.text == DOCUMENTS["weather"] == from_data_uri(DOCUMENTS[kind.removeprefix("protocol_")])


def test_a_base64_data_uri_that_is_not_base64_or_utf8_says_so():
    with pytest.raises(ProtocolError, match="from character 37 is not base64"):
        from_data_uri("data:text/plain;charset=utf-8;base64,not base64!")
    with pytest.raises(ProtocolError, match="not UTF-8 text"):
        from_data_uri("data:text/plain;charset=utf-8;base64,/w==")


# --- front matter as the library reads it ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FRONT_MATTER))
def test_the_kit_reads_front_matter_as_the_library_does(name):
    record = FRONT_MATTER[name]
    assert protocol_hash(record["text"]) == record["hash"]  # agora.utils.compute_hash
    assert library_front_matter(record["text"]) == record.get("metadata")  # None where extract_metadata raises


def test_the_kits_own_front_matter_stays_strict():
    # ProtocolDocument keeps the paper-side form the kit writes (a block on line 1, LF, no quotes)
    assert ProtocolDocument(FRONT_MATTER["crlf"]["text"]).name is None
    assert library_front_matter(ProtocolDocument.compose("body", name="W", description="D").text) == {
        "name": "W",
        "description": "D",
        "multiround": False,
    }
    with pytest.raises(ProtocolError, match="front matter line 2: '- a list'"):
        library_front_matter("---\nname: W\n- a list\n---\nbody")


# --- the document cap ------------------------------------------------------------------------------------------------


@pytest.fixture
def one_mib_and_one():
    """A loopback server of a 1 MiB + 1 byte document, which the library reads (it has no cap)."""
    text = "x" * (2**20 + 1)
    handler = functools.partial(_Serve, text.encode())
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield text, f"http://127.0.0.1:{server.server_address[1]}/pd"
    server.shutdown()
    server.server_close()


class _Serve(http.server.BaseHTTPRequestHandler):
    def __init__(self, content, *arguments):
        self.content = content
        super().__init__(*arguments)

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.content)))
        self.end_headers()
        self.wfile.write(self.content)

    def log_message(self, *arguments):
        pass


def test_the_kit_keeps_its_download_cap_and_says_how_to_send_a_longer_document(one_mib_and_one):
    text, url = one_mib_and_one
    with pytest.raises(ValueError, match=r"more than MAX_DOCUMENT_BYTES \(1,000,000 bytes\).*data URI"):
        http_get(url)
    assert len(text) > MAX_DOCUMENT_BYTES
    assert fetch([to_data_uri(text)], protocol_hash(text)).text == text  # in a data URI it travels
