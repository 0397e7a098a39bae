"""Record, from the official Agora library's own code, the JSON messages it sends and answers, and how it reads
front matter, into data/agora/library-0.2.0/. tests/test_agora_library_wire.py checks the kit against these
records; the kit never imports ``agora``.

Run it with a Python that has ``agora-protocol`` 0.2.0 (a scratch environment, never the kit's .venv)::

    python3.12 -m venv /tmp/agora-venv && /tmp/agora-venv/bin/pip install 'agora-protocol==0.2.0'
    /tmp/agora-venv/bin/python tools/record_agora_library.py

No network and no LLM: the library's sender transporter (``agora.sender.components.transporter``) posts through a
stand-in for ``requests`` into the library's own Flask receiver (``agora.receiver.server.ReceiverServer``, driven
by Flask's test client), whose receiver answers with a fake toolformer that returns fixed text. ``uuid4`` is
replaced by a counter and the server's 300-second clean-up timer by nothing, so that every run writes the same
bytes. Each file is JSON with sorted keys:

- ``exchanges.json``: each exchange kind (natural language, a multiround turn on its ``conversationId``, the
  delete that closes it, a protocol query whose document travels in a URL-quoted and in a base64 data URI, an error
  reply, a negotiation opening), as the request the library sent (method, path, JSON) and the reply it answered.
- ``reply_reading.json``: what the library's sender makes of each reply form (B.1's and its own): the dict it
  returns, or the exception it raises.
- ``front_matter.json``: ``agora.utils.extract_metadata`` on a set of documents (or the exception it raises).
- ``documents.json``: the protocol document of the protocol exchanges, and its two data URIs.
- ``headers.json``: the HTTP headers ``requests`` (with which the transporter posts) sends with a JSON body; the
  kit tells the library's requests by their ``User-Agent``.
"""

import base64
import json
import tempfile
import traceback
from importlib.metadata import version
from itertools import count
from pathlib import Path

import agora.receiver.server as server_module
import agora.sender.components.transporter as transporter_module
import requests
from agora.common.storage import JSONStorage
from agora.receiver.core import Receiver
from agora.receiver.server import ReceiverServer
from agora.sender.components.transporter import SimpleSenderTransporter
from agora.utils import compute_hash, encode_as_data_uri, extract_metadata
from library_requests import LoggedRequests  # tools/, beside this script

VERSION = "0.2.0"
OUT = Path(__file__).resolve().parent.parent / "data" / "agora" / f"library-{VERSION}"
TARGET = "http://agent.test"
REPLY = "Sunny, 21 degrees."
BASE64_PREFIX = "data:text/plain;charset=utf-8;base64,"

WEATHER = (
    "---\nname: Weather Forecast Query Protocol\ndescription: Ask for the forecast of a date and a place.\n"
    'multiround: false\n---\nSend a JSON object {"date": "YYYY-MM-DD", "location": "<city>"}; the answer is '
    'a JSON object {"temperature": <number>, "precipitation": <number>, "weather": "<text>"}.\n'
)

FRONT_MATTER_DOCUMENTS = {
    "plain_lf": "---\nname: Weather\ndescription: Ask for the forecast.\n---\nbody\n",
    "crlf": "---\r\nname: Weather\r\ndescription: Ask for the forecast.\r\n---\r\nbody\r\n",
    "multiround_key": "---\nname: Weather\ndescription: Ask for the forecast.\nmultiround: true\n---\nbody\n",
    "trailing_space": "---\nname: Weather \ndescription: Ask for the forecast.\n---\nbody\n",
    "not_on_line_1": "\n---\nname: Weather\ndescription: Ask for the forecast.\n---\nbody\n",
    "quoted": "---\nname: \"Weather: daily\"\ndescription: 'Ask for the forecast.'\n---\nbody\n",
    "name_only": "---\nname: Weather\n---\nbody\n",
    "no_front_matter": "Send a date; get the forecast.\n",
}

REPLY_FORMS = {
    "b1_success": {"status": "success", "body": REPLY},
    "b1_failure": {"status": "failure", "body": "the tool failed"},
    "b1_rejected": {"status": "rejected"},
    "library_error": {"status": "error", "message": "Conversation not found."},
    "error_with_body": {"status": "error", "message": "protocol rejected", "body": "protocol rejected"},
    "success_with_conversation": {"status": "success", "conversationId": "conversation-1", "body": REPLY},
    "error_with_conversation": {
        "status": "error",
        "message": "protocol rejected",
        "body": "protocol rejected",
        "conversationId": "conversation-1",
    },
}


class FakeToolformer:
    """A toolformer whose every conversation answers a fixed text: "YES" to the protocol checker, REPLY otherwise
    (``agora.common.toolformers.base.Toolformer.new_conversation``)."""

    def new_conversation(self, prompt, tools, category=None):
        answer = "YES" if category == "protocolChecking" else REPLY
        return lambda message, print_output=True: answer


