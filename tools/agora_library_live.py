"""Make the official Agora library's own sender (``agora-protocol`` 0.2.0) query a live kit agent over HTTP, and
print a JSON summary of what it sent and received. tests/test_agora_library_live.py runs it; the kit never imports
``agora``, so this script runs under a scratch Python that has the library, never the kit's .venv::

    python3.12 -m venv /tmp/agora-venv && /tmp/agora-venv/bin/pip install 'agora-protocol==0.2.0'
    COORDKIT_AGORA_RUN_KEY=<the run's key> /tmp/agora-venv/bin/python tools/agora_library_live.py http://127.0.0.1:50123

The key is read from the environment variable ``COORDKIT_AGORA_RUN_KEY``, not from an argument: any user of the
machine can read a process's command line, only its owner its environment.

What runs is the library's code: ``agora.sender.core.Sender`` (``make_default``) and its ``execute_task``, its
``Querier`` and its ``SimpleSenderTransporter``, which posts with ``requests``. Two things stand in:

- the LLM: a fake toolformer whose querier conversation calls the querier's own ``send_query`` tool with fixed
  messages, then its ``deliverStructuredOutput`` tool with the last reply (no network, no API key);
- the key: the kit's servers answer only requests that carry the run's key (``Authorization: Bearer <key>``,
  coordkit/agora/transport.py), which the library's transporter cannot send. Its module's ``requests`` is replaced
  by :class:`KeyedRequests`, a real ``requests.Session`` that adds the header (and writes each exchange down); the
  transporter's code is unchanged, and the bytes it posts are those ``requests`` posts.

With ``--serve`` it runs the other way: the library's own server (``agora.receiver.server.ReceiverServer`` with
``Receiver.make_default``, a fake toolformer that says "YES" to its protocol check and answers
``Forecast for: <message>``) on 127.0.0.1, prints ``{"url": …}`` on one line, and serves until its standard input
closes; tests/test_agora_library_live.py queries it with the kit's client (coordkit/agora/library_client.py).

Three exchanges: a natural-language task (the library's multiround form: a first request, a next turn at
``/conversations/<id>``, the ``DELETE`` that closes it); a task in the first protocol the agent lists at
``/.wellknown`` (if it lists one: the library's sender is told the protocol is suitable, as its protocol picker or
negotiator would); and the natural-language request from the library's transporter as the library ships it, without
the key (the kit answers 403, on which the library's transporter raises ``ProtocolTransportError``).
"""

import argparse
import json
import os
import sys
import tempfile
import threading
from pathlib import Path

import agora.sender.components.transporter as transporter_module
import requests
from agora.common.core import Suitability
from agora.common.storage import JSONStorage
from agora.receiver.core import Receiver
from agora.receiver.server import ReceiverServer
from agora.sender.core import Sender
from agora.sender.task_schema import TaskSchema
from agora.utils import download_and_verify_protocol, extract_metadata
from library_requests import LoggedRequests  # tools/, beside this script
from werkzeug.serving import make_server

NATURAL_LANGUAGE = ["What is the weather in Paris tomorrow?", "And the day after?"]
PROTOCOL_QUERY = '{"location": "Paris"}'
TIMEOUT_S = 30
KEY_VARIABLE = "COORDKIT_AGORA_RUN_KEY"  # the run's key travels in the environment, never on the command line


class KeyedRequests(LoggedRequests):
    """In place of the ``requests`` module that the library's transporter calls: a session that sends the run's key,
    ignores proxy settings, and logs each exchange."""

    def __init__(self, key: str | None):
        super().__init__()
        self.session = requests.Session()
        self.session.trust_env = False  # 127.0.0.1 only: no proxy
        if key is not None:
            self.session.headers["Authorization"] = f"Bearer {key}"

    def _carry(self, method, url, payload):
        answer = self.session.request(method, url, json=payload, timeout=TIMEOUT_S)
        try:
            reply = answer.json()
        except ValueError:
            reply = answer.text
        self.log.append(
            {"method": method, "url": url, "request": payload, "status": answer.status_code, "reply": reply}
        )
        return answer


class FakeToolformer:
    """A toolformer without an LLM. In the querier's conversation (``agora.sender.components.querier``: its tools
    are ``send_query``, ``deliverStructuredOutput`` and ``register_error``) it sends ``queries`` one by one through
    ``send_query`` and delivers the last reply as the output; what ``send_query`` returned is kept in ``replies``."""

    def __init__(self, queries):
        self.queries = queries
        self.replies = []

    def new_conversation(self, prompt, tools, category=None):
        def conversation(message, print_output=True):
            by_name = {tool.name: tool for tool in tools}
            for query in self.queries:
                self.replies.append(by_name["send_query"].func(query))
            return by_name["deliverStructuredOutput"].func(output=self.replies[-1])

        return conversation


