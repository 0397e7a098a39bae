"""Pressure fields on Latin squares: puzzles, pressure, the paper's algorithm, its baselines and the published code."""

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from coordkit import stats, viz
from coordkit.figures import COMPARISON
from coordkit.live_chart import spec_of
from coordkit.llm import ScriptedClient
from coordkit.parameters import ParameterError
from coordkit.pressure import charts, panels
from coordkit.pressure import experiments as ex
from coordkit.pressure.model import PressureField
from coordkit.pressure.policies import Assignment, RuleActor
from coordkit.pressure.pressure import artifact_pressure, cell_pressures, conflicts, row_pressures, row_terms
from coordkit.pressure.puzzles import EMPTY, count_completions, latin_square, make_puzzle
from coordkit.pressure.strategies import STRATEGIES
from coordkit.pressure.trace import trace


def is_latin(square: np.ndarray) -> bool:
    symbols = list(range(1, len(square) + 1))
    return all(sorted(line) == symbols for line in (*square, *square.T))


@pytest.mark.parametrize("n, empty", [(2, 2), (3, 3), (5, 5), (5, 9), (7, 7), (7, 8)])
def test_every_puzzle_has_exactly_one_completion(n, empty):
    rng = np.random.default_rng(n * 100 + empty)
    for _ in range(10):
        puzzle = make_puzzle(n, empty, rng)
        assert puzzle.empty == empty and is_latin(puzzle.solution)
        assert count_completions(puzzle.grid, limit=5) == 1
        givens = puzzle.grid != EMPTY
        assert (puzzle.grid[givens] == puzzle.solution[givens]).all()


def test_random_latin_squares_are_uniform_over_the_twelve_3x3_squares():
    rng = np.random.default_rng(1)
    counts = Counter(tuple(latin_square(3, rng).ravel()) for _ in range(2400))
    assert len(counts) == 12 and all(150 <= c <= 250 for c in counts.values())  # 200 expected each


def test_completions_are_counted_up_to_the_limit():
    assert count_completions(np.zeros((3, 3), dtype=int), limit=100) == 12
    assert count_completions(np.array([[1, 1], [0, 0]])) == 0


def test_pressure_by_hand():
    grid = np.array(
        [
            [1, 1, 0],  # one empty, one duplicate (1 twice), no column conflicts: 1 + 10 = 11
            [2, 3, 1],  # complete; its 1 in column 2 shares nothing: 0
            [3, 0, 1],  # one empty, and its 1 in column 2 repeats row 1's: 1 + 10 = 11 ...
        ]
    )
    assert row_terms(grid).tolist() == [[1, 1, 0], [0, 0, 1], [1, 0, 1]]  # ... and row 1's 1 conflicts too
    assert row_pressures(grid).tolist() == [11, 10, 11] and artifact_pressure(grid) == 32
    assert conflicts(grid).tolist() == [[True, True, False], [False, False, True], [False, False, True]]
    assert artifact_pressure(latin_square(5, np.random.default_rng(0))) == 0


@pytest.mark.parametrize("strategy", ["pressure_field", "hierarchical", "random", "conversation"])
def test_with_the_acceptance_gate_no_patch_raises_its_rows_pressure(strategy):
    for seed in range(8):
        model = PressureField(
            strategy=strategy, n=5, empty=6, agent_count=2, acceptance_gate=True, skill=0.0, rng=seed
        ).run()
        rows = model.rows_frame().pivot(index="tick", columns="row", values="pressure")
        patched = model.rows_frame().query("patched")
        assert len(patched) > 0
        for _, change in patched.iterrows():
            assert rows.at[change["tick"], change["row"]] < rows.at[change["tick"] - 1, change["row"]]


def test_without_decay_final_pressure_is_much_worse():
    frame = ex.ablation(seeds=30)
    effect = ex.decay_effect(frame)
    assert effect.off.mean > 5 * max(effect.on.mean, 1.0) and effect.on.n == effect.off.n == 120
    assert effect.cohens_d > 0.8 and effect.welch.p_value < 1e-6
    assert effect.welch.statistic < 0  # on against off, as the paper's t = -32.2
    assert not frame.attrs  # the statistics are an object, not DataFrame.attrs


