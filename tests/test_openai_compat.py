"""The OpenAI-compatible client against the fake server's chat-completions endpoint."""

import asyncio
import socket

import pytest

from coordkit.llm import LLMError, LLMRequest, attempts
from coordkit.llm.fake_server import FakeLLMServer, Fault
from coordkit.llm.openai_compat import OpenAICompatibleClient

REQUEST = LLMRequest.user("You run a brewery.", "What do you order?")
KEY = "sk-local-0123456789"


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch):
    monkeypatch.setattr(attempts, "INITIAL_RETRY_DELAY_S", 0.01)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture(autouse=True)
def closing(monkeypatch):
    """Close every client a test made, so no pooled connection outlives its test."""
    made = []
    original_init = OpenAICompatibleClient.__init__

    def init(self, *args, **options):
        original_init(self, *args, **options)
        made.append(self)

    monkeypatch.setattr(OpenAICompatibleClient, "__init__", init)
    yield
    for each in made:
        each.close()


def client(server: FakeLLMServer, **options) -> OpenAICompatibleClient:
    return OpenAICompatibleClient("llama3.2", server.url + "/v1", **options)


def test_a_reply_with_usage():
    with FakeLLMServer("DECISION: 5") as server:
        reply = client(server).complete(REQUEST)
    assert reply.text == "DECISION: 5" and reply.model == "llama3.2"
    assert (reply.input_tokens, reply.output_tokens) == (11, 3)
    assert reply.metadata == {"retries": 0, "rate_limited": 0, "in_flight": 1, "waited_s": 0.0} and reply.latency_s > 0
    [seen] = server.requests
    assert seen.system == "You run a brewery." and seen.messages == (("user", "What do you order?"),)
    assert (seen.model, seen.temperature, seen.max_tokens) == ("llama3.2", 0.1, 300)
    assert "authorization" not in seen.headers  # no key in the environment: none sent


def test_rate_limits_and_server_errors_are_retried():
    with FakeLLMServer(faults=[Fault("rate_limit"), Fault("server_error"), Fault("overloaded")]) as server:
        reply = client(server).complete(REQUEST)
    assert reply.text.startswith("DECISION: 4") and reply.metadata["retries"] == 3
    assert reply.metadata["rate_limited"] == 2 and reply.metadata["waited_s"] > 0
    assert len(server.requests) == 4


def test_exhausted_retries_raise():
    with FakeLLMServer(faults=lambda index, request: Fault("server_error")) as server:
        with pytest.raises(LLMError, match=r"HTTP 500.*gave up after 3 attempts"):
            client(server, max_retries=2).complete(REQUEST)
    assert len(server.requests) == 3


def test_a_bad_request_is_not_retried():
    with FakeLLMServer() as server:
        bad = OpenAICompatibleClient("llama3.2", server.url + "/v1/chat/completions/oops")
        with pytest.raises(LLMError, match=r"HTTP 404.*ends in /v1"):
            bad.complete(REQUEST)
        with pytest.raises(LLMError, match="HTTP 400: the request needs a model"):
            OpenAICompatibleClient("", server.url + "/v1").complete(REQUEST)
    assert len(server.requests) == 0  # neither reached the model: a 404 for the path, a 400 for the body


def test_a_body_that_is_not_json_raises():
    with FakeLLMServer(faults=[Fault("malformed")]) as server:
        with pytest.raises(LLMError, match="not JSON"):
            client(server).complete(REQUEST)
    assert len(server.requests) == 1


def test_a_reply_without_choices_raises():
    with FakeLLMServer(faults=[Fault("empty")]) as server:
        with pytest.raises(LLMError, match=r"choices\[0\]"):
            client(server).complete(REQUEST)


def test_a_timeout_raises_after_retrying():
    with FakeLLMServer(faults=lambda index, request: Fault("timeout", hang_s=2.0)) as server:
        with pytest.raises(LLMError, match=r"did not answer within 0.2 s.*after 2 attempts") as raised:
            client(server, timeout_s=0.2, max_retries=1).complete(REQUEST)
    # the client's count: on a busy machine the second attempt's deadline can pass before its request is read
    assert raised.value.retries == 1 and 1 <= len(server.requests) <= 2


def test_a_closed_port_hints_at_starting_the_server():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = OpenAICompatibleClient("llama3.2", f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(LLMError, match=r"is the server running\? Start Ollama with `ollama serve`"):
        refused.complete(REQUEST)


def test_the_key_is_sent_as_bearer_and_shown_nowhere(monkeypatch):
    monkeypatch.setenv("LOCAL_LLM_KEY", KEY)
    with FakeLLMServer(faults=[None, Fault("rate_limit")]) as server:
        keyed = client(server, api_key_env="LOCAL_LLM_KEY", max_retries=0)
        keyed.complete(REQUEST)
        with pytest.raises(LLMError) as raised:
            keyed.complete(REQUEST)
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    assert [name for name, value in server.requests[0].headers.items() if KEY in value] == ["authorization"]
    assert KEY not in str(raised.value) and KEY not in repr(keyed) and KEY not in str(vars(keyed))


def test_a_key_echoed_by_the_server_is_masked(monkeypatch):
    def echo_the_key(request):
        raise ValueError(request.headers["authorization"])  # the fake server answers 500 with this message

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeLLMServer(echo_the_key) as server:
        with pytest.raises(LLMError, match=r"HTTP 500") as raised:
            client(server, max_retries=0).complete(REQUEST)
    assert KEY not in str(raised.value) and "Bearer [OPENAI_API_KEY redacted]" in str(raised.value)


def test_a_key_of_the_clients_own_variable_is_masked_as_every_key_is(monkeypatch):
    keyed = OpenAICompatibleClient("llama3.2", api_key_env="LOCAL_LLM_KEY")
    monkeypatch.setenv("LOCAL_LLM_KEY", f"  {KEY}\n")  # pasted with spaces and a newline: the key is still found
    assert keyed.mask(f"denied for the key {KEY}") == "denied for the key [LOCAL_LLM_KEY redacted]"
    monkeypatch.setenv("LOCAL_LLM_KEY", "a")  # too short to be a key: hiding every "a" would garble the message
    assert keyed.mask("a rate limit") == "a rate limit"


def test_acomplete_works_from_one_event_loop_after_another():
    with FakeLLMServer("DECISION: 6", latency_s=0.05) as server:
        shared = client(server)

        async def round_of_calls(close: bool):
            replies = await asyncio.gather(*(shared.complete_async(REQUEST) for _ in range(8)))
            if close:
                await shared.aclose()
            return replies

        first = asyncio.run(round_of_calls(close=False))  # its loop closes with the client still open ...
        second = asyncio.run(round_of_calls(close=True))  # ... so this loop must get a client of its own
    assert [reply.text for reply in first + second] == ["DECISION: 6"] * 16
    assert server.peak_in_flight == 8
