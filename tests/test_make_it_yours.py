"""A student's own agent (issue 45), in the delayed dilemma first: a plain function, a Policy or a registered name
plugs in with one keyword; a wrong decision is refused naming the policy, the value and what was expected; a
subclass inherits everything without repeating it and stays out of ``coordkit.models()``; ``check_policy`` reports
a policy's claims; ``tournament`` plays a round robin through ``sweep``."""

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from policy_examples.pressure import first_available

import coordkit
from coordkit import (
    BeerGame,
    DelayedDilemma,
    Fishbanks,
    check_policy,
    policy_from,
    register_policy,
    sweep,
    tournament,
    ui,
    views,
)
from coordkit.delay.policies import Decision, GrimTrigger, SimplifiedModel
from coordkit.parameters import ParameterError
from coordkit.player import model_player
from coordkit.policies import DecisionError
from coordkit.pressure.model import PressureField
from coordkit.rep.beer_game.policies import Order, whole_cases
from coordkit.rep.fishbanks.policies import Deployment


def mirror(seen) -> str:
    """Tit-for-tat, as a student writes it."""
    return "D" if seen.opponent_effective == "D" else "C"


def test_a_function_plays_as_the_rule_it_copies():
    built_in = DelayedDilemma(policy_a="tit_for_tat", policy_b="simplified", delay_a=5.0, rng=3).run().frame()
    theirs = DelayedDilemma(policy_a=mirror, policy_b="simplified", delay_a=5.0, rng=3).run().frame()
    assert_frame_equal(built_in, theirs)


def test_a_decision_object_and_a_policy_class_plug_in_too():
    as_decision = DelayedDilemma(policy_a=lambda seen: Decision(mirror(seen)), rng=3).run().frame()
    assert_frame_equal(as_decision, DelayedDilemma(policy_a="tit_for_tat", rng=3).run().frame())
    assert DelayedDilemma(policy_a=GrimTrigger, policy_b="always_defect", rng=0).run().summary()["payoff_a"] > 0


def test_a_stateful_policy_object_starts_afresh_in_every_run_and_for_every_player():
    trigger = GrimTrigger()
    first = DelayedDilemma(policy_a=trigger, policy_b=trigger, delay_a=3.0, rng=1).run().frame()
    again = DelayedDilemma(policy_a=trigger, policy_b=trigger, delay_a=3.0, rng=1).run().frame()
    assert_frame_equal(first, again)
    assert trigger.triggered is False, "the object given is a template: each player plays a copy of it"


WHAT_IS_DECIDED = {
    DelayedDilemma: "a player of the delayed dilemma decides 'C' (cooperate) or 'D' (defect)",
    BeerGame: "a stage orders a whole number of cases, at least 0",
    Fishbanks: "a company deploys a whole number of boats from 1 to 10",
}


@pytest.mark.parametrize(
    ("model", "returned", "expected"),
    [
        (DelayedDilemma, "c", "did you mean 'C'?"),
        (DelayedDilemma, 1, ""),
        (DelayedDilemma, ("C", "D"), ""),
        (DelayedDilemma, None, ""),
        (BeerGame, 3.7, "round it: 4"),
        (BeerGame, -1, ""),
        (BeerGame, True, ""),
        (BeerGame, "4", ""),
        (BeerGame, Order(2, 5), ""),
        (Fishbanks, 0, ""),
        (Fishbanks, 2.6, "round it: 3"),
        (Fishbanks, 11, ""),
    ],
)
def test_a_wrong_decision_is_refused_naming_the_rule_the_value_and_what_is_decided(model, returned, expected):
    def sloppy(observation):
        return returned

    with pytest.raises(DecisionError) as refused:
        model(**{"policy_a" if model is DelayedDilemma else "policy": sloppy}, rng=0).run()
    message = str(refused.value)
    assert message.startswith(f"policy 'sloppy' returned {returned!r}: {WHAT_IS_DECIDED[model]}"), message
    assert expected in message


