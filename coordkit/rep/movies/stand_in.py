"""A rule-based stand-in that answers the movie-scheduling prompts in the paper's reply format — not an LLM.

It reads the numbers in a call-1 prompt — the agent's preferences in the system prompt, the proposal in the
user prompt — and answers as the rules do: JOIN iff U ≥ 0, with the templated sensitivity (REP) or reasoning
(A2A). A call-2 prompt it answers like :class:`~coordkit.rep.movies.policies.RangeSynthesis`, from the ranges
the quoted sensitivities state. It dispatches on the prompt's text, not on the request's purpose, so that it also
answers through the fake server (which sees only system prompt and messages). It exists so that recordings,
replays, the ledger and the wall-clock profile can be shown end to end without a key.
"""

import json
import re

from coordkit.llm import LLMRequest
from coordkit.llm.parsing import ReplyParseError, labelled_number
from coordkit.rep.movies import preferences
from coordkit.rep.movies.policies import Situation, clock, most_covered, read_ranges, reasoning, sensitivity_text
from coordkit.rep.movies.preferences import Taste

_PROPOSAL = re.compile(r"^- PRICE: \$(\d+(?:\.\d+)?)\s*\n- TIME: (\d+(?:\.\d+)?) h", re.MULTILINE)
_SCALES = re.compile(r"a change of \$(\d+(?:\.\d+)?) in price counts as much as (\d+(?:\.\d+)?) h in time")


def reply(request: LLMRequest) -> str:
    prompt = request.messages[-1][1]
    if "SENSITIVITY AGGREGATION" in prompt:
        return _aggregate(prompt)
    taste = Taste(
        price=labelled_number(request.system, "Ideal ticket price"),
        time=labelled_number(request.system, "Ideal start time"),
        weight=labelled_number(request.system, "Weight of price"),
        price_scale=labelled_number(request.system, "Price scale P"),
        time_scale=labelled_number(request.system, "time scale T"),
    )
    price, time = _proposal(prompt)
    joins = bool(preferences.joins(taste, price, time))
    decision = "JOIN" if joins else "DECLINE"
    if "SENSITIVITY:" in prompt:
        return f"DECISION: {decision}\nSENSITIVITY: {sensitivity_text(taste, price, time)}"
    situation = Situation(agent=0, round=0, taste=taste, price=price, time=time)
    return f"DECISION: {decision}\nREASONING: {reasoning(situation, joins)}"


def _proposal(prompt: str) -> tuple[float, float]:
    """The "- PRICE: $…" and "- TIME: … h" lines of a prompt (the texts it quotes may name prices too)."""
    match = _PROPOSAL.search(prompt)
    if not match:
        raise ReplyParseError("the prompt states no proposal")
    return float(match[1]), float(match[2])


def _aggregate(prompt: str) -> str:
    price, time = _proposal(prompt)
    scales = _SCALES.search(prompt)
    if not scales:
        raise ReplyParseError("the aggregation prompt states no scales")
    stated = read_ranges([prompt])
    if len(stated):
        theta = most_covered(stated, price, time, float(scales[1]), float(scales[2]))
        price, time = theta["price"], theta["time"]
    return json.dumps({"price": round(price, 2), "time": clock(time)})
