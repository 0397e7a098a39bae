"""The rule-based policies of the pressure-field paper and the observations they decide from (§3.5, Appendix B).

An actor proposes a patch for one row from that row's local observation only (§3.5). The rule-based actor stands in for
the paper's LLMs: its ``skill`` in [0, 1] stands in for model size — with probability ``skill`` it picks a value the
row and the column still lack (the values the published prompt lists as "available"), otherwise any value 1..n.
Model escalation raises the skill through five tiers (0.5B → 14B in the paper, §6.1.4). With probability
``failure`` a proposal is unusable and yields no patch at all (the small models' replies the code cannot use;
:mod:`coordkit.pressure.calibration` fits it to the paper).

Each decision draws a fixed block of uniforms from the policy's generator and maps them to its choices (inverse
transform, :func:`pick`), whatever the row looks like: so an actor's k-th proposal uses the same random numbers in
two runs at one seed, whatever the settings (the synchronisation common random numbers need, :mod:`coordkit.streams`).

The conversation baseline's roles (Appendix B), as rules: the :class:`RuleCoordinator` picks the row with the
highest pressure, the :class:`RuleProposer` is a skill-based actor that avoids proposals already rejected, and the
:class:`RuleValidator` checks the row and the column but errs with probability ``error``.
"""

import numbers
from dataclasses import dataclass

import numpy as np

from coordkit.policies import Classifier, DecisionError, Policy, StudentRule, policy_name
from coordkit.pressure.puzzles import EMPTY
from coordkit.renamed import renamed

MODEL_CHAIN = ("0.5B", "1.5B", "3B", "7B", "14B")
ESCALATION_STEP = 0.1


def escalation_skills(skill: float) -> tuple[float, ...]:
    """The skill of each model of the escalation chain: ``skill``, then 0.1 more per tier (capped at 1)."""
    return tuple(min(1.0, skill + ESCALATION_STEP * k) for k in range(len(MODEL_CHAIN)))


@dataclass(frozen=True)
class RowObservation:
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


@dataclass(frozen=True)
class Assignment:
    """What an actor is asked to patch: a row's observation, and the skill of the model tier in play."""

    observation: RowObservation
    skill: float


def patch_of(decision: object, policy: object, assignment: Assignment) -> Patch | None:
    """``decision`` as a patch of the assigned row: a :class:`Patch`, a (column, value) pair, or None (no proposal);
    a :class:`~coordkit.policies.DecisionError` that names ``policy``, the value it returned and what an actor
    proposes, for anything else."""
    if decision is None:
        return None
    seen = assignment.observation
    if isinstance(decision, Patch):
        row, column, value = decision.row, decision.column, decision.value
    elif isinstance(decision, tuple) and len(decision) == 2:
        row, (column, value) = seen.row, decision
    else:
        row = column = value = None
    whole = [isinstance(x, numbers.Integral) and not isinstance(x, bool) for x in (row, column, value)]
    if all(whole) and row == seen.row and 0 <= column < seen.n and 1 <= value <= seen.n:
        return Patch(int(row), int(column), int(value))
    raise DecisionError(
        f"policy {policy_name(policy)!r} returned {decision!r}: an actor of row {seen.row} proposes "
        f"Patch(row={seen.row}, column, value) or a (column, value) pair, with column 0 to {seen.n - 1} and value "
        f"1 to {seen.n}, or None for no proposal"
    )


class StudentActor(StudentRule):
    """A student's rule as an actor (issue 45): it makes the whole proposal from the :class:`Assignment` (the row's
    observation and the tier's skill); the strategy still decides which rows get attention, and the model which
    patches it accepts. ``rule`` is the actor's own rule, which a pressure field sends nothing for."""

    def decide(self, assignment: Assignment) -> Patch | None:
        return patch_of(self.student.decide(assignment), self.student, assignment)


@dataclass(frozen=True)
class Board:
    """The Coordinator's observation: the whole grid and each row's pressure."""

    grid: tuple[tuple[int, ...], ...]
    pressures: tuple[int, ...]


