"""A student's own rule in movie scheduling (issue 45, REP paper §7): a function of an agent's Situation decides
whether it joins, with one keyword, for every agent or per agent; under REP the agent still sends its sensitivity;
a wrong decision is refused naming the rule and the value; ``check_policy`` and ``tournament`` take the model."""

import random

import numpy as np
import pytest
from pandas.testing import assert_frame_equal

from coordkit import MovieScheduling, check_policy, register_policy, tournament
from coordkit.parameters import ParameterError
from coordkit.policies import DecisionError
from coordkit.rep.movies.policies import Attendance

SMALL = {"population": 6, "rounds": 4}  # small and short: every test here runs in a blink
PROTOCOLS = ("a2a", "rep_numerical", "rep_textual")


def thrifty(situation) -> bool:
    """Join at no more than a dollar over the agent's ideal price, whatever the time."""
    return situation.price <= situation.taste.price + 1


def never(situation) -> bool:
    return False


def played(protocol: str, policy=None, seed: int = 0) -> MovieScheduling:
    return MovieScheduling(protocol=protocol, policy=policy, rng=seed, **SMALL).run()


def joins(model: MovieScheduling):
    """Every agent's stage-1 decisions from round 1 on."""
    return model.agents_frame().query("round > 0")[["round", "agent", "joins"]].reset_index(drop=True)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_rule_that_copies_the_agents_own_plays_exactly_as_no_policy(protocol):
    own = played(protocol)
    for copy in (lambda s: s.would_join, lambda s: np.float64(s.utility) >= 0):  # a numpy bool decides too
        theirs = played(protocol, copy)
        assert_frame_equal(own.frame(), theirs.frame())
        assert_frame_equal(own.agents_frame(), theirs.agents_frame())


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_rule_plugs_in_with_one_keyword_and_decides_who_joins(protocol):
    own, theirs = played(protocol), played(protocol, thrifty)
    assert not joins(own).equals(joins(theirs)), "the rule changes the decisions"
    assert not joins(played(protocol, never))["joins"].any()


@pytest.mark.parametrize(("protocol", "words"), [("rep_numerical", "∂U/∂price"), ("rep_textual", "I'd join at")])
def test_under_rep_the_agent_still_sends_its_sensitivity_and_theta_moves_as_ever(protocol, words):
    own, theirs = played(protocol), played(protocol, never)
    assert_frame_equal(own.frame(), theirs.frame())  # θ, the group's proposal and the vote move by sensitivities
    sent = theirs.agents_frame().query("round > 0")["message"]
    assert sent.str.contains(words).all()
    assert list(sent) == list(own.agents_frame().query("round > 0")["message"])


def test_under_a2a_the_agent_sends_the_rules_message_or_the_satisficers_reasoning():
    with_words = played("a2a", lambda s: Attendance(True, "count me in")).agents_frame().query("round > 0")
    assert (with_words["message"] == "count me in").all()
    declined = played("a2a", never).agents_frame().query("round > 0")["message"]
    assert declined.str.startswith("Too").all()
    assert not played("a2a", never).frame().equals(played("a2a").frame()), "under A2A decisions move proposals"


def test_a_rule_reads_its_neighbours_notes():
    seen = []

    def follower(situation) -> bool:
        seen.append((situation.round, situation.neighbour_notes))
        return sum(" joins:" in note for note in situation.neighbour_notes) * 2 > len(situation.neighbour_notes)

    played("a2a", follower)
    assert all(notes == () for round_number, notes in seen if round_number == 1)
    assert all(note.startswith("Agent ") for round_number, notes in seen if round_number > 1 for note in notes)
    assert any(notes for round_number, notes in seen if round_number > 1)


def test_one_rule_per_agent_in_node_order_or_by_name():
    own = joins(played("rep_numerical"))
    listed = joins(played("rep_numerical", [never, None, None, None, None, thrifty]))
    named = joins(played("rep_numerical", {"Agent 0": never}))
    for theirs in (listed, named):
        assert not theirs.query("agent == 0")["joins"].any()
    assert named.query("agent > 0").equals(own.query("agent > 0")), "agents not named keep their own rule"
    assert listed.query("0 < agent < 5").equals(own.query("0 < agent < 5"))


@pytest.mark.parametrize(
    ("policy", "problem"),
    [
        ([never, thrifty], r"policy= has 2 policies for 6 agents \(Agent 0, Agent 1, "),
        ({"agent 0": never}, r"policy= names 'agent 0', not an agent of this model: its agents are Agent 0, "),
    ],
)
def test_a_wrong_count_or_an_unknown_name_is_refused_before_any_work(policy, problem):
    with pytest.raises(ParameterError, match=problem):
        MovieScheduling(policy=policy, **SMALL)


@pytest.mark.parametrize("returned", ["yes", 1, None, Attendance(1)])
def test_a_wrong_decision_is_refused_naming_the_rule_the_value_and_what_is_decided(returned):
    def sloppy(situation):
        return returned

    with pytest.raises(DecisionError) as refused:
        played("rep_numerical", sloppy)
    message = str(refused.value)
    assert message.startswith(
        f"policy 'sloppy' returned {returned!r}: a moviegoer decides whether to join, True or False"
    )


def test_a_registered_name_is_a_policy_the_model_takes():
    register_policy(MovieScheduling, "thrifty", thrifty)
    assert_frame_equal(played("a2a", "thrifty").agents_frame(), played("a2a", thrifty).agents_frame())


def test_check_policy_passes_a_deterministic_rule_and_catches_an_undeclared_coin():
    report = check_policy(thrifty, MovieScheduling, **SMALL)
    assert report.passed, str(report)
    draws = random.Random(0)
    coin = check_policy(lambda situation: draws.random() < 0.5, MovieScheduling, **SMALL)
    assert [(c.name.split(":")[0], c.passed) for c in coin.checks] == [("decides", True), ("deterministic", False)]


def test_a_tournament_fields_each_rule_as_the_whole_population_and_mixed():
    result = tournament(MovieScheduling, [thrifty, never], seeds=2, progress=False, protocol="a2a", **SMALL)
    assert set(result.table["field"]) == {"whole population", "mixed"}
    assert sorted(result.table["entrant"].unique()) == ["never", "thrifty"]
    assert result.table["score"].between(0, 1).all(), "a utility of the plan: at most 1 (the ideal), 0 if not joining"