def test_a_name_must_be_a_rule_or_registered_and_a_value_must_decide():
    register_policy(DelayedDilemma, "tit_for_two_tats", mirror)
    with pytest.raises(ParameterError, match=r"policy_a='tit_for_two_tat' is not a policy's name; did you mean"):
        DelayedDilemma(policy_a="tit_for_two_tat")
    with pytest.raises(ParameterError, match=r"policy_b=42 is a int: policy_b takes one of 'simplified'"):
        DelayedDilemma(policy_b=42)


def test_a_registered_name_is_offered_by_the_model_its_subclasses_its_dropdown_and_sweeps():
    register_policy(DelayedDilemma, "mirror", mirror, label="my mirror")

    class Classroom(DelayedDilemma):
        pass

    @register_policy(Classroom, "only_in_class")
    def only_in_class(seen):
        return "C"

    assert Classroom(policy_a="mirror", rng=0).run().summary() == DelayedDilemma(policy_a=mirror, rng=0).run().summary()
    Classroom(policy_a="only_in_class")
    with pytest.raises(ParameterError, match="only_in_class"):
        DelayedDilemma(policy_a="only_in_class")
    (dropdown,) = ui.controls(Classroom, ["policy_a"])
    assert ("my mirror", "mirror") in dropdown.pairs and ("only in class", "only_in_class") in dropdown.pairs
    (base,) = ui.controls(DelayedDilemma, ["policy_a"])
    assert ("my mirror", "mirror") in base.pairs and "only_in_class" not in base.values
    swept = sweep(DelayedDilemma, {"policy_a": ["mirror", "tit_for_tat"]}, seeds=2, progress=False)
    assert swept.groupby("policy_a")["payoff_a"].sum().nunique() == 1  # the same rule under two names


@pytest.mark.parametrize(
    ("name", "policy", "problem"),
    [
        ("tit_for_tat", mirror, "one of DelayedDilemma's own rules"),
        ("two words", mirror, "give a name like"),
        ("fine", 42, "is not a Policy, a Policy class or a function"),
    ],
)
def test_a_registration_that_cannot_work_is_refused(name, policy, problem):
    with pytest.raises((ValueError, TypeError), match=problem):
        register_policy(DelayedDilemma, name, policy)


def test_a_subclass_inherits_everything_and_stays_out_of_the_kits_models():
    class Mine(DelayedDilemma):
        """A student's variant, with nothing redeclared."""

    assert Mine.parameters is DelayedDilemma.parameters
    assert_frame_equal(Mine(rng=4).run().frame(), DelayedDilemma(rng=4).run().frame())
    assert views.view_of(Mine) is views.view_of(DelayedDilemma)
    assert Mine not in coordkit.models().values() and DelayedDilemma in coordkit.models().values()


def test_check_policy_passes_a_rule_that_keeps_its_claims():
    report = check_policy(mirror, DelayedDilemma)
    assert report.passed, str(report)
    assert [check.name.split(":")[0] for check in report.checks] == ["decides", "deterministic", "stateless"]
    assert check_policy("grim_trigger", DelayedDilemma).passed
    assert check_policy(policy_from(mirror, stochastic=True), DelayedDilemma).passed


def test_check_policy_says_which_claim_a_rule_breaks():
    import random

    draws = random.Random(0)
    coin = check_policy(lambda seen: draws.choice("CD"), DelayedDilemma)
    assert [(c.name.split(":")[0], c.passed) for c in coin.checks] == [("decides", True), ("deterministic", False)]

    seen_defections = []

    def remembers(seen):  # stateful, but does not say so
        seen_defections.append(seen.opponent_effective == "D")
        return "D" if sum(seen_defections) > 3 else "C"

    memory = check_policy(remembers, DelayedDilemma)
    assert not memory.passed and "✗" in str(memory)

    def broken(seen):
        return seen.no_such_field

    crashed = check_policy(broken, DelayedDilemma)
    assert crashed.checks[0].name == "decides" and "AttributeError" in crashed.checks[0].detail


