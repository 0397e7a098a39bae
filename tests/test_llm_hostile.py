"""Hostile conditions for the LLM layer: an API that fails a share of its requests, an upstream that echoes the key,
a recording from another run or damaged on disk, two recorders of one file. Runs complete, every failure is
counted in one place, nothing leaks. Through the real SDK against the local fake server; no network."""

import json
import logging
import re
import traceback

import pytest
from test_llm_through_the_sdk import KEY, beer_reply, claude, play

from coordkit.cli import main
from coordkit.llm import BudgetExceeded, LLMError, LLMRequest, MeteredClient, RecordingClient, ReplayClient
from coordkit.llm.base import ProviderUnavailable
from coordkit.llm.fake_server import SOME_OF_EACH, FakeLLMServer, Fault, SpreadFaults
from coordkit.llm.ledger import dollars
from coordkit.llm.recording import MISSES_BEFORE_MISMATCH, ReplayMismatch, ReplayMiss
from coordkit.llm.scripted import ScriptedClient
from coordkit.paths import DATA
from coordkit.rep.beer_game.model import BeerGame

SHIPPED = DATA / "recordings" / "rep-beer-fig1.jsonl"  # recorded for rep-beer-fig1 with the rule-based stand-in


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("COORDKIT_MODEL", raising=False)
    monkeypatch.delenv("COORDKIT_LLM", raising=False)


@pytest.mark.parametrize("percent", [10, 30, 60])
def test_a_game_completes_under_faults_and_every_one_is_counted_once(percent):
    faults = SpreadFaults(percent, retry_after_ms=1)
    with FakeLLMServer(beer_reply, faults=faults) as server:
        client = MeteredClient(claude(server, model="claude-haiku-4-5", max_retries=2))
        game = play("rep_textual", seed=3, rounds=12, llm=client)
    ledger = client.ledger
    assert game.frame()["round"].max() == 12 and set(faults.injected) == set(SOME_OF_EACH)
    assert ledger.fallbacks == game.fallback_reasons and ledger.fallback_count == game.llm_fallbacks > 0
    failed_calls = sum(n for reason, n in game.fallback_reasons.items() if reason.startswith("call failed"))
    assert failed_calls == ledger.failed
    retries = int(ledger.summary()["retries"].sum())
    assert ledger.calls + ledger.failed + retries == len(server.requests)  # every HTTP request, once
    assert len(faults.injected) == retries + ledger.failed + game.fallback_reasons["unparseable reply"]
    assert f"{game.llm_fallbacks} decisions fell back to rules (" in str(ledger)


@pytest.mark.parametrize("budget", [0.0, 0.005, 0.03])
def test_a_small_budget_is_never_exceeded_even_when_calls_fail(budget):
    faults = SpreadFaults(30, retry_after_ms=1)
    with FakeLLMServer(beer_reply, faults=faults) as server:
        client = MeteredClient(claude(server, model="claude-haiku-4-5", max_retries=2), budget_usd=budget)
        with pytest.raises(BudgetExceeded, match=re.escape(f"budget {dollars(budget)}. Raise the budget to go on.")):
            play("rep_textual", seed=3, rounds=12, llm=client)
    assert client.ledger.spent_usd <= budget
    if budget == 0:
        assert not server.requests
    if budget >= 0.03:
        assert client.ledger.calls > 0 and client.ledger.failed > 0


def test_budget_messages_show_amounts_below_a_cent():
    amounts = (0.005, 0.5, 1, 1234.5, 0.0001234)
    assert [dollars(x) for x in amounts] == ["$0.005", "$0.50", "$1.00", "$1,234.50", "$0.000123"]


# --- the key -----------------------------------------------------------------------------------------------------


