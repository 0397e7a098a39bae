"""The continuous prisoner's dilemma with communication delay: timing, payoffs, policies, fast path, the U-shape."""

import math

import numpy as np
import pandas as pd
import pytest
import vl_convert

from coordkit.delay import DelayedDilemma, charts, fast, metrics, panels, stand_in
from coordkit.delay.experiments import compare_figure3, compare_figure4, figure3, figure4, u_shape
from coordkit.delay.game import UNKNOWN, C, D, Payoffs, Timing
from coordkit.delay.llm_policies import parse_action
from coordkit.delay.policies import Change, Persona
from coordkit.live_chart import spec_of
from coordkit.llm import ScriptedClient
from coordkit.llm.parsing import ReplyParseError
from coordkit.parameters import ParameterError
from coordkit.seeds import derive_seeds
from coordkit.sweeps import sweep


def play(seed: int = 0, **params) -> DelayedDilemma:
    return DelayedDilemma(rng=seed, **params).run()


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("tit_for_tat", "always_defect", (0 + 59 * 1, 5 + 59 * 1)),  # S + 59·P against T + 59·P
        ("tit_for_tat", "tit_for_tat", (60 * 3, 60 * 3)),
        ("always_cooperate", "always_defect", (0, 60 * 5)),
        ("grim_trigger", "always_defect", (59, 64)),
        ("grim_trigger", "always_cooperate", (180, 180)),
        ("always_defect", "always_defect", (60, 60)),
    ],
)
def test_without_delay_classic_pairs_earn_the_discrete_repeated_game_payoffs(a, b, expected):
    model = play(policy_a=a, policy_b=b)
    assert (model.players[0].payoff, model.players[1].payoff) == expected
    assert (model.summary()["payoff_a"], model.summary()["payoff_b"]) == expected
    assert model.timing.total_ticks == model.steps == 60


def test_row_0_of_the_frame_is_the_initial_state_then_one_row_per_tick():
    model = play(delay_a=2, tick_s=0.5, duration_s=10)
    frame = model.frame()
    assert list(frame.iloc[0]) == [0, 0.0, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, 0.0, 0.0]
    assert list(frame["tick"]) == list(range(model.steps + 1)) and model.steps == 20 + 4
    assert list(frame["time_s"]) == [0.5 * tick for tick in frame["tick"]]  # the clock at the end of the tick
    assert (frame["choice_a"].iloc[1:] != UNKNOWN).all()  # every tick after row 0 has a choice
    assert metrics.effective_codes(frame).shape == (2, 1, model.steps)  # the ticks, without the initial state


def test_a_change_takes_effect_exactly_its_delay_later():
    ticks = play(delay_a=3, delay_b=5, policy_a="always_defect", policy_b="tit_for_tat").frame().set_index("tick")
    assert list(ticks["effective_a"].loc[1:4]) == [UNKNOWN] * 3 + [D]  # A's first choice (tick 1) arrives at tick 4
    # B sees A's defection after tick 4, so chooses D at tick 5; it takes effect 5 ticks later, at tick 10
    assert ticks.loc[4, "choice_b"] == C and ticks.loc[5, "choice_b"] == D
    assert ticks.loc[9, "effective_b"] == C and ticks.loc[10, "effective_b"] == D
    assert ticks.index[-1] == 60 + 5  # effective play plus the longer delay


def test_players_see_the_server_of_the_tick_before_at_its_end_time():
    client = ScriptedClient(stand_in.reply)
    model = play(delay_a=2, policy_a="llm", policy_b="always_defect", llm=client)
    prompts = [request.messages[-1][1] for request in client.requests]
    assert "server time 0 s" in prompts[0] and "server time 3 s" in prompts[3]  # tick t observes (t − 1)·Δt
    assert "Player B unknown" in prompts[2] and "Player B D" in prompts[3]  # B's tick-1 choice is in effect at 3
    # both first choices became effective at tick 3, which starts at 2 s
    assert model.changes[:2] == [Change(2.0, "A", C), Change(2.0, "B", D)]


