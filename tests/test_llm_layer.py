"""The LLM layer without a network: prices, ledger and budget, record and replay, concurrency, sessions."""

import asyncio
import json
import threading

import pytest

from coordkit.llm import (
    BudgetExceeded,
    LLMClient,
    LLMError,
    LLMReply,
    LLMRequest,
    MeteredClient,
    PriceTable,
    RecordingClient,
    ReplayClient,
    ReplayMiss,
    ScriptedClient,
    aio,
)
from coordkit.llm.anthropic_client import accepts_temperature
from coordkit.llm.base import UnpricedModel
from coordkit.llm.recording import fingerprint
from coordkit.llm.session import open_llm

ASK = LLMRequest.user("You order beer.", "How many cases?", purpose="test.ask")


class Priced(LLMClient):
    """A billable client with a known price, answering with fixed usage."""

    default_model = "claude-haiku-4-5"

    def __init__(self, input_tokens=1000, output_tokens=100):
        self.usage = (input_tokens, output_tokens)
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        return LLMReply("DECISION: 4", self.default_model, *self.usage)


def test_prices_match_dated_model_ids_and_accept_overrides():
    table = PriceTable({"my-local-model": (0, 0)})
    assert table.get("claude-haiku-4-5-20251001") == table.get("claude-haiku-4-5")
    assert table.cost("claude-haiku-4-5", 1_000_000, 1_000_000) == pytest.approx(6.0)
    assert table.cost("my-local-model", 10, 10) == 0
    assert table.get("gpt-unknown") is None
    for bad in (-1, float("nan"), float("inf"), "abc", None):
        with pytest.raises(ValueError, match=r"the price override of 'x': .* is not a price"):
            PriceTable({"x": (bad, 0)})


def test_a_corrupt_price_file_is_refused_naming_its_line_and_column(tmp_path):
    prices = tmp_path / "prices.csv"
    prices.write_text("model,input_usd_per_mtok,output_usd_per_mtok,source\nok,1,5,s\nbad,1,abc,s\n")
    with pytest.raises(ValueError, match=r"prices.csv, line 3, output_usd_per_mtok: 'abc' is not a price"):
        PriceTable(path=prices)


@pytest.mark.parametrize("budget", [float("nan"), float("inf"), -0.01, "1.00", True])
def test_a_budget_that_is_not_a_finite_amount_is_refused_before_any_call(budget):
    inner = Priced()
    with pytest.raises(ValueError, match=r"budget_usd=.* is not a budget: give a finite number of dollars"):
        MeteredClient(inner, budget_usd=budget)
    assert inner.calls == 0


def test_a_zero_budget_refuses_every_priced_call():
    inner = Priced()
    client = MeteredClient(inner, budget_usd=0)
    with pytest.raises(BudgetExceeded):
        client.complete(ASK)
    assert inner.calls == 0 and client.ledger.spent_usd == 0


def test_the_ledger_counts_calls_tokens_and_dollars_per_model():
    client = MeteredClient(Priced())
    for _ in range(3):
        client.complete(ASK)
    row = client.ledger.summary().iloc[0]
    assert (row["model"], row["calls"], row["input_tokens"], row["output_tokens"]) == ("claude-haiku-4-5", 3, 3000, 300)
    assert row["usd"] == pytest.approx(3 * (1000 * 1 + 100 * 5) / 1e6)
    assert "claude-haiku-4-5" in str(client.ledger)


def test_failed_calls_are_counted_and_raised():
    client = MeteredClient(ScriptedClient([LLMError("down")], model="scripted"))
    with pytest.raises(LLMError):
        client.complete(ASK)
    assert client.ledger.summary().iloc[0]["failed"] == 1


def test_the_budget_refuses_the_call_that_could_exceed_it_and_is_never_exceeded():
    inner = Priced()
    client = MeteredClient(inner, budget_usd=0.01)
    with pytest.raises(BudgetExceeded, match="Raise the budget"):
        for _ in range(100):
            client.complete(ASK)
    assert client.ledger.spent_usd <= 0.01
    assert client.ledger.spent_usd + client.worst_case_usd(ASK) > 0.01  # it stopped only when it had to
    assert inner.calls == client.ledger.calls  # the refused call was never sent


def test_the_budget_holds_under_concurrency():
    inner = Priced()
    client = MeteredClient(inner, budget_usd=0.005)
    with pytest.raises(BudgetExceeded):
        aio.complete_all(client, [ASK] * 50, max_concurrency=16)
    assert client.ledger.spent_usd <= 0.005


@pytest.mark.parametrize("budget", [1.0, None])
def test_a_billable_call_needs_a_price_budget_or_not(budget):
    inner = Priced()
    inner.default_model = "mystery"
    client = MeteredClient(inner, budget_usd=budget)
    with pytest.raises(UnpricedModel, match="'mystery' has no price"):
        client.complete(ASK)
    assert client.ledger.calls == client.ledger.failed == 0  # refused before it was sent


def test_replays_and_scripts_cost_nothing_and_ignore_the_budget():
    client = MeteredClient(ScriptedClient(["a"] * 5, model="claude-haiku-4-5"), budget_usd=0.0)
    for _ in range(5):
        client.complete(ASK)
    assert client.ledger.spent_usd == 0 and client.ledger.calls == 5