def test_arms_that_end_alike_leave_the_decay_test_undefined_and_say_so():
    frame = pd.DataFrame({"decay": [True, True, False, False], "final_pressure": [0, 0, 0, 0]})
    effect = ex.decay_effect(frame)  # (a few trials with LLM agents that all solve: no spread to weigh)
    assert effect.welch is None and effect.cohens_d is None and effect.on.mean == effect.off.mean == 0
    assert str(effect) == "undefined: neither arm's final pressure varies"


def test_decay_lets_a_row_that_looks_stable_be_reconsidered():
    for decay in (False, True):
        model = PressureField(n=5, empty=5, decay=decay, focus=5, rng=3)
        row = int(np.flatnonzero(model.actionable)[0])
        model.regions[row].fitness = model.regions[row].confidence = 1.0  # it looks perfect, yet has work left
        assert row not in model.coordination.activated_rows(model)
        for _ in range(3):
            model.apply_decay()
        assert (row in model.coordination.activated_rows(model)) == decay


def test_same_seed_same_trial():
    one, again = (PressureField(n=6, empty=8, skill=0.0, rng=5).run() for _ in range(2))
    pd.testing.assert_frame_equal(one.frame(), again.frame())
    pd.testing.assert_frame_equal(one.rows_frame(), again.rows_frame())
    assert (one.grid == again.grid).all()


def test_the_frame_starts_with_the_initial_state_and_counts_mesas_steps():
    model = PressureField(rng=0).run()
    frame = model.frame()
    assert list(frame.columns) == ["tick", "pressure", "patches", "focus", "model_tier"]
    assert frame["tick"].tolist() == list(range(model.steps + 1))
    assert frame.iloc[0]["pressure"] == model.initial_pressure and frame.iloc[0]["patches"] == 0
    assert model.summary()["ticks"] == model.steps and model.rows_frame()["tick"].max() == model.steps


def test_in_the_published_code_pressure_field_and_hierarchical_play_the_same_game():
    for seed in range(10):
        field = PressureField(strategy="pressure_field", mode="published", skill=0.3, rng=seed).run()
        boss = PressureField(strategy="hierarchical", mode="published", skill=0.3, rng=seed).run()
        pd.testing.assert_frame_equal(field.frame(), boss.frame())


def test_more_agents_propose_more_and_solve_more():
    one = ex.trials("pressure_field", 30, 0, n=7, empty=7, agent_count=1, skill=0.0, escalation=False)
    eight = ex.trials("pressure_field", 30, 0, n=7, empty=7, agent_count=8, skill=0.0, escalation=False)
    assert eight["solved"].sum() > one["solved"].sum() + 5
    assert stats.fisher_exact(eight["solved"].sum(), 30, one["solved"].sum(), 30).p_value < 0.01


def test_each_strategy_knows_its_actors_and_whether_it_reinforces_fitness():
    actors = {name: len(PressureField(strategy=name, agent_count=3, rng=0).actors) for name in STRATEGIES}
    assert actors == {"pressure_field": 3, "hierarchical": 3, "sequential": 1, "random": 3, "conversation": 0}
    assert [name for name, strategy in STRATEGIES.items() if strategy.reinforces] == ["pressure_field"]
    for name in STRATEGIES:
        model = PressureField(strategy=name, rng=0)
        while not model.applied:  # up to the first patch, before which every row's fitness is 0
            model.step()
        fitness = {model.regions[patch.row].fitness for patch in model.applied}
        assert fitness == ({0.5} if name == "pressure_field" else {0.0}), name


