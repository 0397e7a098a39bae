"""Pressure fields' cheaper measures (issue 48) give what measuring the whole grid anew gives: a fork measured on
the rows a patch can change, and what the model keeps of the grid between patches (its pressures and their sum, its
actionable rows, each row's contents as its actors see them)."""

import itertools

import numpy as np
import pytest

from coordkit.pressure.model import PressureField
from coordkit.pressure.policies import Patch
from coordkit.pressure.pressure import conflicts, row_pressures, row_terms
from coordkit.pressure.puzzles import EMPTY
from coordkit.pressure.strategies import STRATEGIES


def whole_grid_drop(model: PressureField, patch: Patch) -> tuple[int, int]:
    """(total, row) pressure reduction of ``patch``, every row of the fork measured."""
    fork = model.grid.copy()
    fork[patch.row, patch.column] = patch.value
    before, after = row_pressures(model.grid), row_pressures(fork)
    return int(before.sum() - after.sum()), int(before[patch.row] - after[patch.row])


def contents_anew(grid: np.ndarray, row: int) -> tuple:
    """Row ``row``'s cells, available values and conflicts, from the grid as it stands."""
    n = len(grid)
    available = tuple(
        tuple(v for v in range(1, n + 1) if v not in np.delete(grid[row], c) and v not in np.delete(grid[:, c], row))
        for c in range(n)
    )
    return tuple(grid[row].tolist()), available, tuple(conflicts(grid)[row].tolist())


def test_the_terms_of_some_rows_are_those_rows_of_the_whole_grids_terms():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 10))
        grid = rng.integers(0, n + 1, size=(n, n))
        rows = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False).tolist()
        assert row_terms(grid, rows).tolist() == row_terms(grid)[rows].tolist()
        assert row_pressures(grid, rows).tolist() == row_pressures(grid)[rows].tolist()


@pytest.mark.parametrize("n, empty", [(4, 6), (5, 5), (7, 8)])
def test_a_fork_measured_on_the_rows_a_patch_can_change_drops_as_the_whole_grid(n, empty):
    model = PressureField(n=n, empty=empty, skill=0.0, escalation=False, rng=n)
    rng = np.random.default_rng(n)
    for _ in range(12):  # every patch on a square that fills with mistakes as the trial goes
        for row, column, value in itertools.product(range(n), range(n), range(1, n + 1)):
            patch = Patch(row, column, value)
            assert model.fork_drop(patch) == whole_grid_drop(model, patch)
        model.grid[rng.integers(n), rng.integers(n)] = rng.integers(n + 1)  # a mistake, or a hole
        model._measure_grid()


@pytest.mark.parametrize("strategy, mode", [(s, m) for s in STRATEGIES for m in ("paper", "published")])
def test_what_the_model_keeps_of_the_grid_is_the_grid_as_it_stands_at_every_tick(strategy, mode):
    for seed, params in enumerate([{"n": 5, "empty": 5, "failure": 0.5}, {"empty": 12, "examples": True}]):
        model = PressureField(strategy=strategy, mode=mode, max_ticks=20, rng=seed, **params)
        while True:
            grid = model.grid
            assert model.pressures.tolist() == row_pressures(grid).tolist()
            assert model.cells == grid.tolist() and model.columns == list(zip(*grid.tolist()))
            assert model.pressure == row_pressures(grid).sum()
            fixable = ((grid == EMPTY) | conflicts(grid)) & model.editable
            assert model.actionable.tolist() == fixable.any(axis=1).tolist()
            for row in range(model.n):
                seen = model.row_observation(row)
                assert (seen.cells, seen.available, seen.conflicting) == contents_anew(grid, row)
                assert seen.editable == tuple(model.editable[row].tolist())
            if not model.running:
                break
            model.step()
