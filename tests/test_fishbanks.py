"""Fishbanks: the stock model's tables and balance, hand-computed seasons, the policies, the LLM calls, determinism,
errors, the metrics, and REP vs A2A over 20 seeds."""

import json
import statistics

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coordkit import stats
from coordkit.live_chart import spec_of
from coordkit.llm import ScriptedClient
from coordkit.llm.parsing import ReplyParseError
from coordkit.parameters import ParameterError
from coordkit.rep.fishbanks import charts, metrics, panels, stand_in
from coordkit.rep.fishbanks.agents import promise_kept
from coordkit.rep.fishbanks.ecology import DENSITIES, REGENERATION_TABLE, Fishery, catch_effect, density_from_effect
from coordkit.rep.fishbanks.experiments import compare_with_paper, dissect, figure2
from coordkit.rep.fishbanks.llm_policies import parse_boats, parse_synthesis
from coordkit.rep.fishbanks.model import PROTOCOLS, Fishbanks
from coordkit.rep.fishbanks.policies import (
    CONFIDENCE,
    HEALTH,
    QUOTA,
    STRESS,
    THETA_NAMES,
    CompetitiveFleet,
    FleetObservation,
    REPFleet,
    REPSituation,
    RuleSynthesis,
)
from coordkit.rep.protocol import SynthesisRequest, run_consensus
from coordkit.sweeps import sweep

THETA = {QUOTA: 30.0, HEALTH: 0.8, CONFIDENCE: 0.5, STRESS: 0.5}


def play(protocol: str = "rep_textual", seed: int = 0, **params) -> Fishbanks:
    return Fishbanks(protocol=protocol, rng=seed, **params).run()


def observation(**changes) -> FleetObservation:
    defaults = dict(
        company="A",
        profile="deep-sea industrial",
        season=2,
        seasons=8,
        companies=12,
        max_boats=10,
        fishery=Fishery(),
        risk_tolerance=0.2,
        sustainability=0.5,
        boats=4,
        catch_per_boat=24.75,
        profit_per_boat=245.0,
        density_estimate=0.75,
        industry_catch=900.0,
        neighbour_boats=(("B", 6), ("C", 5)),
    )
    return FleetObservation(**(defaults | changes))


# --- the stock model ----------------------------------------------------------------------------------------------


def test_the_tables_are_read_at_their_points_and_scaled():
    fishery = Fishery()
    assert [fishery.regeneration(d) for d in DENSITIES] == pytest.approx(list(REGENERATION_TABLE))
    assert fishery.regeneration(0.65) == pytest.approx((582 + 517) / 2)  # linear between the points
    assert Fishery(capacity=8000, regeneration_multiplier=0.5).regeneration(0.6) == pytest.approx(582)
    assert [catch_effect(d) for d in (0, 0.1, 0.5, 0.8, 1)] == pytest.approx([0, 0.30, 0.88, 1, 1])


@pytest.mark.parametrize("density", [0.0, 0.05, 0.1, 0.33, 0.6, 0.75, 0.8])
def test_the_inverse_of_the_catch_effect_finds_the_density(density):
    assert density_from_effect(catch_effect(density)) == pytest.approx(density)


def test_a_full_catch_reads_as_the_lowest_density_that_gives_it():
    assert density_from_effect(1.0) == pytest.approx(0.8)
    assert Fishery().density_from_catch(25.0) == pytest.approx(0.8)


def test_a_season_by_hand():
    # 3,000 of 4,000 fish (density 0.75): effect (0.98 + 1) / 2 = 0.99, so 48 boats want 48 x 24.75 = 1,188 fish;
    # regeneration (517 + 240) / 2 = 378.5; stock' = 3,000 - 1,188 + 378.5 = 2,190.5.
    assert Fishery().season(3000.0, 48) == pytest.approx((1188.0, 378.5, 2190.5))
    # 100 fish at density 0.025 for 100 boats: they want 100 x 25 x 0.075 = 187.5 > 100, so they take all 100
    catch, regeneration, after = Fishery().season(100.0, 100)
    assert catch == 100.0 and regeneration == pytest.approx(58 * 0.25) and after == pytest.approx(regeneration)