def test_payoffs_accrue_on_effective_actions_and_add_up():
    model = play(seed=7, delay_a=4, delay_b=9, p=0.8, alpha=0.2)
    ticks = model.frame()
    per_tick = [Payoffs().of(a, b) for a, b in zip(ticks["effective_a"], ticks["effective_b"])]
    assert sum(per_tick) == model.players[0].payoff == ticks["payoff_a"].iloc[-1]
    totals = metrics.payoff_totals(metrics.effective_codes(ticks)).iloc[0]
    assert (totals["payoff_a"], totals["payoff_b"]) == (model.players[0].payoff, model.players[1].payoff)
    assert all(ticks.loc[ticks["outcome"] == UNKNOWN, "tick"] <= 9)


def test_the_summary_counts_the_models_own_payoffs():
    payoffs = Payoffs(temptation=10, reward=6, punishment=2, sucker=-1)
    model = play(policy_a="tit_for_tat", policy_b="always_defect", payoffs=payoffs)
    assert (model.summary()["payoff_a"], model.summary()["payoff_b"]) == (-1 + 59 * 2, 10 + 59 * 2)


def test_players_remember_only_the_change_points_within_their_horizon():
    model = DelayedDilemma(delay_a=2, p=0.5, alpha=0.3, memory_s=5, rng=3)
    for _ in range(40):
        model.step()
    seen = model.players[0].observe(model.players[1])  # before its next choice, at tick 41
    assert seen.tick == 41 and seen.time_s == 40.0
    assert seen.history and all(change.time_s > seen.time_s - 5 for change in seen.history)
    assert len(model.changes) > len(seen.history)


def test_same_seed_same_trial_and_different_seeds_differ():
    one, again = (play(seed=11, delay_a=5).frame() for _ in range(2))
    pd.testing.assert_frame_equal(one, again)
    assert not play(seed=12, delay_a=5).frame().equals(one)


@pytest.mark.parametrize("delays", [(0, 0), (5, 5), (20, 20), (3, 12), (15, 0)])
@pytest.mark.parametrize("p, alpha", [(0.8, 0.2), (0.9, 0.1)])
def test_the_fast_path_plays_exactly_the_mesa_models_trials(delays, p, alpha):
    seeds = derive_seeds(4, 12)
    played = fast.simulate(seeds, p, alpha, *delays)
    for k, seed in enumerate(seeds):
        model = play(seed, delay_a=delays[0], delay_b=delays[1], p=p, alpha=alpha)
        np.testing.assert_array_equal(metrics.effective_codes(model.frame())[:, 0], played.effective[:, k])


@pytest.mark.parametrize("kept", [True, False])
@pytest.mark.parametrize("durations", [(300.0, 60.0, 130.0), (60.0, 300.0)])
def test_the_fast_path_plays_the_mesa_models_trials_whatever_draws_it_kept(durations, kept, monkeypatch):
    if not kept:
        monkeypatch.setattr(fast, "KEPT", 0)
    fast.kept_draws.cache_clear()
    seeds = derive_seeds(5, 6)
    for duration in durations:
        played = fast.simulate(seeds, 0.8, 0.2, 5, 10, duration_s=duration)
        for k, seed in enumerate(seeds):
            model = play(seed, delay_a=5, delay_b=10, p=0.8, alpha=0.2, duration_s=duration)
            np.testing.assert_array_equal(metrics.effective_codes(model.frame())[:, 0], played.effective[:, k])
    assert fast.kept_draws.cache_info().currsize == (2 if kept else 0)


def test_the_u_shape_holds_for_the_papers_parameters_over_500_trials():
    shape = u_shape(figure4(500))
    assert len(shape) == 4 and shape["u_shape"].all()
    assert (shape["at_0s"] == 1.0).all()  # without delay nobody is ever tempted


