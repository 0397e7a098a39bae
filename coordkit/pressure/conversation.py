"""The conversation baseline (Appendix B): a Coordinator picks a row, then a Proposer and a Validator talk for up to
``max_turns`` turns until the Validator approves a proposal.

Rule-based roles by default — the Coordinator picks the row with the highest pressure, the Proposer is a skill-based
actor that avoids proposals already rejected, the Validator checks the row and the column and errs with probability
``validator_error`` — and LLM roles with the paper's three prompts, each falling back to its rule.
"""

import re
from dataclasses import dataclass

import numpy as np

from coordkit.llm import LLMClient, LLMRequest
from coordkit.policies import LLMPolicy, Policy, ReplyParseError, RulePolicy
from coordkit.pressure.actors import Patch, RowView, RuleActor
from coordkit.pressure.puzzles import EMPTY

SYSTEM = "You are one of several agents solving a Latin Square puzzle together."

COORDINATOR = """You are a Coordinator agent solving a {n}x{n} Latin Square puzzle.
Current puzzle state (each row is numbered, _ means empty):
{puzzle_state}

Task: Identify which row needs the most attention. Consider:
1. Rows with empty cells
2. Rows with constraint violations

Respond with ONLY: TARGET row=<N>"""

PROPOSER = """You are a Proposer agent solving a Latin Square puzzle.
Target row {row_idx}: {region_content}
Available values per column position: {availability}
Previous messages: {history}

Propose ONE value for ONE empty cell (_).
Format: PROPOSE position=<col> value=<num>"""

VALIDATOR = """You are a Validator agent checking Latin Square constraints.
Row: {region_content}
Proposal: {proposal}
Values already in target column: {column_values}
Values already in row: {row_values}

Check if the proposed value violates constraints.
Respond with ONLY: APPROVE or REJECT <reason>"""


@dataclass(frozen=True)
class Board:
    """The Coordinator's view: the whole grid and each row's pressure."""

    grid: tuple[tuple[int, ...], ...]
    pressures: tuple[int, ...]


@dataclass(frozen=True)
class Turn:
    """The Proposer's view: the target row, the dialogue so far and the proposals already rejected."""

    view: RowView
    skill: float
    history: tuple[str, ...]
    rejected: frozenset[tuple[int, int]]


@dataclass(frozen=True)
class Check:
    """The Validator's view: the proposal, the row and the target column."""

    patch: Patch
    row: tuple[int, ...]
    column: tuple[int, ...]


def render_row(cells) -> str:
    return " ".join("_" if value == EMPTY else str(value) for value in cells)


def coordinator_rule(board: Board) -> int:
    """The row with the highest pressure (ties: the lowest index)."""
    return int(np.argmax(board.pressures))


def proposer_rule(rng: np.random.Generator, attempts: int = 10):
    actor = RuleActor(rng, example_trust=0.0)

    def propose(turn: Turn) -> Patch | None:
        for _ in range(attempts):
            patch = actor.propose(turn.view, turn.skill)
            if patch is None or (patch.column, patch.value) not in turn.rejected:
                return patch
        return patch

    return propose


def validator_rule(rng: np.random.Generator, error: float):
    """Approves exactly the proposals that keep the row and the column free of repeats — except that with
    probability ``error`` it says the opposite."""

    def check(verdict: Check) -> bool:
        others = [v for c, v in enumerate(verdict.row) if c != verdict.patch.column]
        correct = verdict.patch.value not in others and verdict.patch.value not in verdict.column
        return correct != (rng.random() < error)

    return check


def coordinator_llm(client: LLMClient, fallback: Policy) -> LLMPolicy:
    def request(board: Board) -> LLMRequest:
        state = "\n".join(f"{i}: {render_row(row)}" for i, row in enumerate(board.grid))
        return LLMRequest.user(SYSTEM, COORDINATOR.format(n=len(board.grid), puzzle_state=state), max_tokens=20,
                               purpose="pressure.conversation.coordinator")

    def parse(text: str, board: Board) -> int:
        match = re.search(r"TARGET\s+row\s*=\s*(\d+)", text, re.I)
        if not match or not 0 <= int(match[1]) < len(board.grid):
            raise ReplyParseError("no TARGET row=<N> with a row of the grid")
        return int(match[1])

    return LLMPolicy(client, request, parse, fallback, name="llm_coordinator")


def proposer_llm(client: LLMClient, fallback: Policy) -> LLMPolicy:
    def request(turn: Turn) -> LLMRequest:
        view = turn.view
        availability = "; ".join(f"{c}: {list(view.available[c])}" for c in range(view.n) if view.cells[c] == EMPTY)
        prompt = PROPOSER.format(row_idx=view.row, region_content=render_row(view.cells), availability=availability,
                                 history=" | ".join(turn.history) or "(none)")
        return LLMRequest.user(SYSTEM, prompt, max_tokens=20, purpose="pressure.conversation.proposer")

    def parse(text: str, turn: Turn) -> Patch:
        match = re.search(r"position\s*=\s*(\d+)\s+value\s*=\s*(\d+)", text, re.I)
        if not match:
            raise ReplyParseError("no PROPOSE position=<col> value=<num>")
        column, value = int(match[1]), int(match[2])
        if not (0 <= column < turn.view.n and turn.view.editable[column] and 1 <= value <= turn.view.n):
            raise ReplyParseError(f"position {column} / value {value} is not an editable cell and a symbol")
        return Patch(turn.view.row, column, value)

    return LLMPolicy(client, request, parse, fallback, name="llm_proposer")


def validator_llm(client: LLMClient, fallback: Policy) -> LLMPolicy:
    def request(check: Check) -> LLMRequest:
        prompt = VALIDATOR.format(
            region_content=render_row(check.row), proposal=f"position={check.patch.column} value={check.patch.value}",
            column_values=[v for v in check.column if v != EMPTY], row_values=[v for v in check.row if v != EMPTY],
        )
        return LLMRequest.user(SYSTEM, prompt, max_tokens=30, purpose="pressure.conversation.validator")

    def parse(text: str, check: Check) -> bool:
        word = re.match(r"\s*\**\s*(APPROVE|REJECT)", text, re.I)
        if not word:
            raise ReplyParseError("neither APPROVE nor REJECT")
        return word[1].upper() == "APPROVE"

    return LLMPolicy(client, request, parse, fallback, name="llm_validator")


@dataclass
class Roles:
    """The three roles of a conversation, as policies."""

    coordinator: Policy
    proposer: Policy
    validator: Policy

    @classmethod
    def make(cls, rng: np.random.Generator, validator_error: float, llm: LLMClient | None = None) -> "Roles":
        rules = cls(RulePolicy(coordinator_rule), RulePolicy(proposer_rule(rng)),
                    RulePolicy(validator_rule(rng, validator_error)))
        if llm is None:
            return rules
        return cls(coordinator_llm(llm, rules.coordinator), proposer_llm(llm, rules.proposer),
                   validator_llm(llm, rules.validator))
