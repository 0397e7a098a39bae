"""Movie scheduling (REP §7): preferences, messages, the median consensus, the fast path, determinism, errors,
LLM agents and their profile, and REP against A2A."""

import json
import math
import os
import statistics
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import vl_convert
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit import stats
from coordkit.live_chart import spec_of
from coordkit.llm import LLMRequest, ScriptedClient
from coordkit.llm.anthropic_client import AnthropicClient
from coordkit.llm.fake_server import FakeLLMServer
from coordkit.llm.parsing import ReplyParseError
from coordkit.parameters import ParameterError
from coordkit.rep.movies import charts, fast, panels, preferences, profiling, stand_in
from coordkit.rep.movies.experiments import REGIMES
from coordkit.rep.movies.llm_policies import parse_decision, parse_synthesis
from coordkit.rep.movies.model import PROTOCOLS, MovieScheduling, attended, outcome
from coordkit.rep.movies.policies import (
    RangeSynthesis,
    REPParticipation,
    Satisficer,
    Situation,
    read_ranges,
    reasoning,
)
from coordkit.rep.movies.preferences import Taste
from coordkit.rep.protocol import MedianConsensus, SynthesisRequest
from coordkit.seeds import derive_seeds

TASTE = Taste(price=12.0, time=20.0, weight=0.7, price_scale=5.0, time_scale=2.0)


def play(protocol: str = "rep_numerical", seed: int = 0, **params) -> MovieScheduling:
    return MovieScheduling(protocol=protocol, rng=seed, **params).run()


# --- preferences and messages -------------------------------------------------------------------------------------


def test_utility_slopes_and_proposal_match_a_hand_computation():
    # 1 − 0.7·(3/5)² − 0.3·(1/2)² = 1 − 0.252 − 0.075
    assert preferences.utility(TASTE, 15.0, 21.0) == pytest.approx(0.673)
    assert preferences.utility(TASTE, 12.0, 20.0) == 1.0
    assert preferences.price_slope(TASTE, 15.0) == pytest.approx(-2 * 0.7 * 3 / 25)
    assert preferences.time_slope(TASTE, 21.0) == pytest.approx(-2 * 0.3 * 1 / 4)
    assert preferences.proposal(TASTE, 15.0, 21.0) == pytest.approx((15 - 0.7 * 3, 21 - 0.3 * 1))  # θ + w·(ideal − θ)
    assert preferences.joins(TASTE, 15.0, 21.0) and not preferences.joins(TASTE, 18.5, 20.0)


@settings(max_examples=100, deadline=None)
@given(
    price=st.floats(4, 30),
    time=st.floats(17, 23),
    weight=st.floats(0.2, 0.8),
    price_scale=st.floats(1, 50),
    time_scale=st.floats(0.5, 6),
)
def test_the_stated_ranges_are_inside_the_participation_region(price, time, weight, price_scale, time_scale):
    taste = Taste(price, time, weight, price_scale, time_scale)
    text = REPParticipation("textual").sensitivity(Situation(0, 1, taste, 20.0, 20.0)).text
    (price_low, price_high, time_low, time_high) = read_ranges([text])[0]
    assert price_low <= price_high and time_low <= time_high
    for corner_price in (price_low, price_high):
        for corner_time in (time_low, time_high):
            assert preferences.utility(taste, corner_price, corner_time) >= -1e-9


def test_rep_and_a2a_messages_say_what_the_paper_says():
    # U(18, 20:30) = 1 − 0.7·(6/5)² − 0.3·(0.5/2)² < 0; the sure box is 12 ± 5/√1.4 and 20 ± 2/√0.6, rounded inward
    situation = Situation(agent=0, round=1, taste=TASTE, price=18.0, time=20.5)
    joins, sensitivity = REPParticipation("textual").decide(situation)
    assert not joins
    assert sensitivity.text == (
        "Price matters more than timing — strongly budget constrained. I'd join at $8–$16, starting "
        "17:30–22:30; now the price is $2 too high and the time suits me."
    )
    assert sensitivity.values["propose:price"] == pytest.approx(18 - 0.7 * 6)
    numbers = REPParticipation("numerical").decide(situation)[1].text
    assert numbers == "∂U/∂price = -0.336, ∂U/∂time = -0.075"
    assert Satisficer().decide(situation) == (False, "Too expensive for me at $18; I'd rather go earlier.")
    late = Situation(agent=0, round=1, taste=TASTE, price=16.0, time=22.9)  # 0.7·0.8² < 0.3·1.45²: time hurts most
    assert reasoning(late, joins=False) == "Too late for me at 22:54; I'd rather pay less."


