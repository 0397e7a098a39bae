"""A run belongs to its model (issue 28): over HTTP, what outsiders send during a run (a class of students with curl,
a program replaying what the agents said) is answered or refused, and changes nothing the model records: its frame,
summary, listings and transcript are the same bytes as without them, and every outside POST gets 403 and B.1's
failure. Loopback only; each run takes seconds."""

import functools
import json
import re
import shlex
import shutil
import socket
import subprocess
import threading
import time

import httpx
import pytest

from coordkit.agora import model as agora_model
from coordkit.agora.model import AgoraNetwork, WeatherDemo
from coordkit.agora.protocol import Envelope, ProtocolDocument, Response, fetch
from coordkit.agora.transport import HTTPTransport, ServerLimits

REFUSAL = "answers only its own run's agents"


class Outsiders:
    """Threads that, until stopped, send every agent's server what outsiders might: natural-language queries,
    replays of the envelopes the agents sent (negotiation turns and protocol messages among them), new protocol
    documents, pipelined ``GET /.wellknown`` and the kit's own curl command; they keep each POST's answer."""

    def __init__(self, model):
        self.model = model
        self.urls = {name: model.channel.url_of(name) for name in model.channel.names}
        self.answers: list[tuple[int, str]] = []
        self.listings = 0
        self.rounds = 0  # rounds of pipelined listings answered
        self.sent = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        workers = [self._post, self._post, self._pipeline]
        workers += [self._curl] if shutil.which("curl") else []
        self._threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k, worker in enumerate(workers)]

    def __enter__(self):
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=30)

    def wait_for(self, more: int, rounds: int = 1) -> None:
        """Return once ``more`` POSTs and ``rounds`` more rounds of pipelined listings were answered since the call
        (the model steps meanwhile). Answers, not time: outsiders' work has a budget a second (``ServerLimits``), so
        how many are answered in a given time is the budget's affair; the deadline only stops a hung test."""
        answers, rounds, deadline = len(self.answers) + more, self.rounds + rounds, time.monotonic() + 300
        while (len(self.answers) < answers or self.rounds < rounds) and time.monotonic() < deadline:
            time.sleep(0.001)

    def _count(self) -> None:
        with self._lock:
            self.sent += 1

    def _requests(self, k: int):
        """(receiver, envelope JSON) pairs, forever: the run's own envelopes replayed, variants of the documents
        they carry, and a natural-language query."""
        n = 0
        while True:
            sent = [e for e in self.model.transcript() if e["path"] == "/" and e["sender"] is not None]
            for exchange in sent[-20:]:
                yield exchange["receiver"], exchange["request"]
                envelope = Envelope.from_json(exchange["request"])
                if envelope.protocol_hash is not None:
                    document = fetch(envelope.protocol_sources, envelope.protocol_hash)
                    variant = ProtocolDocument(document.text + "\n" * (n + 1))  # a new document each time
                    yield exchange["receiver"], Envelope.in_protocol(variant, envelope.body).to_json()
                    n += 1
            name = list(self.urls)[(n + k) % len(self.urls)]
            yield name, Envelope.natural_language(f"queryWeather for London, please ({n})").to_json()
            n += 1

    def _post(self, k: int) -> None:
        with httpx.Client(trust_env=False, timeout=10) as client:
            for receiver, request in self._requests(k):
                if self._stop.is_set():
                    return
                try:
                    answer = client.post(self.urls[receiver], content=request)
                except httpx.HTTPError:  # the run is over and its servers closed
                    return
                self.answers.append((answer.status_code, answer.text))
                self._count()

    def _pipeline(self, k: int) -> None:
        names = list(self.urls)
        while not self._stop.is_set():
            port = int(self.urls[names[self.sent % len(names)]].rsplit(":", 1)[1])
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
                    connection.sendall(b"GET /.wellknown HTTP/1.1\r\nHost: x\r\n\r\n" * 5)
                    self.listings += read_answers(connection, 5)
                    self.rounds += 1
            except OSError:
                return
            self._count()

    def _curl(self, k: int) -> None:
        names = list(self.urls)
        while not self._stop.is_set():
            command = shlex.split(self.model.channel.curl_command(names[self.sent % len(names)]))
            if subprocess.run(command, capture_output=True, timeout=10).returncode != 0:
                return
            self._count()


def read_answers(connection: socket.socket, n: int) -> int:
    """Read ``n`` answers from ``connection``; how many were listings (200)."""
    received, listings = b"", 0
    for _ in range(n):
        while (length := answer_length(received)) is None or len(received) < length:
            chunk = connection.recv(65536)
            if not chunk:
                return listings
            received += chunk
        listings += received.startswith(b"HTTP/1.1 200")
        received = received[length:]
    return listings


def answer_length(received: bytes) -> int | None:
    """The length of the answer ``received`` begins with, once its headers are in."""
    head, found, _ = received.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length: *(\d+)", head)
    return len(head) + 4 + int(length[1]) if found and length else None


def play(model, outsiders: Outsiders | None = None, per_step: int = 0) -> dict:
    """Step ``model`` to its end (``per_step`` outside POSTs answered before each step, and a round of pipelined
    listings before every third); what it recorded."""
    while model.steps < model.queries - 1:
        if outsiders is not None:
            outsiders.wait_for(per_step, rounds=int(model.steps % 3 == 0))
        model.step()
    listings = {name: model.channel.wellknown(name).to_json() for name in model.channel.names}
    model.step()
    assert not model.running
    frame = model.frame()
    return {
        "frame": frame.to_csv().encode(),
        "summary": model.summary(),
        "listings": listings,
        "transcript": model.transcript(),
    }


MODELS = {
    "weather demo": (lambda: WeatherDemo(transport="http", queries=10, rng=0), 12),
    "network": (lambda: AgoraNetwork(transport="http", users=10, queries=60, rng=0), 2),
}


# Outsiders' work is paced by ServerLimits.outsider_work_per_s, whose default (20 a second) test_agora_transport.py
# tests; here it is ten times that: their work is taken up ten times as fast, during the run's steps as between
# them, and the test waits a tenth as long (at 20, this file was the suite's longest wait, 56 s of turns).
OUTSIDER_WORK_PER_S = 200


@pytest.fixture
def paced_outsiders(monkeypatch):
    limits = ServerLimits(outsider_work_per_s=OUTSIDER_WORK_PER_S)
    monkeypatch.setattr(agora_model, "HTTPTransport", functools.partial(HTTPTransport, limits=limits))


@pytest.mark.parametrize("name", list(MODELS))
def test_outsiders_change_nothing_a_run_records(name, paced_outsiders):
    make, per_step = MODELS[name]
    quiet = play(make())
    model = make()
    try:
        with Outsiders(model) as outsiders:
            noisy = play(model, outsiders, per_step)
    finally:
        model.close()
    assert noisy["frame"] == quiet["frame"] and noisy["summary"] == quiet["summary"]
    assert noisy["listings"] == quiet["listings"] and noisy["transcript"] == quiet["transcript"]
    assert quiet["summary"]["negotiations"] >= 1 and any(json.loads(listing) for listing in quiet["listings"].values())
    assert model.channel.limits.outsider_work_per_s == OUTSIDER_WORK_PER_S
    assert len(outsiders.answers) >= 100 and outsiders.listings >= 20
    for status, text in outsiders.answers:
        assert status == 403 and REFUSAL in Response.from_json(text).body