@settings(max_examples=40, deadline=None)
@given(
    protocol=st.sampled_from(PROTOCOLS),
    companies=st.integers(2, 15),
    initial_share=st.floats(0, 1),
    regeneration=st.sampled_from([0.0, 0.5, 1.0, 3.0, 5.0]),
    max_boats=st.integers(1, 12),
    noise=st.sampled_from([0.0, 0.05, 0.3]),
    seed=st.integers(0, 2**16),
)
def test_the_stock_balances_and_never_goes_negative(
    protocol, companies, initial_share, regeneration, max_boats, noise, seed
):
    game = Fishbanks(
        protocol=protocol,
        companies=companies,
        initial_stock=int(4000 * initial_share),
        regeneration=regeneration,
        max_boats=max_boats,
        observation_noise=noise,
        rng=seed,
    )
    while game.running:
        before = game.stock
        game.step()
        assert game.total_catch <= before
        assert game.stock == pytest.approx(before + game.regenerated - game.total_catch, abs=1e-9)
        assert 0 <= game.stock <= game.capacity
        assert sum(c.catch for c in game.industry) == pytest.approx(game.total_catch)
        assert all(1 <= c.boats <= max_boats and 0 <= c.density_estimate <= 1 for c in game.industry)


def test_catch_is_shared_in_proportion_to_boats():
    game = Fishbanks(protocol="a2a", rng=1)
    game.step()
    fleet = sum(c.boats for c in game.industry)
    for company in game.industry:
        assert company.catch == pytest.approx(game.total_catch * company.boats / fleet)
        assert company.profit == pytest.approx(company.catch * 20 - company.boats * 250)


# --- determinism and errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_same_parameters_and_seed_give_the_same_game(protocol):
    first, second = (play(protocol, seed=7).frame() for _ in range(2))
    pd.testing.assert_frame_equal(first, second)


def test_different_seeds_give_different_companies():
    first, second = (play("a2a", seed=s).frame() for s in (1, 2))
    assert not first["boats"].equals(second["boats"])


def test_every_protocol_meets_the_same_companies_and_more_companies_keep_the_first():
    """Common random numbers (issue 43): the companies, their fleets and their first readings of the stock are
    the seed's, whatever the protocol; more companies add to them."""
    columns = ["company", "boats", "density_estimate"]
    first = Fishbanks(protocol="a2a", rng=7).frame().query("season == 0")[columns].reset_index(drop=True)
    for protocol in PROTOCOLS:
        opening = Fishbanks(protocol=protocol, rng=7).frame().query("season == 0")[columns].reset_index(drop=True)
        pd.testing.assert_frame_equal(opening, first)
    more = Fishbanks(protocol="a2a", companies=20, rng=7)
    assert [(c.risk_tolerance, c.sustainability) for c in more.industry[:12]] == [
        (c.risk_tolerance, c.sustainability) for c in Fishbanks(protocol="a2a", rng=7).industry
    ]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"initial_stock": 5000}, "initial_stock=5000 is above the capacity"),
        ({"capacity": 2000}, r"initial_stock=3000 is above the capacity \(2000\)"),
        ({"companies": 1}, "companies=1 is out of range: companies takes an integer from 2 to 50"),
        ({"max_boats": 0}, "max_boats=0 is out of range"),
        ({"catch_per_boat": 0.0}, r"catch_per_boat takes a number in \(0, 1000\]"),
        ({"observation_noise": float("nan")}, "observation_noise=nan is not a finite number"),
        ({"seasons": 8.5}, "seasons=8.5 is not an integer"),
        ({"protocol": "rep"}, "'a2a', 'rep_numerical', 'rep_textual'"),
        ({"consensus": "mean"}, "'median_coordinate'"),
        ({"company": 4}, "Fishbanks has no parameter 'company'; did you mean 'companies'?"),
    ],
)
def test_bad_parameters_raise_clear_errors_before_any_work(params, message):
    with pytest.raises(ParameterError, match=message):
        Fishbanks(**params)


# --- the protocol round -------------------------------------------------------------------------------------------


def test_the_text_channel_is_visible_in_the_frame():
    a2a, rep = play("a2a").frame(), play("rep_textual").frame()
    assert a2a.query("season == 1")["message"].str.startswith("No neighbour decisions yet").all()
    assert a2a.query("season == 2")["message"].str.startswith("Neighbours average").all()
    assert rep.query("season > 0")["message"].str.contains("will hold at .* if the others average at most").all()
    assert a2a[list(THETA_NAMES)].isna().all().all() and rep[list(THETA_NAMES)].notna().all().all()


