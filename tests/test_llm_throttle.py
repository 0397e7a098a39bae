"""How many calls a client keeps in flight (coordkit.llm.throttle), through both real clients against the fake
server's limits: a fixed number is never exceeded, the adaptive limit settles below a server's limit and
recovers after a burst of refusals, quota headers hold calls back, and connections are kept across rounds."""

import asyncio
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit.llm import Ledger, LLMRequest, MeteredClient, aio, throttle
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.fake_server import FakeLLMServer, Fault
from coordkit.llm.openai_compat import OpenAICompatibleClient
from coordkit.llm.throttle import BACKOFF, INITIAL_LIMIT, PROBE_AFTER, CallRecord, Concurrency, quota_pause_s

ASK = LLMRequest.user("You order beer.", "How many cases?")
CLIENTS = {
    "anthropic": lambda server, **options: AnthropicClient(base_url=server.url, **options),
    "openai": lambda server, **options: OpenAICompatibleClient("llama3.2", server.url + "/v1", **options),
}


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")


@pytest.fixture(params=sorted(CLIENTS))
def make(request):
    return CLIENTS[request.param]


def play(client, calls: int, rounds: int = 1) -> list:
    return [aio.complete_all(client, [ASK] * calls) for _ in range(rounds)]


# --- through the clients ---


def test_a_fixed_number_is_never_exceeded_even_while_refusals_cut_and_regrow_it(make):
    refusals = [Fault("rate_limit", retry_after_ms=5) if i % 7 == 3 else None for i in range(200)]
    with FakeLLMServer(latency_s=0.02, faults=refusals) as server:
        client = make(server, max_concurrency=6)
        play(client, 60, rounds=3)
    assert server.peak_in_flight <= 6 and client.concurrency.peak == 6
    assert client.concurrency.overloads > 0  # the refusals were seen, and still 6 was never passed


def test_the_adaptive_limit_settles_below_a_server_limit(make):
    with FakeLLMServer(latency_s=0.05, max_in_flight=12) as server:
        client = make(server)
        play(client, 80, rounds=2)
        server.reset()
        play(client, 80, rounds=4)
    answered, refused = server.stats["requests"], server.stats["rate_limited"]
    assert answered == 4 * 80
    assert refused / (answered + refused) < 0.05  # settled: after the first rounds, hardly ever over the limit
    # and not by collapsing. (No upper bound on the client's own limit: on a starved machine its count of calls in
    # flight includes answers the server has sent and the client has not yet read, so probes seem to pass and the
    # limit can read 19 while no more than 12 calls reach the server at once, and refusals stay rare.)
    assert client.concurrency.limit >= 8


@pytest.mark.parametrize("kind", ["rate_limit", "overloaded"])
def test_the_limit_recovers_after_a_burst_of_refusals(make, kind):
    burst = [None] * 40 + [Fault(kind, retry_after_ms=5)] * 30
    with FakeLLMServer(latency_s=0.02, faults=burst) as server:
        client = make(server)
        play(client, 40)
        play(client, 40)  # the burst: 30 answers 529, at 40 in flight
        cut = client.concurrency.limit
        recovered_after = next((n for n in range(1, 61) if play(client, 40) and client.concurrency.limit >= 40), None)
    assert cut < 39 and client.concurrency.overloads >= 30  # cut to 28, and partly regrown by the round's end
    # 429: back at 39, then a probe of 40 passes; 529: one more a round trip. About 20 rounds of 40 calls here.
    assert recovered_after is not None  # the next round's 40 calls can all be in flight at once again


def test_quota_headers_hold_new_calls_until_the_reset(make):
    with FakeLLMServer(requests_per_s=20) as server:
        client = make(server, max_concurrency=2)
        [replies] = play(client, 60)
    # 60 requests at 20 a second: the quota runs out, and the headers hold the calls until it refills (their waits
    # show in waited_s). Only a call already on its way when the quota ran out is refused (without the headers,
    # both slots would be refused again and again until each second's refill).
    assert server.stats["requests"] == 60 and sum(reply.metadata["waited_s"] for reply in replies) > 0
    assert server.stats["rate_limited"] <= 4