def test_the_range_synthesiser_proposes_the_nearest_point_inside_the_most_ranges():
    texts = [
        "I'd join at $8–$14, starting 19:00–21:00; now the price is $4 too high and the time suits me.",
        "I'd join at $10–$16, starting 20:00–22:00; now the price is $2 too high and the time suits me.",
        "I'd join at $25–$30, starting 17:00–18:00; now the price is $7 too low and the start is 2 min too late.",
    ]
    request = SynthesisRequest({"price": 18.0, "time": 20.5}, texts[0], tuple(enumerate(texts[1:])))
    assert RangeSynthesis().decide(request) == {"price": 14.0, "time": 20.5}  # inside the first two
    alone = SynthesisRequest({"price": 18.0, "time": 20.5}, "no ranges here", ())
    assert RangeSynthesis().decide(alone) == {"price": 18.0, "time": 20.5}


# --- the median consensus -----------------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    others=st.lists(st.floats(-100, 100), min_size=2, max_size=30),
    outlier=st.one_of(st.floats(-1e12, 1e12), st.sampled_from([-1e12, 1e12])),
)
def test_one_outlier_cannot_move_the_median_past_the_others_middle(others, outlier):
    """Adding one value, however extreme, keeps the median between the others' middle order statistics."""
    thetas = {k: {"price": value, "time": -value} for k, value in enumerate([*others, outlier])}
    agreed = MedianConsensus().apply(thetas)
    ordered, m = sorted(others), len(others)
    low, high = ordered[max(0, (m - 3) // 2)], ordered[(m + 1) // 2 if m % 2 else m // 2]
    assert len({json.dumps(theta) for theta in agreed.values()}) == 1  # everyone adopts the same θ
    assert low <= agreed[0]["price"] <= high
    assert -high <= agreed[0]["time"] <= -low  # coordinate-wise: each variable on its own


@pytest.mark.parametrize("reading", ["table2", "section7"])
def test_the_group_votes_on_the_median_which_only_the_table2_reading_makes_everyones(reading):
    model = play(rounds=3, reading=reading)
    agents = model.agents_frame()
    for round_number, group in model.frame().set_index("round").iloc[1:].iterrows():
        local = agents[agents["round"] == round_number]
        assert group["price"] == statistics.median(local["price"])
        assert group["time"] == statistics.median(local["time"])
        assert (group["spread"] == 0) == (reading == "table2")
    own = {(goer.proposal["price"], goer.proposal["time"]) for goer in model.goers}
    assert len(own) == 1 if reading == "table2" else len(own) > 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_without_consensus_the_group_votes_on_the_organisers_proposal(protocol):
    model = play(protocol, consensus=None, rounds=3)
    organiser = model.agents_frame().query(f"agent == {model.organiser} and round == 3").iloc[0]
    final = model.frame().iloc[-1]
    assert (final["price"], final["time"]) == (organiser["price"], organiser["time"])
    assert len({(goer.proposal["price"], goer.proposal["time"]) for goer in model.goers}) > 1


def thresholds_of(model: MovieScheduling) -> np.ndarray:
    return np.array([[goer.proposal["price"], goer.proposal["time"]] for goer in model.goers])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_under_the_thresholds_reading_agents_start_at_their_ideals_and_never_leave_their_own_ellipse(protocol):
    model = MovieScheduling(protocol=protocol, reading="thresholds", sparsity=0.6, rounds=8, rng=4)
    taste = model.preferences
    assert np.array_equal(thresholds_of(model), np.column_stack([taste.price, taste.time]))
    opening = (model.group_price, model.group_time)  # round 0: the venue's offer, voted on against the ideals
    assert [goer.votes for goer in model.goers] == list(preferences.joins(taste, *opening))
    for _ in range(8):
        model.step()
        theta = thresholds_of(model)
        assert (preferences.utility(taste, theta[:, 0], theta[:, 1]) >= -1e-12).all()
        accepting = preferences.centred(taste, theta[:, 0], theta[:, 1])  # votes against the thresholds
        assert [goer.votes for goer in model.goers] == list(
            preferences.joins(accepting, model.group_price, model.group_time)
        )


def test_under_the_thresholds_reading_the_group_proposal_is_the_median_of_the_local_votes():
    model = MovieScheduling(reading="thresholds", rounds=3, rng=2)
    before = (model.group_price, model.group_time)
    model.step()
    theta = thresholds_of(model)
    votes = preferences.pulled_in(preferences.centred(model.preferences, theta[:, 0], theta[:, 1]), *before)
    assert (model.group_price, model.group_time) == (statistics.median(votes[0]), statistics.median(votes[1]))
    inside = preferences.joins(preferences.centred(model.preferences, theta[:, 0], theta[:, 1]), *before)
    assert np.array_equal(votes[0][inside], np.full(inside.sum(), before[0]))  # who accepts votes the proposal


def test_rep_draws_thresholds_towards_the_neighbours_and_a2a_a_declining_agent_towards_the_proposal():
    rep = MovieScheduling(reading="thresholds", network="complete", sparsity=0.0, step_size=1.0, rng=5)
    n, mean = rep.population, thresholds_of(rep).mean(axis=0)
    rep.step()  # with η = 1 and everyone a neighbour, each agent aims at the population's mean ideal
    aimed = preferences.pulled_in(rep.preferences, np.full(n, mean[0]), np.full(n, mean[1]))  # within its ellipse
    np.testing.assert_allclose(thresholds_of(rep), np.column_stack(aimed), atol=1e-9)

    a2a = MovieScheduling(protocol="a2a", reading="thresholds", attention=100, network="complete", sparsity=0.0, rng=5)
    offer, start = np.array([a2a.group_price, a2a.group_time]), thresholds_of(a2a)
    accepts = preferences.joins(a2a.preferences, *offer)
    a2a.step()  # every agent reads every neighbour: one that declines steps η = 0.5 towards the proposal
    stepped = np.where(accepts[:, None], start, start + 0.5 * (offer - start))
    kept = np.column_stack(preferences.pulled_in(a2a.preferences, stepped[:, 0], stepped[:, 1]))
    assert accepts.any() and not accepts.all()
    np.testing.assert_allclose(thresholds_of(a2a), kept, atol=1e-9)


def test_a2a_under_the_section7_reading_reads_at_most_its_attention():
    model = MovieScheduling(protocol="a2a", attention=2, network="complete", sparsity=0.0, rng=3)
    model.step()
    read = attended(np.random.default_rng(9), model.adjacency, 2)
    assert all(len(goer.read(read)) == 2 for goer in model.goers)  # 19 messages each, 2 weighed
    everything = attended(np.random.default_rng(9), model.adjacency, 19)
    votes = model.goers[0].read(everything)  # what the others held when they voted: the opening offer
    assert [vote.price for vote in votes] == [model.frame()["price"].iloc[0]] * 19


# --- the model ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_frames_and_the_summary(protocol):
    model = play(protocol, seed=3, rounds=6)
    frame = model.frame()
    assert list(frame.columns) == ["round", "price", "time", "consensus", "participants", "converged", "spread"]
    assert frame["round"].tolist() == list(range(7))
    assert (frame["consensus"] == frame["participants"] / 20).all()
    assert frame["converged"].is_monotonic_increasing and not frame["converged"].iloc[0]
    agents = model.agents_frame()
    assert list(agents.columns) == ["round", "agent", "price", "time", "joins", "votes", "message"]
    assert len(agents) == 7 * 20 and (agents.loc[agents["round"] > 0, "message"].str.len() > 0).all()
    marker = {"a2a": "for me", "rep_numerical": "∂U/∂price", "rep_textual": "I'd join at"}[protocol]
    assert agents.loc[agents["round"] > 0, "message"].str.contains(marker).all()
    summary = model.summary()
    assert summary["final_consensus"] == frame["consensus"].iloc[-1]
    assert summary["edges"] == 42 and summary["density"] == pytest.approx(42 / 190)  # 30% of a degree-6 ring's 60


def test_the_convergence_round_is_the_first_round_at_the_threshold():
    model = play("rep_numerical", seed=1)
    consensus = model.frame()["consensus"]
    summary = model.summary()
    first = next(r for r, c in enumerate(consensus) if c >= 0.7 and r > 0)  # counted from round 1
    assert summary["convergence_round"] == first and summary["converged"]
    assert summary["opening_converged"] == (consensus.iloc[0] >= 0.7)
    opened_at_once = play("rep_numerical", seed=1, convergence_threshold=consensus.iloc[0]).summary()
    assert opened_at_once["opening_converged"] and opened_at_once["convergence_round"] >= 1
    never = play("rep_numerical", seed=1, convergence_threshold=1.0).summary()
    assert math.isnan(never["convergence_round"]) and not never["converged"]


def test_a_run_can_stop_at_its_convergence_round():
    model = play("rep_numerical", seed=22, stop_at_convergence=True)
    frame = model.frame()
    converged_at = play("rep_numerical", seed=22).summary()["convergence_round"]
    assert frame["round"].iloc[-1] == converged_at >= 2
    assert frame["converged"].iloc[-1] and not frame["converged"].iloc[-2]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_same_parameters_and_seed_give_the_same_run(protocol):
    first, second = (play(protocol, seed=7, sparsity=0.6) for _ in range(2))
    pd.testing.assert_frame_equal(first.frame(), second.frame())
    pd.testing.assert_frame_equal(first.agents_frame(), second.agents_frame())
    assert not play(protocol, seed=8, sparsity=0.6).frame().equals(first.frame())


def test_moving_the_sparsity_at_one_seed_keeps_the_people_the_organiser_and_the_offer():
    """Issue 43's example, notebook 02's seed 7: sparsity 0.3 → 0.6 once changed the organiser and the venue's
    offer too. With common random numbers only the network moves, and it loses edges without gaining any."""
    denser, sparser = (MovieScheduling(sparsity=sparsity, rng=7) for sparsity in (0.3, 0.6))
    assert sparser.organiser == denser.organiser
    pd.testing.assert_frame_equal(sparser.frame().iloc[:1], denser.frame().iloc[:1])  # the offer, who would join
    for field in ("price", "time", "weight"):
        np.testing.assert_array_equal(getattr(sparser.preferences, field), getattr(denser.preferences, field))
    assert set(map(tuple, sparser.edges.tolist())) < set(map(tuple, denser.edges.tolist()))


def test_more_agents_keep_the_first_agents_tastes():
    few, more = (MovieScheduling(population=n, rng=7).preferences for n in (20, 50))
    for field in ("price", "time", "weight"):
        np.testing.assert_array_equal(getattr(more, field)[:20], getattr(few, field))


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"population": 1}, "population=1 is out of range: population takes an integer from 2 to 1000"),
        ({"sparsity": 0.95}, r"sparsity takes a number in \[0, 0.9\]"),
        (
            {"population": 4, "sparsity": 0.6},
            "sparsity=0.6 removes 4 of the 6 edges of the small_world network among population=4 agents, "
            "leaving fewer than the 3 that connect them: lower sparsity or raise degree",
        ),
        (
            {"network": "complete", "population": 4, "sparsity": 0.6},
            "removes 4 of the 6 edges of the complete network .* lower sparsity or raise population",
        ),
        ({"degree": 4, "sparsity": 0.6}, "removes 24 of the 40 edges of the small_world network"),
        ({"degree": 3}, "degree=3 is odd"),
        ({"reading": "paper"}, "reading takes one of 'section7', 'table2'"),
        ({"attention": 0}, "attention=0 is out of range"),
        ({"protocol": "rep_numeric"}, "did you mean 'rep_numerical'"),
        ({"step_size": 0.0}, "step_size=0.0 is out of range"),
        ({"convergence_threshold": math.nan}, "convergence_threshold=nan is not a finite number"),
        ({"rounds": 20.0}, "rounds=20.0 is not an integer; pass 20"),
        ({"consensus": "mean"}, "'median_coordinate'"),
        ({"agents": 20}, "MovieScheduling has no parameter 'agents'"),
    ],
)
def test_bad_parameters_raise_clear_errors_before_any_work(params, message):
    with pytest.raises(ParameterError, match=message):
        MovieScheduling(**params)


