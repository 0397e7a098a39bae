"""The fake LLM server, exercised through the real anthropic SDK: replies, usage, faults, retries and concurrency."""

import json
import threading
import time

import anthropic
import httpx
import pytest

from coordkit.llm.fake_server import FAULT_KINDS, FakeLLMServer, FakeRequest, Fault, rough_tokens

KEY = "sk-test-0123456789"


def sdk(server: FakeLLMServer, **options) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key=KEY, base_url=server.url, **options)


def ask(client: anthropic.Anthropic, text: str = "What do you order?", **options):
    return client.messages.create(
        model="claude-fake",
        max_tokens=50,
        system="You run a brewery.",
        messages=[{"role": "user", "content": text}],
        **options,
    )


def test_a_normal_reply_carries_text_model_and_usage():
    with FakeLLMServer("DECISION: 7\nREASONING: more demand.") as server:
        message = ask(sdk(server), extra_body={"temperature": 0.1})  # this SDK's create() has no temperature
    assert message.content[0].text == "DECISION: 7\nREASONING: more demand."
    assert message.model == "claude-fake" and message.stop_reason == "end_turn"
    assert message.usage.input_tokens == rough_tokens("You run a brewery. What do you order?") == 11
    assert message.usage.output_tokens == rough_tokens("DECISION: 7\nREASONING: more demand.") == 7
    [request] = server.requests
    assert request == FakeRequest(
        "/v1/messages",
        "claude-fake",
        "You run a brewery.",
        (("user", "What do you order?"),),
        0.1,
        50,
        request.headers,
        0,
    )


def test_the_key_travels_in_one_auth_header_only():
    """This SDK (2.x) sends api_key as ``Authorization: Bearer``; older ones used ``x-api-key``."""
    with FakeLLMServer() as server:
        ask(sdk(server))
    headers = server.requests[0].headers
    carrying = {name: value for name, value in headers.items() if KEY in value}
    assert carrying in ({"x-api-key": KEY}, {"authorization": f"Bearer {KEY}"})


def test_a_rate_limit_is_retried_after_the_servers_wait(monkeypatch):
    """The SDK waits the server's retry-after-ms (30 ms), not its own 0.5 s backoff: the wait it asks for is read, not
    timed (a loaded machine stretches any wait)."""
    caller, real_sleep, waits = threading.current_thread(), time.sleep, []

    def sleep(seconds: float) -> None:
        if threading.current_thread() is caller:  # the SDK's wait, not the server's threads'
            waits.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    with FakeLLMServer(faults=[Fault("rate_limit", retry_after_ms=30)]) as server:
        started = time.monotonic()
        raw = sdk(server, max_retries=2).messages.with_raw_response.create(
            model="claude-fake", max_tokens=50, messages=[{"role": "user", "content": "hi"}]
        )
        elapsed = time.monotonic() - started
    assert raw.parse().content[0].text.startswith("DECISION: 4")
    assert raw.retries_taken == 1  # the raw response tells how many retries the SDK needed
    assert [request.attempt for request in server.requests] == [0, 1]
    assert waits == [pytest.approx(0.03)]  # retry-after-ms, not the SDK's 0.5 s backoff
    assert elapsed >= 0.03  # it did wait (a lower bound: a slow machine only waits longer)


def test_server_errors_exhaust_the_retries():
    with FakeLLMServer(faults=lambda index, request: Fault("server_error")) as server:
        with pytest.raises(anthropic.InternalServerError) as raised:
            ask(sdk(server, max_retries=0))
    assert raised.value.status_code == 500
    assert raised.value.body == {
        "type": "error",
        "error": {"type": "api_error", "message": "server_error (a fault injected by the fake server)"},
    }
    assert len(server.requests) == 1


def test_overloaded_is_status_529():
    with FakeLLMServer(faults=[Fault("overloaded")]) as server:
        with pytest.raises(anthropic.OverloadedError) as raised:
            ask(sdk(server, max_retries=0))
    assert raised.value.status_code == 529 and raised.value.body["error"]["type"] == "overloaded_error"


def test_a_hanging_server_times_the_client_out():
    with FakeLLMServer(faults=[Fault("timeout", hang_s=5.0)]) as server:
        with pytest.raises(anthropic.APITimeoutError):  # (after 0.2 s: the server would have answered after 5)
            ask(sdk(server, max_retries=0, timeout=0.2))
    # stop() woke the hanging handler, so leaving the with block did not wait for hang_s