def test_fingerprints_depend_on_what_decides_the_reply_only():
    base = fingerprint(ASK, "m")
    assert fingerprint(LLMRequest.user("You order beer.", "How many cases?", purpose="other"), "m") == base
    assert fingerprint(LLMRequest.user("You order beer.", "How many cases?", temperature=0.5), "m") != base
    assert fingerprint(ASK, "n") != base


def test_a_recording_replays_the_same_replies_in_order_and_its_failures(tmp_path):
    path = tmp_path / "run.jsonl"
    recorder = RecordingClient(ScriptedClient(["one", "two", LLMError("429")], model="m"), path, command="test")
    assert [recorder.complete(ASK).text for _ in range(2)] == ["one", "two"]
    with pytest.raises(LLMError):
        recorder.complete(ASK)
    replay = ReplayClient(path)
    assert replay.default_model == "m" and not replay.billable
    assert [replay.complete(ASK).text for _ in range(2)] == ["one", "two"]
    with pytest.raises(LLMError, match="recorded failure"):
        replay.complete(ASK)
    header = json.loads(path.read_text().splitlines()[0])
    assert header["command"] == "test" and header["model"] == "m"


def test_a_replay_miss_names_the_closest_prompt_and_what_differs(tmp_path):
    path = tmp_path / "run.jsonl"
    RecordingClient(ScriptedClient(["x"], model="m"), path).complete(
        LLMRequest.user("You order beer.", "ROUND 3\nInventory: 12 cases", purpose="beer.decide")
    )
    with pytest.raises(ReplayMiss) as miss:
        ReplayClient(path).complete(
            LLMRequest.user("You order beer.", "ROUND 3\nInventory: 14 cases", temperature=0.3, purpose="beer.decide")
        )
    message = str(miss.value)
    assert "beer.decide" in message and "Inventory: 12" in message and "Inventory: 14" in message
    assert "temperature" in message and "coordkit record" in message


def test_a_replay_refuses_files_that_are_not_recordings(tmp_path):
    with pytest.raises(FileNotFoundError, match="coordkit record"):
        ReplayClient(tmp_path / "missing.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(ValueError, match="not a coordkit recording"):
        ReplayClient(tmp_path / "bad.jsonl")


class Slow(LLMClient):
    """Counts how many calls are in flight at once."""

    default_model = "slow"

    def __init__(self):
        self.in_flight = self.peak = 0
        self.lock = threading.Lock()

    def complete(self, request):
        raise AssertionError("the async path must be used")

    async def complete_async(self, request):
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.01)
        with self.lock:
            self.in_flight -= 1
        return LLMReply(request.messages[0][1], self.default_model)


def test_concurrent_calls_keep_order_and_their_bound():
    client = Slow()
    requests = [LLMRequest.user("s", str(i)) for i in range(40)]
    replies = aio.complete_all(client, requests, max_concurrency=8)
    assert [r.text for r in replies] == [str(i) for i in range(40)]
    assert client.peak == 8
    with pytest.raises(ValueError, match="at least 1"):
        aio.complete_all(client, requests, max_concurrency=0)


def test_aio_run_works_inside_a_running_event_loop_like_a_notebook():
    async def notebook_cell():
        return aio.complete_all(Slow(), [ASK], 1)[0].text

    assert asyncio.run(notebook_cell()) == "How many cases?"


def test_only_models_before_4_7_are_sent_a_temperature():
    assert accepts_temperature("claude-3-haiku-20240307") and accepts_temperature("claude-haiku-4-5-20251001")
    assert not accepts_temperature("claude-opus-4-7") and not accepts_temperature("claude-haiku-5-5")


def test_open_llm_replays_a_recording_when_there_is_no_key(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("COORDKIT_LLM", raising=False)
    path = tmp_path / "demo.jsonl"
    RecordingClient(ScriptedClient(["4"], model="m"), path).complete(ASK)
    session = open_llm(path)
    assert session.mode == "replay" and session and "Replaying demo.jsonl" in session.notice
    assert session.client.complete(ASK).text == "4" and session.summary().iloc[0]["replayed"] == 1


def test_open_llm_skips_with_one_sentence_and_honours_the_mode_variable(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    session = open_llm(tmp_path / "none.jsonl")
    assert session.mode == "off" and not session and "skipped" in session.notice
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    monkeypatch.setenv("COORDKIT_LLM", "off")
    forced_off = open_llm(tmp_path / "none.jsonl")
    assert forced_off.mode == "off" and forced_off.notice.startswith("LLM runs are switched off: ")
    monkeypatch.setenv("COORDKIT_LLM", "replay")
    assert open_llm(tmp_path / "none.jsonl").notice.startswith("Replay mode, and there is no recording none.jsonl: ")
    monkeypatch.setenv("COORDKIT_LLM", "sometimes")
    with pytest.raises(ValueError, match="live, replay, off"):
        open_llm("x")


def test_a_session_reports_a_budget_stop_instead_of_raising(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    session = open_llm(tmp_path / "none.jsonl")

    def experiment(llm):
        raise BudgetExceeded("budget $0.10")

    assert session.run(experiment) is None
    assert "Budget reached" in capsys.readouterr().out
