"""The pressure-field paper's algorithm (§4.3) as a minimal plain-Mesa model: the comparison for the kit's
:class:`~coordkit.pressure.model.PressureField` in ``benchmarks/bench_pressure.py`` (issue 48).

Written as a Mesa user would write it from the paper, apart from the kit: a numpy grid, the pressure of §6.1.1,
skill-based actors as Mesa agents, one DataCollector with the kit's five model reporters. It plays the kit's
default trial (paper mode, pressure-field, four rule-based actors, decay, inhibition, escalation, no gate, no
examples; optionally a rate of unusable proposals, as the calibrated Table 7) with the kit's puzzle and the kit's
actor streams, so both play the same rounds and the bench checks that they do. It keeps no history, row log,
parameters declaration, policies or LLM plumbing.
"""

import math

import mesa
import numpy as np

from coordkit.pressure.puzzles import puzzle_for
from coordkit.streams import stream_sequence

SKILLS = (0.1, 0.2, 0.3, 0.4, 0.5)  # the escalation chain's tiers (0.5B to 14B)
TIERS = ("0.5B", "1.5B", "3B", "7B", "14B")


def pressures(grid: np.ndarray) -> np.ndarray:
    """P_i = empty + 10·row duplicates + 10·column conflicts, per row (§6.1.1)."""
    filled = grid != 0
    ordered = np.sort(grid, axis=-1)
    duplicates = ((ordered[..., 1:] == ordered[..., :-1]) & (ordered[..., 1:] != 0)).sum(axis=-1)
    in_column = (grid[..., :, None, :] == grid[..., None, :, :]).sum(axis=-3)
    return (~filled).sum(axis=-1) + 10 * duplicates + 10 * (filled & (in_column > 1)).sum(axis=-1)


class Actor(mesa.Agent):
    """Proposes (column, value) for a row: an available value with probability ``skill``, else any (five uniforms)."""

    def __init__(self, model, rng):
        super().__init__(model)
        self.draws = rng

    def propose(self, row: int, cells: list[int], available: list[list[int]]):
        unusable, where, _, informed, symbol = self.draws.random(5)
        if unusable < self.model.failure:  # an unusable reply: no proposal
            return None
        column = cells[int(where * len(cells))]
        if available[column] and informed < self.model.skill:
            return row, column, available[column][int(symbol * len(available[column]))]
        return row, column, 1 + int(symbol * self.model.n)


class MinimalPressureField(mesa.Model):
    def __init__(self, seed: int, n=7, empty=7, agents=4, failure=0.0, max_ticks=100):
        super().__init__()
        self.n, self.failure, self.max_ticks = n, failure, max_ticks
        self.grid = puzzle_for(n, empty, seed).grid.copy()
        self.editable = self.grid == 0
        self.fitness, self.confidence = np.zeros(n), np.zeros(n)
        self.inhibited_until = np.zeros(n, dtype=int)
        for k in range(agents):
            Actor(self, np.random.default_rng(stream_sequence(seed, "actor", k)))
        self.tier, self.stalled = 0, 0
        self.pressures = pressures(self.grid)
        self.best = self.pressures.sum()
        self.focus, self.patches = [], 0
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "tick": "steps",
                "pressure": lambda m: int(m.pressures.sum()),
                "patches": "patches",
                "focus": lambda m: tuple(m.focus),
                "model_tier": lambda m: TIERS[m.tier],
            }
        )
        self.datacollector.collect(self)
        self.running = self.best > 0

    @property
    def skill(self) -> float:
        return SKILLS[self.tier]

    def step(self):
        self.fitness *= math.exp(-0.1)  # eq. 4
        self.confidence *= math.exp(-0.1)
        self.focus = self.activated_rows()
        proposals = [actor.propose(row, *self.targets(row)) for row in self.focus for actor in self.agents]
        self.patches = self.apply_best([p for p in proposals if p is not None])
        self.pressures = pressures(self.grid)
        total = self.pressures.sum()
        self.stalled = 0 if total < self.best else self.stalled + 1
        self.best = min(self.best, total)
        if self.stalled >= 20 and self.tier < len(SKILLS) - 1:
            self.tier, self.stalled = self.tier + 1, 0
        self.datacollector.collect(self)
        self.running = total > 0 and self.steps < self.max_ticks

    def activated_rows(self) -> list[int]:
        """The row of highest attention P_i·(1 − f_i), among rows with something to patch, not settled nor inhibited."""
        grid = self.grid
        in_row = (grid[:, :, None] == grid[:, None, :]).sum(axis=2)
        in_column = (grid[:, None, :] == grid[None, :, :]).sum(axis=0)
        fixable = (self.editable & ((grid == 0) | (in_row > 1) | (in_column > 1))).any(axis=1)
        attention = self.pressures * (1 - self.fitness)
        open_rows = fixable & (self.confidence < 0.9) & (self.inhibited_until <= self.steps) & (attention > 0)
        if not fixable.any() or not open_rows.any():
            return []
        return [int(np.flatnonzero(open_rows)[np.argmax(attention[open_rows])])]

    def targets(self, row: int) -> tuple[list[int], list[list[int]]]:
        """The row's empty cells (else its conflicting ones), and each column's values in neither row nor column."""
        grid = self.grid.tolist()
        cells, editable = grid[row], self.editable[row].tolist()
        values = set(range(1, self.n + 1))
        available = []
        for c, column in enumerate(zip(*grid)):
            taken = set(cells[:c] + cells[c + 1 :]) | set(column[:row] + column[row + 1 :])
            available.append(sorted(values - taken))
        empty = [c for c in range(self.n) if cells[c] == 0 and editable[c]]
        clashing = [c for c in range(self.n) if editable[c] and cells[c] != 0 and cells[c] not in available[c]]
        return empty or clashing, available

    def apply_best(self, proposals) -> int:
        """Measure each changing proposal on a fork of the grid; apply the one that lowers pressure most."""
        changing = [(r, c, v) for r, c, v in proposals if self.grid[r, c] != v]
        if not changing:
            return 0
        forks = np.repeat(self.grid[None], len(changing), axis=0)
        for fork, (r, c, v) in zip(forks, changing):
            fork[r, c] = v
        row, column, value = changing[int(np.argmin(pressures(forks).sum(axis=1)))]
        self.grid[row, column] = value
        self.fitness[row] = min(self.fitness[row] + 0.5, 1.0)  # eq. 5
        self.confidence[row] = min(self.confidence[row] + 0.5, 1.0)
        self.inhibited_until[row] = self.steps + 4
        return 1
