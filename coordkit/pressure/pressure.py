"""The paper's pressure on a Latin square (§6.1.1): per row (region) i,

    P_i = empty_i + 10 · row_dups_i + 10 · col_conflicts_i,

with empty_i the unfilled cells of row i, row_dups_i its filled cells minus its distinct values, and
col_conflicts_i its filled cells whose value also appears elsewhere in the same column. The artifact pressure is
the sum over rows (eq. 3).
"""

import numpy as np

from coordkit.pressure.puzzles import EMPTY

DUPLICATE_WEIGHT = 10
CONFLICT_WEIGHT = 10


def row_terms(grid: np.ndarray) -> np.ndarray:
    """Per row: (empty, row_dups, col_conflicts), shape (n, 3)."""
    n = len(grid)
    filled = grid != EMPTY
    empty = n - filled.sum(axis=1)
    counts = np.zeros((n, n + 1), dtype=int)  # counts[i, v]: how often v appears in row i
    np.add.at(counts, (np.repeat(np.arange(n), n), grid.ravel()), 1)
    row_dups = filled.sum(axis=1) - (counts[:, 1:] > 0).sum(axis=1)
    column_counts = np.zeros((n, n + 1), dtype=int)  # column_counts[c, v]
    np.add.at(column_counts, (np.tile(np.arange(n), n), grid.ravel()), 1)
    shared = column_counts[np.arange(n)[None, :], grid] > 1  # cell's value appears again in its column
    col_conflicts = (shared & filled).sum(axis=1)
    return np.stack([empty, row_dups, col_conflicts], axis=1)


def row_pressures(grid: np.ndarray) -> np.ndarray:
    """P_i for every row i."""
    terms = row_terms(grid)
    return terms[:, 0] + DUPLICATE_WEIGHT * terms[:, 1] + CONFLICT_WEIGHT * terms[:, 2]


def artifact_pressure(grid: np.ndarray) -> int:
    """P(s) = Σ_i P_i: zero exactly when the square is complete and Latin."""
    return int(row_pressures(grid).sum())


def conflicts(grid: np.ndarray) -> np.ndarray:
    """Per cell: whether it holds a value that repeats in its row or in its column."""
    n = len(grid)
    filled = grid != EMPTY
    in_row = (grid[:, :, None] == grid[:, None, :]).sum(axis=2) > 1
    in_column = (grid[:, None, :] == grid[None, :, :]).sum(axis=0) > 1
    return filled & (in_row | in_column.reshape(n, n))


def cell_pressures(grid: np.ndarray) -> np.ndarray:
    """Each cell's share of its row's pressure P_i, so that a row's cells add up to P_i: 1 for a hole; 10 if its
    value appears again in its column (that row's col_conflict); and, for a value that k cells of the row hold,
    10·(k − 1)/k to each of them (the row's row_dups, shared among its copies)."""
    filled = grid != EMPTY
    in_row = (grid[:, :, None] == grid[:, None, :]).sum(axis=2)  # cells of the row holding this cell's value
    in_column = (grid[:, None, :] == grid[None, :, :]).sum(axis=0)  # [i, c]: cells of column c holding grid[i, c]
    shares = DUPLICATE_WEIGHT * (in_row - 1) / in_row + CONFLICT_WEIGHT * (in_column > 1)
    return np.where(filled, shares, 1.0)