# --- the fast path ------------------------------------------------------------------------------------------------


FAST_CASES = [
    {"sparsity": 0.0},
    {"sparsity": 0.6},
    {"network": "complete", "sparsity": 0.3},
    {"consensus": None},
    {"attention": 1, "population": 40},
    {"attention": 30, "network": "complete"},
    {"reading": "table2"},
    {"reading": "table2", "consensus": None},
    {"reading": "table2", "network": "complete", "opening": "organiser"},
    {"reading": "thresholds"},
    {"reading": "thresholds", "sparsity": 0.6, "attention": 1},
    {"reading": "thresholds", "network": "complete", "consensus": None},
    {"reading": "thresholds", "population": 77, "step_size": 1.0, "price_sd": 8.0},
    {"population": 77, "sparsity": 0.45, "step_size": 1.0, "degree": 8},
    {"stop_at_convergence": True, "price_mean": 25.0},
]


@pytest.mark.parametrize("params", FAST_CASES, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()))
@pytest.mark.parametrize("protocol", fast.PROTOCOLS)
def test_the_fast_path_plays_exactly_the_mesa_models_rounds(protocol, params):
    for seed in derive_seeds(11, 5):
        mesa = play(protocol, seed=seed, **params).frame()
        vectorised = fast.simulate(seed, protocol=protocol, **params)
        assert list(vectorised.columns) == list(mesa.columns) and len(vectorised) == len(mesa)
        pd.testing.assert_series_equal(vectorised["participants"], mesa["participants"])
        pd.testing.assert_series_equal(vectorised["converged"], mesa["converged"])
        measures = ["price", "time", "consensus", "spread"]
        np.testing.assert_allclose(vectorised[measures], mesa[measures], 0, 1e-9)


