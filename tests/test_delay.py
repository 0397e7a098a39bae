"""The continuous prisoner's dilemma with communication delay: timing, payoffs, policies, fast path, the U-shape."""

import numpy as np
import pandas as pd
import pytest

from coordkit.delay import fast, metrics, stand_in
from coordkit.delay.experiments import compare_figure3, figure3, figure4, trial, u_shape
from coordkit.delay.game import C, D, UNKNOWN, Payoffs, Timing
from coordkit.delay.llm_player import parse_action
from coordkit.delay.model import DelayedDilemma, ticks_frame
from coordkit.delay.policies import Persona
from coordkit.llm import ScriptedClient
from coordkit.policies import ReplyParseError
from coordkit.seeds import derive_seeds


@pytest.mark.parametrize("a, b, expected", [
    ("tit_for_tat", "always_defect", (0 + 59 * 1, 5 + 59 * 1)),  # S + 59·P against T + 59·P
    ("tit_for_tat", "tit_for_tat", (60 * 3, 60 * 3)),
    ("always_cooperate", "always_defect", (0, 60 * 5)),
    ("grim_trigger", "always_defect", (59, 64)),
    ("grim_trigger", "always_cooperate", (180, 180)),
    ("always_defect", "always_defect", (60, 60)),
])
def test_without_delay_classic_pairs_earn_the_discrete_repeated_game_payoffs(a, b, expected):
    model = trial(policy_a=a, policy_b=b)
    assert (model.players[0].payoff, model.players[1].payoff) == expected
    assert model.timing.total_ticks == 60


def test_a_change_takes_effect_exactly_its_delay_later():
    ticks = ticks_frame(trial(delay_a=3, delay_b=5, policy_a="always_defect", policy_b="tit_for_tat"))
    assert list(ticks["effective_a"][:4]) == [UNKNOWN] * 3 + [D]  # A's first choice arrives at tick 3
    # B sees A's defection after tick 3, so chooses D at tick 4; it takes effect 5 ticks later, at tick 9
    assert ticks["choice_b"][3] == C and ticks["choice_b"][4] == D
    assert ticks["effective_b"][8] == C and ticks["effective_b"][9] == D
    assert len(ticks) == 60 + 5  # effective play plus the longer delay


def test_payoffs_accrue_on_effective_actions_and_add_up():
    model = trial(seed=7, delay_a=4, delay_b=9, p=0.8, alpha=0.2)
    ticks = ticks_frame(model)
    per_tick = [Payoffs().of(a, b) for a, b in zip(ticks["effective_a"], ticks["effective_b"])]
    assert sum(per_tick) == model.players[0].payoff == ticks["payoff_a"].iloc[-1]
    totals = metrics.payoff_totals(metrics.effective_codes(ticks)).iloc[0]
    assert (totals["payoff_a"], totals["payoff_b"]) == (model.players[0].payoff, model.players[1].payoff)
    assert all(ticks.loc[ticks["outcome"] == UNKNOWN, "tick"] < 9)


def test_players_remember_only_the_change_points_within_their_horizon():
    model = DelayedDilemma(delay_a=2, p=0.5, alpha=0.3, memory_s=5, rng=3)
    for _ in range(40):
        model.step()
    seen = model.players[0].observe(model.players[1])
    assert seen.history and all(change.time_s > seen.time_s - 5 for change in seen.history)
    assert len(model.changes) > len(seen.history)


def test_same_seed_same_trial_and_different_seeds_differ():
    one, again = (ticks_frame(trial(seed=11, delay_a=5)) for _ in range(2))
    pd.testing.assert_frame_equal(one, again)
    assert not ticks_frame(trial(seed=12, delay_a=5)).equals(one)


@pytest.mark.parametrize("delays", [(0, 0), (5, 5), (20, 20), (3, 12), (15, 0)])
@pytest.mark.parametrize("p, alpha", [(0.8, 0.2), (0.9, 0.1)])
def test_the_fast_path_plays_exactly_the_mesa_models_trials(delays, p, alpha):
    seeds = derive_seeds(4, 12)
    played = fast.simulate(seeds, p, alpha, *delays)
    for k, seed in enumerate(seeds):
        model = trial(seed, delay_a=delays[0], delay_b=delays[1], p=p, alpha=alpha)
        np.testing.assert_array_equal(metrics.effective_codes(ticks_frame(model))[:, 0], played.effective[:, k])


