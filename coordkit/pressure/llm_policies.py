"""The pressure-field paper's LLM policies: the actor of the published code, and the conversation's three roles.

- The actor (the prompt of the authors' code, its system prompt in Appendix A, §9.2): one position of one row at a
  time, at most 8 tokens, its temperature drawn from the paper's three sampling bands (Table 8). A reply without a
  number 1..n falls back to the rule-based actor.
- The conversation baseline (Appendix B): the Coordinator's, the Proposer's and the Validator's prompts, each
  falling back to its rule (:mod:`coordkit.pressure.policies`).

Every factory is ``…_policy(client, fallback, …)`` and returns an :class:`~coordkit.policies.LLMPolicy`.
"""

import re
from functools import partial

import numpy as np

from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.parsing import ReplyParseError, readable, whole_number
from coordkit.policies import LLMPolicy, Policy
from coordkit.pressure.policies import Assignment, Board, Check, Patch, RowObservation, Turn, target_cells
from coordkit.pressure.puzzles import EMPTY

ACTOR_SYSTEM = (
    "You solve Latin Square puzzles. Given a row with empty cells (_), return ONLY the number(s) that fill "
    "them. Return just the numbers, nothing else."
)
BANDS = ((0.15, 0.35), (0.35, 0.55), (0.55, 0.85))  # exploitation, balanced, exploration temperatures

CONVERSATION_SYSTEM = "You are one of several agents solving a Latin Square puzzle together."

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


def render_row(cells) -> str:
    """A row as the prompts show it: values, and _ for an empty cell."""
    return " ".join("_" if value == EMPTY else str(value) for value in cells)


# --- the actor --------------------------------------------------------------------------------------------------


def actor_prompt(seen: RowObservation, position: int) -> str:
    """The published code's question about one position of one row, with earlier fixes when there are any."""
    lines = [
        f"Row: {render_row(seen.cells)}",
        f"Empty position: {position}",
        f"Available values for position {position}: {list(seen.available[position])}",
    ]
    if seen.examples:
        lines.append("EXAMPLES OF SUCCESSFUL FIXES:")
        lines += [f"- position {column}: {value}" for column, value in seen.examples[-3:]]
    lines.append(f"What number goes in position {position}? Return just the number.")
    return "\n".join(lines)


def actor_request(assignment: Assignment, rng: np.random.Generator) -> LLMRequest:
    """The position asked about is the first target cell of the observation; the temperature is drawn from a band."""
    seen = assignment.observation
    band = BANDS[int(rng.integers(len(BANDS)))]
    return LLMRequest.user(
        ACTOR_SYSTEM,
        actor_prompt(seen, target_cells(seen)[0]),
        temperature=round(float(rng.uniform(*band)), 2),
        max_tokens=8,
        purpose="pressure.actor",
    )


def parse_value(text: str, assignment: Assignment) -> Patch:
    """The first number of the reply, for the position asked about; it must be a symbol 1..n."""
    seen = assignment.observation
    number = re.search(r"\d+", readable(text))
    value = whole_number(number[0], "the value") if number else None
    if value is None or not 1 <= value <= seen.n:
        raise ReplyParseError(f"no number 1..{seen.n} in the reply")
    return Patch(seen.row, target_cells(seen)[0], value)


def actor_policy(client: LLMClient, fallback: Policy, rng: np.random.Generator) -> LLMPolicy:
    """An LLM actor; ``fallback`` is :class:`~coordkit.pressure.policies.RuleActor`, ``rng`` draws temperatures."""
    return LLMPolicy(client, partial(actor_request, rng=rng), parse_value, fallback, name="llm_actor")


# --- the conversation's roles -----------------------------------------------------------------------------------


def coordinator_request(board: Board) -> LLMRequest:
    state = "\n".join(f"{i}: {render_row(row)}" for i, row in enumerate(board.grid))
    return LLMRequest.user(
        CONVERSATION_SYSTEM,
        COORDINATOR.format(n=len(board.grid), puzzle_state=state),
        max_tokens=20,
        purpose="pressure.conversation.coordinator",
    )


def parse_target(text: str, board: Board) -> int:
    match = re.search(r"TARGET\s+row\s*=\s*(\d+)", readable(text), re.I)
    row = whole_number(match[1], "the row") if match else None
    if row is None or not 0 <= row < len(board.grid):
        raise ReplyParseError("no TARGET row=<N> with a row of the grid")
    return row


def coordinator_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """The Coordinator; ``fallback`` is :class:`~coordkit.pressure.policies.RuleCoordinator`."""
    return LLMPolicy(client, coordinator_request, parse_target, fallback, name="llm_coordinator")


def proposer_request(turn: Turn) -> LLMRequest:
    seen = turn.observation
    availability = "; ".join(f"{c}: {list(seen.available[c])}" for c in range(seen.n) if seen.cells[c] == EMPTY)
    prompt = PROPOSER.format(
        row_idx=seen.row,
        region_content=render_row(seen.cells),
        availability=availability,
        history=" | ".join(turn.history) or "(none)",
    )
    return LLMRequest.user(CONVERSATION_SYSTEM, prompt, max_tokens=20, purpose="pressure.conversation.proposer")


def parse_proposal(text: str, turn: Turn) -> Patch:
    match = re.search(r"position\s*=\s*(\d+)\s+value\s*=\s*(\d+)", readable(text), re.I)
    if not match:
        raise ReplyParseError("no PROPOSE position=<col> value=<num>")
    column, value = whole_number(match[1], "the position"), whole_number(match[2], "the value")
    if not (
        0 <= column < turn.observation.n and turn.observation.editable[column] and 1 <= value <= turn.observation.n
    ):
        raise ReplyParseError(f"position {column} / value {value} is not an editable cell and a symbol")
    return Patch(turn.observation.row, column, value)


def proposer_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """The Proposer; ``fallback`` is :class:`~coordkit.pressure.policies.RuleProposer`."""
    return LLMPolicy(client, proposer_request, parse_proposal, fallback, name="llm_proposer")


def validator_request(check: Check) -> LLMRequest:
    prompt = VALIDATOR.format(
        region_content=render_row(check.row),
        proposal=f"position={check.patch.column} value={check.patch.value}",
        column_values=[v for v in check.column if v != EMPTY],
        row_values=[v for v in check.row if v != EMPTY],
    )
    return LLMRequest.user(CONVERSATION_SYSTEM, prompt, max_tokens=30, purpose="pressure.conversation.validator")


def parse_verdict(text: str, check: Check) -> bool:
    word = re.match(r"\s*\**\s*(APPROVE|REJECT)", readable(text), re.I)
    if not word:
        raise ReplyParseError("neither APPROVE nor REJECT")
    return word[1].upper() == "APPROVE"


def validator_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """The Validator; ``fallback`` is :class:`~coordkit.pressure.policies.RuleValidator`."""
    return LLMPolicy(client, validator_request, parse_verdict, fallback, name="llm_validator")