def test_median_consensus_gives_every_company_the_coordinate_wise_median():
    game = Fishbanks(protocol="rep_numerical", rng=3)
    game.step()
    game.step()
    clients = [c.client for c in game.industry]
    for client in clients:
        client.receive()
        client.sync()
    synced = [dict(client.theta) for client in clients]
    run_consensus(clients)
    for name in THETA_NAMES:
        values = [theta[name] for theta in synced]
        assert {client.theta[name] for client in clients} == {statistics.median(values)}
        assert min(values) <= clients[0].theta[name] <= max(values)


def test_without_consensus_companies_keep_their_own_estimates():
    # each company reads the stock with its own noise (below the peak density, where health is not capped at 1)
    thetas = play("rep_numerical", consensus=None, seasons=3, initial_stock=1500).frame().query("season == 3")[HEALTH]
    assert thetas.nunique() > 1
    agreed = play("rep_numerical", seasons=3, initial_stock=1500).frame().query("season == 3")[HEALTH]
    assert agreed.nunique() == 1


def test_rep_companies_check_the_holds_their_neighbours_stated():
    game = Fishbanks(protocol="rep_numerical", rng=0)
    for _ in range(3):
        game.step()
    own = game.industry[0].client._own.values
    assert {"hold", "others_at_most", "raise_to", f"propose:{CONFIDENCE}"} <= set(own)
    assert 0 <= own[f"propose:{CONFIDENCE}"] <= 1


# --- the rule policies --------------------------------------------------------------------------------------------


def test_competitive_fleet_moves_towards_the_neighbours_without_a_ratchet():
    assert CompetitiveFleet().boats(observation()) == 5  # half way from 4 to 5.5 is 4.75; r < v, stock above the peak
    assert CompetitiveFleet().boats(observation(risk_tolerance=0.7)) == 6  # r > v and boats pay: one more
    assert CompetitiveFleet().boats(observation(density_estimate=0.5)) == 4  # v > r, stock below the peak: one fewer
    assert CompetitiveFleet().boats(observation(profit_per_boat=-10.0)) == 4  # losing money: one fewer
    assert (
        CompetitiveFleet().boats(observation(neighbour_boats=(), risk_tolerance=0.7)) == 5
    )  # alone: its own fleet, +1
    assert CompetitiveFleet().boats(observation(boats=10, risk_tolerance=0.9)) == 9  # towards 5.5, +1
    # the case: a losing company with 3 boats among neighbours at 8 goes half way up, then one down
    assert CompetitiveFleet().boats(observation(boats=3, neighbour_boats=(("B", 8),), profit_per_boat=-1.0)) == 5
    boats, reasoning = CompetitiveFleet().decide(observation())
    assert (
        reasoning
        == "Neighbours average 5.5 boats (total 11); our profit per boat was $245: deploying 5 boats to keep our share."
    )


def test_rep_fleet_holds_as_far_as_it_trusts():
    # share = 30 / 23.25 = 1.290 boats; hold = 1.290 x 2^(0.2 - 0.5) = 1.048; the competitive fleet is 5
    trusting = REPSituation(observation(), THETA | {CONFIDENCE: 1.0})
    wary = REPSituation(observation(), THETA | {CONFIDENCE: 0.0})
    assert REPFleet().decide(trusting)[0] == 1 and REPFleet().decide(wary)[0] == 5
    boats, sensitivity = REPFleet().decide(REPSituation(observation(), THETA))  # 0.5 x 1.048 + 0.5 x 5 = 3.02
    assert boats == 3
    assert sensitivity.values["hold"] == 1 and sensitivity.values["others_at_most"] == 2
    assert sensitivity.values["raise_to"] == 5
    assert "We deploy 3 boats and will hold at 1 if the others average at most 2; above that we would raise to 5." in (
        sensitivity.text
    )
    keen = REPFleet().decide(
        REPSituation(observation(risk_tolerance=1.0, sustainability=0.0), THETA | {CONFIDENCE: 1.0})
    )
    assert keen[0] == 3 and keen[1].values["hold"] == 3  # twice the share: 2.58 boats