def test_the_fast_path_checks_its_values_and_reaches_ten_thousand_agents():
    with pytest.raises(ParameterError, match="protocol takes one of 'a2a', 'rep_numerical'"):
        fast.simulate(0, protocol="rep_textual")
    with pytest.raises(ParameterError, match="fast.simulate has no parameter 'llm'"):
        fast.simulate(0, llm=ScriptedClient(["DECISION: JOIN"]))
    with pytest.raises(ParameterError, match="population=10001 is out of range"):
        fast.simulate(0, population=10_001)
    with pytest.raises(ParameterError, match="sparsity=nan"):
        fast.simulate(0, sparsity=math.nan)
    rounds = fast.simulate(0, population=10_000, rounds=3)
    assert len(rounds) == 4 and rounds["participants"].iloc[-1] > 5000


# --- REP against A2A ----------------------------------------------------------------------------------------------


def outcomes(reading: str = "section7", seeds: int = 20, **params) -> pd.DataFrame:
    """Each regime's run outcomes and final spread over ``seeds`` seeds (the fast path: the Mesa model's rounds)."""
    rows = []
    for regime, network in REGIMES.items():
        for seed in derive_seeds(0, seeds):
            rounds = fast.simulate(seed, reading=reading, **network, **params)
            rows.append({"regime": regime, "spread": rounds["spread"].iloc[-1], **outcome(rounds["consensus"], 0.7)})
    return pd.DataFrame(rows)


