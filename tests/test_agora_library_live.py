"""The official Agora library (``agora-protocol`` 0.2.0) and the kit over HTTP on 127.0.0.1, both ways.

The library's own sender against a kit agent: a kit agent is served by the kit's HTTPTransport in this process;
tools/agora_library_live.py, run as a subprocess under a Python that has the library, makes the library's ``Sender``
query it (a natural-language task, multiround, and a task in the protocol the agent lists), its LLM replaced by a
fake toolformer and its ``requests`` by a session that sends the run's key (the kit's servers answer only the run,
issue 28). The kit's client against the library's own server: the same script with ``--serve`` runs the library's
``ReceiverServer``, which the kit's LibraryConversation queries. The kit never imports ``agora``.

``COORDKIT_AGORA_LIBRARY_PYTHON`` names that Python; unset, or unable to import ``agora``, the test is skipped.
Setup (no network at test time, no LLM, no API key)::

    python3.12 -m venv /tmp/agora-venv && /tmp/agora-venv/bin/pip install agora-protocol==0.2.0
    COORDKIT_AGORA_LIBRARY_PYTHON=/tmp/agora-venv/bin/python .venv/bin/python -m pytest tests/test_agora_library_live.py
"""

import json
import os
import subprocess
from pathlib import Path

import pytest
import test_agora_transport  # its weather agent and protocol document

from coordkit.agora import library_wire
from coordkit.agora.library_client import LibraryConversation
from coordkit.agora.protocol import Envelope, ProtocolDocument, Response
from coordkit.agora.transport import HTTPTransport

VARIABLE = "COORDKIT_AGORA_LIBRARY_PYTHON"
SETUP = "python3.12 -m venv /tmp/agora-venv && /tmp/agora-venv/bin/pip install agora-protocol==0.2.0"
SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "agora_library_live.py"


class Weather(test_agora_transport.Weather):
    """test_agora_transport's weather agent (natural language in text, its protocol in JSON, any other rejected),
    keeping every envelope it is sent."""

    def __init__(self):
        super().__init__()
        self.seen: list[Envelope] = []

    def handle(self, envelope: Envelope) -> Response:
        self.seen.append(envelope)
        return super().handle(envelope)


def library_python() -> str:
    """The Python named by the variable, if it imports ``agora``; else the test is skipped saying how to set it."""
    python = os.environ.get(VARIABLE)
    if not python:
        pytest.skip(f"{VARIABLE} is not set; set it to a Python that has agora-protocol 0.2.0: {SETUP}")
    try:
        found = subprocess.run([python, "-c", "import agora"], capture_output=True, timeout=60).returncode == 0
    except OSError:
        found = False
    if not found:
        pytest.skip(f"{VARIABLE}={python} cannot import agora; make one with: {SETUP}")
    return python


def test_the_librarys_sender_queries_a_kit_agent_over_http_in_natural_language_and_in_its_protocol():
    python = library_python()
    agent = Weather()
    with HTTPTransport(timeout_s=30) as transport:
        transport.register(agent)
        url = transport.url_of("weather")
        environment = os.environ | {"COORDKIT_AGORA_RUN_KEY": transport._key}  # the run's own key (transport.py)
        done = subprocess.run(
            [python, str(SCRIPT), url], capture_output=True, text=True, timeout=120, env=environment, check=False
        )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)

    # natural language: the library's multiround form, a first request, a turn on its conversation, the close
    talk = summary["natural_language"]
    first, turn, close = talk["exchanges"]
    assert [(step["method"], step["status"]) for step in talk["exchanges"]] == [("POST", 200)] * 2 + [("DELETE", 200)]
    assert first["url"] == url and first["request"]["multiround"] is True
    conversation = first["reply"]["conversationId"]
    assert turn["url"] == close["url"] == f"{url}{library_wire.CONVERSATIONS_PATH}{conversation}"
    asked = ["What is the weather in Paris tomorrow?", "And the day after?"]
    received = [f"Mild weather ahead, as you asked: {question}" for question in asked]
    assert first["reply"] == {"status": "success", "body": received[0], "conversationId": conversation}
    assert turn["reply"] == {"status": "success", "body": received[1]}
    assert close["reply"] == {"status": "success"}  # the conversation is closed
    assert talk["querier_received"] == received and talk["output"] == received[1]

    # the protocol the agent lists: single-round (no multiround key in its front matter), B.1's form exactly
    task = summary["protocol"]
    ((query,),) = [task["exchanges"]]
    assert query["status"] == 200 and "multiround" not in query["request"]
    assert query["request"] == {
        "protocolHash": test_agora_transport.FORECAST.hash,
        "protocolSources": [test_agora_transport.FORECAST.data_uri],
        "body": '{"location": "Paris"}',
    }
    assert query["reply"] == {"status": "success", "body": '{"temperature": 5}'}
    assert task["querier_received"] == ['{"temperature": 5}'] and task["output"] == '{"temperature": 5}'

    # the library's transporter as shipped, without the key: refused, and the agent never saw it
    outsider = summary["without_key"]
    ((refused,),) = [outsider["exchanges"]]
    assert refused["status"] == 403 and outsider["raised"].startswith("ProtocolTransportError")
    assert [(e.protocol_hash, e.body) for e in agent.seen] == [(None, asked[0]), (None, asked[1])] + [
        (test_agora_transport.FORECAST.hash, '{"location": "Paris"}')
    ]


def test_the_kits_client_talks_to_the_librarys_own_server_in_natural_language_and_in_a_protocol():
    python = library_python()
    server = subprocess.Popen(
        [python, str(SCRIPT), "--serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = json.loads(server.stdout.readline())["url"]
        with LibraryConversation(url) as talk:  # natural language: the library's multiround conversation
            replies = [talk.send("What is the weather in Paris tomorrow?"), talk.send("And the day after?")]
        assert replies == [
            Response.success("Forecast for: What is the weather in Paris tomorrow?"),
            Response.success("Forecast for: And the day after?"),
        ]
        closed = LibraryConversation(url)
        closed.conversation_id = talk.conversation_id  # the DELETE was acknowledged: the server holds it no more
        assert closed.send("Still there?") == Response.failure("Conversation not found.")

        forecast = ProtocolDocument('---\nname: Forecast\nmultiround: false\n---\nSend {"location": <city>}.')
        with LibraryConversation(url, forecast) as task:  # the document travels as a data URI the library reads
            assert task.send('{"location": "Paris"}') == Response.success('Forecast for: {"location": "Paris"}')
        assert task.conversation_id is None  # single-round, as its front matter says
    finally:
        server.stdin.close()
        assert server.wait(timeout=60) == 0