def test_rep_fleet_proposes_from_its_own_reading_of_the_stock():
    kept = (("B", False), ("C", True))  # B deployed above its hold while the others met its condition; C held
    values = REPFleet().decide(REPSituation(observation(), THETA, kept))[1].values
    assert values[f"propose:{QUOTA}"] == pytest.approx(582 / 12)  # the stock at its best, shared
    assert values[f"propose:{HEALTH}"] == 1.0
    assert values[f"propose:{CONFIDENCE}"] == 0.5  # deeds alone
    assert values[f"propose:{STRESS}"] == pytest.approx(900 / (900 + 378.5))
    conditions = (("B", 2, 4), ("C", 2, 2))  # each holding at 2 if the others average at most 4, 2: both met
    both = REPFleet().decide(REPSituation(observation(), THETA, kept, conditions))[1]
    assert both.values[f"propose:{CONFIDENCE}"] == 0.75  # deeds 0.5, words 1
    assert "Last season 1 of 2 others kept their word." in both.text
    first_season = REPFleet().decide(REPSituation(observation(industry_catch=None, neighbour_boats=()), THETA))[1]
    assert f"propose:{STRESS}" not in first_season.values and "not yet fished" in first_season.text
    assert f"propose:{CONFIDENCE}" not in first_season.values and "kept their word" not in first_season.text


def test_a_conditional_promise_is_kept_by_holding_or_when_the_others_broke_the_condition_first():
    assert promise_kept(2, hold=3, others_at_most=2, others_mean=9.0)  # held
    assert promise_kept(5, hold=3, others_at_most=2, others_mean=4.0)  # raised, but the others averaged above 2
    assert not promise_kept(5, hold=3, others_at_most=2, others_mean=1.5)  # raised while the others held: opportunistic


def text(quota, health, trend, hold, limit) -> str:
    return (
        f"Sustainable quota estimate of {quota} fish and population health of {health} suggest a {trend} stock. "
        f"We deploy 3 boats and will hold at {hold} if the others average at most {limit}; above that we would raise "
        "to 6."
    )


def test_rule_synthesis_reads_assessments_and_conditions():
    own = text(30, 0.90, "declining", 1, 2)
    neighbours = ((1, text(40, 0.70, "stable", 2, 1)), (2, text(20, 0.50, "recovering", 3, 2)))
    theta = RuleSynthesis().decide(SynthesisRequest(THETA, own, neighbours))
    assert theta[QUOTA] == pytest.approx(30) and theta[HEALTH] == pytest.approx(0.7)
    assert theta[STRESS] == pytest.approx((0.75 + 0.5 + 0.25) / 3)
    # holds 1, 2, 3: the others' average for each writer is 2.5, 2, 1.5 against limits 2, 1, 2: only the third met
    assert theta[CONFIDENCE] == pytest.approx(1 / 3)


def test_rule_synthesis_weighs_what_the_writers_saw_done_beside_what_they_say():
    own = text(30, 0.90, "declining", 1, 2) + " Last season 3 of 4 others kept their word."
    neighbours = (
        (1, text(40, 0.70, "stable", 2, 1) + " Last season 1 of 4 others kept their word."),
        (2, text(20, 0.50, "recovering", 3, 2)),
    )
    theta = RuleSynthesis().decide(SynthesisRequest(THETA, own, neighbours))
    assert theta[CONFIDENCE] == pytest.approx((1 / 3 + (0.75 + 0.25) / 2) / 2)  # words, and the mean report


def test_rule_synthesis_reads_appendix_b_s_assessment():
    said = (
        "Sustainable quota estimate of 180 fish and population health indicator of 0.85 suggest a stable "
        "condition. Deploying 3 boats balances steady income with preserving future yields."
    )
    theta = RuleSynthesis().decide(SynthesisRequest(THETA, said, ()))
    assert theta == THETA | {QUOTA: 180.0, HEALTH: 0.85, STRESS: 0.5}


def test_rule_synthesis_leaves_theta_alone_without_its_phrases():
    request = SynthesisRequest(THETA, "We will lead coalition efforts.", ((1, "Fleet sizes differ."),))
    assert RuleSynthesis().decide(request) == THETA