def test_escalation_moves_up_the_model_chain_after_twenty_stalled_ticks():
    model = PressureField(n=7, empty=7, strategy="sequential", skill=0.0, rng=2)
    model.escalate(model.best)
    assert model.tier == 0
    for _ in range(19):
        model.escalate(model.best + 3)  # no new lowest pressure
    assert model.tier == 1 and model.tier_skill == pytest.approx(0.1) and model.model_tier == "1.5B"
    assert model.skill == 0.0  # the parameter stays what it was given
    assert PressureField(n=5, empty=3, escalation=False, rng=0).skills == (0.1,)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n": 1}, r"n=1 is out of range: n takes an integer from 2 to 16"),
        ({"n": 17}, r"n=17 is out of range"),
        ({"n": 3, "empty": 10}, r"empty=10: a 3×3 grid \(n=3\) has at most 9 cells"),
        ({"empty": -1}, r"empty=-1 is out of range"),
        ({"decay_rate": -0.1}, r"decay_rate=-0.1 is out of range"),
        ({"decay_rate": math.nan}, r"decay_rate=nan is not a finite number"),
        ({"decay_rate": 1e9}, r"decay_rate=1000000000.0 is out of range"),
        ({"confidence_decay_rate": math.inf}, r"confidence_decay_rate=inf is not a finite number"),
        ({"activation": math.nan}, r"activation=nan is not a finite number"),
        ({"inhibition_ticks": -1}, r"inhibition_ticks=-1 is out of range"),
        ({"max_ticks": 10**9}, r"max_ticks=1000000000 is out of range"),
        ({"max_ticks": 100.0}, r"max_ticks=100.0 is not an integer; pass 100"),
        ({"skill": 1.5}, r"skill=1.5 is out of range: skill takes a number in \[0, 1\]"),
        ({"agent_count": 0}, r"agent_count=0 is out of range"),
        ({"agents": 4}, r"no parameter 'agents'.*agent_count"),  # renamed: Mesa's model.agents is the agent set
        ({"strategy": "chaos"}, r"strategy='chaos' is not a choice"),
        ({"mode": "code"}, r"mode='code' is not a choice"),
        ({"acceptance_gate": 1}, r"acceptance_gate=1 is not True or False"),
    ],
)
def test_bad_parameters_get_clear_errors(params, message):
    with pytest.raises(ParameterError, match=message):
        PressureField(**params)


def test_the_gate_follows_the_mode_unless_set():
    assert not PressureField(rng=0).gate and PressureField(mode="published", rng=0).gate
    assert not PressureField(mode="published", decay=False, rng=0).gate
    gated = PressureField(acceptance_gate=True, rng=0)
    assert gated.gate and gated.acceptance_gate


def test_llm_actors_answer_with_a_number_and_fall_back_on_nonsense():
    def answer(request):
        text = request.messages[0][1]
        available = text.split("Available values for position ")[1].split(": ")[1].split("]")[0]
        return available.strip("[").split(",")[0] or "9"

    model = PressureField(n=5, empty=5, agent_count=2, llm=ScriptedClient(answer), rng=1).run()
    assert model.solved and model.llm_calls > 0 and model.llm_fallbacks == 0
    garbled = PressureField(n=5, empty=5, agent_count=2, llm=ScriptedClient(["banana"], repeat=True), rng=1).run()
    assert garbled.llm_fallbacks == garbled.llm_calls > 0


def test_a_paper_tick_asks_every_actor_about_every_activated_row():
    client = ScriptedClient(["1"], repeat=True)
    model = PressureField(n=7, empty=7, agent_count=3, focus=2, llm=client, rng=0)
    model.step()
    assert len(model.focus_rows) == 2 and len(client.requests) == 3 * 2
    assert {r.purpose for r in client.requests} == {"pressure.actor"}


def test_the_published_tick_asks_one_proposal_after_another_and_stops_at_the_first_acceptable():
    client = ScriptedClient(["9"], repeat=True)  # out of range on 5×5: every reply falls back to the rule actor
    model = PressureField(n=5, empty=5, mode="published", decay=False, llm=client, rng=0)
    model.step()
    assert len(client.requests) == 1 and model.frame()["patches"].tolist() == [0, 1]  # no gate: the first goes in


