"""The pressure-field policies: the rule actor, a student's rule as an actor, the conversation's rule Coordinator,
Proposer and Validator, and the LLM actor and roles (answered by the stand-in)."""

import numpy as np

from coordkit.policies import policy_from
from coordkit.pressure import stand_in
from coordkit.pressure.llm_policies import actor_policy, coordinator_policy, proposer_policy, validator_policy
from coordkit.pressure.model import PressureField
from coordkit.pressure.policies import (
    Assignment,
    Board,
    Check,
    Patch,
    RowObservation,
    RuleActor,
    RuleCoordinator,
    RuleProposer,
    RuleValidator,
    StudentActor,
    Turn,
    target_cells,
)
from coordkit.pressure.puzzles import EMPTY

from . import PolicyExample


def observations_by_tick() -> list[list[RowObservation]]:
    """Every row's observation in a 7×7 trial with remembered fixes, in its first 6 ticks (the initial state first)."""
    model = PressureField(examples=True, rng=0)
    states = []
    for _ in range(6):
        states.append([model.row_observation(row) for row in range(model.n)])
        model.step()
    return states


def assignments() -> list[Assignment]:
    """Every row with somewhere to patch, tick after tick, at two skills."""
    return [
        Assignment(seen, skill)
        for observations in observations_by_tick()
        for seen in observations
        if target_cells(seen)
        for skill in (0.1, 0.9)
    ]


def boards() -> list[Board]:
    model = PressureField(rng=1)
    seen = []
    for _ in range(8):
        seen.append(Board(tuple(map(tuple, model.grid)), tuple(int(p) for p in model.pressures)))
        model.step()
    return seen


def turns() -> list[Turn]:
    """Rows with a hole that still has an available value, with and without earlier rejections."""
    observations = [
        seen
        for observations in observations_by_tick()
        for seen in observations
        if any(seen.available[c] for c in range(seen.n) if seen.cells[c] == EMPTY)
    ]
    return [
        Turn(seen, 0.5, history, rejected)
        for seen in observations
        for history, rejected in (
            ((), frozenset()),
            (("PROPOSE position=0 value=1", "REJECT"), frozenset((c, v) for c in range(seen.n) for v in (1, 2, 3))),
        )
    ]


def checks() -> list[Check]:
    """Proposals of every value for every hole of the seed-0 puzzle."""
    model = PressureField(rng=0)
    return [
        Check(
            Patch(row, column, value),
            tuple(int(v) for v in model.grid[row]),
            tuple(int(v) for i, v in enumerate(model.grid[:, column]) if i != row),
        )
        for row, column in map(tuple, np.argwhere(model.grid == EMPTY).tolist())
        for value in range(1, model.n + 1)
    ]


def first_available(assignment):
    """A student's rule: the first value the first target cell still lacks (no proposal if there is none)."""
    seen = assignment.observation
    for column in target_cells(seen):
        if seen.available[column]:
            return column, seen.available[column][0]
    return None


EXAMPLES = [
    PolicyExample("rule_actor", lambda rng, client: RuleActor(rng), assignments),
    PolicyExample(  # a student's rule as an actor: the whole proposal is its
        "student_actor", lambda rng, client: StudentActor(policy_from(first_available), RuleActor(rng)), assignments
    ),
    PolicyExample("rule_coordinator", lambda rng, client: RuleCoordinator(), boards),
    PolicyExample("rule_proposer", lambda rng, client: RuleProposer(rng), turns),
    PolicyExample("rule_validator", lambda rng, client: RuleValidator(rng, 0.2), checks),
    PolicyExample(
        "llm_actor", lambda rng, client: actor_policy(client, RuleActor(rng), rng), assignments, reply=stand_in.reply
    ),
    PolicyExample(
        "llm_coordinator",
        lambda rng, client: coordinator_policy(client, RuleCoordinator()),
        boards,
        reply=stand_in.reply,
    ),
    PolicyExample(
        "llm_proposer", lambda rng, client: proposer_policy(client, RuleProposer(rng)), turns, reply=stand_in.reply
    ),
    PolicyExample(
        "llm_validator",
        lambda rng, client: validator_policy(client, RuleValidator(rng, 0.2)),
        checks,
        reply=stand_in.reply,
    ),
]
