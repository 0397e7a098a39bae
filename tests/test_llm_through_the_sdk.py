"""The real anthropic SDK against the local fake Messages API: retries, fallbacks, budget, concurrency, replay,
and the key that must never leak. No network, no real key."""

import json
import logging
from pathlib import Path

import pandas as pd
import pytest

from coordkit.llm import BudgetExceeded, LLMError, LLMRequest, MeteredClient, RecordingClient, ReplayClient
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.fake_server import FakeLLMServer, Fault
from coordkit.llm.session import open_llm
from coordkit.rep.beer_game import stand_in
from coordkit.rep.beer_game.model import BeerGame

KEY = "sk-ant-test-DO-NOT-LEAK-0123456789abcdef"
ASK = LLMRequest.user("You order beer.", "How many cases?")


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("COORDKIT_MODEL", raising=False)


def play(protocol, seed, **params):
    return BeerGame(protocol=protocol, rng=seed, **params).run()


def beer_reply(request) -> str:
    """The stand-in's answer to whatever Beer Game prompt the server received."""
    return stand_in.reply(LLMRequest(request.system, request.messages))


def claude(server: FakeLLMServer, **options) -> AnthropicClient:
    return AnthropicClient(base_url=server.url, **options)


def test_a_call_sends_the_request_and_reads_text_usage_and_retries():
    with FakeLLMServer("DECISION: 7\nREASONING: more.") as server:
        reply = claude(server, model="claude-haiku-4-5").complete(ASK)
    assert reply.text == "DECISION: 7\nREASONING: more." and reply.model == "claude-haiku-4-5"
    assert reply.input_tokens > 0 and reply.output_tokens > 0 and reply.metadata["retries"] == 0
    sent = server.requests[0]
    assert sent.system == "You order beer." and sent.messages == (("user", "How many cases?"),)
    assert sent.temperature == 0.1 and sent.max_tokens == 300  # Haiku 4.5 still takes a temperature


def test_the_default_model_is_a_current_haiku_which_is_sent_no_temperature(monkeypatch):
    with FakeLLMServer() as server:
        claude(server).complete(ASK)
        monkeypatch.setenv("COORDKIT_MODEL", "claude-opus-4-1")  # one the SDK does not deprecate
        claude(server).complete(ASK)
    assert server.requests[0].model == "claude-haiku-5-5" and server.requests[0].temperature is None
    assert server.requests[1].model == "claude-opus-4-1"


def test_no_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(LLMError, match="ANTHROPIC_API_KEY is not set"):
        AnthropicClient()


@pytest.mark.parametrize("kind", ["rate_limit", "server_error", "overloaded"])
def test_transient_errors_are_retried_by_the_sdk(kind):
    faults = [Fault(kind, retry_after_ms=5)] * 2
    with FakeLLMServer(faults=faults) as server:
        reply = claude(server, max_retries=3).complete(ASK)
    assert reply.metadata["retries"] == 2 and [r.attempt for r in server.requests] == [0, 1, 2]


def test_errors_that_outlast_the_retries_become_llm_errors():
    with FakeLLMServer(faults=lambda i, r: Fault("rate_limit", retry_after_ms=1)) as server:
        with pytest.raises(LLMError, match="429"):
            claude(server, max_retries=2).complete(ASK)
    assert len(server.requests) == 3


def test_a_hanging_server_times_out_into_an_llm_error():
    with FakeLLMServer(faults=[Fault("timeout", hang_s=2)] * 3) as server:
        with pytest.raises(LLMError, match="did not answer within"):
            claude(server, max_retries=0, timeout_s=0.2).complete(ASK)


@pytest.mark.parametrize("kind", ["malformed", "empty"])
def test_bad_bodies_fall_back_in_a_game_and_are_counted(kind):
    with FakeLLMServer(beer_reply, faults=lambda i, r: Fault(kind) if i % 3 == 0 else None) as server:
        game = play("a2a", seed=1, rounds=6, llm=claude(server, max_retries=0))
    assert game.llm_calls == 24 and 0 < game.llm_fallbacks < 24
    reason = "call failed (" if kind == "malformed" else "unparseable reply"
    assert all(r.startswith(reason) for r in game.fallback_reasons)


