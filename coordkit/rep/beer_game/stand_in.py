"""A rule-based stand-in that answers the Beer Game prompts in the paper's reply format — not an LLM.

It reads the numbers in a call-1 prompt and orders with Sterman's anchor-and-adjust rule (anchored on the order
received, its target and adjustment taken from the prompt's coordination variables when there are any), and
answers a call-2 prompt by keeping the variables, damped while a neighbour reports a temporary spike. It
exists so that the recording, replay and ledger machinery can be shown end to end without a key:
``coordkit record rep-beer-fig1 --stand-in`` makes a recording labelled as the stand-in's.
"""

import json

from coordkit.llm import LLMRequest
from coordkit.llm.parsing import ReplyParseError, labelled_number


def reply(request: LLMRequest) -> str:
    prompt = request.messages[-1][1]
    if "SENSITIVITY AGGREGATION" in prompt:  # the prompt, not the purpose: the fake server sees only text
        return _aggregate(prompt)
    incoming = labelled_number(prompt, "Order received this round")
    net_stock = labelled_number(prompt, "Inventory") - labelled_number(prompt, "Backlog")
    supply_line = labelled_number(prompt, "Supply line (ordered, not yet received)")
    target = _optional(prompt, "TARGET_INVENTORY", 17.0)
    adjustment = _optional(prompt, "ORDER_ADJUSTMENT_FACTOR", 0.26)
    order = max(0, round(incoming + adjustment * (target - net_stock - 0.34 * supply_line)))
    if "SENSITIVITY" not in prompt:
        return f"DECISION: {order}\nREASONING: {incoming:.0f} ordered from me, net stock {net_stock:+.0f}."
    spike = "temporary" if "looks temporary" in prompt.lower() else "persistent"
    return (
        f"DECISION: {order}\nSENSITIVITY: I was asked for {incoming:.0f} and hold {net_stock:+.0f}. If demand rose "
        f"10% I would order about {incoming * 0.1 * (1 + adjustment):.1f} more. Upstream demand looks {spike}."
    )


def _aggregate(prompt: str) -> str:
    target = labelled_number(prompt, "TARGET_INVENTORY")
    adjustment = labelled_number(prompt, "ORDER_ADJUSTMENT_FACTOR")
    damping = 0.9 if "looks temporary" in prompt.lower() else 1.0
    return json.dumps({"TARGET_INVENTORY": target, "ORDER_ADJUSTMENT_FACTOR": round(adjustment * damping, 3)})


def _optional(prompt: str, label: str, default: float) -> float:
    try:
        return labelled_number(prompt, label)
    except ReplyParseError:
        return default