def test_conversation_roles_can_be_llms_with_the_papers_prompts():
    def answer(request):
        text = request.messages[0][1]
        if "Coordinator" in text:
            return "TARGET row=0"
        if "Proposer" in text:
            return "PROPOSE position=0 value=1"
        return "APPROVE"

    client = ScriptedClient(answer)
    model = PressureField(strategy="conversation", n=5, empty=5, llm=client, max_ticks=5, rng=0).run()
    purposes = Counter(r.purpose for r in client.requests)
    assert purposes["pressure.conversation.coordinator"] == 5 and purposes["pressure.conversation.validator"] > 0
    assert model.llm_calls == len(client.requests)


# --- the figures ------------------------------------------------------------------------------------------------


def test_the_chi_square_across_strategies_is_undefined_when_every_trial_has_the_same_outcome():
    frame = pd.DataFrame({"strategy": ["pressure_field", "hierarchical"] * 2, "solved": True})
    chi = ex.strategy_tests(frame).set_index("test").loc["chi-square across strategies"]
    assert math.isnan(chi["statistic"]) and math.isnan(chi["p_value"])


def test_conversation_trials_scale_with_the_seeds_as_in_the_papers_design():
    assert [ex.conversation_seeds(30, c) for c in ("main", "escalation", "easy")] == [18, 20, 20]
    assert ex.conversation_seeds(3, "escalation") == 2 and ex.conversation_seeds(1, "main") == 1
    assert sum(count for _, _, count, _ in ex.design(30)) == 1078
    hard = ex.escalation(3).groupby(["escalation", "strategy"]).size()
    assert hard[(True, "conversation")] == hard[(False, "conversation")] == 2 and hard[(True, "random")] == 3
    easy = ex.easy(3).groupby("strategy").size()
    assert easy["conversation"] == 2 and easy["random"] == 3


def test_table6_compares_in_exactly_three_columns_with_escalation_off_as_rows():
    comparison = ex.compare_table6(ex.escalation(2))
    assert list(comparison.columns) == COMPARISON
    assert comparison["metric"].tolist()[:2] == ["pressure_field", "pressure_field, escalation off"]
    assert len(comparison) == 2 * len(STRATEGIES)
    assert (comparison.loc[comparison["metric"].str.endswith("escalation off"), "paper"] == "-").all()
    assert comparison["kit"].str.match(r"\d+/\d+ = ").all()  # whole trials, not 10.0/10.0


def test_table6_with_escalation_alone_plays_the_same_trials_as_its_rows_in_the_whole_table():
    """What the calibrated tables play (Table 6 as the paper ran it), without the half they would throw away."""
    whole, alone = ex.escalation(2), ex.escalation(2, escalations=(True,))
    pd.testing.assert_frame_equal(alone, whole[whole["escalation"]].reset_index(drop=True))


def test_the_comparisons_read_the_papers_numbers_from_its_file():
    table2 = ex.compare_table2(ex.table2(2)).set_index("metric")["paper"]
    assert table2["chi-square across strategies"] == "68.1, p < 1e-13"
    assert table2["Fisher: pressure-field vs hierarchical"] == "p = 0.94"
    assert table2["pressure_field"] == "126/330 = 38.2% [33.1, 43.5]"
    ablation = ex.compare_ablation(ex.ablation(2)).set_index("metric")["paper"]
    assert ablation["decay: Welch t, Cohen's d"] == "t = -32.2, d = 4.15"
    assert ablation["final pressure, decay on vs off"] == "1.18 vs 58.14 (49x)"
    assert ablation["D=T I=T E=F"] == "18/30, P 1.00 ± 1.39"
    scaling = ex.compare_table5(ex.scaling(1)).set_index("metric")["paper"]
    assert scaling["4 agents, pressure_field"] == "13/30 = 43.3% [27.4, 60.8]"


def test_the_stand_in_answers_every_pressure_prompt_and_records_table7(tmp_path):
    from coordkit.cli import main

    assert (
        main(
            [
                "record",
                "pressure-table7",
                "--seeds",
                "2",
                "--stand-in",
                "--out",
                str(tmp_path / "t7.jsonl"),
                "--figures-out",
                str(tmp_path),
            ]
        )
        == 0
    )
    frame = pd.read_csv(tmp_path / "pressure-table7.csv")
    assert frame["llm_calls"].sum() > 0 and frame["llm_fallbacks"].sum() == 0
    assert "llm" not in frame  # the client is no column of the figure