def test_a_game_through_the_sdk_survives_every_kind_of_fault():
    kinds = ["rate_limit", "server_error", "malformed", "empty", None, None]
    with FakeLLMServer(
        beer_reply, faults=lambda i, r: Fault(kinds[i % 6], retry_after_ms=1) if kinds[i % 6] else None
    ) as server:
        game = play("rep_textual", seed=2, rounds=8, llm=claude(server, max_retries=0))
    assert len(game.frame().query("round > 0")) == 8 * 4
    assert game.llm_fallbacks > 0 and game.llm_calls == len(server.requests)


def test_a_round_of_calls_runs_concurrently_within_its_bound():
    with FakeLLMServer(beer_reply, latency_s=0.05) as server:
        play("a2a", seed=0, rounds=3, step_round=2, stages=8, llm=claude(server), max_concurrency=3)
    assert server.peak_in_flight == 3
    with FakeLLMServer(beer_reply, latency_s=0.05) as server:
        play("a2a", seed=0, rounds=3, step_round=2, stages=8, llm=claude(server), max_concurrency=16)
    assert server.peak_in_flight == 8  # a whole round at once


def test_the_budget_stops_a_game_before_it_is_exceeded():
    with FakeLLMServer(beer_reply) as server:
        client = MeteredClient(claude(server, model="claude-haiku-4-5"), budget_usd=0.05)
        game = BeerGame(protocol="rep_textual", rng=0, llm=client)
        with pytest.raises(BudgetExceeded, match="budget"):
            game.run()
    assert client.ledger.spent_usd <= 0.05
    played = game.frame()["round"].max()
    assert 0 < played < 20 and client.ledger.calls == len(server.requests)


def test_a_replayed_game_reproduces_the_recorded_results_exactly(tmp_path):
    path = tmp_path / "game.jsonl"

    def faults(i, request):  # recorded failures replay too
        return Fault("malformed") if i % 7 == 0 else None

    with FakeLLMServer(beer_reply, faults=faults) as server:
        recorded = play("rep_textual", seed=4, llm=RecordingClient(claude(server, max_retries=0), path))
    replay = MeteredClient(ReplayClient(path))
    replayed = play("rep_textual", seed=4, llm=replay)
    pd.testing.assert_frame_equal(recorded.frame(), replayed.frame())
    assert (replayed.llm_calls, replayed.llm_fallbacks) == (recorded.llm_calls, recorded.llm_fallbacks) != (0, 0)
    assert replay.ledger.spent_usd == 0


def test_the_key_never_reaches_a_recording_a_log_or_an_error(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    path = tmp_path / "run.jsonl"
    with FakeLLMServer(beer_reply, faults=[Fault("server_error"), Fault("malformed")]) as server:
        client = RecordingClient(claude(server, max_retries=0), path)
        game = play("a2a", seed=0, rounds=2, step_round=1, llm=client)
        failures = [str(e) for e in game.chain[0].client.agent.policy.last_failure.values()]
    sent = server.requests[0].headers
    assert KEY in (sent.get("x-api-key", ""), sent.get("authorization", "").removeprefix("Bearer "))  # SDK 2.12: Bearer
    assert KEY not in path.read_text() and KEY not in caplog.text and KEY not in repr(client.inner)
    assert not any(KEY in text for text in failures)


def test_notebooks_store_no_key():
    for notebook in Path(__file__).parent.parent.joinpath("notebooks").glob("*.ipynb"):
        text = notebook.read_text()
        assert "sk-ant-" not in text, notebook.name
        outputs = [o for c in json.loads(text)["cells"] for o in c.get("outputs", [])]
        assert "ANTHROPIC_API_KEY=" not in json.dumps(outputs), notebook.name


def test_open_llm_goes_live_with_a_key_records_and_keeps_the_ledger(tmp_path, monkeypatch):
    monkeypatch.delenv("COORDKIT_LLM", raising=False)
    with FakeLLMServer(beer_reply) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # the SDK's own variable: here, the fake server
        session = open_llm(
            "rep-beer-fig1", budget_usd=0.50, model="claude-haiku-4-5", record_to=tmp_path / "live.jsonl"
        )
        game = session.run(lambda llm: BeerGame(protocol="a2a", rounds=5, llm=llm, rng=0).run())
    assert session.mode == "live" and "budget $0.50" in session.notice
    assert game.llm_calls == 20 and session.summary().iloc[0]["calls"] == 20
    assert 0 < session.ledger.spent_usd <= 0.50
    assert len(ReplayClient(tmp_path / "live.jsonl").calls) == 20