def test_a_tournament_plays_every_pair_at_every_seed_and_setting():
    result = tournament(
        DelayedDilemma, {"mirror": mirror, "defector": "always_defect"}, seeds=3, delay_a=[0.0, 10.0], progress=False
    )
    # 3 pairs (self-play included: one row, both sides its own) × 3 seeds × 2 delays; a pair of two gives two rows
    assert len(result.matches) == (1 + 2 + 1) * 3 * 2
    assert list(result.table.columns) == ["delay_a", "entrant", "score", "low", "high", "runs", "rank"]
    at_zero = result.table[result.table["delay_a"] == 0].set_index("entrant")
    assert at_zero.loc["mirror", "rank"] == 1 and at_zero.loc["defector", "rank"] == 2
    mirrors = result.matches.query("entrant == 'mirror' and opponent == 'mirror' and delay_a == 0")
    assert (mirrors["score"] == 3.0).all(), "two mirrors cooperate every tick at no delay: R = 3"
    assert result.chart().to_dict()["facet"]


def test_a_tournament_refuses_entrants_it_cannot_tell_apart_or_play():
    with pytest.raises(ValueError, match="share a name"):
        tournament(DelayedDilemma, [mirror, mirror], progress=False)
    with pytest.raises(ParameterError, match="policy_a='no_such_rule'"):
        tournament(DelayedDilemma, ["tit_for_tat", "no_such_rule"], progress=False)
    with pytest.raises(TypeError, match="declares no contest"):
        tournament(coordkit.models()["weather-demo"], ["a", "b"], progress=False)
    named = tournament(DelayedDilemma, ["tit_for_tat", mirror], seeds=1, progress=False).table
    assert sorted(named["entrant"]) == ["mirror", "tit_for_tat"], "an entrant goes by its own name"


# --- the Beer Game: a rule orders for every stage; the protocol keeps its messages ---------------------------------


def order_up_to(seen) -> int:
    """The base-stock reference, as a student writes it."""
    demand = 0.36 * seen.incoming_order + 0.64 * seen.expected_demand
    return whole_cases(max(0.0, (12 - seen.net_stock) + demand * seen.lead_time - seen.supply_line))


def test_a_beer_game_rule_plays_as_the_rule_it_copies():
    built_in = BeerGame(protocol="base_stock", rng=2).run().frame()
    assert_frame_equal(built_in, BeerGame(protocol="base_stock", policy=order_up_to, rng=2).run().frame())


def test_under_rep_a_rule_orders_and_the_protocol_still_shares_sensitivities():
    game = BeerGame(protocol="rep_numerical", policy=order_up_to, rng=0).run()
    played = game.frame().query("round > 0")
    assert played["target_inventory"].nunique() > 1, "θ is updated from the sensitivities, as ever"
    assert played["message"].str.contains("If demand rises").all(), "every stage sends its sensitivity"
    orders = BeerGame(protocol="a2a", policy=order_up_to, rng=0).run().frame().query("round > 0")["order"]
    assert list(played["order"]) == list(orders), "the rule alone orders, whatever the protocol"


def test_an_a2a_stage_sends_the_rules_message_or_its_own_reasoning():
    with_words = BeerGame(protocol="a2a", policy=lambda seen: Order(4, "steady as she goes"), rng=0).run().frame()
    assert (with_words.query("round > 0")["message"] == "steady as she goes").all()
    plain = BeerGame(protocol="a2a", policy=lambda seen: 4, rng=0).run().frame().query("round > 0")
    assert plain["message"].str.startswith("Ordering 4:").all()


def test_a_registered_ordering_rule_is_a_name_the_beer_game_takes():
    register_policy(BeerGame, "order_up_to", order_up_to)
    assert BeerGame(policy="order_up_to", rng=1).run().summary() == BeerGame(policy=order_up_to, rng=1).run().summary()


# --- Fishbanks: a rule deploys for every company; the protocol keeps its messages -----------------------------------


def cautious(seen) -> int:
    """Fewer boats while the stock looks low, one more while it looks high."""
    return max(1, min(seen.max_boats, seen.boats + (1 if seen.density_estimate > 0.6 else -1)))


def test_under_rep_a_fishbanks_rule_deploys_and_the_protocol_still_shares_sensitivities():
    rep = Fishbanks(protocol="rep_numerical", policy=cautious, rng=0).run().frame()
    a2a = Fishbanks(protocol="a2a", policy=cautious, rng=0).run().frame()
    assert list(rep["boats"]) == list(a2a["boats"]), "the rule alone deploys, whatever the protocol"
    played = rep[rep["season"] > 0]
    assert played["message"].str.contains("hold").all(), "every REP company states its conditional hold"
    assert (a2a[a2a["season"] > 0]["message"] != "").all(), "an A2A company explains the rule's boats"