def test_figure4_at_one_seed_has_no_interval_and_still_compares_and_charts():
    data = figure4(1)
    assert len(data) == 20 and (data["trial"] == 0).all()
    summary = metrics.summarise(data, ["p", "alpha", "delay"])
    assert summary["low"].isna().all() and summary["high"].isna().all() and summary["mean"].notna().all()
    assert len(compare_figure4(data)) == 9
    svg = vl_convert.vegalite_to_svg(charts.figure4(data).to_dict())
    assert svg.startswith("<svg") and "NaN" not in svg
    assert "mutual cooperation (CC)" in svg and "mutual_cooperation" not in svg  # panels titled in words
    two = metrics.summarise(figure4(2), ["p", "alpha", "delay"])
    assert (two["low"] <= two["mean"]).all() and (two["mean"] <= two["high"]).all()  # two trials: an interval


@pytest.mark.parametrize(
    "params, message",
    [
        ({"delay_a": -1}, "delay_a=-1 is out of range"),
        ({"delay_a": 1e9}, "delay_a=1000000000.0 is out of range"),
        ({"delay_b": math.inf}, "delay_b=inf is not a finite number"),
        ({"delay_a": 2.5}, "whole number of ticks"),
        ({"delay_b": 3, "tick_s": 2.0}, "delay_b=3.0 s is not a whole number of ticks"),
        ({"p": 1.2}, r"p takes a number in \[0, 1\]"),
        ({"p": math.nan}, "p=nan is not a finite number"),
        ({"alpha": -0.1}, "alpha=-0.1 is out of range"),
        ({"alpha": math.nan}, "alpha=nan is not a finite number"),
        ({"memory_s": 0}, r"memory_s takes a number in \(0, 3600\]"),
        ({"memory_s": math.nan}, "memory_s=nan is not a finite number"),
        ({"duration_s": 1e7}, "duration_s=10000000.0 is out of range"),
        ({"duration_s": 0.5}, "shorter than one tick"),
        ({"tick_s": 0}, "tick_s=0 is out of range"),
        ({"tick_s": 0.01, "duration_s": 3600}, "ticks, above the 20,000 a trial may last"),
        ({"policy_a": "titfortat"}, "did you mean 'tit_for_tat'"),
        ({"policy_b": "llm"}, "needs llm="),
        ({"persona_b": "agreeable"}, "persona_b='agreeable' is a str"),
        ({"payoffs": None}, "payoffs=None"),
    ],
)
def test_bad_parameters_get_clear_errors(params, message):
    with pytest.raises(ParameterError, match=message):
        DelayedDilemma(**params)


