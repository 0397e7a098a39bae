"""The two countings of pressure (``PressureField(counting=...)``): the paper's text counts a column conflict once per
clashing cell, the authors' published code once per pair of clashing rows, and judges pressure-field's patches with
its kernel's weights 1/2/2 (rows' and reported pressure stay 1/10/10)."""

import numpy as np
import pytest

from coordkit.parameters import ParameterError
from coordkit.pressure import experiments as ex
from coordkit.pressure.model import PressureField
from coordkit.pressure.policies import Patch
from coordkit.pressure.pressure import (
    KERNEL_WEIGHTS,
    artifact_pressure,
    cell_pressures,
    lines,
    row_pressure,
    row_pressures,
    row_terms,
)
from coordkit.pressure.puzzles import EMPTY
from coordkit.pressure.strategies import STRATEGIES

THREE_IN_A_COLUMN = np.array([[1, 2, 3], [1, 3, 2], [1, EMPTY, EMPTY]])  # column 0 holds 1 three times


def test_a_value_three_times_in_a_column_costs_each_row_one_conflict_per_cell_and_two_per_pair():
    """Per clashing cell: each of the three rows has one cell in conflict (3 in all). Per pair of clashing rows: each
    row clashes with the two others (6 in all: each of the 3 pairs, once from each of its rows)."""
    assert row_terms(THREE_IN_A_COLUMN).tolist() == [[0, 0, 1], [0, 0, 1], [2, 0, 1]]
    assert row_terms(THREE_IN_A_COLUMN, counting="code").tolist() == [[0, 0, 2], [0, 0, 2], [2, 0, 2]]
    assert row_pressures(THREE_IN_A_COLUMN).tolist() == [10, 10, 12] and artifact_pressure(THREE_IN_A_COLUMN) == 32
    assert row_pressures(THREE_IN_A_COLUMN, counting="code").tolist() == [20, 20, 22]
    assert artifact_pressure(THREE_IN_A_COLUMN, counting="code") == 62


def test_the_kernels_weights_are_one_two_two():
    cells, columns = lines(THREE_IN_A_COLUMN)
    assert [row_pressure(row, columns, "code", KERNEL_WEIGHTS) for row in cells] == [4, 4, 6]  # 1·empty + 2·2
    assert [row_pressure(row, columns, "paper", KERNEL_WEIGHTS) for row in cells] == [2, 2, 4]
    cells, columns = lines([[1, 1, 2], [2, 1, 3], [3, 2, EMPTY]])  # row 0 repeats 1; its second 1 clashes with row 1
    assert row_pressure(cells[0], columns, "code", KERNEL_WEIGHTS) == 2 * 1 + 2 * 1  # one duplicate, one clash
    assert row_pressure(cells[0], columns, "code") == 10 * 1 + 10 * 1


def test_where_no_value_stands_three_times_in_a_column_the_countings_agree():
    square = np.array([[1, 2, 3, 4], [2, 1, 4, EMPTY], [3, 4, 4, 2], [4, 3, 2, 1]])  # notebook 03's: one pair clashes
    assert (
        row_terms(square).tolist()
        == row_terms(square, counting="code").tolist()
        == [
            [0, 0, 0],
            [1, 0, 1],
            [0, 1, 1],
            [0, 0, 0],
        ]
    )
    assert cell_pressures(square).tolist() == cell_pressures(square, "code").tolist()


def test_per_cell_counts_clashing_cells_and_per_pair_counts_each_clashing_pair_from_both_rows():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(2, 8))
        grid = rng.integers(0, n + 1, size=(n, n))
        same = (grid[:, None, :] == grid[None, :, :]) & (grid != EMPTY)[None, :, :]  # [i, j, c]: rows i, j agree at c
        np.einsum("iic->ic", same)[:] = False
        cells, pairs = row_terms(grid)[:, 2], row_terms(grid, counting="code")[:, 2]
        assert cells.tolist() == same.any(axis=1).sum(axis=1).tolist()  # row i's cells clashing with another row
        assert pairs.tolist() == same.sum(axis=(1, 2)).tolist()  # row i's clashes with each other row
        assert (pairs >= cells).all()
        most = max(np.unique(column[column != EMPTY], return_counts=True)[1].max(initial=0) for column in grid.T)
        assert (pairs == cells).all() == (most <= 2)
        for counting in ("paper", "code"):
            assert cell_pressures(grid, counting).sum(axis=1) == pytest.approx(row_pressures(grid, counting=counting))
        assert (artifact_pressure(grid, "code") == 0) == (artifact_pressure(grid) == 0)