# --- the LLM calls ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reply", ["DECISION: 0", "DECISION: 11", "DECISION: 3.5", "DECISION: " + "9" * 400, "4"])
def test_an_unusable_number_of_boats_is_unparseable(reply):
    with pytest.raises(ReplyParseError):
        parse_boats(reply, 10)


def test_a_number_of_boats_is_read():
    assert parse_boats("**DECISION:** 4\nSENSITIVITY: ...", 10) == 4
    assert parse_boats("DECISION: [10]", 10) == 10


def request() -> SynthesisRequest:
    return SynthesisRequest(dict(THETA), "", ())


@pytest.mark.parametrize(
    "reply",
    [
        '{"quota_estimate": 30, "population_health": 0.8, "coordination_confidence": 0.5}',
        '{"quota_estimate": -1, "population_health": 0.8, "coordination_confidence": 0.5, "resource_stress": 0.5}',
        '{"quota_estimate": 30, "population_health": 1.5, "coordination_confidence": 0.5, "resource_stress": 0.5}',
        '{"quota_estimate": 1e999, "population_health": 0.8, "coordination_confidence": 0.5, "resource_stress": 0.5}',
        '{"quota_estimate": ' + "1" * 400 + ', "population_health": 0.8, "coordination_confidence": 0.5, '
        '"resource_stress": 0.5}',
        '{"quota_estimate": ' + "1" * 5000 + "}",
        '{"quota_estimate": "many", "population_health": 0.8, "coordination_confidence": 0.5, "resource_stress": 0.5}',
        '{"quota_estimate": true, "population_health": 0.8, "coordination_confidence": 0.5, "resource_stress": 0.5}',
        "no json here",
    ],
)
def test_an_unusable_theta_update_is_unparseable(reply):
    with pytest.raises(ReplyParseError):
        parse_synthesis(reply, request())


def test_a_theta_update_is_read():
    reply = (
        'Here: {"Quota_Estimate": 25, "population_health": 0.6, "coordination_confidence": "0.7", "resource_stress": 0}'
    )
    assert parse_synthesis(reply, request()) == {QUOTA: 25.0, HEALTH: 0.6, CONFIDENCE: 0.7, STRESS: 0.0}


@pytest.mark.parametrize(("protocol", "calls"), [("a2a", 96), ("rep_numerical", 96), ("rep_textual", 96 + 84)])
def test_llm_companies_ask_the_paper_calls_and_the_stand_in_answers_them_all(protocol, calls):
    client = ScriptedClient(stand_in.reply)
    game = play(protocol, llm=client)
    assert game.llm_calls == len(client.requests) == calls and game.llm_fallbacks == 0
    assert {r.temperature for r in client.requests} == {0.1} and {r.max_tokens for r in client.requests} == {300}
    first = client.requests[0]
    assert "GlobalMega_Corp, a deep-sea industrial fishing company in a 12-company" in first.system
    marker = "NUMERICAL NEIGHBOR PATTERNS" if protocol == "a2a" else "PROTOCOL UNDERSTANDING (Local Variables)"
    assert marker in first.messages[0][1]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_unusable_replies_fall_back_to_the_rules_counted(protocol):
    game = play(protocol, llm=ScriptedClient(lambda request: "Let me think about fish."))
    assert game.llm_fallbacks == game.llm_calls > 0
    assert dict(game.fallback_reasons) == {"unparseable reply": game.llm_calls}
    pd.testing.assert_frame_equal(game.frame(), play(protocol).frame())  # every decision was the rule's


def test_the_stand_in_answers_call_two_with_json():
    client = ScriptedClient(stand_in.reply)
    play("rep_textual", llm=client, seasons=2)
    aggregate = next(r for r in client.requests if r.purpose == "rep.fishbanks.aggregate")
    assert set(json.loads(stand_in.reply(aggregate))) == set(THETA_NAMES)


# --- metrics, comparison, dissection -----------------------------------------------------------------------------


