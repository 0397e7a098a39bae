"""Actors propose patches for one row from that row's local view (§3.5); rule-based actors stand in for LLMs.

A patch writes one value into one editable (non-given) cell. The rule-based actor's ``skill`` in [0, 1] stands in
for model size: with probability ``skill`` it picks a value the row and the column still lack (the values the
published prompt lists as "available"), otherwise any value 1..n. Model escalation raises the skill through five
tiers (0.5B → 14B in the paper, §6.1.4).
"""

from dataclasses import dataclass

import mesa
import numpy as np

from coordkit.policies import Policy, RulePolicy
from coordkit.pressure.puzzles import EMPTY

MODEL_CHAIN = ("0.5B", "1.5B", "3B", "7B", "14B")


@dataclass(frozen=True)
class RowView:
    """What an actor sees of region (row) ``row``: its content, which cells it may change, each position's
    available values (absent from the row and the column), its pressure and auxiliary state, and remembered fixes."""

    row: int
    n: int
    cells: tuple[int, ...]
    editable: tuple[bool, ...]
    available: tuple[tuple[int, ...], ...]  # per position: values in neither the rest of the row nor the column
    conflicting: tuple[bool, ...]  # per position: its value repeats in the row or the column
    pressure: int
    fitness: float = 0.0
    confidence: float = 0.0
    examples: tuple[tuple[int, int], ...] = ()  # (column, value) of earlier successful fixes
    targets: tuple[int, ...] = ()  # the positions this actor is asked about (empty: its choice)


@dataclass(frozen=True)
class Patch:
    """Write ``value`` into cell (``row``, ``column``); ``actor`` proposed it."""

    row: int
    column: int
    value: int
    actor: int = -1


ESCALATION_STEP = 0.1


def escalation_skills(skill: float) -> tuple[float, ...]:
    """The skill of each model of the escalation chain: ``skill``, then 0.1 more per tier (capped at 1)."""
    return tuple(min(1.0, skill + ESCALATION_STEP * k) for k in range(len(MODEL_CHAIN)))


def target_cells(view: RowView) -> list[int]:
    """Where a patch can help: the asked-about positions, else editable empty cells, else editable cells whose
    value conflicts."""
    if view.targets:
        return list(view.targets)
    empty = [c for c, value in enumerate(view.cells) if value == EMPTY and view.editable[c]]
    return empty or [c for c in range(view.n) if view.editable[c] and view.conflicting[c]]


class RuleActor:
    """Skill-based proposals: a cell from :func:`target_cells`, and an available value with probability ``skill``.

    With examples in its view, it copies a remembered fix for the same column with probability ``example_trust``
    — a cue that does not transfer in a Latin square (that value is already in the column), the kit's model of
    why the paper's few-shot examples did not help (§6.3.2).
    """

    def __init__(self, rng: np.random.Generator, example_trust: float = 0.3):
        self.rng = rng
        self.example_trust = example_trust

    def propose(self, view: RowView, skill: float) -> Patch | None:
        cells = target_cells(view)
        if not cells:
            return None
        column = int(self.rng.choice(cells))
        remembered = [value for c, value in view.examples if c == column]
        if remembered and self.rng.random() < self.example_trust:
            return Patch(view.row, column, int(remembered[-1]))
        if view.available[column] and self.rng.random() < skill:
            return Patch(view.row, column, int(self.rng.choice(view.available[column])))
        return Patch(view.row, column, int(self.rng.integers(1, view.n + 1)))


class Actor(mesa.Agent):
    """One of the model's parallel proposers: its policy maps (view, skill) to a patch."""

    def __init__(self, model, policy: Policy):
        super().__init__(model)
        self.policy = policy

    def propose(self, view: RowView, skill: float) -> Patch | None:
        return self._signed(self.policy.decide((view, skill)))

    async def propose_async(self, view: RowView, skill: float) -> Patch | None:
        """:meth:`propose` for a tick whose LLM calls run concurrently."""
        return self._signed(await self.policy.decide_async((view, skill)))

    def _signed(self, patch: Patch | None) -> Patch | None:
        return None if patch is None else Patch(patch.row, patch.column, patch.value, self.unique_id)


def rule_policy(rng: np.random.Generator) -> RulePolicy:
    actor = RuleActor(rng)
    return RulePolicy(lambda observation: actor.propose(*observation), name="rule_actor")
