"""A rule-based stand-in that answers the Fishbanks prompts in the paper's reply formats — not an LLM.

It reads the numbers in a prompt into the company's observation and answers with the kit's rules: an A2A prompt with
:class:`~coordkit.rep.fishbanks.policies.CompetitiveFleet` (``DECISION`` + ``REASONING``); a REP call-1 prompt
with :class:`~coordkit.rep.fishbanks.policies.REPFleet` at the prompt's θ (``DECISION`` + ``SENSITIVITY``; a
prompt does not say who kept their word, so its sensitivity does not either); a call-2 prompt with
:class:`~coordkit.rep.fishbanks.policies.RuleSynthesis` over the quoted texts (JSON). It exists so
that the recording, replay and ledger machinery can be shown end to end without a key:
``coordkit record rep-fishbanks-fig2 --stand-in`` makes a recording labelled as the stand-in's.
"""

import json
import re

from coordkit.llm import LLMRequest
from coordkit.llm.parsing import ReplyParseError, labelled_number
from coordkit.rep.fishbanks.ecology import Fishery
from coordkit.rep.fishbanks.policies import (
    CONFIDENCE,
    HEALTH,
    QUOTA,
    STRESS,
    CompetitiveFleet,
    FleetObservation,
    REPFleet,
    REPSituation,
    RuleSynthesis,
    boats_text,
)
from coordkit.rep.protocol import SynthesisRequest

_SYSTEM = re.compile(
    r"for (?P<company>\S+), an? (?P<profile>.+?) fishing company in a (?P<companies>\d+)-company.*?at most "
    r"(?P<capacity>[\d,]+) fish.*?1 to (?P<max_boats>\d+) boats.*?lands up to (?P<catch>\d+) fish.*?sell at "
    r"\$(?P<price>[\d.,]+) and a boat costs \$(?P<cost>[\d,]+).*?lasts (?P<seasons>\d+) seasons",
    re.S,
)
_SEASON = re.compile(r"SEASON (\d+) of")
_INDUSTRY = re.compile(r"Industry total catch last season: (\d+) fish")
_NEIGHBOUR_BOATS = re.compile(r'^(.+?): (\d+) boats - "', re.M)
_QUOTED = re.compile(r'^Neighbor \d+: "(.*)"$', re.M)


def reply(request: LLMRequest) -> str:
    prompt = request.messages[-1][1]
    if "SENSITIVITY AGGREGATION" in prompt:  # the prompt, not the purpose: the fake server sees only text
        return _aggregate(prompt)
    seen = _view(request.system, prompt)
    if "SENSITIVITY" not in prompt:
        boats = CompetitiveFleet().boats(seen)
        return (
            f"DECISION: {boats}\nREASONING: Last season a boat earned ${seen.profit_per_boat:,.0f}; deploying "
            f"{boats_text(boats)} so as not to fall behind the other companies."
        )
    theta = {
        QUOTA: labelled_number(prompt, "Sustainable quota estimate"),
        HEALTH: labelled_number(prompt, "Population health indicator"),
        CONFIDENCE: labelled_number(prompt, "Industry coordination confidence"),
        STRESS: labelled_number(prompt, "Resource stress estimate"),
    }
    boats, sensitivity = REPFleet().decide(REPSituation(seen, theta))
    return f"DECISION: {boats}\nSENSITIVITY: {sensitivity.text}"


def _view(system: str, prompt: str) -> FleetObservation:
    """The company's observation, from the numbers the prompts state."""
    said = _SYSTEM.search(system)
    if said is None:
        raise ReplyParseError("the system prompt does not describe a Fishbanks company")
    fishery = Fishery(
        capacity=float(said["capacity"].replace(",", "")),
        catch_per_boat=float(said["catch"]),
        fish_price=float(said["price"].replace(",", "")),
        boat_cost=float(said["cost"].replace(",", "")),
    )
    industry = _INDUSTRY.search(prompt)
    neighbours = prompt.split("NEIGHBOR", 1)[-1]
    return FleetObservation(
        company=said["company"],
        profile=said["profile"],
        season=int(_SEASON.search(prompt)[1]),
        seasons=int(said["seasons"]),
        companies=int(said["companies"]),
        max_boats=int(said["max_boats"]),
        fishery=fishery,
        risk_tolerance=labelled_number(prompt, "Risk tolerance"),
        sustainability=labelled_number(prompt, "Sustainability values"),
        boats=int(labelled_number(prompt, "Boats deployed last season")),
        catch_per_boat=labelled_number(prompt, "Catch per boat last season"),
        profit_per_boat=labelled_number(prompt, "Profit per boat last season"),
        density_estimate=labelled_number(prompt, "Resource abundance estimate"),
        industry_catch=float(industry[1]) if industry else None,
        neighbour_boats=tuple((name, int(boats)) for name, boats in _NEIGHBOUR_BOATS.findall(neighbours)),
    )


def _aggregate(prompt: str) -> str:
    own = re.search(r'YOUR SENSITIVITY: "(.*)"', prompt)
    theta = {name: labelled_number(prompt, f"- {name}") for name in (QUOTA, HEALTH, CONFIDENCE, STRESS)}
    if own is None:
        raise ReplyParseError("the prompt quotes no sensitivity of its own")
    request = SynthesisRequest(theta, own[1], tuple(enumerate(_QUOTED.findall(prompt))))
    return json.dumps({name: round(value, 4) for name, value in RuleSynthesis().decide(request).items()})
