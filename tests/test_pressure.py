"""Pressure fields on Latin squares: puzzles, pressure, the paper's algorithm, its baselines and the published code."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest

from coordkit import stats
from coordkit.llm import ScriptedClient
from coordkit.pressure.experiments import ablation, decay_effect, trial, trials
from coordkit.pressure.model import PressureField, rows_frame, ticks_frame
from coordkit.pressure.pressure import artifact_pressure, conflicts, row_pressures, row_terms
from coordkit.pressure.puzzles import EMPTY, count_completions, latin_square, make_puzzle


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
    grid = np.array([
        [1, 1, 0],  # one empty, one duplicate (1 twice), no column conflicts: 1 + 10 = 11
        [2, 3, 1],  # complete; its 1 in column 2 shares nothing: 0
        [3, 0, 1],  # one empty, and its 1 in column 2 repeats row 1's: 1 + 10 = 11 ...
    ])
    assert row_terms(grid).tolist() == [[1, 1, 0], [0, 0, 1], [1, 0, 1]]  # ... and row 1's 1 conflicts too
    assert row_pressures(grid).tolist() == [11, 10, 11] and artifact_pressure(grid) == 32
    assert conflicts(grid).tolist() == [[True, True, False], [False, False, True], [False, False, True]]
    assert artifact_pressure(latin_square(5, np.random.default_rng(0))) == 0


@pytest.mark.parametrize("strategy", ["pressure_field", "hierarchical", "random", "conversation"])
def test_with_the_acceptance_gate_no_patch_raises_its_rows_pressure(strategy):
    for seed in range(8):
        model = trial(strategy, seed, n=5, empty=6, agents=2, acceptance_gate=True, skill=0.0)
        rows = rows_frame(model).pivot(index="tick", columns="row", values="pressure")
        patched = rows_frame(model).query("patched")
        assert len(patched) > 0
        for _, change in patched.iterrows():
            assert rows.at[change["tick"], change["row"]] < rows.at[change["tick"] - 1, change["row"]]


def test_without_decay_final_pressure_is_much_worse():
    frame = ablation(count=30)
    effect = decay_effect(frame)
    on, off = effect["final_pressure"]
    assert off > 5 * max(on, 1.0)
    assert effect.attrs["cohens_d"] > 0.8 and effect.attrs["p_value"] < 1e-6


def test_decay_lets_a_row_that_looks_stable_be_reconsidered():
    for decay in (False, True):
        model = PressureField(n=5, empty=5, decay=decay, focus=5, rng=3)
        row = int(np.flatnonzero(model.actionable)[0])
        model.regions[row].fitness = model.regions[row].confidence = 1.0  # it looks perfect, yet has work left
        assert row not in model._choose_rows()
        for _ in range(3):
            model._decay()
        assert (row in model._choose_rows()) == decay


def test_same_seed_same_trial():
    one, again = (trial("pressure_field", 5, n=6, empty=8, skill=0.0) for _ in range(2))
    pd.testing.assert_frame_equal(ticks_frame(one), ticks_frame(again))
    assert (one.grid == again.grid).all()


def test_in_the_published_code_pressure_field_and_hierarchical_play_the_same_game():
    for seed in range(10):
        field = trial("pressure_field", seed, mode="published", skill=0.3)
        boss = trial("hierarchical", seed, mode="published", skill=0.3)
        pd.testing.assert_frame_equal(ticks_frame(field), ticks_frame(boss))


def test_more_agents_propose_more_and_solve_more():
    one = trials("pressure_field", 30, 0, n=7, empty=7, agents=1, skill=0.0, escalation=False)
    eight = trials("pressure_field", 30, 0, n=7, empty=7, agents=8, skill=0.0, escalation=False)
    assert eight["solved"].sum() > one["solved"].sum() + 5
    assert stats.fisher_exact(eight["solved"].sum(), 30, one["solved"].sum(), 30).p_value < 0.01


def test_escalation_moves_up_the_model_chain_after_twenty_stalled_ticks():
    model = PressureField(n=7, empty=7, strategy="sequential", skill=0.0, rng=2)
    model._escalate(model.best)
    assert model.tier == 0
    for _ in range(19):
        model._escalate(model.best + 3)  # no new lowest pressure
    assert model.tier == 1 and model.skill == pytest.approx(0.1)
    assert PressureField(n=5, empty=3, escalation=False, rng=0).skills == (0.1,)


@pytest.mark.parametrize("params, message", [
    ({"n": 1}, "n >= 2"),
    ({"n": 3, "empty": 10}, "between 0 and 9"),
    ({"decay_rate": -0.1}, "must not be negative"),
    ({"inhibition_ticks": -1}, "must not be negative"),
    ({"skill": 1.5}, r"\[0, 1\]"),
    ({"agents": 0}, "at least 1"),
    ({"strategy": "chaos"}, "unknown strategy"),
    ({"mode": "code"}, "unknown mode"),
])
def test_bad_parameters_get_clear_errors(params, message):
    with pytest.raises(ValueError, match=message):
        PressureField(**params)


def test_llm_actors_answer_with_a_number_and_fall_back_on_nonsense():
    def answer(request):
        text = request.messages[0][1]
        available = text.split("Available values for position ")[1].split(": ")[1].split("]")[0]
        return available.strip("[").split(",")[0] or "9"

    model = trial("pressure_field", 1, n=5, empty=5, agents=2, llm=ScriptedClient(answer))
    assert model.solved and model.llm_calls > 0 and model.llm_fallbacks == 0
    garbled = trial("pressure_field", 1, n=5, empty=5, agents=2, llm=ScriptedClient(["banana"], repeat=True))
    assert garbled.llm_fallbacks == garbled.llm_calls > 0


def test_conversation_roles_can_be_llms_with_the_papers_prompts():
    def answer(request):
        text = request.messages[0][1]
        if "Coordinator" in text:
            return "TARGET row=0"
        if "Proposer" in text:
            return "PROPOSE position=0 value=1"
        return "APPROVE"

    client = ScriptedClient(answer)
    model = trial("conversation", 0, n=5, empty=5, llm=client, max_ticks=5)
    purposes = Counter(r.purpose for r in client.requests)
    assert purposes["pressure.conversation.coordinator"] == 5 and purposes["pressure.conversation.validator"] > 0
    assert model.llm_calls == len(client.requests)


def test_the_stand_in_answers_every_pressure_prompt_and_records_table7(tmp_path):
    from coordkit.cli import main

    assert main(["record", "pressure-table7", "--seeds", "2", "--stand-in", "--out", str(tmp_path / "t7.jsonl"),
                 "--figures-out", str(tmp_path)]) == 0
    frame = pd.read_csv(tmp_path / "pressure-table7.csv")
    assert frame["llm_calls"].sum() > 0 and frame["llm_fallbacks"].sum() == 0