def test_an_upstream_that_echoes_the_key_never_gets_it_into_an_error_a_trace_a_file_or_a_log(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    recording = tmp_path / "run.jsonl"
    faults = lambda i, r: Fault("server_error", retry_after_ms=1)  # noqa: E731 - every attempt fails
    with FakeLLMServer(beer_reply, faults=faults, echo_key=True) as server:
        raw = claude(server, max_retries=1)
        with pytest.raises(LLMError) as raised:
            raw.complete(LLMRequest.user("You order beer.", "How many cases?"))
        client = RecordingClient(raw, recording)
        game = BeerGame(protocol="a2a", rng=0, rounds=3, step_round=1, llm=client)
        with pytest.raises(ProviderUnavailable) as stopped:  # every call fails: after 8, the run stops
            game.run()
        client.close()
    error = raised.value
    assert "[ANTHROPIC_API_KEY redacted]" in str(error)  # the upstream did echo the key: a leak would show
    assert error.cause == "HTTP 500" and error.retries == 1
    assert error.__cause__ is None and error.__suppress_context__  # the SDK's error, which holds the key, is not shown
    shown = "".join(traceback.format_exception(error))
    failures = [text for policy in game._llm_policies() for text in policy.last_failure.values()]
    assert 0 < game.llm_fallbacks < game.llm_calls and failures
    for text in (str(error), shown, str(stopped.value), recording.read_text(), caplog.text, *failures):
        assert KEY not in text


def test_the_command_line_never_prints_or_writes_the_key(tmp_path, monkeypatch, capsys):
    faults = lambda i, r: Fault("server_error", retry_after_ms=1) if i % 40 < 5 else None  # noqa: E731 - 5 in a row
    with FakeLLMServer(beer_reply, faults=faults, echo_key=True) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        code = main(
            [
                "record",
                "rep-beer-fig1",
                "--seeds",
                "1",
                "--model",
                "claude-haiku-4-5",
                "--budget-usd",
                "5",
                "--out",
                str(tmp_path / "run.jsonl"),
                "--figures-out",
                str(tmp_path / "figures"),
            ]
        )
    out, err = capsys.readouterr()
    assert code == 0 and "decisions fell back to rules (call failed (HTTP 500)" in out
    written = [path.read_text() for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) == 3 and len(server.requests) > 300
    for text in (out, err, *written):
        assert KEY not in text


# --- recordings ---------------------------------------------------------------------------------------------------


def test_a_recording_for_another_figure_is_refused_before_any_work(tmp_path, capsys):
    assert main(["reproduce", "delay-fig3", "--replay", str(SHIPPED), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert (
        "was recorded for rep-beer-fig1, not delay-fig3" in err and f"reproduce rep-beer-fig1 --replay {SHIPPED}" in err
    )
    assert not any(tmp_path.iterdir())


def recorded(tmp_path, prompts, purpose="beer.decide"):
    """A recording of the stand-in answering ``prompts``, all asked for ``purpose``."""
    path = tmp_path / "recorded.jsonl"
    recorder = RecordingClient(ScriptedClient(lambda request: "DECISION: 4"), path, run="rep-beer-fig1")
    for prompt in prompts:
        recorder.complete(LLMRequest.user("You order beer.", prompt, purpose=purpose))
    recorder.close()
    return path


def test_a_request_of_a_kind_the_recording_never_saw_stops_the_replay_at_once(tmp_path):
    replay = ReplayClient(recorded(tmp_path, ["week 1", "week 2"]))
    with pytest.raises(ReplayMismatch, match="asks a 'delay.decide' request, and the recording holds 'beer.decide'"):
        replay.complete(LLMRequest.user("You are a prisoner.", "Cooperate?", purpose="delay.decide"))
    assert (replay.misses, replay.hits) == (1, 0)


def test_a_replay_that_finds_none_of_its_first_requests_stops(tmp_path):
    replay = ReplayClient(recorded(tmp_path, [f"week {n}" for n in range(20)]))
    for n in range(1, MISSES_BEFORE_MISMATCH):
        with pytest.raises(ReplayMiss):
            replay.complete(LLMRequest.user("You order beer.", f"month {n}", purpose="beer.decide"))
    with pytest.raises(ReplayMismatch, match=f"none of its first {MISSES_BEFORE_MISMATCH} requests"):
        replay.complete(LLMRequest.user("You order beer.", "month 8", purpose="beer.decide"))


def test_a_replay_that_finds_some_requests_misses_the_rest_one_by_one(tmp_path):
    replay = ReplayClient(recorded(tmp_path, ["week 1"]))
    assert replay.complete(LLMRequest.user("You order beer.", "week 1", purpose="beer.decide")).text == "DECISION: 4"
    for n in range(2 * MISSES_BEFORE_MISMATCH):
        with pytest.raises(ReplayMiss, match="differs in"):
            replay.complete(LLMRequest.user("You order beer.", f"month {n}", purpose="beer.decide"))
    assert (replay.hits, replay.misses) == (1, 2 * MISSES_BEFORE_MISMATCH)


def test_a_partial_replay_writes_its_figure_but_warns_and_exits_1(tmp_path, capsys):
    calls = SHIPPED.read_text().splitlines()
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join(calls[:-10]) + "\n")  # the last ten calls lost
    code = main(["reproduce", "rep-beer-fig1", "--seeds", "1", "--replay", str(partial), "--out", str(tmp_path / "o")])
    out, err = capsys.readouterr()
    assert code == 1 and (tmp_path / "o" / "rep-beer-fig1.csv").exists()
    misses = int(re.search(r"WARNING: (\d+) of 316 requests were not in", err)[1])
    assert misses >= 10 and "not a faithful replay" in err and "coordkit record rep-beer-fig1" in err
    assert f"{misses} decisions fell back to rules (call failed (ReplayMiss): {misses})" in out


def test_a_faithful_replay_says_no_decision_fell_back(tmp_path, capsys):
    assert main(["reproduce", "rep-beer-fig1", "--seeds", "1", "--replay", str(SHIPPED), "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "no decision fell back to rules" in out and "WARNING" not in err


CALL = json.loads(SHIPPED.read_text().splitlines()[1])


@pytest.mark.parametrize(
    ("second_line", "problem"),
    [
        ("{not json", "line 2: not JSON"),
        ("[1, 2]", "line 2: a JSON list, not a recorded call"),
        (json.dumps({**CALL, "reply": {**CALL["reply"], "text": None}}), "line 2: the reply has a NoneType for 'text'"),
        (json.dumps({k: v for k, v in CALL.items() if k != "request"}), "line 2: the request is missing"),
        (json.dumps({k: v for k, v in CALL.items() if k != "reply"}), "line 2: neither a reply nor an error"),
        (
            json.dumps({**CALL, "request": {**CALL["request"], "messages": [["user"]]}}),
            "line 2: the request's messages are not [role, text] pairs",
        ),
    ],
)
def test_a_damaged_recording_is_refused_naming_its_line(tmp_path, capsys, second_line, problem):
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text(SHIPPED.read_text().splitlines()[0] + "\n" + second_line + "\n")
    with pytest.raises(ValueError, match=re.escape(problem)):
        ReplayClient(damaged)
    assert main(["reproduce", "rep-beer-fig1", "--replay", str(damaged), "--out", str(tmp_path / "o")]) == 2
    assert f"{damaged}, {problem}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "problem"),
    [(b"", "is empty"), ('{"kind": "header", "model": "é"}'.encode("latin-1"), "is not UTF-8 text")],
)
def test_an_empty_or_latin1_file_is_not_a_recording(tmp_path, content, problem):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=re.escape(f"{path} {problem}")):
        ReplayClient(path)


def test_a_file_being_recorded_cannot_be_recorded_by_a_second_run(tmp_path):
    path = tmp_path / "run.jsonl"
    first = RecordingClient(ScriptedClient(lambda request: "DECISION: 4"), path)
    with pytest.raises(ValueError, match="is being recorded by another run"):
        RecordingClient(ScriptedClient(lambda request: "DECISION: 5"), path)
    first.complete(LLMRequest.user("s", "p"))
    first.close()
    assert len(ReplayClient(path).calls) == 1
    RecordingClient(ScriptedClient(lambda request: "DECISION: 5"), path).close()  # free again once closed


# --- prices -------------------------------------------------------------------------------------------------------


def test_an_unpriced_model_is_refused_before_any_call_and_told_about_price(tmp_path, capsys):
    with FakeLLMServer(beer_reply) as server:
        arguments = [
            "record",
            "rep-beer-fig1",
            "--seeds",
            "1",
            "--model",
            "claude-new-9",
            "--figures-out",
            str(tmp_path),
        ]
        assert main([*arguments, "--out", str(tmp_path / "run.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "'claude-new-9' has no price in data/llm_prices.csv" in err and "--price INPUT OUTPUT" in err
    assert not server.requests and not any(tmp_path.iterdir())


def test_price_lets_an_unpriced_model_record_within_its_budget(tmp_path, monkeypatch, capsys):
    with FakeLLMServer(beer_reply) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        arguments = ["record", "rep-beer-fig1", "--seeds", "1", "--model", "claude-new-9", "--price", "1", "5"]
        code = main([*arguments, "--out", str(tmp_path / "run.jsonl"), "--figures-out", str(tmp_path / "f")])
    out = capsys.readouterr().out
    assert code == 0 and "recorded 316 calls" in out and len(server.requests) == 316
    row = re.search(r"claude-new-9 +316 +0 +0 +0 +0 +\d+ +(\d+) +(\d+) +0\.0 +\$([\d.]+)", out)
    input_tokens, output_tokens, usd = int(row[1]), int(row[2]), float(row[3])
    assert usd > 0 and usd == pytest.approx((input_tokens * 1 + output_tokens * 5) / 1e6, abs=5e-5)


@pytest.mark.parametrize("price", [["nan", "5"], ["-1", "5"], ["1", "inf"]])
def test_a_price_that_is_not_a_price_is_refused(tmp_path, capsys, price):
    arguments = ["record", "rep-beer-fig1", "--model", "claude-new-9", "--price", *price]
    assert main([*arguments, "--out", str(tmp_path / "run.jsonl"), "--figures-out", str(tmp_path)]) == 2
    assert "is not a price" in capsys.readouterr().err and not any(tmp_path.iterdir())
