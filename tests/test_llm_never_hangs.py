"""A hostile but realistic provider cannot hang a call, a round or `coordkit record`, nor spend past the budget
(coordkit.llm.attempts, throttle, ledger). Each behaviour goes through the real SDK (Anthropic) and the
OpenAI-compatible client, synchronously and concurrently, against the local fake server. No network."""

import asyncio
import json
import math
import time
from types import SimpleNamespace

import pytest
from test_llm_through_the_sdk import KEY, beer_reply, play

from coordkit.cli import main
from coordkit.llm import Ledger, LLMError, LLMRequest, MeteredClient, aio, throttle
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.attempts import FAILED_CALLS_TO_STOP
from coordkit.llm.base import ProviderUnavailable, UnpricedModel
from coordkit.llm.fake_server import FakeLLMServer, Fault
from coordkit.llm.openai_compat import OpenAICompatibleClient

ASK = LLMRequest.user("You order beer.", "How many cases?")
PRICED = {"llama3.2": (1.0, 5.0)}  # the OpenAI-compatible client's model, priced like a Haiku
CLIENTS = {
    "anthropic": lambda server, **options: AnthropicClient("claude-haiku-4-5", base_url=server.url, **options),
    "openai": lambda server, **options: OpenAICompatibleClient("llama3.2", server.url + "/v1", **options),
}


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.delenv("COORDKIT_MODEL", raising=False)
    monkeypatch.delenv("COORDKIT_LLM", raising=False)


@pytest.fixture(params=sorted(CLIENTS))
def make(request):
    return CLIENTS[request.param]


@pytest.fixture(params=["sync", "async"])
def ask(request):
    """One call, made synchronously or on the kit's event loop alongside nothing else."""
    if request.param == "sync":
        return lambda client, question=ASK: client.complete(question)
    return lambda client, question=ASK: aio.complete_all(client, [question])[0]


def told(client) -> list[str]:
    """Collect what the client tells the user about long waits."""
    lines: list[str] = []
    client.calls.tell = lines.append
    return lines


# --- waits: bounded and said ---


@pytest.mark.parametrize("retry_after", ["1e12", "inf", "4294967", "Wed, 01 Jan 2031 00:00:00 GMT"])
def test_a_retry_after_of_years_waits_max_wait_s_and_says_so(make, ask, retry_after):
    with FakeLLMServer(faults=[Fault("rate_limit", retry_after=retry_after)]) as server:
        client = make(server, max_wait_s=0.2)
        lines = told(client)
        reply = ask(client)
    assert reply.metadata["waited_s"] == 0.2 and reply.metadata["retries"] == 1
    assert lines == []  # 0.2 s is not a long wait: nothing said


def test_a_long_wait_is_said_once(make, monkeypatch):
    monkeypatch.setattr("coordkit.llm.attempts.LONG_WAIT_S", 0.1)
    refusals = [Fault("rate_limit", retry_after="1e12")] * 2
    with FakeLLMServer(faults=refusals) as server:
        client = make(server, max_wait_s=0.15)
        lines = told(client)
        client.complete(ASK)
        client.complete(ASK)
    assert len(lines) == 1 and "making calls wait 0.15 s (at most 0.15 s)" in lines[0] and "HTTP 429" in lines[0]