def test_the_fast_path_checks_its_values_like_the_model():
    with pytest.raises(ParameterError, match="alpha=nan"):
        fast.simulate([1], 0.9, math.nan, 5)
    with pytest.raises(ParameterError, match="delay_a=2.5 s is not a whole number"):
        fast.simulate([1], 0.9, 0.1, 2.5)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Payoffs(temptation=2), "T > R > P > S"),
        (lambda: Payoffs(temptation=math.inf), "finite"),
        (lambda: Payoffs(sucker=math.nan), "finite"),
        (lambda: Persona(agreeableness=2), r"\[-1, 1\]"),
        (lambda: Persona(neuroticism=math.nan), r"\[-1, 1\]"),
    ],
)
def test_payoffs_and_personas_refuse_impossible_values(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_llm_players_read_the_delays_and_answer_in_json():
    client = ScriptedClient(stand_in.reply)
    model = play(seed=1, delay_a=5, policy_a="llm", llm=client)
    assert model.llm_calls == 2 * 65 and model.llm_fallbacks == 0
    prompt = " ".join(client.requests[10].messages[0][1].split())
    assert "5 s after you choose it" in prompt and "exploit" not in prompt.lower()
    assert client.requests[0].system == Persona().text() and client.requests[0].temperature == 1.0


def test_an_llm_answering_nonsense_falls_back_to_the_personas_rule_and_counts_it():
    model = play(seed=2, delay_a=5, policy_a="llm", llm=ScriptedClient(["no idea"], repeat=True))
    rules = play(seed=2, delay_a=5, policy_a="persona")
    pd.testing.assert_frame_equal(model.frame(), rules.frame())
    assert model.llm_fallbacks == model.llm_calls == 130


@pytest.mark.parametrize("text, action", [('{"action": "D"}', D), ('```json\n{"action": "cooperate"}\n```', C)])
def test_the_action_parser_reads_c_or_d(text, action):
    assert parse_action(text) == action


@pytest.mark.parametrize("text", ['{"action": "maybe"}', "C", '{"estimate": "nice"}'])
def test_the_action_parser_refuses_anything_else(text):
    with pytest.raises(ReplyParseError):
        parse_action(text)


def test_figure3_with_llm_players_counts_their_calls():
    frame = figure3(2, delays=(0, 5), llm=ScriptedClient(stand_in.reply))
    assert set(frame["delay"]) == {0, 5} and frame.groupby("delay")["llm_calls"].first().tolist() == [120, 130]
    assert frame.groupby("delay")["second"].max().tolist() == [59, 64]  # the ticks, without the initial state
    assert list(compare_figure3(frame)["metric"]) == ["mutual cooperation", "mutual defection", "exploitation"]


def test_shares_cover_the_last_twenty_seconds_only():
    effective = np.zeros((2, 1, 65), dtype=np.int8)
    effective[1, 0, :45] = 1  # B defects until 20 s before the end
    row = metrics.shares(effective, Timing(5, 5)).iloc[0]
    assert row["mutual_cooperation"] == 1.0 and row["exploitation"] == 0.0


def test_a_sweep_over_the_model_gives_one_summary_row_per_trial():
    frame = sweep(DelayedDilemma, {"delay_a": [0, 10]}, seeds=3, progress=False)
    assert len(frame) == 6 and {"mutual_cooperation", "payoff_a", "llm_calls"} <= set(frame.columns)
    assert (frame.query("delay_a == 0")["mutual_cooperation"] == 1.0).all()
    last = frame.iloc[-1]
    assert last.drop(["delay_a", "seed"]).to_dict() == play(int(last["seed"]), delay_a=10).summary()
    with pytest.raises(ParameterError, match="grid combination"):
        sweep(DelayedDilemma, {"alpha": [0.1, math.nan]}, seeds=1, progress=False)


def test_the_raster_draws_the_measured_last_20_seconds_at_full_strength():
    rows = figure3(2, delays=(0, 5))
    spec = charts.raster(rows).to_dict()
    (values,) = spec["datasets"].values()
    cells = pd.DataFrame(values)
    measured = cells[cells["window"] == "the last 20 s (measured)"]
    assert measured.groupby(["delay", "trial"]).size().eq(20).all()
    last = cells.groupby("delay")["second"].transform("max")
    assert (measured["second"] > last[measured.index] - 20).all()


@pytest.mark.parametrize("duration_s", [20, 60, 300])
def test_the_explore_view_shows_every_outcome_of_the_last_20_seconds_and_the_whole_trial(duration_s):
    played = fast.simulate(derive_seeds(3, 40), 0.9, 0.1, 5, 10, duration_s=duration_s)
    bars, raster = charts.explore(played, 0.9, 0.1)
    spec = bars.to_dict()
    (values,) = spec["datasets"].values()
    summary = pd.DataFrame(values)
    assert list(summary["outcome"]) == list(charts.OUTCOME_NAMES.values())  # CC, CD, DC, DD in words
    assert summary["mean"].sum() == pytest.approx(1.0)  # every measured second has an outcome
    assert ((summary["low"] <= summary["mean"]) & (summary["mean"] <= summary["high"])).all()
    shares = metrics.shares(played.effective, played.timing)
    assert summary.set_index("measure").loc["a_exploited", "mean"] == pytest.approx(shares["a_exploited"].mean())
    per_second = metrics.payoff_totals(played.effective).mean() / duration_s
    assert spec["title"][0].startswith(f"40 trials of {duration_s} s, delays A 5 s / B 10 s")
    assert f"A {per_second['payoff_a']:.2f}, B {per_second['payoff_b']:.2f}" in spec["title"][1]
    (cells,) = raster.to_dict()["datasets"].values()
    cells = pd.DataFrame(cells)
    assert cells.groupby("trial").size().eq(duration_s + 10).all() and cells["trial"].nunique() == 10


def test_the_explore_view_keeps_its_axes_whatever_the_data():
    """The panel's spec changes only in data and titles from one setting to the next (CONTRIBUTING, charts.py)."""
    specs = [
        charts.explore(fast.simulate(derive_seeds(0, 50), p, 0.1, delay, duration_s=length), p, 0.1)
        for p, delay, length in [(0.9, 5, 60), (0.6, 20, 300)]
    ]
    for one, other in zip(*specs):
        one, other = one.to_dict(), other.to_dict()
        for spec in (one, other):
            spec.pop("datasets"), spec.pop("data", None), spec.pop("title", None)
        assert one == other


PAPERS_DELAYS = {"delay_a": 5, "delay_b": 5}  # notebook 04 starts its panel there, visibly


def test_the_explore_panel_starts_at_the_papers_setting_and_draws_the_explore_view():
    panel = panels.explore_panel(start=PAPERS_DELAYS)
    assert panel.values == {
        "delay_a": 5,
        "delay_b": 5,
        "duration_s": 60,
        "policy_a": "simplified",
        "p": 0.9,
        "alpha": 0.1,
        "agreeableness": 1.0,
        "conscientiousness": -1.0,
        "neuroticism": 1.0,
        "trials": 200,
    }
    spans = {name: (control.min, control.max) for name, control in panel.controls.items() if hasattr(control, "min")}
    assert spans["duration_s"] == (20, 300) and spans["p"] == (0.5, 1.0) and spans["trials"] == (50, 500)
    assert panel.controls["alpha"].description == "α" and panel.controls["duration_s"].description.startswith("trial")
    assert panel.params["policy_a"].values == ("simplified", "persona")
    bars, raster = charts.explore(fast.simulate(derive_seeds(0, 200), 0.9, 0.1, 5, 5, 60), 0.9, 0.1)
    assert [slot.spec for slot in panel.output.children] == [spec_of(bars), spec_of(raster)]


def test_the_explore_panel_plays_again_when_a_delay_changes():
    panel = panels.explore_panel(start=PAPERS_DELAYS)
    panel.controls["delay_b"].value = 20
    assert panel.last_error is None
    assert panel.output.children[0].spec["title"][0] == "200 trials of 60 s, delays A 5 s / B 20 s, p = 0.90, α = 0.100"
    assert panel.result[0].timing.delay_b == 20


def test_the_explore_panel_greys_out_what_the_chosen_player_ignores():
    panel = panels.explore_panel(start=PAPERS_DELAYS)
    traits = {"agreeableness", "conscientiousness", "neuroticism"}
    assert {name for name, control in panel.controls.items() if control.disabled} == traits
    panel.controls["policy_a"].value = panel.params["policy_a"].values.index("persona")
    assert {name for name, control in panel.controls.items() if control.disabled} == {"p", "alpha"}
    assert panel.result[1:] == Persona(1.0, -1.0, 1.0).parameters()  # the paper's persona plays its own p and α
    assert panel.last_error is None


def drawn(game: DelayedDilemma, kind: str) -> list[dict]:
    """The records of one kind ("cell", "arrow", "frame") that the state view draws for ``game`` as it stands."""
    (records,) = spec_of(charts.trial_now(game))["datasets"].values()
    return [record for record in records if record["kind"] == kind]


def lane_by_tick(cells: list[dict], lane: int, ticks: int) -> list[str]:
    """The states the runs of one lane give each tick 1 … ``ticks`` (a run spans its ticks' seconds)."""
    runs = [cell for cell in cells if cell["y0"] == lane - 0.3]
    return [next(run["state"] for run in runs if run["x0"] < t <= run["x1"]) for t in range(1, ticks + 1)]


@pytest.mark.parametrize("delays", [(0, 0), (5, 5), (2, 9)])
def test_the_state_view_lays_out_the_choices_and_what_is_in_effect_as_the_model_holds_them(delays):
    game = DelayedDilemma(delay_a=delays[0], delay_b=delays[1], rng=4)
    for _ in range(25):
        game.step()
    frame, cells = game.frame().iloc[1:], drawn(game, "cell")
    columns = ["choice_a", "effective_a", "outcome", "effective_b", "choice_b"]
    for lane, column in enumerate(columns):
        assert lane_by_tick(cells, lane, 25) == frame[column].tolist(), column


def test_the_state_view_draws_each_change_of_action_from_sent_to_arrived_by_hand():
    # notebook 04, §2: tit-for-tat (A) against always-defect (B), both 3 s late; after 6 ticks
    game = DelayedDilemma(delay_a=3, policy_a="tit_for_tat", policy_b="always_defect", rng=0)
    for _ in range(6):
        game.step()
    arrows = [(a["y0"] < 2, a["state"], a["x0"], a["x1"], a["status"]) for a in drawn(game, "arrow")]
    assert arrows == [
        (True, "C", 0, 3, "arrived"),  # A's first C, sent at 0 s, on the server from 3 s
        (True, "D", 4, 7, "in flight"),  # A's answer to B's D, seen at tick 5, lands at tick 8 (7 s)
        (False, "D", 0, 3, "arrived"),  # B's D, all along: one change, its first
    ]
    frames = [(f["x0"], f["x1"], f["dash"]) for f in drawn(game, "frame")]
    assert frames == [(3, 6, charts.IN_FLIGHT), (3, 6, charts.IN_FLIGHT), (6, 6, [1, 0])]  # the last 3 s; now
    assert spec_of(charts.trial_now(game))["title"] == [
        "tick 6 of 63 · points: A 0, B 15",  # B has earned T = 5 on ticks 4 to 6
        "A sees B: D, chosen 3 s ago · B's latest choice: D",
        "B sees A: C, chosen 3 s ago · A's latest choice: D",
    ]


def test_an_arrow_without_delay_points_straight_across_and_one_with_delay_leans_by_it():
    game = DelayedDilemma(delay_a=0, delay_b=10, rng=0)
    game.step()
    a, b = sorted(drawn(game, "arrow"), key=lambda arrow: arrow["y0"])
    assert a["angle"] == 180 and a["x0"] == a["x1"] == 0  # A's arrow points down the chart, at once
    px_right = 10 * charts.TRIAL_PX / 70  # 10 s of a 70 s axis
    px_up = (4 - 3 - 0.6) * charts.LANE_PX
    assert b["angle"] == pytest.approx(math.degrees(math.atan2(px_right, px_up)))  # B's points up and right
    assert drawn(game, "frame")[0] == {
        "kind": "frame",
        "x0": 0,
        "x1": 1,
        "dash": charts.IN_FLIGHT,
        "y0": 3.62,
        "y1": 4.38,
    }


def test_the_player_replays_section_2_and_greys_out_what_its_players_ignore():
    panel = panels.player_panel(
        start={"delay_a": 3, "delay_b": 3, "policy_a": "tit_for_tat", "policy_b": "always_defect"}
    )
    assert list(panel.values) == [*panels.PLAYED, "seed"] and "llm" not in panel.params["policy_a"].values
    assert {name for name, control in panel.controls.items() if control.disabled} == {"p", "alpha", "seed"}
    game = panel.run_to_end()
    assert (game.steps, game.players[0].payoff, game.players[1].payoff) == (63, 56, 76)  # §2's formula at 3 s
    panel.controls["policy_b"].value = panel.params["policy_b"].values.index("simplified")
    assert panel.model.steps == 0 and not any(control.disabled for control in panel.controls.values())
