"""The LLM actor: the prompt of the paper's published code (system prompt in Appendix A, §9.2), one position of
one row at a time, at most 8 tokens, its temperature drawn from the paper's three sampling bands (Table 8).
A reply without a number 1..n falls back to the rule-based actor.
"""

import re

import numpy as np

from coordkit.llm import LLMClient, LLMRequest
from coordkit.policies import LLMPolicy, Policy, ReplyParseError
from coordkit.pressure.actors import Patch, RowView, target_cells
from coordkit.pressure.conversation import render_row

SYSTEM = ("You solve Latin Square puzzles. Given a row with empty cells (_), return ONLY the number(s) that fill them. "
          "Return just the numbers, nothing else.")
BANDS = ((0.15, 0.35), (0.35, 0.55), (0.55, 0.85))  # exploitation, balanced, exploration temperatures


def prompt(view: RowView, position: int) -> str:
    lines = [f"Row: {render_row(view.cells)}", f"Empty position: {position}",
             f"Available values for position {position}: {list(view.available[position])}"]
    if view.examples:
        lines.append("EXAMPLES OF SUCCESSFUL FIXES:")
        lines += [f"- position {column}: {value}" for column, value in view.examples[-3:]]
    lines.append(f"What number goes in position {position}? Return just the number.")
    return "\n".join(lines)


def llm_policy(client: LLMClient, fallback: Policy, rng: np.random.Generator) -> LLMPolicy:
    """Observation: (view, skill). The position asked about is the first target cell of the view."""

    def request(observation: tuple[RowView, float]) -> LLMRequest:
        view = observation[0]
        band = BANDS[int(rng.integers(len(BANDS)))]
        position = target_cells(view)[0]
        return LLMRequest.user(SYSTEM, prompt(view, position), temperature=round(float(rng.uniform(*band)), 2),
                               max_tokens=8, purpose="pressure.actor")

    def parse(text: str, observation: tuple[RowView, float]) -> Patch:
        view = observation[0]
        number = re.search(r"\d+", text)
        if not number or not 1 <= int(number[0]) <= view.n:
            raise ReplyParseError(f"no number 1..{view.n} in the reply")
        return Patch(view.row, target_cells(view)[0], int(number[0]))

    return LLMPolicy(client, request, parse, fallback, name="llm_actor")