def test_connections_are_kept_from_round_to_round(make):
    first_round = threading.Barrier(30, timeout=120)  # only stops a hung test

    def all_sent_before_one_is_answered(index, _request):
        if index < 30:
            first_round.wait()

    with FakeLLMServer(faults=all_sent_before_one_is_answered) as server:
        client = make(server)
        play(client, 30)
        opened = server.stats["connections"]
        play(client, 30, rounds=4)
        assert server.stats["connections"] == opened == 30


def test_the_ledger_counts_rate_limit_answers_and_the_concurrency_reached(make):
    with FakeLLMServer(latency_s=0.02, faults=[None] * 5 + [Fault("rate_limit", retry_after_ms=5)] * 3) as server:
        ledger = Ledger({"llama3.2": (0.0, 0.0)})
        play(MeteredClient(make(server), ledger), 20)
    row = ledger.summary().iloc[0]
    assert row["rate_limited"] == 3 and row["retries"] == 3 and row["calls"] == 20
    assert 2 <= row["peak_in_flight"] <= 20


def test_a_bad_fixed_number_is_refused_by_name():
    with pytest.raises(ValueError, match=r"max_concurrency=0: give a whole number .* or None to adapt"):
        Concurrency(0)
    with pytest.raises(ValueError, match=r"max_concurrency=2.5"):
        Concurrency(2.5)


# --- the control law, step by step ---


def start(limit: Concurrency, calls: int) -> list[int]:
    async def take():
        return [await limit.acquire() for _ in range(calls)]

    return asyncio.run(take())


def test_slow_start_doubles_the_limit_each_round_trip():
    limit = Concurrency()
    for ticket in start(limit, INITIAL_LIMIT):
        limit.succeeded(ticket)
    assert limit.limit == 2 * INITIAL_LIMIT


def test_one_cut_per_round_trip_then_binary_increase_to_one_below_the_level_refused():
    limit = Concurrency()
    tickets = start(limit, 40)
    limit.refused(tickets[-1])
    limit.refused(tickets[-2])  # a call started before the cut: no second cut
    assert limit.limit == pytest.approx(40 * BACKOFF) and limit.refused_at == 40
    for ticket in tickets * 5:  # the calls in flight keep succeeding (40 in flight: no probe of their own)
        limit.succeeded(ticket)
    assert limit.limit == 39


def test_a_refused_probe_returns_to_the_level_that_worked_without_a_cut():
    limit = Concurrency()
    tickets = start(limit, 40)
    limit.refused(40)
    for ticket in tickets * 5:
        limit.succeeded(ticket)
    for ticket in tickets * PROBE_AFTER:
        limit.succeeded(ticket)
    assert limit.limit == 40  # the probe
    limit.release()
    limit.release()
    *_, probe = start(limit, 2)  # 40 in flight again: the level refused before
    limit.refused(probe)
    assert limit.limit == 39 and limit.refused_at == 40


def test_a_transient_overload_cuts_without_remembering_a_level():
    limit = Concurrency()
    tickets = start(limit, 40)
    limit.overloaded(tickets[-1])
    assert limit.limit == pytest.approx(40 * BACKOFF) and limit.refused_at is None
    for ticket in tickets[:28]:
        limit.succeeded(ticket)
    assert limit.limit == pytest.approx(29, abs=0.05)  # one more after a round trip (28 successes)


def pause(**headers: str) -> float:
    return quota_pause_s(httpx.Headers({name.replace("_", "-"): value for name, value in headers.items()}))


def test_reset_headers_are_read_as_times_and_as_durations(monkeypatch):
    now = datetime.now(UTC)
    monkeypatch.setattr(throttle, "time", SimpleNamespace(time=now.timestamp, monotonic=time.monotonic))  # no clock
    soon = (now + timedelta(seconds=3)).isoformat().replace("+00:00", "Z")
    assert pause(anthropic_ratelimit_requests_remaining="0", anthropic_ratelimit_requests_reset=soon) == (
        pytest.approx(3)
    )
    assert pause(x_ratelimit_remaining_tokens="0", x_ratelimit_reset_tokens="0m2.5s") == 2.5
    assert pause(X_RateLimit_Remaining_Requests="0", x_ratelimit_reset_requests="20ms") == 0.02  # any case
    assert pause(x_ratelimit_remaining_requests="3", x_ratelimit_reset_requests="20s") == 0
    assert pause(x_ratelimit_remaining_requests="0", x_ratelimit_reset_requests="soon") == 0
    assert pause(x_ratelimit_remaining_requests="0", x_ratelimit_reset_requests="99h") == 60


