"""Latin squares and puzzles with exactly one completion (§6.1.1).

Squares are drawn uniformly with the Jacobson–Matthews Markov chain; a puzzle removes cells in random order and
keeps a removal only while a solver still finds exactly one completion. A trial's puzzle comes from its own random
stream, "puzzle" (:mod:`coordkit.streams`), so that it depends on the seed, ``n`` and ``empty`` only.
"""

import random
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from coordkit.streams import stream_sequence

EMPTY = 0
MIN_SIZE, MAX_SIZE = 2, 16  # the smallest Latin square with a hole to fill; the largest the solver handles


@dataclass(frozen=True)
class Puzzle:
    """An n×n grid with ``EMPTY`` (0) in its holes, and its unique completion."""

    grid: np.ndarray
    solution: np.ndarray

    @property
    def n(self) -> int:
        return len(self.grid)

    @property
    def empty(self) -> int:
        return int((self.grid == EMPTY).sum())


def latin_square(n: int, rng: np.random.Generator, mixing_steps: int | None = None) -> np.ndarray:
    """A uniformly random n×n Latin square with symbols 1..n (Jacobson & Matthews 1996).

    The chain walks on incidence cubes (cube[r][c][s] = 1 when cell (r, c) holds s): each step adds ±1 around a
    2×2×2 sub-cube; an improper state (one −1 entry) is repaired by the next step. It runs ``mixing_steps`` proper
    steps (default n³) from the cyclic square, on Python lists with a generator seeded from ``rng``.
    """
    check_size(n)
    walk = random.Random(int(rng.integers(2**63)))
    cube = [[[int((r + c) % n == s) for s in range(n)] for c in range(n)] for r in range(n)]

    def ones(values) -> int:
        return walk.choice([k for k, v in enumerate(values) if v == 1])

    improper = None
    proper_steps = 0
    while proper_steps < (n**3 if mixing_steps is None else mixing_steps) or improper is not None:
        if improper is None:
            r, c, s = walk.randrange(n), walk.randrange(n), walk.randrange(n)
            while cube[r][c][s] != 0:
                r, c, s = walk.randrange(n), walk.randrange(n), walk.randrange(n)
        else:
            r, c, s = improper
        r2 = ones([cube[k][c][s] for k in range(n)])
        c2 = ones([cube[r][k][s] for k in range(n)])
        s2 = ones(cube[r][c])
        for (a, b, d), change in (
            ((r, c, s), 1),
            ((r, c2, s2), 1),
            ((r2, c, s2), 1),
            ((r2, c2, s), 1),
            ((r, c2, s), -1),
            ((r2, c, s), -1),
            ((r, c, s2), -1),
            ((r2, c2, s2), -1),
        ):
            cube[a][b][d] += change
        improper = (r2, c2, s2) if cube[r2][c2][s2] < 0 else None
        proper_steps += improper is None
    return np.array([[row.index(1) + 1 for row in plane] for plane in cube], dtype=np.int8)


def count_completions(grid: np.ndarray, limit: int = 2) -> int:
    """How many ways the holes of ``grid`` can be filled to a Latin square, counting up to ``limit``."""
    n = len(grid)
    full = (1 << n) - 1
    rows = [0] * n
    cols = [0] * n
    holes = []
    for r in range(n):
        for c in range(n):
            value = int(grid[r, c])
            if value == EMPTY:
                holes.append((r, c))
                continue
            bit = 1 << (value - 1)
            if rows[r] & bit or cols[c] & bit:
                return 0
            rows[r] |= bit
            cols[c] |= bit

    def search(remaining: list[tuple[int, int]]) -> int:
        if not remaining:
            return 1
        # the most constrained hole first
        best = min(
            range(len(remaining)), key=lambda k: bin(full & ~(rows[remaining[k][0]] | cols[remaining[k][1]])).count("1")
        )
        r, c = remaining[best]
        rest = remaining[:best] + remaining[best + 1 :]
        options = full & ~(rows[r] | cols[c])
        found = 0
        while options and found < limit:
            bit = options & -options
            options ^= bit
            rows[r] |= bit
            cols[c] |= bit
            found += search(rest)
            rows[r] ^= bit
            cols[c] ^= bit
        return found

    return search(holes)


def make_puzzle(n: int, empty: int, rng: np.random.Generator, attempts: int = 20) -> Puzzle:
    """A puzzle with ``empty`` holes and exactly one completion.

    Cells are removed in random order, keeping a removal only if the completion stays unique; a square that cannot
    give ``empty`` unique holes is replaced, up to ``attempts`` times.
    """
    check_size(n)
    if not 0 <= empty <= n * n:
        raise ValueError(f"empty={empty}: a {n}×{n} grid has between 0 and {n * n} cells to empty")
    for _ in range(attempts):
        solution = latin_square(n, rng)
        grid = solution.copy()
        removed = 0
        for cell in rng.permutation(n * n):
            if removed == empty:
                break
            r, c = divmod(int(cell), n)
            grid[r, c] = EMPTY
            if count_completions(grid) == 1:
                removed += 1
            else:
                grid[r, c] = solution[r, c]
        if removed == empty:
            return Puzzle(grid, solution)
    raise ValueError(
        f"could not make a {n}×{n} puzzle with {empty} empty cells and one completion in {attempts} tries; "
        "ask for fewer empty cells"
    )


@lru_cache(maxsize=4096)
def puzzle_for(n: int, empty: int, seed: int) -> Puzzle:
    """The puzzle of trial seed ``seed``, made once from the seed's "puzzle" stream (the one
    ``PressureField(rng=seed)`` draws it from): strategies compared on the same seed see the same puzzle."""
    puzzle = make_puzzle(n, empty, np.random.default_rng(stream_sequence(seed, "puzzle")))
    puzzle.grid.setflags(write=False)
    puzzle.solution.setflags(write=False)
    return puzzle


def check_size(n: int) -> None:
    if n < MIN_SIZE:
        raise ValueError(f"n={n}: a Latin square needs n >= {MIN_SIZE}")
    if n > MAX_SIZE:
        raise ValueError(f"n={n}: the kit's solver handles up to {MAX_SIZE}×{MAX_SIZE}")