@pytest.mark.parametrize("counting", ["paper", "code"])
@pytest.mark.parametrize("strategy", ["pressure_field", "hierarchical"])
def test_a_patch_is_judged_by_the_pressure_of_the_whole_fork(counting, strategy):
    """fork_drop measures only the rows a patch can change; under either counting and weights that is what measuring
    every row of the fork gives."""
    model = PressureField(n=5, empty=12, strategy=strategy, counting=counting, rng=3)
    model.grid[:] = [[1, 2, 3, 4, 5], [1, 3, 2, 5, 4], [1, EMPTY, 4, 2, 3], [EMPTY, 1, 5, 3, 2], [5, 4, 1, 3, EMPTY]]
    model._measure_grid()
    weights = KERNEL_WEIGHTS if counting == "code" and strategy == "pressure_field" else None
    assert model.judge_weights == weights
    for row in range(5):
        for column in range(5):
            for value in range(1, 6):
                fork = model.grid.copy()
                fork[row, column] = value
                before = [row_pressure(r, lines(model.grid)[1], counting, weights) for r in lines(model.grid)[0]]
                after = [row_pressure(r, lines(fork)[1], counting, weights) for r in lines(fork)[0]]
                expected = sum(before) - sum(after), before[row] - after[row]
                assert model.fork_drop(Patch(row, column, value)) == expected


def test_reported_pressure_is_weighed_one_ten_ten_under_the_codes_counting():
    model = PressureField(counting="code", rng=0).run()
    for tick, grid in enumerate(model.history):
        assert model.frame()["pressure"][tick] == artifact_pressure(grid, "code")


def test_the_default_is_the_papers_counting_and_plays_as_it_always_has():
    assert PressureField.parameters["counting"].default == "paper"
    assert PressureField(rng=0).counting == "paper" and PressureField(rng=0).judge_weights is None
    for strategy in STRATEGIES:
        default = PressureField(strategy=strategy, empty=14, rng=5).run()
        paper = PressureField(strategy=strategy, empty=14, counting="paper", rng=5).run()
        assert ex.identical_trials(default, paper)
        assert default.frame().equals(paper.frame())


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("mode", ["paper", "published"])
def test_the_codes_counting_plays_every_strategy_the_same_at_a_seed(strategy, mode):
    a = PressureField(strategy=strategy, mode=mode, counting="code", empty=14, rng=5).run()
    b = PressureField(strategy=strategy, mode=mode, counting="code", empty=14, rng=5).run()
    assert ex.identical_trials(a, b) and a.frame().equals(b.frame()) and a.summary() == b.summary()


def test_the_countings_can_play_a_trial_differently():
    """Seed 5 on 7×7 with 14 holes: a value comes to stand three times in a column, and pressure-field, which
    follows the rows' pressures, then works elsewhere (both solve it, the code's counting 12 ticks sooner)."""
    paper = PressureField(empty=14, rng=5).run()
    code = PressureField(empty=14, counting="code", rng=5).run()
    assert not ex.identical_trials(paper, code)
    assert (paper.solved, paper.steps) == (True, 68) and (code.solved, code.steps) == (True, 56)


def test_an_unknown_counting_is_refused_by_name_with_the_choices():
    with pytest.raises(ParameterError, match=r"counting='rust'.*counting takes one of 'paper', 'code'"):
        PressureField(counting="rust")


def test_table2_under_both_countings_plays_the_same_trials():
    frame = ex.table2_by_counting(seeds=1)
    paper, code = (frame[frame["counting"] == c].drop(columns="counting") for c in ("paper", "code"))
    assert len(paper) == len(code) and paper["strategy"].tolist() == code["strategy"].tolist()
    table = ex.compare_countings(frame)
    assert table["strategy"].tolist() == list(STRATEGIES)
    assert list(table.columns) == ["strategy", "paper's Table 2", *ex.COUNTING_NAMES.values()]
    assert table.loc[table["strategy"] == "hierarchical", "paper's Table 2"].item() == "128/330"