def test_section7_sparsity_spreads_the_agents_own_proposals_but_does_not_delay_the_median():
    """The issue asked for a later convergence at 60% sparse than fully connected; the rules do not give it (the
    median of the agents' local proposals moves as fast as their mean: docs/rep-readings.md, prediction 2). What
    sparsity does is keep the agents' own proposals apart, the more so the sparser the network."""
    runs = outcomes(protocol="rep_numerical").groupby("regime")
    spreads, medians = runs["spread"].mean(), runs["convergence_round"].median()
    assert spreads["complete"] < 1e-9 < spreads["sparse_30"] < spreads["sparse_60"], spreads.to_dict()
    assert abs(medians["sparse_60"] - medians["complete"]) <= 1, medians.to_dict()


def test_section7_consensus_on_and_off_differ():
    on, off = outcomes(protocol="rep_numerical"), outcomes(protocol="rep_numerical", consensus=None)
    sparse = on["regime"] != "complete"
    assert not np.allclose(on.loc[sparse, "final_consensus"], off.loc[sparse, "final_consensus"])
    # fully connected, every agent reads every other and keeps the same proposal: the organiser's is the median
    np.testing.assert_allclose(on.loc[~sparse, "final_consensus"], off.loc[~sparse, "final_consensus"])


def test_section7_a2a_ends_below_rep_in_every_regime_with_separated_intervals():
    rep, a2a = outcomes(protocol="rep_numerical"), outcomes(protocol="a2a")
    for regime in REGIMES:
        rep_ci = stats.mean_interval(rep.loc[rep["regime"] == regime, "final_consensus"])
        a2a_ci = stats.mean_interval(a2a.loc[a2a["regime"] == regime, "final_consensus"])
        print(regime, rep_ci, a2a_ci)
        assert a2a_ci.high < rep_ci.low