def test_metrics_on_a_known_frame():
    frame = pd.DataFrame(
        {
            "season": [0, 0, 1, 1, 2, 2],
            "stock": [2000.0, 2000.0, 1200.0, 1200.0, 600.0, 600.0],
            "regeneration": [0.0, 0.0, 300.0, 300.0, 0.0, 0.0],
            "total_catch": [0.0, 0.0, 1100.0, 1100.0, 0.0, 0.0],
            "profit": [0.0, 0.0, 500.0, -100.0, 0.0, 0.0],
            "revenue": [0.0, 0.0, 1000.0, 1000.0, 0.0, 0.0],
            "boats": [2, 3, 2, 3, 1, 1],
        }
    )
    seasons = metrics.per_season(frame, capacity=4000, viability_threshold=0.35)
    assert seasons["sustainability_index"].tolist() == pytest.approx([1.0, 0.6, 0.3])
    assert seasons["above_threshold"].tolist() == [True, True, False]
    assert seasons["population_health"].tolist() == pytest.approx([2000 / 2400, 0.5, 0.25])
    assert seasons["coordination"].iloc[1:].tolist() == pytest.approx([300 / 1100, 1.0])  # nothing caught: 1
    assert pd.isna(seasons["coordination"].iloc[0])
    assert seasons["profit_margin"].iloc[1] == pytest.approx(0.2)
    summary = metrics.summary(frame, 4000, 0.35)
    assert summary["seasons_above_threshold"] == 1 and summary["final_population"] == 600
    assert summary["collapse_season"] == 2
    assert summary["profit_margin"] == pytest.approx(400 / 2000) and summary["total_profit"] == 400
    assert metrics.summary(frame, 4000, 0.35, seasons=seasons) == summary  # the table given, not computed again


def test_dissect_shows_what_each_company_saw_decided_and_signalled():
    game = play("rep_textual")
    table = dissect(game, 3)
    frame = game.frame()
    assert table["company"].tolist() == frame.query("season == 3")["company"].tolist()
    assert table["boats"].tolist() == frame.query("season == 3")["boats"].tolist()
    assert table[f"{QUOTA}_before"].tolist() == frame.query("season == 2")[QUOTA].tolist()
    others = frame.query("season == 2")["boats"]
    assert table["neighbours_boats"].iloc[0] == pytest.approx((others.sum() - others.iloc[0]) / 11)
    with pytest.raises(ValueError, match="season=9 was not played"):
        dissect(game, 9)


def test_the_comparison_names_the_updater_and_takes_the_papers_numbers():
    comparison = compare_with_paper(figure2(2))
    assert list(comparison.columns) == ["metric", "paper", "kit"]
    assert comparison["metric"].str.contains("REP textual").any()
    assert comparison.set_index("metric").loc["final population, A2A", "paper"] == "958 fish"


# --- the paper's claim, in direction ------------------------------------------------------------------------------


def test_rep_keeps_more_fish_than_a2a_over_20_seeds():
    """§6 Insight 3, in direction, for the rule-based companies with default parameters (the figures are in
    docs/rep-readings.md): REP's final population and its seasons above 0.35 above A2A's, with separated 95%
    intervals for the textual updater; in every game, REP textual spends more seasons above 0.35 than A2A."""
    games = sweep(Fishbanks, {"protocol": list(PROTOCOLS)}, seeds=range(20), progress=False)
    by = {protocol: g.set_index("seed") for protocol, g in games.groupby("protocol")}
    for metric in ("final_population", "seasons_above_threshold"):
        a2a = stats.mean_interval(by["a2a"][metric])
        for rep in ("rep_numerical", "rep_textual"):
            assert by[rep][metric].mean() > by["a2a"][metric].mean(), (rep, metric)
        assert stats.mean_interval(by["rep_textual"][metric]).low > a2a.high, metric
    assert (by["rep_textual"]["seasons_above_threshold"] > by["a2a"]["seasons_above_threshold"]).all()


def test_rep_fleets_differ_between_companies_and_seasons_not_all_at_the_floor():
    fleets = Fishbanks(protocol="rep_textual", rng=0).run().frame().query("season > 0")
    assert fleets["boats"].nunique() >= 3 and (fleets["boats"] > 1).mean() > 0.5, fleets["boats"].value_counts()
    changed = fleets.groupby("company")["boats"].nunique() > 1  # a company that deployed more than one fleet size
    assert changed.mean() > 0.5, changed