@dataclass(frozen=True)
class Turn:
    """The Proposer's observation: the target row, the dialogue so far and the proposals already rejected."""

    observation: RowObservation
    skill: float
    history: tuple[str, ...]
    rejected: frozenset[tuple[int, int]]


@dataclass(frozen=True)
class Check:
    """The Validator's observation: the proposal, the row and the target column (the row's own cell left out)."""

    patch: Patch
    row: tuple[int, ...]
    column: tuple[int, ...]


def pick(options, u: float):
    """The option a uniform ``u`` in [0, 1) picks, each with equal chance."""
    return options[int(u * len(options))]


def target_cells(seen: RowObservation) -> list[int]:
    """Where a patch can help: the asked-about positions, else editable empty cells, else editable cells whose
    value conflicts."""
    if seen.targets:
        return list(seen.targets)
    empty = [c for c, value in enumerate(seen.cells) if value == EMPTY and seen.editable[c]]
    return empty or [c for c in range(seen.n) if seen.editable[c] and seen.conflicting[c]]


@dataclass(frozen=True)
class RuleActor(Policy):
    """Skill-based proposals: a cell from :func:`target_cells`, and an available value with probability ``skill``;
    with probability ``failure``, no usable proposal at all (``None``, as for a row with nothing to patch).

    With examples in its observation, it copies a remembered fix for the same column with probability ``example_trust``
    — a cue that does not transfer in a Latin square (that value is already in the column), the kit's model of
    why the paper's few-shot examples did not help (§6.3.2). Every decision draws five uniforms from ``rng``: for
    the failure, the cell, the example, the skill and the value.
    """

    rng: np.random.Generator
    example_trust: float = 0.3
    failure: float = 0.0

    name = "rule_actor"
    classifier = Classifier(stochastic=True)

    def decide(self, assignment: Assignment) -> Patch | None:
        unusable, where, recall, informed, symbol = self.rng.random(5).tolist()  # plain floats: cheaper to compare
        seen = assignment.observation
        cells = target_cells(seen)
        if not cells or unusable < self.failure:
            return None
        column = pick(cells, where)
        remembered = [value for c, value in seen.examples if c == column]
        if remembered and recall < self.example_trust:
            return Patch(seen.row, column, int(remembered[-1]))
        if seen.available[column] and informed < assignment.skill:
            return Patch(seen.row, column, int(pick(seen.available[column], symbol)))
        return Patch(seen.row, column, 1 + int(symbol * seen.n))


@dataclass(frozen=True)
class RuleCoordinator(Policy):
    """The conversation's Coordinator as a rule: the row with the highest pressure (ties: the lowest index)."""

    name = "rule_coordinator"
    classifier = Classifier()

    def decide(self, board: Board) -> int:
        return int(np.argmax(board.pressures))


@dataclass(frozen=True)
class RuleProposer(Policy):
    """The conversation's Proposer as a rule: a skill-based actor (no examples, the same ``failure``) that draws
    again, up to ``attempts`` times, while its proposal is one the Validator already rejected."""

    rng: np.random.Generator
    attempts: int = 10
    failure: float = 0.0

    name = "rule_proposer"
    classifier = Classifier(stochastic=True)

    def decide(self, turn: Turn) -> Patch | None:
        actor = RuleActor(self.rng, example_trust=0.0, failure=self.failure)
        for _ in range(self.attempts):
            patch = actor.decide(Assignment(turn.observation, turn.skill))
            if patch is None or (patch.column, patch.value) not in turn.rejected:
                return patch
        return patch


@dataclass(frozen=True)
class RuleValidator(Policy):
    """The conversation's Validator as a rule: approves exactly the proposals that keep the row and the column
    free of repeats — except that with probability ``error`` it says the opposite."""

    rng: np.random.Generator
    error: float = 0.2

    name = "rule_validator"
    classifier = Classifier(stochastic=True)

    def decide(self, check: Check) -> bool:
        others = [v for c, v in enumerate(check.row) if c != check.patch.column]
        correct = check.patch.value not in others and check.patch.value not in check.column
        return correct != (self.rng.random() < self.error)


__getattr__ = renamed(__name__, {"RowView": "RowObservation"}, globals())  # the old name, for one release