def test_under_the_table2_reading_sparsity_changes_nothing():
    """Every agent adopts the median each round, so the network cannot matter: the final consensus differs by no
    more than the runs' own noise between the regimes, and the median convergence round is the same."""
    runs = outcomes("table2", protocol="rep_numerical")
    means = runs.groupby("regime")["final_consensus"].mean()
    print(means.to_dict())
    assert means.max() - means.min() <= 0.02
    assert runs.groupby("regime")["convergence_round"].median().nunique() == 1


# --- LLM agents ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_llm_agents_that_talk_nonsense_fall_back_to_the_rules_counted(protocol):
    client = ScriptedClient(lambda request: "Let me think... popcorn?")
    model = play(protocol, seed=2, rounds=3, population=6, llm=client)
    calls = 3 * 6 * (2 if protocol == "rep_textual" else 1)
    assert model.llm_calls == model.llm_fallbacks == calls == len(client.requests)
    pd.testing.assert_frame_equal(model.frame(), play(protocol, seed=2, rounds=3, population=6).frame())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_stand_in_answers_every_prompt(protocol):
    client = ScriptedClient(stand_in.reply)
    model = play(protocol, seed=4, rounds=3, population=8, llm=client)
    assert model.llm_fallbacks == 0 and model.llm_calls == len(client.requests) > 0
    last = [request for request in client.requests if request.purpose.endswith("decide")][-1]
    assert "NEIGHBOR" in last.messages[-1][1] and "Agent " in last.messages[-1][1]  # they read their neighbours


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=80) | st.sampled_from(["DECISION: maybe", "DECISION: JOIN", "decision: **decline**"]))
def test_the_decision_parser_raises_only_reply_parse_errors(text):
    try:
        assert parse_decision(text) in (True, False)
    except ReplyParseError:
        pass


@pytest.mark.parametrize(
    "reply",
    [
        '{"price": 1' + "0" * 400 + ', "time": "20:00"}',
        '{"price": NaN, "time": 20}',
        '{"price": 12, "time": "25:99"}',
        '{"price": true, "time": 20}',
        '{"price": 12, "time": 16.5}',
        '{"price": "twelve", "time": 20}',
        '{"price": 12}',
        "no json at all",
    ],
)
def test_the_synthesis_parser_refuses_what_is_not_a_proposal(reply):
    with pytest.raises(ReplyParseError):
        parse_synthesis(reply, SynthesisRequest({"price": 12.0, "time": 20.0}, "", ()))
    assert parse_synthesis('{"PRICE": "$12.50", "time": "20:15"}', SynthesisRequest({}, "", ())) == {
        "price": 12.5,
        "time": 20.25,
    }