def test_a_deployment_carries_an_a2a_message():
    frame = Fishbanks(protocol="a2a", policy=lambda seen: Deployment(3, "three, as agreed"), rng=0).run().frame()
    assert (frame[frame["season"] > 0]["message"] == "three, as agreed").all()


# --- agents that differ: a list, one per agent, or a mapping by name -------------------------------------------------


def test_a_list_gives_each_stage_its_rule_and_none_keeps_a_stages_own():
    mixed = BeerGame(protocol="base_stock", policy=[order_up_to, None, None, lambda seen: 4], rng=3).run().frame()
    built_in = BeerGame(protocol="base_stock", rng=3).run().frame()
    factory = mixed.query("stage == 'factory' and round > 0")["order"]
    assert (factory == 4).all(), "the factory plays the constant rule it was given"
    middle = "stage in ('wholesaler', 'distributor') and round == 1"
    assert list(mixed.query(middle)["order"]) == list(built_in.query(middle)["order"]), "None: the stage's own rule"
    by_name = BeerGame(protocol="base_stock", policy={"factory": lambda seen: 4, "retailer": order_up_to}, rng=3)
    assert_frame_equal(mixed, by_name.run().frame())


def test_a_list_of_the_wrong_length_or_an_unknown_name_is_refused_before_any_run():
    with pytest.raises(ParameterError, match=r"policy= has 2 policies for 4 agents \(retailer, wholesaler"):
        BeerGame(policy=[order_up_to, order_up_to])
    with pytest.raises(ParameterError, match="'Boss', not an agent of this model: its agents are GlobalMega_Corp"):
        Fishbanks(policy={"Boss": cautious})
    with pytest.raises(ParameterError, match="policy='nope' is not a policy's name"):
        Fishbanks(policy=[cautious, "nope"] * 6)


# --- tournaments in populations: each entrant as the whole population, then every two mixed ------------------------


def constant_four(seen) -> int:
    return 4


def test_a_beer_game_tournament_fields_each_rule_alone_and_mixed_and_ranks_the_cheapest_first():
    result = tournament(BeerGame, {"order_up_to": order_up_to, "four": constant_four}, seeds=2, progress=False)
    assert list(result.table.columns) == ["field", "entrant", "score", "low", "high", "runs", "rank"]
    assert list(result.table["field"]) == ["whole population"] * 2 + ["mixed"] * 2
    # whole population: 2 seeds each; mixed: two seatings (a, b, a, b and b, a, b, a) at 2 seeds each
    assert list(result.table["runs"]) == [2, 2, 4, 4]
    alone = BeerGame(policy=constant_four, rng=result.matches["seed"].iloc[0]).run().summary()["total_cost"]
    four = result.matches.query("entrant == 'four' and field == 'whole population'")["score"].iloc[0]
    assert four == pytest.approx(alone / 4), "alone, a rule's score is the mean stage's cost"
    for _, field in result.table.groupby("field"):
        assert list(field.sort_values("score")["rank"]) == [1, 2], "a stage's cost: lower is better"
    assert result.chart().to_dict()["title"].endswith("(lower is better)")


def test_a_fishbanks_tournament_seats_the_two_rules_alternately_in_a_mixed_industry():
    def greedy(seen) -> int:
        return seen.max_boats

    result = tournament(Fishbanks, [cautious, greedy], seeds=1, progress=False, companies=4)
    mixed = result.matches.query("field == 'mixed'")
    assert sorted(mixed["opponent"]) == ["cautious", "cautious", "greedy", "greedy"]
    industry = Fishbanks(policy=[cautious, greedy, cautious, greedy], companies=4, rng=int(mixed["seed"].iloc[0]))
    profits = [company.cumulative_profit for company in industry.run().industry]
    first = mixed.iloc[:2].set_index("entrant")["score"]  # the seating cautious, greedy, cautious, greedy
    assert first["cautious"] == pytest.approx((profits[0] + profits[2]) / 2)
    assert first["greedy"] == pytest.approx((profits[1] + profits[3]) / 2)


