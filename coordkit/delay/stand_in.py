"""A rule-based stand-in answering the delay game's LLM prompt in its JSON format — not an LLM.

It plays tit-for-tat on the opponent's action in effect, so that recording, replay and the LLM path of the delay
figures can be shown without a key (``coordkit record delay-fig3 --stand-in``).
"""

import json
import re

from coordkit.llm import LLMRequest

_STATE = re.compile(r"Action in effect: you (\S+), Player (\w) (\S+)")


def reply(request: LLMRequest) -> str:
    state = _STATE.search(request.messages[-1][1])
    opponent = state[3] if state else "C"
    action = "D" if opponent == "D" else "C"
    return json.dumps(
        {
            "estimate": "The other player seems to mirror what it sees.",
            "forecast": "Cooperating keeps 3 points a second coming; defecting invites retaliation once they see it.",
            "action": action,
        }
    )
