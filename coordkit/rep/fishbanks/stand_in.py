"""A rule-based stand-in that answers the Fishbanks prompts in the paper's reply formats — not an LLM.

It reads the numbers in a prompt and answers with the kit's rules: an A2A prompt with the competitive escalation
of :class:`~coordkit.rep.fishbanks.policies.CompetitiveFleet` (``DECISION`` + ``REASONING``); a REP call-1 prompt
with conditional cooperation between the quota-landing fleet and the competitive one, weighted by the stated
coordination confidence, and a sensitivity in the templated sentences (``DECISION`` + ``SENSITIVITY``); a call-2
prompt with :class:`~coordkit.rep.fishbanks.policies.RuleSynthesis` over the quoted texts (JSON). It exists so
that the recording, replay and ledger machinery can be shown end to end without a key:
``coordkit record rep-fishbanks-fig2 --stand-in`` makes a recording labelled as the stand-in's.
"""

import json
import re
from statistics import fmean

from coordkit.llm import LLMRequest
from coordkit.llm.parsing import ReplyParseError, labelled_number
from coordkit.rep.fishbanks.policies import (
    CONFIDENCE,
    HEALTH,
    QUOTA,
    STRESS,
    RuleSynthesis,
    boats_text,
    stock_trend,
    whole_boats,
)
from coordkit.rep.protocol import SynthesisRequest

_MAX_BOATS = re.compile(r"deploy this season \(1-(\d+)\)")
_NEIGHBOUR_BOATS = re.compile(r'^.+?: (\d+) boats - "', re.M)
_QUOTED = re.compile(r'^Neighbor \d+: "(.*)"$', re.M)


def reply(request: LLMRequest) -> str:
    prompt = request.messages[-1][1]
    if "SENSITIVITY AGGREGATION" in prompt:  # the prompt, not the purpose: the fake server sees only text
        return _aggregate(prompt)
    boats = int(labelled_number(prompt, "Boats deployed last season"))
    max_boats = int(_MAX_BOATS.search(prompt)[1])
    competitive = _competitive(prompt, boats, max_boats)
    if "SENSITIVITY" not in prompt:
        profit = labelled_number(prompt, "Profit per boat last season")
        return (
            f"DECISION: {competitive}\nREASONING: Last season a boat earned ${profit:,.0f}; deploying "
            f"{boats_text(competitive)} so as not to fall behind the other companies."
        )
    quota = labelled_number(prompt, "Sustainable quota estimate")
    health = labelled_number(prompt, "Population health indicator")
    trust = labelled_number(prompt, "Industry coordination confidence")
    stress = labelled_number(prompt, "Resource stress estimate")
    catch = labelled_number(prompt, "Catch per boat last season")
    sustainable = quota / catch if catch > 0 else 1.0
    cooperative = sustainable * (1 - stress / 2)
    deploy = whole_boats(trust * cooperative + (1 - trust) * competitive, max_boats)
    hold = whole_boats(cooperative, max_boats)
    limit = max(hold, whole_boats(sustainable, max_boats))
    otherwise = f"raise to {competitive}" if competitive > hold else "still hold"
    return (
        f"DECISION: {deploy}\nSENSITIVITY: Sustainable quota estimate of {quota:.0f} fish and population health of "
        f"{health:.2f} suggest a {stock_trend(stress)} stock. We deploy {boats_text(deploy)} and will hold at {hold} "
        f"if the others average at most {limit}; above that we would {otherwise}."
    )


def _competitive(prompt: str, boats: int, max_boats: int) -> int:
    """CompetitiveFleet's rule from the prompt's numbers."""
    profit = labelled_number(prompt, "Profit per boat last season")
    risk = labelled_number(prompt, "Risk tolerance")
    seen = [int(b) for b in _NEIGHBOUR_BOATS.findall(prompt.split("NEIGHBOR", 1)[-1])]
    mean = fmean(seen) if seen else None
    anchor = boats if mean is None else max(boats, int(mean + 0.5))
    if profit <= 0:
        anchor -= 1
    elif risk >= 0.5 or (mean is not None and mean > boats):
        anchor += 1
    return whole_boats(anchor, max_boats)


def _aggregate(prompt: str) -> str:
    own = re.search(r'YOUR SENSITIVITY: "(.*)"', prompt)
    theta = {name: labelled_number(prompt, f"- {name}") for name in (QUOTA, HEALTH, CONFIDENCE, STRESS)}
    if own is None:
        raise ReplyParseError("the prompt quotes no sensitivity of its own")
    request = SynthesisRequest(theta, own[1], tuple(enumerate(_QUOTED.findall(prompt))))
    return json.dumps({name: round(value, 4) for name, value in RuleSynthesis().decide(request).items()})