def test_check_policy_plays_a_population_rule_in_one_seat_among_the_agents_own_rules():
    report = check_policy(order_up_to, BeerGame)
    assert report.passed and "as one agent of 4, the others playing the agents' own rule" in str(report)
    named = check_policy(lambda seen: True, BeerGame)
    assert "policy '<lambda>' returned True" in named.checks[0].detail, "the error names the rule, not a wrapper"
    wrong = check_policy(lambda seen: -1, Fishbanks)
    assert not wrong.passed and "returned -1" in wrong.checks[0].detail


# --- the player plays a student's rule, by its name, beside the built-in ones --------------------------------------


def test_a_player_started_at_a_rule_plays_it_and_offers_the_agents_own_rule_beside_it():
    player = model_player(BeerGame, policy=order_up_to)
    assert player.settings == {"protocol": "REP textual", "policy": "order_up_to", "seed": "0"}
    assert [label for label, _ in player.params["policy"].pairs] == ["own rule", "order_up_to"]
    played = player.run_to_end().frame()
    assert_frame_equal(played, BeerGame(policy=order_up_to, rng=0).run().frame())
    player.controls["policy"].value = 0  # the agents' own rule
    assert_frame_equal(player.run_to_end().frame(), BeerGame(rng=0).run().frame())


def test_the_families_players_take_a_rule_and_name_it_in_their_dropdown():
    from coordkit.delay.panels import player_panel as delay_player
    from coordkit.rep.fishbanks.panels import fishery_player_panel

    register_policy(DelayedDilemma, "grudger", GrimTrigger())
    delay = delay_player(policy=mirror)
    assert delay.settings["player A"] == "mirror" and delay.settings["player B"] == "simplified model (p, α)"
    assert "grudger" in [label for label, _ in delay.params["policy_b"].pairs], "a registered name is offered too"
    assert fishery_player_panel(policy=cautious).settings["policy"] == "cautious"
    with pytest.raises(TypeError, match="no one policy parameter"):
        model_player(coordkit.models()["weather-demo"], ["protocol"], policy=mirror)


# --- a rule that draws at random draws from its agent's own stream: one seed, one run ------------------------------


def generous(seen, rng) -> str:
    """Tit-for-tat that forgives a defection it sees three times in ten."""
    return "D" if seen.opponent_effective == "D" and rng.random() >= 0.3 else "C"


def test_a_stochastic_function_takes_its_agents_stream_and_a_seed_gives_one_run():
    rule = policy_from(generous, stochastic=True)
    played = [DelayedDilemma(policy_a=rule, policy_b="always_defect", rng=seed).run().frame() for seed in (5, 5, 6)]
    assert_frame_equal(played[0], played[1])
    assert not played[0].equals(played[2]), "another seed, other draws"


def test_a_students_copy_of_the_papers_random_rule_replays_it_draw_for_draw():
    copied = SimplifiedModel(0.9, 0.1, np.random.default_rng(12345))  # its own generator is replaced by the player's
    mine = DelayedDilemma(policy_a=copied, policy_b=copied, delay_a=10.0, rng=4).run().frame()
    assert_frame_equal(mine, DelayedDilemma(policy_a="simplified", delay_a=10.0, rng=4).run().frame())


@pytest.mark.parametrize("model", [BeerGame, Fishbanks], ids=lambda model: model.__name__)
def test_in_a_population_each_agents_random_rule_draws_from_its_own_stream(model):
    draws = []

    def dice(seen, rng) -> int:
        draws.append(float(rng.random()))
        return 2

    model(policy=policy_from(dice, stochastic=True), rng=0).run()
    agents = 4 if model is BeerGame else 12
    first_draws = draws[:agents]
    assert len(set(first_draws)) == agents, "no two agents share a stream"
    again = []
    model(policy=policy_from(lambda seen, rng: again.append(float(rng.random())) or 2, stochastic=True), rng=0).run()
    assert again == draws


# --- pressure fields: a rule proposes the actors' patches; the strategy still picks the rows -------------------------


