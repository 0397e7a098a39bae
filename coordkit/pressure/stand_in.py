"""A rule-based stand-in answering the pressure-field prompts (the actor's and the conversation's) — not an LLM.

It takes the first available value, targets the first row with a hole, proposes the first available value of the
first hole, and approves a proposal exactly when its value is in neither the row nor the column — so recording and
replay of the pressure figures can be shown without a key (``coordkit record pressure-table7 --stand-in``).
"""

import re

from coordkit.llm import LLMRequest


def reply(request: LLMRequest) -> str:
    text = request.messages[-1][1]
    if text.startswith("You are a Coordinator"):
        rows = re.findall(r"^(\d+): (.*)$", text, re.M)
        return f"TARGET row={next((r for r, cells in rows if '_' in cells), rows[0][0] if rows else 0)}"
    if text.startswith("You are a Proposer"):
        holes = re.findall(r"(\d+): \[(\d+)", text)
        return f"PROPOSE position={holes[0][0]} value={holes[0][1]}" if holes else "PROPOSE position=0 value=1"
    if text.startswith("You are a Validator"):
        value = int(re.search(r"value=(\d+)", text)[1])
        taken = re.findall(r"Values already in (?:target column|row): \[([^\]]*)\]", text)
        used = {int(v) for group in taken for v in re.findall(r"\d+", group)}
        return "APPROVE" if value not in used else f"REJECT {value} is already used"
    available = re.search(r"Available values for position \d+: \[(\d+)", text)
    return available[1] if available else "1"