def test_llm_agents_through_the_sdk_and_the_fake_server_are_timed_outside_the_frames(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")

    def answer(request):
        return stand_in.reply(LLMRequest(request.system, request.messages))

    with FakeLLMServer(answer) as server:
        model = play("rep_textual", rounds=2, population=6, llm=AnthropicClient(base_url=server.url))
    assert model.llm_fallbacks == 0 and model.llm_calls == 2 * 6 * 2
    assert [timing.round for timing in model.round_timings] == [1, 2]
    for timing in model.round_timings:
        shares = profiling.shares(timing)
        assert sum(shares.values()) == pytest.approx(1) and all(0 <= v <= 1 for v in shares.values())
    assert "round_s" not in model.summary() and "wall" not in " ".join(model.frame().columns)


def test_the_round_profile_splits_a_round_into_inference_waiting_and_communication():
    before = os.environ.get("ANTHROPIC_API_KEY")
    profile = profiling.round_profile(agents=20, latency_s=0.05, max_concurrency=8)
    assert os.environ.get("ANTHROPIC_API_KEY") == before
    assert profile.calls == 20 and profile.round_s >= 3 * 0.05  # 20 calls, 8 at a time: 3 waves
    assert 0.05 <= profile.warm_up_s  # a round of 8 agents opened the connections first
    assert profile.inference + profile.waiting + profile.communication == pytest.approx(1)
    assert list(profile.compare_with_paper().columns) == ["metric", "paper", "kit"]


# --- charts -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"population": 400, "network": "small_world"}, {"protocol": "a2a"}])
def test_the_round_view_renders(params):
    svg = vl_convert.vegalite_to_svg(charts.round_view(play(rounds=4, **params)).to_dict())
    assert svg.startswith("<svg") and "NaN" not in svg


def test_the_fast_panel_plays_the_fast_path_with_its_controls():
    panel = panels.fast_panel(start={"population": 1_000})  # as notebook 02 calls it
    start = {"protocol": "rep_numerical", "reading": "section7", "population": 1_000, "sparsity": 0.3}
    start["consensus"] = "median_coordinate"
    assert panel.values == start
    panel.controls["population"].value = 200
    pd.testing.assert_frame_equal(panel.result, fast.simulate(0, **(start | {"population": 200})))
    final = panel.result.iloc[-1]
    title = panels.consensus_chart(panel.result).to_dict()["title"]
    assert panel.last_error is None and f"({final['participants']:,.0f} agents join)" in str(title)


# --- the state view -----------------------------------------------------------------------------------------------


def rows_with(spec: dict, column: str) -> pd.DataFrame:
    """The view's dataset that has ``column``."""
    (rows,) = [rows for rows in spec["datasets"].values() if rows and column in rows[0]]
    return pd.DataFrame(rows)


def test_the_agents_sit_on_a_ring_clockwise_from_the_top():
    x, y = charts.ring(4)
    assert x.tolist() == pytest.approx([0, 1, 0, -1]) and y.tolist() == pytest.approx([1, 0, -1, 0])


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_network_view_shows_the_round_as_it_stands(protocol):
    night = MovieScheduling(protocol=protocol, rng=7)
    seats = None
    while night.running and night.steps < 4:
        spec = spec_of(charts.movie_night_now(night))
        assert spec["title"]["text"].startswith(f"round {night.steps} of 20 · ")
        network = rows_with(spec, "x2")
        marks = charts.network_marks(night.reading).domain
        agents = network[network["what"].isin(marks[:2])]
        assert (agents["what"] == marks[0]).tolist() == [goer.votes for goer in night.goers]
        if seats is None:
            seats = agents[["x", "y"]]
        pd.testing.assert_frame_equal(agents[["x", "y"]], seats)  # the layout stays put
        halves = network[~network["what"].isin(marks[:2])]
        assert len(halves) == 2 * len(night.edges)  # every link, one half a sender
        points = rows_with(spec, "area")
        own = points[points["what"].isin(["joins", "declines"])]
        assert own["price"].tolist() == pytest.approx([goer.proposal["price"] for goer in night.goers], abs=1e-3)
        group = points[points["what"].str.startswith("the group's")]
        assert len(group) == night.steps + 1  # round 0's proposal and every round's since
        now = group.iloc[-1]
        assert now["what"] == "the group's, now" and now["price"] == pytest.approx(night.group_price, abs=1e-3)
        night.step()


def test_each_message_is_drawn_as_its_sender_said_it_or_as_unread():
    quiet = MovieScheduling(protocol="a2a", rng=1)
    senders, receivers = quiet.edges[:, 0], quiet.edges[:, 1]
    nothing_yet = charts.network_marks(quiet.reading).domain[5]
    assert set(charts.message_kinds(quiet, senders, receivers)) == {nothing_yet}  # round 0: nothing said yet
    for attention, reading in ((1, "section7"), (1000, "section7"), (1, "table2"), (1000, "thresholds")):
        night = MovieScheduling(protocol="a2a", attention=attention, reading=reading, sparsity=0, rng=1)
        night.step()
        kinds = charts.network_marks(reading).domain
        both = (
            np.concatenate([night.edges[:, 0], night.edges[:, 1]]),
            np.concatenate([night.edges[:, 1], night.edges[:, 0]]),
        )
        said = pd.DataFrame({"sender": both[0], "receiver": both[1], "kind": charts.message_kinds(night, *both)})
        read = said[said["kind"] != kinds[4]]
        joins = [night.goers[sender].joins for sender in read["sender"]]
        assert read["kind"].tolist() == [kinds[2] if joined else kinds[3] for joined in joins]
        per_receiver = read.groupby("receiver").size()
        if attention == 1 and reading == "section7":  # each agent reads one of its neighbours' messages
            assert (per_receiver == 1).all() and len(per_receiver) == night.population
        else:  # every message is read: attention beyond every degree, or A2A under Table 2's reading
            assert len(read) == len(said)


def test_under_the_thresholds_reading_a_message_says_whether_its_sender_accepts_the_groups_last_proposal():
    """ThresholdParticipation decides at the group's proposal, not at the agent's own θ_i (its thresholds)."""
    night = MovieScheduling(protocol="rep_numerical", reading="thresholds", rng=3)
    night.step()
    marks = charts.network_marks("thresholds").domain
    assert marks[2:4] == ["said: accepts last proposal", "said: declines last proposal"]
    assert not any("own proposal" in mark for mark in marks)
    legend = spec_of(charts.movie_night_now(night))
    assert "said: accepts last proposal" in json.dumps(legend)


def test_the_movie_player_plays_a_run_with_the_explore_panels_controls_greyed_out_alike():
    player, explore = panels.movies_player_panel(), panels.explore_panel()
    assert list(player.controls)[:-1] == panels.EXPLORED == list(explore.controls)[:-1]
    for panel in (player, explore):
        assert panel.controls["attention"].disabled and not panel.controls["consensus"].disabled
        panel.controls["protocol"].value = PROTOCOLS.index("a2a")  # a dropdown's value is its option's position
        assert not panel.controls["attention"].disabled and panel.controls["consensus"].disabled
    assert player.run_to_end().steps == 20 and player.last_error is None


def test_the_profilers_server_process_starts_without_mesa_or_pandas():
    """round_profile waits for its server's process to start (issue 48): what it imports is all that start costs."""
    code = "import sys, coordkit.rep.movies.stand_in_server\nprint(sorted({'mesa', 'pandas'} & set(sys.modules)))"
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "[]"


def test_the_fast_paths_median_is_numpys_to_the_bit():
    rng = np.random.default_rng(5)
    for agents in range(1, 61):
        points = rng.normal(20, 6, (agents, 2))
        assert fast.coordinate_median(points).tobytes() == np.median(points, axis=0).tobytes()
