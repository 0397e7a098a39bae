"""The paper's pressure on a Latin square (§6.1.1): per row (region) i,

    P_i = empty_i + 10 · row_dups_i + 10 · col_conflicts_i,

with empty_i the unfilled cells of row i, row_dups_i its filled cells minus its distinct values, and
col_conflicts_i its filled cells whose value also appears elsewhere in the same column. The artifact pressure is
the sum over rows (eq. 3).
"""

from collections.abc import Sequence

import numpy as np

from coordkit.pressure.puzzles import EMPTY

DUPLICATE_WEIGHT = 10
CONFLICT_WEIGHT = 10


def row_terms(grid: np.ndarray | list[list[int]], rows: Sequence[int] | None = None) -> np.ndarray:
    """Per row: (empty, row_dups, col_conflicts), shape (n, 3); of ``rows`` only, in their order, when given."""
    cells, columns = lines(grid)
    terms = [_terms(cells[i], columns) for i in (range(len(cells)) if rows is None else rows)]
    return np.array(terms, dtype=int).reshape(len(terms), 3)


def lines(grid: np.ndarray | list[list[int]]) -> tuple[list[list[int]], list[tuple[int, ...]]]:
    """The grid's rows and columns as plain ints: the puzzles are at most a dozen cells wide, where numpy's cost per
    call outweighs the arithmetic."""
    cells = grid.tolist() if isinstance(grid, np.ndarray) else grid
    return cells, list(zip(*cells))


def _terms(row: Sequence[int], columns: Sequence[Sequence[int]]) -> tuple[int, int, int]:
    filled = [value for value in row if value != EMPTY]
    shared = len([value for value, column in zip(row, columns) if value != EMPTY and column.count(value) > 1])
    return len(row) - len(filled), len(filled) - len(set(filled)), shared


def row_pressure(row: Sequence[int], columns: Sequence[Sequence[int]]) -> int:
    """P_i of one row, given its cells and the grid's columns."""
    empty, dups, shared = _terms(row, columns)
    return empty + DUPLICATE_WEIGHT * dups + CONFLICT_WEIGHT * shared


def repeats(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: how many cells of its row, and how many of its column, hold its value (itself included)."""
    in_row = (grid[:, :, None] == grid[:, None, :]).sum(axis=2)
    in_column = (grid[:, None, :] == grid[None, :, :]).sum(axis=0)  # [i, c]: cells of column c holding grid[i, c]
    return in_row, in_column


def row_pressures(grid: np.ndarray | list[list[int]], rows: Sequence[int] | None = None) -> np.ndarray:
    """P_i for every row i (of ``rows`` only, in their order, when given)."""
    cells, columns = lines(grid)
    return np.array([row_pressure(cells[i], columns) for i in (range(len(cells)) if rows is None else rows)], dtype=int)


def artifact_pressure(grid: np.ndarray) -> int:
    """P(s) = Σ_i P_i: zero exactly when the square is complete and Latin."""
    return int(row_pressures(grid).sum())


def conflicts(grid: np.ndarray) -> np.ndarray:
    """Per cell: whether it holds a value that repeats in its row or in its column."""
    in_row, in_column = repeats(grid)
    return (grid != EMPTY) & ((in_row > 1) | (in_column > 1))


def cell_pressures(grid: np.ndarray) -> np.ndarray:
    """Each cell's share of its row's pressure P_i, so that a row's cells add up to P_i: 1 for a hole; 10 if its
    value appears again in its column (that row's col_conflict); and, for a value that k cells of the row hold,
    10·(k − 1)/k to each of them (the row's row_dups, shared among its copies)."""
    in_row, in_column = repeats(grid)
    shares = DUPLICATE_WEIGHT * (in_row - 1) / in_row + CONFLICT_WEIGHT * (in_column > 1)
    return np.where(grid != EMPTY, shares, 1.0)