def test_the_ablation_chart_names_its_axis_and_stacks_each_configurations_switches():
    frame = pd.DataFrame(
        {
            "decay": [True, True, False, False],
            "inhibition": [True, False, True, False],
            "examples": [False] * 4,
            "final_pressure": [0.0, 2.0, 10.0, 12.0],
        }
    )
    spec = charts.ablation(frame).to_dict()
    assert spec["layer"][0]["encoding"]["y"]["field"] == "final pressure"
    assert spec["config"]["axisXDiscrete"]["labelExpr"] == "split(datum.label, ' ')"
    (values,) = spec["datasets"].values()
    assert [row["config"] for row in values] == ["D=T I=T E=F", "D=T I=F E=F", "D=F I=T E=F", "D=F I=F E=F"]


# --- the calibrated actor (issue 14) -------------------------------------------------------------------------------


def test_an_actor_that_always_fails_proposes_nothing_and_one_that_never_does_plays_as_before():
    seen = PressureField(rng=0).row_observation(3)
    assert RuleActor(np.random.default_rng(0), failure=1.0).decide(Assignment(seen, 0.5)) is None
    before, after = PressureField(rng=4).run(), PressureField(failure=0.0, rng=4).run()
    pd.testing.assert_frame_equal(before.frame(), after.frame())
    hopeless = PressureField(failure=1.0, max_ticks=30, rng=4).run()
    assert hopeless.frame()["patches"].sum() == 0 and not hopeless.solved


def test_more_unusable_proposals_solve_fewer_puzzles():
    solved = [
        ex.trials("pressure_field", 20, 0, n=5, empty=5, failure=failure)["solved"].sum()
        for failure in (0.0, 0.9, 0.99)
    ]
    assert solved[0] > solved[1] > solved[2]


def test_a_conversation_turn_with_an_unusable_proposal_is_spent_without_asking_the_validator():
    model = PressureField(strategy="conversation", failure=1.0, max_ticks=3, rng=0).run()
    assert model.frame()["patches"].sum() == 0  # five spent turns a tick, no approval, no patch


def test_the_calibration_bisects_towards_the_papers_rate(monkeypatch):
    from coordkit.pressure import calibration

    monkeypatch.setattr(calibration, "BRACKET", 1 / 8)
    fit = calibration.fit(seeds=1)
    assert fit["failure"].tolist()[:3] == [0.0, 1.0, 0.5] and fit["trials"].eq(11).all()  # 11 = 330 / 30
    assert fit["solved"].iloc[0] > fit["solved"].iloc[1] == 0
    solved, trials = calibration.target()
    assert (solved, trials) == (126, 330)
    gaps = (fit["rate"] - solved / trials).abs()
    assert fit["fitted"].sum() == 1 and gaps[fit["fitted"]].iloc[0] == gaps.min()
    again = calibration.target_trials(calibration.fitted_failure(fit), seeds=1)
    assert again["solved"].sum() == fit.loc[fit["fitted"], "solved"].iloc[0]  # same failure, same trials


def test_the_cached_calibration_is_a_bisection_to_the_target_and_its_predictions_replay():
    from coordkit.pressure import calibration

    fit = calibration.load_fit()
    assert fit["failure"].tolist()[:3] == [0.0, 1.0, 0.5] and fit["trials"].eq(330).all()
    fitted = fit.loc[fit["fitted"]].iloc[0]
    assert abs(fitted["solved"] - calibration.target()[0]) == (fit["solved"] - 126).abs().min()
    cached = calibration.load_predictions()
    assert (cached["role"] == "fitted").sum() == 1 and len(cached) == 33
    # Table 7, played again with the cached failure, gives exactly the cached counts
    easy = ex.easy(30, 0, failure=calibration.calibrated_failure()).assign(figure="pressure-table7")
    replayed = calibration.predictions(easy).set_index("condition")
    table7 = cached.query("table == 'Table 7'").set_index("condition")
    assert replayed["kit_solved"].to_dict() == table7["kit_solved"].to_dict()