class FakeResponse:
    """What ``requests`` returns, as far as the transporter reads it: ``status_code``, ``text``, ``json()``."""

    def __init__(self, status_code, payload):
        self.status_code = status_code
        self.text = json.dumps(payload)
        self._payload = payload

    def json(self):
        return self._payload


class Wire(LoggedRequests):
    """A stand-in for ``requests`` that carries each call into the Flask test client and writes it down."""

    def __init__(self, client):
        super().__init__()
        self.client = client

    def _carry(self, method, url, payload):
        path = url[len(TARGET) :] or "/"
        answer = self.client.open(path, method=method, json=payload)
        self.log.append({"method": method, "path": path, "request": payload, "reply": answer.get_json()})
        return FakeResponse(answer.status_code, answer.get_json())


class NoTimer:
    """In place of ``threading.Timer`` in the server: conversations are not dropped after 300 s while recording."""

    def __init__(self, interval, function):
        pass

    def start(self):
        pass


def quoted_uri(text):
    return encode_as_data_uri(text)


def base64_uri(text):
    return BASE64_PREFIX + base64.b64encode(text.encode("utf-8")).decode("ascii")


def record_exchanges(storage_dir):
    """Each exchange kind, as the library's transporter sent it and its server answered."""
    ids = count(1)
    server_module.uuid.uuid4 = lambda: f"conversation-{next(ids)}"
    server_module.Timer = NoTimer
    receiver = Receiver.make_default(FakeToolformer(), storage=JSONStorage(str(Path(storage_dir) / "receiver.json")))
    wire = Wire(ReceiverServer(receiver).app.test_client())
    transporter_module.requests = wire
    transporter = SimpleSenderTransporter()
    exchanges = {}

    def conversation(kind, multiround, protocol_hash, sources, messages):
        start = len(wire.log)
        try:
            with transporter.new_conversation(TARGET, multiround, protocol_hash, sources) as talk:
                for message in messages:
                    talk(message)
        except Exception as error:  # the library's sender cannot read its own server's error reply
            wire.log[-1]["sender_raises"] = describe(error)
        exchanges[kind] = wire.log[start:]

    conversation("natural_language", True, None, [], ["What is the weather in Paris on 2024-06-01?", "And on 06-02?"])
    conversation("protocol_quoted_uri", False, compute_hash(WEATHER), [quoted_uri(WEATHER)], ['{"date": "2024-06-01"}'])
    conversation("protocol_base64_uri", False, compute_hash(WEATHER), [base64_uri(WEATHER)], ['{"date": "2024-06-01"}'])
    conversation("protocol_unreadable", False, compute_hash("another text"), [quoted_uri(WEATHER)], ["{}"])
    conversation("negotiation", True, "negotiation", None, ["Hello, shall we agree on a protocol?"])
    wire.post(f"{TARGET}/conversations/no-such-conversation", json={"body": "hello"})
    exchanges["unknown_conversation"] = wire.log[-1:]
    return exchanges


def reply_reading():
    """What the transporter's conversation (transporter.py, ``__call__``) returns or raises on each reply form."""
    readings = {}
    for name, form in REPLY_FORMS.items():
        for multiround in (False, True):
            transporter_module.requests = Canned(form)
            talk = SimpleSenderTransporter().new_conversation(TARGET, multiround, None, [])
            try:
                outcome = {"returns": talk("hello")}
            except Exception as error:
                outcome = {"raises": describe(error)}
            readings[f"{name}/{'multiround' if multiround else 'single'}"] = {"reply": form} | outcome
    return readings


def describe(error):
    """An exception as ``Type: message (file.py:line)``, the line being where the library raised it."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"{type(error).__name__}: {error} ({Path(frame.filename).name}:{frame.lineno})"


class Canned:
    """A stand-in for ``requests`` whose every POST is answered 200 with one reply form."""

    def __init__(self, form):
        self.form = form

    def post(self, url, json=None):
        return FakeResponse(200, self.form)


def front_matter():
    """``extract_metadata`` on each document (agora/utils.py), and the library's hash of it."""
    parses = {}
    for name, text in FRONT_MATTER_DOCUMENTS.items():
        try:
            outcome = {"metadata": extract_metadata(text)}
        except Exception as error:
            outcome = {"raises": describe(error)}
        parses[name] = {"text": text, "hash": compute_hash(text)} | outcome
    return parses


def write(name, value):
    (OUT / name).write_text(json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def main():
    assert version("agora-protocol") == VERSION, f"agora-protocol {version('agora-protocol')} is not {VERSION}"
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as storage_dir:
        write("exchanges.json", record_exchanges(storage_dir))
    write("reply_reading.json", reply_reading())
    write("front_matter.json", front_matter())
    write("documents.json", {"weather": WEATHER, "base64_uri": base64_uri(WEATHER), "quoted_uri": quoted_uri(WEATHER)})
    prepared = requests.Session().prepare_request(requests.Request("POST", TARGET, json={}))
    write("headers.json", {name: value for name, value in prepared.headers.items() if name != "Content-Length"})
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