def test_a_long_wait_is_said_without_the_key_a_provider_echoes(make, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the OpenAI-compatible client sends it, so the server can echo it
    monkeypatch.setattr("coordkit.llm.attempts.LONG_WAIT_S", 0.1)
    with FakeLLMServer(faults=[Fault("rate_limit", retry_after="1e12")], echo_key=True) as server:
        client = make(server, max_wait_s=0.15)
        lines = told(client)
        client.complete(ASK)
    assert len(lines) == 1 and "HTTP 429" in lines[0]
    assert "for the request with key " in lines[0] and KEY not in lines[0]  # it was echoed, and hidden


class PausedClock:
    """The throttle's clock, moved by its pauses alone: what a call waits is then what the throttle decided, however
    late a loaded machine runs the call."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


def test_quota_headers_resetting_in_a_year_hold_calls_at_most_max_wait_s(make, monkeypatch):
    clock = PausedClock()
    monkeypatch.setattr(throttle, "time", SimpleNamespace(monotonic=clock.monotonic, time=time.time))
    monkeypatch.setattr(throttle, "sleep", clock.sleep)
    with FakeLLMServer(faults=[Fault("quota_exhausted")]) as server:
        client = make(server, max_wait_s=0.2, max_concurrency=1)
        ledger = Ledger(PRICED)
        metered = MeteredClient(client, ledger)
        first, second = aio.complete_all(metered, [ASK, ASK])
    assert (first.metadata["waited_s"], second.metadata["waited_s"]) == (0, 0.2)  # a year's reset, held at 0.2 s
    assert ledger.summary()["waited_s"].sum() == 0.2  # the ledger shows it


def test_a_body_that_drips_in_is_abandoned_at_the_attempt_deadline(make, ask):
    with FakeLLMServer(faults=lambda index, request: Fault("drip", drip_s=0.2)) as server:
        client = make(server, timeout_s=0.5, max_retries=1)
        with pytest.raises(LLMError, match=r"did not answer within 0.5 s.*gave up after 2 attempts") as failed:
            ask(client)
    # every byte of the ~300-byte body 0.2 s apart would take a minute an attempt; the deadline cut each at 0.5 s
    assert failed.value.retries == 1 and 1 <= len(server.requests) <= 2  # (a deadline may pass before it is read)


# --- refusals: a slot is always found, and a provider that refuses everything stops the run ---


def test_a_burst_of_refusals_ends_in_answers(make):
    burst = [None] * 10 + [Fault("rate_limit", retry_after="0.05")] * 31
    with FakeLLMServer(faults=burst) as server:
        client = make(server, max_retries=31)
        replies = [reply for _ in range(4) for reply in aio.complete_all(client, [ASK] * 12)]
        replies += [client.complete(ASK) for _ in range(3)]
    assert len(replies) == 51 and client.concurrency.limit >= 1 and server.stats["requests"] == 51 + 31


def test_a_provider_that_refuses_everything_stops_the_run_naming_its_last_answer(make, ask):
    refuse = lambda index, request: Fault("rate_limit", retry_after_ms=1)  # noqa: E731
    with FakeLLMServer(faults=refuse) as server:
        client = make(server, max_retries=2)
        failures = []
        for _ in range(FAILED_CALLS_TO_STOP):
            with pytest.raises(LLMError) as failed:
                ask(client)
            failures.append(failed.value)
        with pytest.raises(ProviderUnavailable, match=r"8 calls in a row failed.*The last: .*answered HTTP 429"):
            ask(client)
        asked = len(server.requests)
    assert not any(isinstance(error, ProviderUnavailable) for error in failures)
    assert asked == FAILED_CALLS_TO_STOP * 3  # the stopped call sent nothing


def test_a_round_against_a_provider_that_refuses_everything_stops_with_a_clear_error(make):
    refuse = lambda index, request: Fault("overloaded", retry_after_ms=1)  # noqa: E731
    with FakeLLMServer(faults=refuse) as server:
        client = MeteredClient(make(server, max_retries=1), Ledger(PRICED))
        with pytest.raises(ProviderUnavailable, match="answered HTTP 529"):
            play("rep_textual", seed=3, rounds=12, llm=client)
        requests = len(server.requests)
    ledger = client.ledger
    assert ledger.failed >= FAILED_CALLS_TO_STOP and ledger.calls == 0
    assert ledger.failed + ledger.summary()["retries"].sum() == requests  # the calls stopped unsent are not failures


def test_record_against_a_provider_that_refuses_requests_10_to_40_finishes(monkeypatch, tmp_path, capsys):
    """The issue's case: it was still waiting at 150 s after 16 requests."""
    burst = lambda index, request: Fault("rate_limit", retry_after="0.05") if 10 <= index <= 40 else None  # noqa: E731
    with FakeLLMServer(beer_reply, faults=burst) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        code = record(tmp_path, "--model", "claude-haiku-4-5", "--budget-usd", "5")
    out = capsys.readouterr().out
    assert code == 0 and "recorded 316 calls" in out and server.stats["requests"] > 316


def test_record_against_a_provider_that_refuses_everything_exits_with_the_reason(monkeypatch, tmp_path, capsys):
    with FakeLLMServer(beer_reply, faults=lambda index, request: Fault("rate_limit", retry_after_ms=1)) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        code = record(tmp_path, "--model", "claude-haiku-4-5")
    err = capsys.readouterr().err
    assert code == 1 and "Provider unavailable: 8 calls in a row failed" in err and "answered HTTP 429" in err


def record(tmp_path, *options: str) -> int:
    out, figures = str(tmp_path / "run.jsonl"), str(tmp_path / "figures")
    return main(["record", "rep-beer-fig1", "--seeds", "1", "--out", out, "--figures-out", figures, *options])


# --- the budget: priced by the model asked for, and never NaN or negative ---


def test_a_reply_naming_an_unpriced_model_is_priced_as_the_model_asked_for(monkeypatch, tmp_path, capsys):
    """The issue's case: 316 calls through a $0.02 budget, ledger usd NaN, exit 0."""
    bedrock = Fault("odd_model", value="us.anthropic.claude-haiku-4-5-v1:0")
    with FakeLLMServer(beer_reply, faults=lambda index, request: bedrock) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        code = record(tmp_path, "--model", "claude-haiku-4-5", "--budget-usd", "0.02")
    err = capsys.readouterr().err
    assert code == 1 and "Budget reached: stopped before a call that could exceed the budget" in err
    spent = [float(line.rsplit("$", 1)[1]) for line in err.splitlines() if line.startswith("claude-haiku-4-5 ")]
    assert len(spent) == 1 and 0 < spent[0] <= 0.02 and len(server.requests) < 316


@pytest.mark.parametrize(
    "fault",
    [
        Fault("odd_tokens", value=-5),
        Fault("odd_tokens", value=math.nan),
        Fault("odd_tokens", value=10**30),
        Fault("odd_tokens", value=1e30),
        Fault("odd_tokens", value="12"),
        Fault("odd_usage", value=[1, 2]),
        Fault("odd_usage", value="12 tokens"),
    ],
    ids=lambda fault: f"{fault.kind}={fault.value!r}",
)
def test_odd_token_counts_are_llm_errors_and_the_ledger_stays_sound(make, ask, fault):
    with FakeLLMServer(faults=[fault, None]) as server:
        client = MeteredClient(make(server), Ledger(PRICED), budget_usd=0.01)
        with pytest.raises(LLMError, match="not (a count of tokens|an object of token counts)") as odd:
            ask(client, ASK)
        ask(client, ASK)
    assert odd.value.cause == "OddUsage"
    row = client.ledger.summary().iloc[0]  # a summary that no longer crashes
    assert (row["calls"], row["failed"]) == (1, 1) and 0 < client.ledger.spent_usd <= 0.01


def test_a_reply_nested_too_deep_to_parse_is_an_llm_error(make, ask):
    with FakeLLMServer(faults=[Fault("deep_json"), None]) as server:
        client = make(server)
        with pytest.raises(LLMError, match=r"(not a message|nested too deeply): b'\[\[\[") as odd:
            ask(client)
        ask(client)  # the next call is answered
    assert odd.value.cause == "OddReply"


@pytest.mark.parametrize("status", [500, 400])  # retried, then given up; rejected at once
def test_a_failure_nested_too_deep_to_parse_is_a_failed_attempt(make, ask, status):
    with FakeLLMServer(faults=lambda index, request: Fault("deep_json", value=status, retry_after_ms=1)) as server:
        client = make(server, max_retries=1)
        with pytest.raises(LLMError, match=rf"HTTP {status}: \[\[\[") as failed:
            ask(client)
    assert failed.value.cause == f"HTTP {status}" and failed.value.retries == (1 if status == 500 else 0)
    assert client.calls.failed_in_a_row == 1  # counted as a failed call


@pytest.mark.parametrize("model", [42, ["claude"], None, "", "us.anthropic.claude-haiku-4-5-v1:0"])
def test_any_model_in_a_reply_is_read_and_the_ledger_counts_the_model_asked_for(make, ask, model):
    with FakeLLMServer(faults=[Fault("odd_model", value=model)]) as server:
        client = MeteredClient(make(server), Ledger(PRICED))
        reply = ask(client, ASK)
    asked = client.default_model
    assert reply.model == (model if isinstance(model, str) and model else asked)
    assert list(client.ledger.summary()["model"]) == [asked] and client.ledger.spent_usd > 0


def test_a_reply_claiming_more_tokens_than_the_request_can_use_is_charged_the_worst_case(make):
    greedy = Fault("odd_tokens", value=9_000_000)  # within a model's reach, far beyond this request's
    with FakeLLMServer(faults=[greedy]) as server:
        client = MeteredClient(make(server), Ledger(PRICED), budget_usd=1.0)
        with pytest.raises(LLMError, match="more than the request can use"):
            client.complete(ASK)
    worst = client.worst_case_usd(ASK)
    assert client.ledger.spent_usd == pytest.approx(worst) and client.ledger.failed == 1


@pytest.mark.parametrize(
    "unpriced",
    [
        lambda server: AnthropicClient("claude-new-9", base_url=server.url),
        lambda server: OpenAICompatibleClient("llama3.2", server.url + "/v1"),
    ],
)
def test_a_model_without_a_price_is_refused_before_any_call(unpriced):
    with FakeLLMServer() as server:
        client = MeteredClient(unpriced(server), Ledger())  # no budget: what it costs must still be known
        with pytest.raises(UnpricedModel, match=r"has no price.*\(0 0 for a local model\)"):
            client.complete(ASK)
        assert not server.requests


def test_spent_usd_is_never_nan_or_negative_whatever_the_replies_say(make):
    odd = [Fault("odd_tokens", value=v) for v in (-1, math.nan, math.inf, 10**30, True)]
    odd += [Fault("odd_model", value=v) for v in ("unpriced-model", 7)] + [None] * 3
    with FakeLLMServer(faults=odd) as server:
        client = MeteredClient(make(server), Ledger(PRICED))
        replies = aio.run(_settled(client, len(odd)))
    assert sum(isinstance(reply, LLMError) for reply in replies) == 5
    spent = client.ledger.spent_usd
    assert math.isfinite(spent) and spent > 0 and client.ledger.summary()["usd"].ge(0).all()
    json.dumps(client.ledger.summary().to_dict("records"))  # every cell a plain number or name


async def _settled(client, calls: int) -> list:
    return await asyncio.gather(*(client.complete_async(ASK) for _ in range(calls)), return_exceptions=True)
