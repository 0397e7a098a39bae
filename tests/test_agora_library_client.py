"""The kit as a client of an agent built with the official Agora library: coordkit/agora/library_client.py against a
server on 127.0.0.1 that answers as the library's ReceiverServer answered the library's own sender
(data/agora/library-0.2.0/exchanges.json). The kit must send what the library's sender sent, and read what its
server answered. Loopback only; the library is never imported."""

import http.server
import json
import threading
from pathlib import Path

import pytest

from coordkit.agora.library_client import LibraryConversation, LibraryTransportError, multiround_for
from coordkit.agora.protocol import ProtocolDocument, ProtocolError, Response

RECORDS = Path(__file__).resolve().parent.parent / "data" / "agora" / "library-0.2.0"
EXCHANGES = json.loads((RECORDS / "exchanges.json").read_text(encoding="utf-8"))
DOCUMENTS = json.loads((RECORDS / "documents.json").read_text(encoding="utf-8"))
WEATHER = ProtocolDocument(DOCUMENTS["weather"])
REPLY = "Sunny, 21 degrees."
OPENED, TURN, CLOSED = EXCHANGES["natural_language"]  # the first request (with its id), a next turn, the DELETE


class Replay(http.server.ThreadingHTTPServer):
    """Answers each request with the next recorded reply, after writing down what was asked (method, path, JSON,
    headers); a request past the script is answered 500."""

    def __init__(self, script: list[dict], status: int = 200):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.status = status
        self.asked: list[dict] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __exit__(self, *exc_info):
        self.shutdown()
        super().__exit__(*exc_info)


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self._answer(json.loads(self.rfile.read(length)))

    def do_DELETE(self):
        self._answer(None)

    def _answer(self, request):
        server = self.server
        server.asked.append(
            {"method": self.command, "path": self.path, "request": request, "headers": dict(self.headers)}
        )
        if not server.script:
            self.send_error(500, "nothing more was recorded")
            return
        payload = json.dumps(server.script.pop(0)["reply"]).encode()
        self.send_response(server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def sent(server: Replay) -> list[dict]:
    return [{key: ask[key] for key in ("method", "path", "request")} for ask in server.asked]


def recorded(kind: str) -> list[dict]:
    return [{key: step[key] for key in ("method", "path", "request")} for step in EXCHANGES[kind]]


def test_natural_language_is_the_librarys_multiround_conversation_request_for_request():
    with Replay(EXCHANGES["natural_language"]) as server:
        with LibraryConversation(server.url) as talk:
            first = talk.send("What is the weather in Paris on 2024-06-01?")
            second = talk.send("And on 06-02?")
        assert sent(server) == recorded("natural_language")  # the first turn, the next at its id, the DELETE
    assert first == second == Response.success(REPLY)
    assert talk.conversation_id == "conversation-1" and talk.closed


@pytest.mark.parametrize("kind, sources", [("protocol_quoted_uri", ()), ("protocol_base64_uri", "base64")])
def test_a_protocol_query_is_the_librarys_request_and_its_document_travels_as_a_data_uri(kind, sources):
    with Replay(EXCHANGES[kind]) as server:
        given = [DOCUMENTS["base64_uri"]] if sources == "base64" else ()
        with LibraryConversation(server.url, WEATHER, sources=given) as talk:
            reply = talk.send('{"date": "2024-06-01"}')
        assert sent(server) == recorded(kind)  # single-round, as its front matter says: no multiround, no DELETE
    assert reply == Response.success(REPLY) and talk.conversation_id is None


def test_the_librarys_error_replies_are_failures_that_carry_its_message():
    unreadable = [{"reply": EXCHANGES["protocol_unreadable"][0]["reply"]}]
    with Replay(unreadable) as server, LibraryConversation(server.url, WEATHER) as talk:
        assert talk.send("{}") == Response.failure("Failed to download protocol")
    dropped = [OPENED, {"reply": EXCHANGES["unknown_conversation"][0]["reply"]}, CLOSED]  # closing is acknowledged
    with Replay(dropped) as server, LibraryConversation(server.url) as talk:
        talk.send("hello")
        assert talk.send("still there?") == Response.failure("Conversation not found.")


def test_a_first_failure_opens_no_conversation_and_the_next_turn_opens_it_again():
    script = [{"reply": {"status": "error", "message": "busy"}}, OPENED, CLOSED]
    with Replay(script) as server, LibraryConversation(server.url) as talk:
        assert talk.send("hello").status == "failure"
        assert talk.send("hello again") == Response.success(REPLY)
        assert [ask["path"] for ask in server.asked] == ["/", "/"] and talk.conversation_id == "conversation-1"


def test_the_kit_never_sends_its_run_key_to_a_library_agent():
    with Replay([OPENED, CLOSED]) as server:
        with LibraryConversation(server.url) as talk:
            talk.send("What is the weather in Paris on 2024-06-01?")
        assert all("Authorization" not in ask["headers"] for ask in server.asked)


def test_a_multiround_success_without_a_conversation_id_says_to_talk_single_round():
    no_id = [{"reply": {"status": "success", "body": REPLY}}]
    with Replay(no_id) as server:
        with pytest.raises(ProtocolError, match="multiround=False"):
            LibraryConversation(server.url).send("hello")


def test_an_agent_that_does_not_answer_200_or_cannot_be_reached_is_a_transport_error():
    with Replay([OPENED], status=403) as server:
        with pytest.raises(LibraryTransportError, match="HTTP 403"):
            LibraryConversation(server.url).send("hello")
        url = server.url
    with pytest.raises(LibraryTransportError, match="failed"):
        LibraryConversation(url, timeout_s=2).send("hello")


def test_a_closed_conversation_refuses_to_send():
    with Replay([OPENED, CLOSED]) as server:
        talk = LibraryConversation(server.url)
        talk.send("What is the weather in Paris on 2024-06-01?")
        talk.close()
        talk.close()  # once is enough: one DELETE
        with pytest.raises(ProtocolError, match="closed"):
            talk.send("And on 06-02?")
        assert [ask["method"] for ask in server.asked] == ["POST", "DELETE"]


@pytest.mark.parametrize(
    "arguments, named",
    [
        ({"url": "ftp://agent"}, "url="),
        ({"multiround": "yes"}, "multiround="),
        ({"timeout_s": 0}, "timeout_s="),
        ({"sources": ["data:text/plain,x"]}, "sources="),
    ],
)
def test_bad_arguments_name_the_parameter_before_anything_is_sent(arguments, named):
    with pytest.raises(ValueError, match=named):
        LibraryConversation(**({"url": "http://127.0.0.1:9"} | arguments))


def test_multiround_is_the_librarys_choice():
    assert multiround_for(None) is True  # natural language
    assert multiround_for(WEATHER) is False  # its front matter says multiround: false
    assert multiround_for(ProtocolDocument("---\nname: Chat\nmultiround: true\n---\nTalk.")) is True
    assert (
        multiround_for(ProtocolDocument("---\nname: Plain\n---\nOne question.")) is False
    )  # extract_metadata's default
    assert multiround_for(ProtocolDocument("No front matter.")) is True  # the library cannot read it: core.py's default