TASK = TaskSchema(
    description="Get the weather forecast of a place.",
    input_schema={"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
    output_schema={"type": "string", "description": "the forecast"},
)


def run_task(target, key, storage_dir, name, queries, protocol=None):
    """One ``Sender.execute_task`` of the library, its querier driven by a FakeToolformer sending ``queries``."""
    wire = KeyedRequests(key)
    transporter_module.requests = wire
    toolformer = FakeToolformer(queries)
    sender = Sender.make_default(toolformer, storage=JSONStorage(str(Path(storage_dir) / f"{name}.json")))
    if protocol is not None:  # what the library's protocol picker would have decided: this protocol suits the task
        protocol_hash, document, sources = protocol
        sender.memory.register_new_protocol(protocol_hash, document, sources, extract_metadata(document))
        sender.memory.set_suitability_override(protocol_hash, name, target, Suitability.ADEQUATE)
    summary = {"task": name}
    try:
        summary["output"] = sender.execute_task(
            name, TASK, {"location": "Paris"}, target, force_no_protocol=not protocol
        )
    except Exception as error:
        summary["raised"] = f"{type(error).__name__}: {error}"
    summary["querier_received"] = toolformer.replies
    summary["exchanges"] = wire.log
    return summary


def wellknown(target):
    session = requests.Session()
    session.trust_env = False
    answer = session.get(f"{target}/.wellknown", timeout=TIMEOUT_S)
    answer.raise_for_status()
    return answer.json()


def first_protocol(target):
    """The hash, document and sources of the first protocol the agent lists at /.wellknown (B.3), read with the
    library's ``download_and_verify_protocol``; None if it lists none."""
    for protocol_hash, sources in wellknown(target).items():
        for source in sources:
            document = download_and_verify_protocol(protocol_hash, source)
            if document is not None:
                return protocol_hash, document, sources
        raise SystemExit(f"no source of {protocol_hash} gives its document to the library: {sources}")
    return None


def without_key(target):
    """The library's transporter as shipped (no key): its first natural-language request."""
    wire = KeyedRequests(None)
    transporter_module.requests = wire
    summary = {"task": "without_key"}
    try:
        with transporter_module.SimpleSenderTransporter().new_conversation(target, True, None, []) as talk:
            summary["returned"] = talk(NATURAL_LANGUAGE[0])
    except Exception as error:
        summary["raised"] = f"{type(error).__name__}: {error}"
    summary["exchanges"] = wire.log
    return summary


class EchoToolformer:
    """The library agent's LLM, for ``--serve``: "YES" to its protocol check, ``Forecast for: <message>`` otherwise."""

    def new_conversation(self, prompt, tools, category=None):
        if category == "protocolChecking":
            return lambda message, print_output=True: "YES"
        return lambda message, print_output=True: f"Forecast for: {message}"


def serve(storage_dir):
    """The library's own server on 127.0.0.1 (a free port), until standard input closes."""
    receiver = Receiver.make_default(EchoToolformer(), storage=JSONStorage(str(Path(storage_dir) / "receiver.json")))
    server = make_server("127.0.0.1", 0, ReceiverServer(receiver).app, threaded=True)
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_port}"}), flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), server.shutdown()), daemon=True).start()
    server.serve_forever()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("url", nargs="?", help="the kit agent's base URL, e.g. http://127.0.0.1:50123")
    parser.add_argument("--serve", action="store_true", help="serve a library agent for the kit's client instead")
    arguments = parser.parse_args(argv)
    if arguments.serve:
        with tempfile.TemporaryDirectory() as storage_dir:
            serve(storage_dir)
        return
    if arguments.url is None:
        parser.error("give the kit agent's URL, or --serve")
    target = arguments.url.rstrip("/")
    key = os.environ.get(KEY_VARIABLE)
    if not key:
        parser.error(f"set {KEY_VARIABLE} to the run's key (not an argument: other users can read a command line)")
    with tempfile.TemporaryDirectory() as storage_dir:
        summary = {"natural_language": run_task(target, key, storage_dir, "forecast", NATURAL_LANGUAGE)}
        protocol = first_protocol(target)
        if protocol is not None:
            summary["protocol"] = run_task(target, key, storage_dir, "forecast_in_protocol", [PROTOCOL_QUERY], protocol)
        summary["without_key"] = without_key(target)
    json.dump(summary, sys.stdout, indent=2, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