# --- the invariant: the limit stays in [1, ceiling], and every call ends ---


def test_two_refusals_in_a_row_at_one_call_in_flight_leave_a_slot():
    limit = Concurrency()
    for _ in range(3):  # one call, refused again and again at the level refused before
        [ticket] = start(limit, 1)
        limit.refused(ticket)
        limit.release()
        assert limit.limit == 1
    assert start(limit, 1)  # the next call still gets its slot (it waited forever when the limit fell to 0)


OUTCOMES = ("answer", "answer with the quota used up", "refused", "overloaded", "timed out", "cancelled")


async def random_schedule(seed: int, callers: int, fixed: int | None) -> None:
    """``callers`` calls at once, each answered at random over up to 5 attempts (a refusal gives its slot up and
    queues again, as the clients do) and some cancelled while they wait; the limit is checked after every event."""
    rng = random.Random(seed)
    limit = Concurrency(fixed, max_pause_s=0.001)

    def check(started: bool = False):
        assert 1 <= limit.limit <= limit.ceiling and 0 <= limit.in_flight <= limit.ceiling
        if started:  # a call starts only below the limit (after a cut, those in flight drain to it)
            assert limit.in_flight <= int(limit.limit)

    async def call():
        record = CallRecord()
        try:
            for _ in range(5):
                await limit.hold(record)
                check(started=True)  # no await between taking the slot and this check
                await asyncio.sleep(0)  # let the others run while this attempt is out
                outcome = rng.choices(OUTCOMES, weights=(60, 1, 20, 10, 8, 1))[0]
                if outcome.startswith("answer"):
                    quota = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1ms"}
                    limit.succeeded(record.ticket, quota if outcome.endswith("up") else None)
                    return
                if outcome == "cancelled":
                    raise asyncio.CancelledError
                getattr(limit, "refused" if outcome == "refused" else "overloaded")(record.ticket)
                limit.give_up(record)
                check()
        finally:
            limit.give_up(record)
            check()

    tasks = [asyncio.ensure_future(call()) for _ in range(callers)]
    for task in rng.sample(tasks, k=callers // 10):  # some give up before their first step (a woken one: below)
        task.cancel()
    ended = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), timeout=30)  # only stops a deadlock
    for outcome in ended:  # a failed check inside a call (a cancelled call ends in CancelledError, not an Exception)
        if isinstance(outcome, Exception):
            raise outcome
    assert limit.in_flight == 0 and not limit._waiters


def test_a_wake_meant_for_a_cancelled_waiter_passes_to_the_next():
    async def schedule():
        limit = Concurrency(1)
        first = await limit.acquire()  # A holds the only slot
        b, c = asyncio.ensure_future(limit.acquire()), asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        assert len(limit._waiters) == 2  # B and C wait, in that order
        limit.release()  # A ends: B is woken ...
        b.cancel()  # ... and cancelled before it resumes
        try:
            for _ in range(10):  # a few turns of the loop, no clock
                await asyncio.sleep(0)
            assert b.cancelled() and c.done() and c.result() == first + 1  # C has the slot
            assert limit.in_flight == 1 and not limit._waiters
        finally:
            c.cancel()

    asyncio.run(schedule())


@settings(max_examples=60, derandomize=True)
@given(
    seed=st.integers(0, 2**32 - 1),
    callers=st.integers(1, 250),
    fixed=st.sampled_from([None, None, 1, 2, 7, 64]),
)
def test_the_limit_stays_between_one_and_its_ceiling_and_every_call_ends(seed, callers, fixed):
    asyncio.run(random_schedule(seed, callers, fixed))
