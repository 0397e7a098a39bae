"""The paper's pressure on a Latin square (§6.1.1): per row (region) i,

    P_i = empty_i + 10 · row_dups_i + 10 · col_conflicts_i,

with empty_i the unfilled cells of row i, row_dups_i its filled cells minus its distinct values, and
col_conflicts_i its filled cells whose value also appears elsewhere in the same column. The artifact pressure is
the sum over rows (eq. 3).

The authors' published code counts otherwise (``counting="code"``, its ``LatinSquareSensor``): col_conflicts_i is,
over row i's filled cells, the number of OTHER rows holding the same value in that column, once per pair of clashing
rows; a value three rows share in a column costs each of them 2 conflicts, not 1 (two rows clashing: 1 either way).
Its kernel, which judges the pressure-field strategy's patches, weighs empty/row_dups/col_conflicts 1/2/2
(``KERNEL_WEIGHTS``); its row selection and reported pressure weigh them 1/10/10, as the paper does.
"""

from collections.abc import Sequence

import numpy as np

from coordkit.pressure.puzzles import EMPTY

DUPLICATE_WEIGHT = 10
CONFLICT_WEIGHT = 10
KERNEL_WEIGHTS = (1, 2, 2)  # the published code's kernel: empty, row_dups, col_conflicts
COUNTINGS = ("paper", "code")  # col_conflicts per clashing cell (the paper's text), or per pair of clashing rows


def row_terms(
    grid: np.ndarray | list[list[int]], rows: Sequence[int] | None = None, counting: str = "paper"
) -> np.ndarray:
    """Per row: (empty, row_dups, col_conflicts), shape (n, 3); of ``rows`` only, in their order, when given;
    col_conflicts counted as ``counting`` says (``COUNTINGS``)."""
    cells, columns = lines(grid)
    terms = [_terms(cells[i], columns, counting) for i in (range(len(cells)) if rows is None else rows)]
    return np.array(terms, dtype=int).reshape(len(terms), 3)


def lines(grid: np.ndarray | list[list[int]]) -> tuple[list[list[int]], list[tuple[int, ...]]]:
    """The grid's rows and columns as plain ints: the puzzles are at most a dozen cells wide, where numpy's cost per
    call outweighs the arithmetic."""
    cells = grid.tolist() if isinstance(grid, np.ndarray) else grid
    return cells, list(zip(*cells))


def _terms(row: Sequence[int], columns: Sequence[Sequence[int]], counting: str = "paper") -> tuple[int, int, int]:
    filled = [value for value in row if value != EMPTY]
    if counting == "paper":  # a cell whose value appears again in its column
        shared = len([value for value, column in zip(row, columns) if value != EMPTY and column.count(value) > 1])
    else:  # the code: per filled cell, the other rows holding its value in its column
        shared = sum(column.count(value) - 1 for value, column in zip(row, columns) if value != EMPTY)
    return len(row) - len(filled), len(filled) - len(set(filled)), shared


def row_pressure(
    row: Sequence[int],
    columns: Sequence[Sequence[int]],
    counting: str = "paper",
    weights: tuple[int, int, int] | None = None,
) -> int:
    """P_i of one row, given its cells and the grid's columns: col_conflicts counted as ``counting`` says, the
    terms weighed 1/10/10, or by ``weights`` (empty, row_dups, col_conflicts; the code's kernel: ``KERNEL_WEIGHTS``)."""
    empty, dups, shared = _terms(row, columns, counting)
    if weights is None:
        return empty + DUPLICATE_WEIGHT * dups + CONFLICT_WEIGHT * shared
    return weights[0] * empty + weights[1] * dups + weights[2] * shared


def repeats(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: how many cells of its row, and how many of its column, hold its value (itself included)."""
    in_row = (grid[:, :, None] == grid[:, None, :]).sum(axis=2)
    in_column = (grid[:, None, :] == grid[None, :, :]).sum(axis=0)  # [i, c]: cells of column c holding grid[i, c]
    return in_row, in_column


def row_pressures(
    grid: np.ndarray | list[list[int]], rows: Sequence[int] | None = None, counting: str = "paper"
) -> np.ndarray:
    """P_i for every row i (of ``rows`` only, in their order, when given), col_conflicts counted as ``counting``."""
    cells, columns = lines(grid)
    chosen = range(len(cells)) if rows is None else rows
    return np.array([row_pressure(cells[i], columns, counting) for i in chosen], dtype=int)


def artifact_pressure(grid: np.ndarray, counting: str = "paper") -> int:
    """P(s) = Σ_i P_i: zero exactly when the square is complete and Latin (under either counting)."""
    return int(row_pressures(grid, counting=counting).sum())


def conflicts(grid: np.ndarray) -> np.ndarray:
    """Per cell: whether it holds a value that repeats in its row or in its column."""
    in_row, in_column = repeats(grid)
    return (grid != EMPTY) & ((in_row > 1) | (in_column > 1))


def cell_pressures(grid: np.ndarray, counting: str = "paper") -> np.ndarray:
    """Each cell's share of its row's pressure P_i, so that a row's cells add up to P_i: 1 for a hole; 10 if its
    value appears again in its column (that row's col_conflict; with ``counting="code"``, 10 for each other cell of
    the column holding it); and, for a value that k cells of the row hold, 10·(k − 1)/k to each of them (the row's
    row_dups, shared among its copies)."""
    in_row, in_column = repeats(grid)
    clashes = (in_column > 1) if counting == "paper" else (in_column - 1)
    shares = DUPLICATE_WEIGHT * (in_row - 1) / in_row + CONFLICT_WEIGHT * clashes
    return np.where(grid != EMPTY, shares, 1.0)
