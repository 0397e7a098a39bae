"""The five coordination strategies of the paper (§6.1.2), as small objects that know how they pick rows.

Every strategy but the conversation uses the model's actors, forks and selection, and differs only in the rows it
works on: in paper mode (:meth:`RowStrategy.paper_rows`, §4.3) and in the published code
(:meth:`RowStrategy.published_row`, one row a tick). Only pressure-field keeps fitness (``reinforces``); sequential
plays with one actor. The conversation (Appendix B) plays its own tick: a Coordinator picks a row, then a Proposer
and a Validator talk for up to ``max_turns`` turns until the Validator approves a proposal.
"""

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from coordkit.policies import Policy
from coordkit.pressure.policies import Board, Check, Patch, Turn, pick, target_cells
from coordkit.pressure.puzzles import EMPTY

if TYPE_CHECKING:
    from coordkit.pressure.model import PressureField


class Strategy(ABC):
    """How a tick chooses its rows and patches them."""

    name: ClassVar[str]
    reinforces: ClassVar[bool] = False  # in paper mode, a patch raises its row's fitness and confidence (eq. 5)

    def actors(self, agent_count: int) -> int:
        """How many actors the strategy plays with, of the ``agent_count`` asked for."""
        return agent_count

    @abstractmethod
    def tick(self, model: "PressureField") -> list[Patch]:
        """The patches to apply this tick (the model applies them)."""


class RowStrategy(Strategy):
    """A strategy whose actors patch the rows it picks: all activated rows in paper mode, one in the published code."""

    def tick(self, model: "PressureField") -> list[Patch]:
        if model.mode == "published":
            return model.published_tick(self.published_row(model))
        return model.paper_tick(self.activated_rows(model))

    def activated_rows(self, model: "PressureField") -> list[int]:
        """The rows the actors work on this tick, in paper mode: none when no row holds anything to patch."""
        actionable = model.actionable
        live = [row for row in range(model.n) if actionable[row]]
        return self.paper_rows(model, live) if live else []

    @abstractmethod
    def paper_rows(self, model: "PressureField", live: list[int]) -> list[int]:
        """The rows to activate among ``live``, the rows where a patch can change something."""

    @abstractmethod
    def published_row(self, model: "PressureField") -> int:
        """The one row the published code works on this tick."""


class PressureFieldStrategy(RowStrategy):
    """The paper's algorithm (§4.3), with the kit's reading of how fitness decides attention: a row bids its
    pressure discounted by its fitness, P_i·(1 − f_i); the ``focus`` rows of highest bid above τ_act are activated,
    among those neither inhibited nor settled (confidence at ``settle_confidence``). The published code: the row
    of highest pressure, ties to the lowest index."""

    name = "pressure_field"
    reinforces = True

    def paper_rows(self, model: "PressureField", live: list[int]) -> list[int]:
        eligible = set(live)
        attention = {
            r.index: model.pressures[r.index] * (1 - r.fitness)
            for r in model.regions
            if r.index in eligible
            and r.confidence < model.settle_confidence
            and not (model.inhibition and r.inhibited_until > model.steps)
        }
        ranked = sorted(
            (row for row, bid in attention.items() if bid > model.activation), key=lambda row: -attention[row]
        )
        return ranked[: model.focus]

    def published_row(self, model: "PressureField") -> int:
        return int(np.argmax(model.pressures))


class HierarchicalStrategy(RowStrategy):
    """A simulated manager: the row with most empty cells, then (when none is left) the highest pressure; ties to
    the lowest index. The published code: the row with most empty cells."""

    name = "hierarchical"

    def paper_rows(self, model: "PressureField", live: list[int]) -> list[int]:
        empties = (model.grid == EMPTY).sum(axis=1)
        key = empties if empties.max() > 0 else model.pressures
        return [max(live, key=lambda row: (key[row], -row))]

    def published_row(self, model: "PressureField") -> int:
        return int(np.argmax((model.grid == EMPTY).sum(axis=1)))


class SequentialStrategy(RowStrategy):
    """Row ``tick mod n``, by one actor, in both modes."""

    name = "sequential"

    def actors(self, agent_count: int) -> int:
        return 1

    def paper_rows(self, model: "PressureField", live: list[int]) -> list[int]:
        return [self.published_row(model)]

    def published_row(self, model: "PressureField") -> int:
        return (model.steps - 1) % model.n


class RandomStrategy(RowStrategy):
    """Any row, drawn uniformly from the model's "rows" stream, in both modes."""

    name = "random"

    def paper_rows(self, model: "PressureField", live: list[int]) -> list[int]:
        return [self.published_row(model)]

    def published_row(self, model: "PressureField") -> int:
        return pick(range(model.n), model.streams("rows").random())


@dataclass(frozen=True)
class Roles:
    """The conversation's three roles, as policies (rules, or LLMs falling back to them)."""

    coordinator: Policy
    proposer: Policy
    validator: Policy

    def policies(self) -> list[Policy]:
        return [self.coordinator, self.proposer, self.validator]


class ConversationStrategy(Strategy):
    """Coordinator → (Proposer ⇄ Validator) × ``max_turns`` (Appendix B), in both modes; the model's actors play no
    part. A turn whose proposal is unusable is spent without asking the Validator. An approved patch that changes
    its cell still passes the model's acceptance gate, when it is on."""

    name = "conversation"

    def actors(self, agent_count: int) -> int:
        return 0

    def tick(self, model: "PressureField") -> list[Patch]:
        roles = model.roles
        grid = model.cells  # plain ints, for the roles' observations
        board = Board(tuple(map(tuple, grid)), tuple(model.pressures.tolist()))
        row = roles.coordinator.decide(board)
        model.focus_rows = [row]
        seen = model.row_observation(row)
        history: list[str] = []
        rejected: set[tuple[int, int]] = set()
        for _ in range(model.max_turns):
            if not target_cells(seen):
                return []
            patch = roles.proposer.decide(Turn(seen, model.tier_skill, tuple(history), frozenset(rejected)))
            if patch is None:  # an unusable reply: the turn is spent, the Validator not asked (Appendix B)
                history.append("(no usable proposal)")
                continue
            history.append(f"PROPOSE position={patch.column} value={patch.value}")
            column = tuple(line[patch.column] for i, line in enumerate(grid) if i != row)
            if roles.validator.decide(Check(patch, tuple(grid[row]), column)):
                history.append("APPROVE")
                changes = model.grid[row, patch.column] != patch.value
                return [patch] if changes and model.passes_gate(patch) else []
            history.append("REJECT")
            rejected.add((patch.column, patch.value))
        return []


STRATEGIES = {
    strategy.name: strategy
    for strategy in (
        PressureFieldStrategy(),
        HierarchicalStrategy(),
        SequentialStrategy(),
        RandomStrategy(),
        ConversationStrategy(),
    )
}
"""The strategies by name, in the paper's order."""