def test_a_prediction_is_consistent_only_when_fishers_test_cannot_tell_it_from_the_paper():
    from coordkit.pressure import calibration

    played = pd.DataFrame(
        {
            "figure": ["pressure-table7"] * 60,
            "strategy": ["pressure_field"] * 30 + ["random"] * 30,
            "solved": [True] * 26 + [False] * 4 + [False] * 30,
        }
    )
    table = calibration.predictions(played).set_index("condition")
    assert table.loc["pressure_field", "verdict"] == "consistent"  # 26/30, as the paper
    assert table.loc["random", "verdict"] == "kit lower"  # 0/30 against 13/30
    assert table.loc["random", "fisher_p"] < 0.001 and (table["role"] == "prediction").all()
    assert calibration.compare(played)["metric"].tolist() == ["Table 7 · pressure-field", "Table 7 · random"]


def test_the_rate_charts_draw_the_papers_rates_beside_the_kits():
    spec = charts.rates(ex.easy(2), paper="pressure-table7").to_dict()
    (values,) = spec["datasets"].values()
    paper = {row["strategy"]: row["rate"] for row in values if row["source"] == "paper"}
    assert paper["pressure-field"] == pytest.approx(0.867) and len(paper) == 5
    scaling = charts.scaling(ex.scaling(1), paper="pressure-table5").to_dict()
    (values,) = scaling["datasets"].values()
    assert sum(row["source"] == "paper" for row in values) == 10


def test_the_trace_reads_a_trial_tick_by_tick():
    model = PressureField(rng=0).run()
    lines = trace(model)
    assert list(lines.columns) == ["tick", "focus", "patch", "row P", "total P", "inhibited"]
    assert len(lines) == model.steps and lines["total P"].iloc[-1] == 0
    first = lines.iloc[0]
    assert (first["focus"], first["row P"], first["inhibited"]) == ("3", "2 → 1", "3")
    assert first["patch"] == "(3,6) = 7 ✓"  # as read by hand in notebook 03, §2


def test_a_solved_square_is_drawn_as_solved_and_the_fitness_chart_keeps_its_width():
    solved = PressureField(rng=0).run()
    assert solved.solved
    (values,) = charts.grid(solved.grid, solved.pressures, ~solved.editable).to_dict()["datasets"].values()
    assert all(cell["solved"] for cell in values)
    fresh = PressureField(rng=0)
    (values,) = charts.grid(fresh.grid, fresh.pressures, ~fresh.editable).to_dict()["datasets"].values()
    assert not any(cell["solved"] for cell in values)
    for ticks in (20, 200):  # the panel's max-ticks slider: the chart must not grow with the trial
        rows = PressureField(max_ticks=ticks, failure=1.0, rng=0).run().rows_frame()
        assert charts.fitness(rows).to_dict()["width"] == 520


def choose(panel, name, value):
    """Set a dropdown of a panel to the option whose value is ``value``."""
    panel.controls[name].value = panel.params[name].values.index(value)


def test_each_cells_share_of_pressure_adds_up_to_its_rows():
    square = np.array([[1, 2, 3, 4], [2, 1, 4, EMPTY], [3, 4, 4, 2], [4, 3, 2, 1]])  # notebook 03, §1, by hand
    # row 1: a hole (1) and a 4 that column 2 holds again (10); row 2: two 4s share its 10, and one clashes in column 2
    assert cell_pressures(square).tolist() == [[0, 0, 0, 0], [0, 0, 10, 1], [0, 5, 15, 0], [0, 0, 0, 0]]
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(2, 9))
        grid = rng.integers(0, n + 1, (n, n))
        assert cell_pressures(grid).sum(axis=1) == pytest.approx(row_pressures(grid))
        assert cell_pressures(grid).max() < charts.CELL_PRESSURE.domain[-1]  # the colour scale's top holds them all


def drawn(model: PressureField, kind: str) -> list[dict]:
    """The records of one kind ("cell", "box", "text") that the state view draws for ``model`` as it stands."""
    (records,) = spec_of(charts.field_now(model))["datasets"].values()
    return [record for record in records if record["kind"] == kind]