def test_the_server_stays_silent_when_clients_hang_up(capfd):
    with FakeLLMServer(faults=[Fault("timeout", hang_s=0.3)]) as server:
        with pytest.raises(anthropic.APITimeoutError):
            ask(sdk(server, max_retries=0, timeout=0.1))
        time.sleep(0.4)  # the handler wakes and answers a client that has gone
        ask(sdk(server))
    assert capfd.readouterr() == ("", "")


def test_a_malformed_body_escapes_the_sdk_as_a_json_error():
    """A cut-off JSON body under a JSON content type is not retried and not wrapped: the SDK lets
    json.JSONDecodeError through, so code that only catches anthropic.APIError misses it."""
    with FakeLLMServer(faults=[Fault("malformed")]) as server:
        with pytest.raises(json.JSONDecodeError):
            ask(sdk(server, max_retries=2))
    assert len(server.requests) == 1


def test_an_empty_reply_has_no_content_blocks():
    with FakeLLMServer(faults=[Fault("empty")]) as server:
        message = ask(sdk(server))
    assert message.content == [] and message.usage.output_tokens == 0


def test_sixty_four_concurrent_calls_are_not_serialised():
    """Each request the server takes waits inside it until all 64 are in: a server that took them one at a time would
    never get there (its first request would fail at the barrier's timeout, which only stops a hung test). No timing:
    on a loaded machine, threads started one by one may take seconds to all be calling."""
    arrived = threading.Barrier(64, timeout=120)

    def all_in_at_once(_index, _request):
        arrived.wait()

    with FakeLLMServer(faults=all_in_at_once) as server:
        client = sdk(server, max_retries=0)
        replies, errors = [], []

        def call():
            try:
                replies.append(ask(client).content[0].text)
            except Exception as error:  # pragma: no cover - reported by the assertion below
                errors.append(error)

        threads = [threading.Thread(target=call) for _ in range(64)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == [] and len(replies) == 64
    assert server.peak_in_flight == 64


def test_a_reply_function_sees_the_normalised_conversation():
    def reply(request: FakeRequest) -> str:
        return f"{request.system} | {request.messages}"

    with FakeLLMServer(reply) as server:
        message = sdk(server).messages.create(
            model="claude-fake",
            max_tokens=50,
            system=[{"type": "text", "text": "Rule one."}, {"type": "text", "text": "Rule two."}],
            messages=[
                {"role": "user", "content": [{"type": "text", "text": "first"}]},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": "second"},
            ],
        )
    assert message.content[0].text == (
        "Rule one.\nRule two. | (('user', 'first'), ('assistant', 'ok'), ('user', 'second'))"
    )


def test_faults_follow_arrival_order_and_then_stop():
    with FakeLLMServer(faults=[None, Fault("server_error")]) as server:
        client = sdk(server, max_retries=0)
        ask(client)
        with pytest.raises(anthropic.InternalServerError):
            ask(client)
        ask(client)
        server.reset()
        assert server.requests == [] and server.peak_in_flight == 0
        ask(client)
    assert len(server.requests) == 1


def test_chat_completions_answer_like_openai():
    with FakeLLMServer("hello there") as server:
        body = {
            "model": "llama",
            "max_tokens": 9,
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
        }
        answer = httpx.post(server.url + "/v1/chat/completions", json=body).json()
        missing = httpx.post(server.url + "/v1/nothing", json={})
    assert answer["choices"][0]["message"]["content"] == "hello there"
    assert answer["usage"] == {"prompt_tokens": 4, "completion_tokens": 3, "total_tokens": 7}
    assert server.requests[0].system == "Be brief." and server.requests[0].messages == (("user", "Hi"),)
    assert missing.status_code == 404 and "error" in missing.json()


def test_the_url_needs_a_running_server():
    server = FakeLLMServer()
    with pytest.raises(RuntimeError, match="start"):
        _ = server.url


def test_an_unknown_fault_kind_lists_the_valid_ones():
    with pytest.raises(ValueError, match="rate_limit") as raised:
        Fault("nonsense")
    assert all(kind in str(raised.value) for kind in FAULT_KINDS)