def test_the_u_shape_holds_for_the_papers_parameters_over_500_trials():
    shape = u_shape(figure4(trials=500))
    assert len(shape) == 4 and shape["u_shape"].all()
    assert (shape["at_0s"] == 1.0).all()  # without delay nobody is ever tempted


@pytest.mark.parametrize("params, message", [
    ({"delay_a": -1}, "cannot be negative"),
    ({"delay_a": 2.5}, "whole number"),
    ({"p": 1.2}, "probability"),
    ({"alpha": -0.1}, "must not be negative"),
    ({"memory_s": 0}, "memory horizon"),
    ({"policy_a": "titfortat"}, "unknown policy"),
    ({"policy_a": "llm"}, "needs llm="),
    ({"payoffs": None}, None),
])
def test_bad_parameters_get_clear_errors(params, message):
    if message is None:
        with pytest.raises(ValueError, match="T > R > P > S"):
            Payoffs(temptation=2)
        with pytest.raises(ValueError, match=r"\[-1, 1\]"):
            Persona(agreeableness=2)
        return
    with pytest.raises(ValueError, match=message):
        DelayedDilemma(**params)


def test_llm_players_read_the_delays_and_answer_in_json():
    client = ScriptedClient(stand_in.reply)
    model = trial(seed=1, delay_a=5, policy_a="llm", llm=client)
    assert model.llm_calls == 2 * 65 and model.llm_fallbacks == 0
    prompt = " ".join(client.requests[10].messages[0][1].split())
    assert "5 s after you choose it" in prompt and "exploit" not in prompt.lower()
    assert client.requests[0].system == Persona().text() and client.requests[0].temperature == 1.0


def test_an_llm_answering_nonsense_falls_back_to_the_personas_rule_and_counts_it():
    model = trial(seed=2, delay_a=5, policy_a="llm", llm=ScriptedClient(["no idea"], repeat=True))
    rules = trial(seed=2, delay_a=5, policy_a="persona")
    pd.testing.assert_frame_equal(ticks_frame(model), ticks_frame(rules))
    assert model.llm_fallbacks == model.llm_calls == 130


@pytest.mark.parametrize("text, action", [('{"action": "D"}', D), ('```json\n{"action": "cooperate"}\n```', C)])
def test_the_action_parser_reads_c_or_d(text, action):
    assert parse_action(text) == action


@pytest.mark.parametrize("text", ['{"action": "maybe"}', "C", '{"estimate": "nice"}'])
def test_the_action_parser_refuses_anything_else(text):
    with pytest.raises(ReplyParseError):
        parse_action(text)


def test_figure3_with_llm_players_counts_their_calls():
    frame = figure3(trials=2, delays=(0, 5), llm=ScriptedClient(stand_in.reply))
    assert set(frame["delay"]) == {0, 5} and frame.groupby("delay")["llm_calls"].first().tolist() == [120, 130]
    assert list(compare_figure3(frame)["metric"]) == ["mutual cooperation", "mutual defection", "exploitation"]


def test_shares_cover_the_last_twenty_seconds_only():
    effective = np.zeros((2, 1, 65), dtype=np.int8)
    effective[1, 0, :45] = 1  # B defects until 20 s before the end
    row = metrics.shares(effective, Timing(5, 5)).iloc[0]
    assert row["mutual_cooperation"] == 1.0 and row["exploitation"] == 0.0


def test_a_trial_summary_is_one_sweepable_row():
    from coordkit.delay.experiments import trial_summary
    from coordkit.sweep import sweep

    frame = sweep(trial_summary, {"delay_a": [0, 10]}, seeds=3, progress=False)
    assert len(frame) == 6 and {"mutual_cooperation", "payoff_a", "llm_calls"} <= set(frame.columns)
    assert (frame.query("delay_a == 0")["mutual_cooperation"] == 1.0).all()