def test_a_pressure_field_rule_proposes_every_patch_and_the_strategy_still_picks_the_rows():
    informed = PressureField(policy=first_available, strategy="hierarchical", rng=2).run()
    patches = informed.frame()
    assert informed.summary()["solved"], "a rule that always proposes an available value solves the easy default"
    never = PressureField(policy=lambda assignment: None, rng=2, max_ticks=20).run().summary()
    assert not never["solved"] and never["ticks"] == 20, "no proposals, no progress"
    assert patches.equals(PressureField(policy=first_available, strategy="hierarchical", rng=2).run().frame())


def test_a_pressure_field_refuses_a_patch_outside_the_row_and_a_policy_for_the_conversation():
    with pytest.raises(DecisionError, match=r"returned \(0, 99\): an actor of row \d proposes Patch\(row=\d"):
        PressureField(policy=lambda assignment: (0, 99), rng=0).run()
    with pytest.raises(ParameterError, match="the conversation baseline has no actors"):
        PressureField(policy=first_available, strategy="conversation")


def test_a_whole_float_or_a_built_in_rules_pair_is_a_decision_a_fraction_is_not():
    assert_frame_equal(
        BeerGame(policy=lambda seen: seen.incoming_order, rng=0).run().frame(),
        BeerGame(policy=lambda seen: round(seen.incoming_order), rng=0).run().frame(),
    )
    from coordkit.rep.beer_game.policies import BaseStock

    assert check_policy(BaseStock(), BeerGame).passed, "a built-in rule's (cases, reasoning) is an order too"
    with pytest.raises(DecisionError, match=r"returned 4.5: .* a \(cases, message\) pair .*; round it: 5"):
        BeerGame(policy=lambda seen: 4.5, rng=0).run()
    with pytest.raises(DecisionError, match=r"returned 2.5: a company deploys"):
        Fishbanks(policy=lambda seen: 2.5, rng=0).run()


def test_a_students_subclass_plays_in_its_familys_player_with_the_same_controls():
    from coordkit.delay.panels import player_panel as delay_player

    class ClassDilemma(DelayedDilemma):
        """A student's variant, with nothing repeated."""

    player = delay_player(policy=mirror, model=ClassDilemma)
    assert player.settings == delay_player(policy=mirror).settings
    assert isinstance(player.run_to_end(), ClassDilemma)
    assert_frame_equal(player.model.frame(), delay_player(policy=mirror).run_to_end().frame())


def _one_run(*, model, lineups, entrants, match, seed, **params):
    """One run of a lineup, as a sweep task of its own: the reference that playing a lineup's seeds in one task
    must give."""
    field, lineup = lineups[match]
    seated = [lineup[seat % len(lineup)] for seat in range(model.contest.seats(params, model))]
    played = model(**params, **model.contest.fielding([entrants[name] for name in seated]), rng=seed).run()
    scores = dict.fromkeys(lineup, 0.0)
    for name in scores:
        own = [score for score, sitter in zip(model.contest.scores(played), seated) if sitter == name]
        opponent = " & ".join(other for other in scores if other != name) or name
        scores[name] = {"field": field, "entrant": name, "opponent": opponent, "score": np.mean(own)}
    return pd.DataFrame(list(scores.values()))


@pytest.mark.parametrize(
    "model, entrants, params",
    [
        (DelayedDilemma, {"mirror": mirror, "defector": "always_defect", "odd": "simplified"}, {"delay_a": [0.0, 5.0]}),
        (BeerGame, {"order_up_to": order_up_to, "four": constant_four}, {}),
    ],
)
def test_a_tournament_plays_each_run_as_a_sweep_of_single_runs_would(model, entrants, params):
    result = tournament(model, entrants, seeds=3, base_seed=7, progress=False, **params)
    lineups = model.contest.lineups(list(entrants))
    fixed = {"model": model, "lineups": lineups, "entrants": entrants}
    runs = sweep(_one_run, {"match": list(range(len(lineups))), **params}, 3, base_seed=7, fixed=fixed, progress=False)
    fields = ["field"] if any(field for field, _ in lineups) else []
    expected = runs[[*params, *fields, "seed", "entrant", "opponent", "score"]]
    assert_frame_equal(result.matches, expected, check_exact=True)