def test_the_state_view_shows_the_square_and_the_rows_the_actors_work_on_as_the_model_holds_them():
    model = PressureField(rng=0)
    assert [record["text"] for record in drawn(model, "cell")][:7] == ["1", "3", "2", "4", "7", "6", "5"]
    for _ in range(2):
        model.step()
    # tick 2 of notebook 03's trace: the actors on row 6 put a 1 under row 5's given 1, (6,5) = 1
    assert model.focus_rows == [6] and [(p.row, p.column, p.value) for p in model.applied] == [(6, 5, 1)]
    cells = {(record["y0"], record["x0"]): record for record in drawn(model, "cell")}
    assert [cells[6, c]["pressure"] for c in range(7)] == [0, 0, 0, 0, 0, 10, 1]  # a column clash 10; a hole 1
    assert [record["pressure"] for record in cells.values()] == cell_pressures(model.grid).ravel().tolist()
    frames = [(b["x0"], b["x1"], b["y0"], b["y1"]) for b in drawn(model, "box") if b["stroke"] == viz.NEUTRAL]
    assert frames == [(0, 7, 6, 7), (5, 6, 6, 7)]  # the row worked on, then the cell patched
    texts = {(t["x0"], t["y0"]): t["text"] for t in drawn(model, "text")}
    assert texts[-0.9, 6.5] == "4 actors ▶" and sum(text.endswith("▶") for text in texts.values()) == 1
    assert texts[7.8, 6.5] == "11" and texts[12, 6.5] == texts[12, 3.5] == "inhibited"  # rows 3 and 6 were patched
    bold = {(t["x0"], t["y0"]) for t in drawn(model, "text") if t["fontWeight"] == "bold"}
    assert (5.5, 5.5) in bold and (5.5, 6.5) not in bold  # row 5's given 1 and the 1 the actors placed under it
    spec = spec_of(charts.field_now(model))
    assert spec["title"] == [
        "tick 2 of 100 · total pressure 25 · model 0.5B",
        "4 actors on row 6; patch applied: (6,5) = 1",
    ]


def test_the_state_view_says_why_no_row_is_worked_on():
    model = PressureField(rng=0)
    while model.steps < 12:
        model.step()
    # tick 12 of notebook 03's trace: row 6 is inhibited, and row 5, charged for row 6's clash, owns no cell to change
    assert model.focus_rows == [] and model.pressures[5] == 10
    texts = {(t["x0"], t["y0"]): t["text"] for t in drawn(model, "text")}
    assert texts[12, 5.5] == "nothing to change" and texts[12, 6.5] == "inhibited"
    assert not any(text.endswith("▶") for text in texts.values())
    assert [b for b in drawn(model, "box") if b["stroke"] == viz.NEUTRAL] == []
    assert spec_of(charts.field_now(model))["title"][1].startswith("no row activated")


def test_the_player_plays_the_trial_of_section_2_to_its_solved_square():
    panel = panels.player_panel()
    assert list(panel.values) == [*panels.PLAYED, "seed"] and panel.values["seed"] == 0
    assert panel.model.steps == 0 and panel.model.running
    assert panel.run_to_end().steps == 22 and panel.model.solved  # the §2 trace: solved in 22 ticks
    assert panel.output.children[0].spec["title"][0] == "tick 22 of 100 · total pressure 0 · solved"
    choose(panel, "strategy", "sequential")  # a new trial at tick 0; sequential keeps no fitness and plays one actor
    assert panel.model.steps == 0
    assert {name for name, control in panel.controls.items() if control.disabled} == {
        "decay",
        "inhibition_ticks",
        "agent_count",
    }