def test_every_number_in_the_comparison_is_finite():
    comparison = compare_with_paper(figure2(5))
    numbers_shown = comparison["kit"].str.findall(r"[-+]?\d[\d,]*\.?\d*|nan|inf").explode().dropna()
    assert not numbers_shown.str.contains("nan|inf").any(), comparison
    kit = comparison.set_index("metric")["kit"]
    assert "CI -" not in " ".join(kit) and "–-" not in " ".join(kit)  # intervals of stocks stay at or above zero
    points = kit[kit.str.endswith(" points")].str.removesuffix(" points").astype(float)
    assert len(points) == 3 and (points.abs() <= 100).all(), points  # a gain in points cannot explode


# --- the state view -----------------------------------------------------------------------------------------------


def rows_with(spec: dict, column: str) -> list[dict]:
    """The rows of the state view's dataset that has ``column``."""
    (rows,) = [rows for rows in spec["datasets"].values() if rows and column in rows[0]]
    return rows


def test_a_company_remembers_last_seasons_fleet_when_it_deploys():
    game = Fishbanks(rng=0)
    company = game.industry[0]
    first = company.boats
    assert company.boats_before == first  # before the first season: its initial fleet
    company.deploy(first + 2, "more")
    assert (company.boats_before, company.boats) == (first, first + 2)


def test_the_fishery_view_draws_a_seasons_waterfall_and_the_seas_levels_by_hand():
    game = Fishbanks(rng=0)  # 3,000 fish of 4,000, threshold 0.35 of the start
    game.stock, game.total_catch, game.regenerated = 2000.0, 600.0, 400.0  # a season: 2,200 − 600 + 400
    spec = spec_of(charts.fishery_now(game))
    bars = {row["phase"]: (row["low"], row["high"]) for row in rows_with(spec, "phase")}
    assert bars == {"start": (0, 2200), "caught": (1600, 2200), "grew": (1600, 2000), "now": (0, 2000)}
    axis = spec["hconcat"][0]["encoding"]["y"]["axis"]
    assert axis["values"] == pytest.approx([0, 4000, 2400, 1050])  # capacity, 0.6 of it, 0.35 of the start
    names = ("'capacity 4,000'", "'regrows fastest 2,400'", "'viability threshold 1,050'")
    assert all(name in axis["labelExpr"] for name in names)


def test_the_fishery_view_marks_the_boats_added_and_laid_up_by_hand():
    game = Fishbanks(rng=0, companies=2)
    growing, shrinking = game.industry
    growing.boats = shrinking.boats = 3
    growing.deploy(5, "")
    shrinking.deploy(1, "")
    boats = rows_with(spec_of(charts.fishery_now(game)), "state")
    states = {(row["company"], row["boat"]): row["state"] for row in boats}
    assert states == {
        **{(growing.name, boat): "in the fleet" for boat in (1, 2, 3)},
        **{(growing.name, boat): "added this season" for boat in (4, 5)},
        (shrinking.name, 1): "in the fleet",
        **{(shrinking.name, boat): "laid up this season" for boat in (2, 3)},
    }


@pytest.mark.parametrize("protocol", ["a2a", "rep_textual"])
def test_the_fishery_view_shows_the_game_as_it_stands_at_each_season(protocol):
    game = Fishbanks(protocol=protocol, rng=2)
    while game.running:
        game.step()
        spec = spec_of(charts.fishery_now(game))
        assert spec["title"]["text"].startswith(f"season {game.steps} of 8 · ")
        now = {row["phase"]: row for row in rows_with(spec, "phase")}["now"]
        assert now["high"] == pytest.approx(game.stock)
        boats = pd.DataFrame(rows_with(spec, "state"))
        at_sea = boats[boats["state"] != "laid up this season"].groupby("company").size()
        assert at_sea.to_dict() == {company.name: company.boats for company in game.industry}
        catches = {row["company"]: row["catch"] for row in rows_with(spec, "profit")}
        assert catches == pytest.approx({company.name: company.catch for company in game.industry})


def test_the_fishery_player_plays_a_game_season_by_season_with_the_explore_panels_controls():
    player = panels.fishery_player_panel(start={"protocol": "a2a"})
    assert list(player.controls)[:-1] == panels.EXPLORED and player.values["protocol"] == "a2a"
    assert player.model.steps == 0 and player.step() and player.model.steps == 1
    assert player.run_to_end().steps == 8 and player.last_error is None
