"""The stand-in (:mod:`.stand_in`) served over HTTP by the fake LLM server, for :mod:`.profiling`'s server process.

Kept apart from the model so that the process starts without Mesa: it imports this module alone."""

from multiprocessing.connection import Connection

from coordkit.llm import LLMRequest
from coordkit.llm.fake_server import FakeLLMServer, FakeRequest
from coordkit.rep.movies import stand_in


def reply(request: FakeRequest) -> str:
    return stand_in.reply(LLMRequest(request.system, request.messages))


def serve(latency_s: float, connection: Connection) -> None:
    """Run a fake server answering with the stand-in after ``latency_s`` until told to stop: its URL goes out on
    ``connection`` once it listens."""
    with FakeLLMServer(reply, latency_s=latency_s) as server:
        connection.send(server.url)
        connection.recv()