def test_the_explore_panel_builds_the_notebooks_controls_and_replays_on_a_change():
    panel = panels.explore_panel()
    assert list(panel.values) == [*panels.EXPLORED, "seed"]
    assert panel.values == {
        "strategy": "pressure_field",
        "mode": "paper",
        "counting": "paper",
        "decay_rate": 0.1,
        "inhibition_ticks": 4,
        "acceptance_gate": False,
        "escalation": True,
        "examples": False,
        "agent_count": 4,
        "n": 7,
        "empty": 7,
        "skill": 0.1,
        "failure": 0.0,
        "max_ticks": 100,
        "seed": 0,
    }
    spans = {name: (c.min, c.max, c.step) for name, c in panel.controls.items() if hasattr(c, "step")}
    assert spans["decay_rate"] == (0, 0.5, 0.05) and spans["agent_count"][1] == 32 and spans["seed"] == (0, 99, 1)
    assert spans["failure"][2] == 0.01 and spans["max_ticks"] == (20, 200, 10)
    labels = {name: c.description for name, c in panel.controls.items()}
    assert labels["decay_rate"] == "decay rate λ" and labels["empty"] == "empty cells"
    assert panel.result.solved and panel.result.steps == 22  # trial seed 0, as traced in §2
    panel.controls["decay_rate"].value = 0.0  # a decay rate of 0 switches decay off
    assert not panel.result.decay and panel.last_error is None
    panel.controls["failure"].value = 1.0  # no usable proposal: nothing is ever patched
    assert not panel.result.solved and panel.result.steps == 100
    top, fitness = panel.output.children
    assert top.spec["hconcat"][0]["title"] == "pressure-field (paper): unsolved after 100 ticks"


@pytest.mark.parametrize(
    "strategy, mode, greyed",
    [
        ("pressure_field", "paper", set()),
        ("hierarchical", "paper", {"decay_rate", "inhibition_ticks"}),
        ("random", "paper", {"decay_rate", "inhibition_ticks"}),
        ("sequential", "paper", {"decay_rate", "inhibition_ticks", "agent_count"}),
        ("conversation", "paper", {"decay_rate", "inhibition_ticks", "agent_count", "examples"}),
        ("pressure_field", "published", {"inhibition_ticks", "acceptance_gate", "agent_count"}),
        ("hierarchical", "published", {"inhibition_ticks", "acceptance_gate", "agent_count"}),
    ],
)
def test_the_explore_panel_greys_out_what_the_strategy_and_mode_ignore(strategy, mode, greyed):
    panel = panels.explore_panel()
    choose(panel, "mode", mode)
    choose(panel, "strategy", strategy)
    assert {name for name, control in panel.controls.items() if control.disabled} == greyed
    assert panel.result.strategy == strategy and panel.result.mode == mode and panel.last_error is None


def test_the_published_ablation_crosses_decay_and_examples_with_the_published_code():
    frame = ex.published_ablation(seeds=2)
    assert len(frame) == 8 and set(frame["mode"]) == {"published"} and frame["inhibition"].all()
    assert list(frame.groupby(["decay", "examples"], sort=False).size().index) == [
        (True, True),
        (True, False),
        (False, True),
        (False, False),
    ]
    assert frame.loc[~frame["decay"], "solved"].sum() == 0  # no gate: a trial freezes on a full row (notebook §3)


def test_identical_trials_compare_every_tick():
    field = PressureField(strategy="pressure_field", mode="published", rng=0).run()
    manager = PressureField(strategy="hierarchical", mode="published", rng=0).run()
    assert ex.identical_trials(field, manager)
    assert not ex.identical_trials(PressureField(strategy="pressure_field", rng=0).run(), field)
    assert not ex.identical_trials(PressureField(rng=0).run(), PressureField(rng=1).run())


def test_a_cell_set_by_hand_between_ticks_is_measured_at_the_next_tick():
    """A student who writes into ``model.grid`` sees the tick that follows work on that grid, not on the one before."""
    model = PressureField(n=5, empty=5, rng=3).run()
    assert model.solved
    given = np.argwhere(~model.editable)[0]
    row = model.grid[given[0]]
    model.grid[given[0], given[1]] = row[(given[1] + 1) % model.n]  # the row's next value, twice in the row now
    model.step()
    assert model.pressure == artifact_pressure(model.grid) > 0
    assert model.pressures.tolist() == row_pressures(model.grid).tolist()
