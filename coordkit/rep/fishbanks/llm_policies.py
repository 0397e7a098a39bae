"""Fishbanks' LLM policies: the REP paper's API calls 1 and 2 (Appendix A.1, A.4, Figure 4).

Call 1, the companies:

- REP companies answer ``DECISION`` + ``SENSITIVITY``: their boats and what would make them deploy more or fewer.
  They see their books, their coordination variables θ (PROTOCOL UNDERSTANDING, the four of Appendix A.2; Fig. 4
  also lists a "coalition formation potential", which A.2 does not have) and each neighbour's boats with its
  sensitivity text (NEIGHBOR INTELLIGENCE).
- A2A companies answer ``DECISION`` + ``REASONING``: they see their books, the NUMERICAL NEIGHBOR PATTERNS (count,
  average, variance and total of the neighbours' boats) and the neighbours' decisions and reasoning. Fig. 4 gives
  A2A a second call ("STRATEGY / BOATS": revise the deployment after reading the neighbours' decisions and
  reasoning); the issue reads A2A as one call, so that section is part of call 1 here and its decision is final.

Both at temperature 0.1 and 300 tokens (Table 2). A reply without a usable number of boats (a whole number from 1
to ``max_boats``) or message falls back to the company's rule (:class:`~coordkit.policies.LLMPolicy`). A REP
sensitivity's *numbers* (the numerical updater's proposals, the stated hold) stay the rule's: the LLM writes the
text.

Call 2, the textual updater's synthesiser (Appendix A.4.2): the sensitivity texts → new θ as JSON, falling back to
:class:`~coordkit.rep.fishbanks.policies.RuleSynthesis`.
"""

from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.parsing import ReplyParseError, finite_number, json_object, labelled_number
from coordkit.policies import LLMPolicy, Policy
from coordkit.rep.fishbanks.policies import (
    CONFIDENCE,
    HEALTH,
    QUOTA,
    STRESS,
    THETA_NAMES,
    FleetObservation,
    REPSituation,
)
from coordkit.rep.llm_calls import a2a_call, rep_call, synthesis_call
from coordkit.rep.protocol import SynthesisRequest, Theta

SYSTEM = """You are the AI decision-maker for {company}, a {profile} fishing company in a {companies}-company \
shared fishbank environment.
All companies fish one stock of at most {capacity:,.0f} fish. Each season you deploy 1 to {max_boats} boats. A boat \
lands up to {catch_per_boat:.0f} fish a season, fewer as the stock thins; fish sell at ${fish_price:.2f} and a boat \
costs ${boat_cost:,.0f} a season to operate. The stock regrows fastest at about 60% of its maximum and not at all \
when it is empty. The game lasts {seasons} seasons."""

POSITION = """SEASON {season} of {seasons}

LOCAL PERFORMANCE INDICATORS{survey}:
- Risk tolerance: {risk:.2f} (0 = cautious, 1 = aggressive)
- Sustainability values: {values:.2f} (0 = profit first, 1 = the stock first)
- Boats deployed last season: {boats}
- Catch per boat last season: {catch_per_boat:.1f} fish
- Profit per boat last season: ${profit_per_boat:.0f}
- Resource abundance estimate: {density:.2f} (0 = empty, 1 = full)
- Industry total catch last season: {industry}"""

REP_PROMPT = """{position}

PROTOCOL UNDERSTANDING (Local Variables):
- Sustainable quota estimate: {quota:.1f} fish
- Population health indicator: {health:.2f}/1.0
- Industry coordination confidence: {confidence:.2f}/1.0
- Resource stress estimate: {stress:.2f}/1.0

NEIGHBOR INTELLIGENCE (Reasoning):
{neighbours}

{companies}-COMPANY REP CONSIDERATIONS:
- Your neighbors' sensitivities share their assessment of the stock and whether they will restrain if others do
- Consider your company's risk tolerance and sustainability values

TASK:
1. Decide how many boats to deploy this season (1-{max_boats})
2. Provide detailed sensitivity analysis considering {companies}-company dynamics: describe what changes would make \
you increase or decrease this number

Your response format:
DECISION: [number]
SENSITIVITY: [detailed reasoning about your decision, coordination analysis, sustainability assessment, coalition \
considerations]"""

A2A_PROMPT = """{position}

NUMERICAL NEIGHBOR PATTERNS (A2A Information):
- Number of other companies: {others}
{patterns}

NEIGHBORS' STRATEGIES AND DECISIONS:
{neighbours}

{companies}-COMPANY A2A CONSIDERATIONS:
- Analyze the numerical deployment patterns of the {others} other companies
- Consider your company's risk tolerance and sustainability values
- Optimize based on market conditions and operational costs

TASK:
Decide how many boats to deploy this season (1-{max_boats}) based on this information and your company profile.

Your response format:
DECISION: [number]
REASONING: [brief explanation of your numerical analysis and decision logic]"""


def system(seen: FleetObservation) -> str:
    fishery = seen.fishery
    return SYSTEM.format(
        company=seen.company,
        profile=seen.profile,
        companies=seen.companies,
        capacity=fishery.capacity,
        max_boats=seen.max_boats,
        catch_per_boat=fishery.catch_per_boat,
        fish_price=fishery.fish_price,
        boat_cost=fishery.boat_cost,
        seasons=seen.seasons,
    )


def position(seen: FleetObservation) -> str:
    return POSITION.format(
        season=seen.season,
        seasons=seen.seasons,
        survey=" (before season 1: the survey of the initial stock)" if seen.industry_catch is None else "",
        risk=seen.risk_tolerance,
        values=seen.sustainability,
        boats=seen.boats,
        catch_per_boat=seen.catch_per_boat,
        profit_per_boat=seen.profit_per_boat,
        density=seen.density_estimate,
        industry="none yet" if seen.industry_catch is None else f"{seen.industry_catch:.0f} fish",
    )


def rep_request(situation: REPSituation) -> LLMRequest:
    seen, theta = situation.observation, situation.theta
    prompt = REP_PROMPT.format(
        position=position(seen),
        quota=theta[QUOTA],
        health=theta[HEALTH],
        confidence=theta[CONFIDENCE],
        stress=theta[STRESS],
        neighbours="\n".join(seen.neighbour_notes) or "(no messages yet)",
        companies=seen.companies,
        max_boats=seen.max_boats,
    )
    return LLMRequest.user(system(seen), prompt, temperature=0.1, max_tokens=300, purpose="rep.fishbanks.decide")


def a2a_request(seen: FleetObservation) -> LLMRequest:
    if seen.neighbour_boats:
        patterns = (
            f"- Average neighbor boats deployed: {seen.neighbour_mean:.1f}\n"
            f"- Neighbor deployment variance: {seen.neighbour_variance:.1f}\n"
            f"- Total neighbor boats: {seen.neighbour_total}"
        )
    else:
        patterns = "- (no deployments seen yet)"
    prompt = A2A_PROMPT.format(
        position=position(seen),
        others=seen.companies - 1,
        patterns=patterns,
        neighbours="\n".join(seen.neighbour_notes) or "(no messages yet)",
        companies=seen.companies,
        max_boats=seen.max_boats,
    )
    return LLMRequest.user(system(seen), prompt, temperature=0.1, max_tokens=300, purpose="a2a.fishbanks.decide")


def parse_boats(text: str, max_boats: int) -> int:
    """The DECISION as a whole number of boats from 1 to ``max_boats``; anything else is unparseable."""
    boats = labelled_number(text, "DECISION")
    if not boats.is_integer():
        raise ReplyParseError(f"DECISION {boats:g} is not a whole number of boats")
    if not 1 <= boats <= max_boats:
        raise ReplyParseError(f"DECISION {boats:g} is outside 1..{max_boats} boats")
    return int(boats)


def rep_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """Call 1 of a REP company; ``fallback`` is its rule (:class:`~coordkit.rep.fishbanks.policies.REPFleet`).

    The game's rules (companies, boats allowed, prices) travel in the observation, so no rules argument is needed.
    """
    return rep_call(
        client, fallback, rep_request, lambda text, s: parse_boats(text, s.observation.max_boats), "llm_rep_company"
    )


def a2a_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """Call 1 of an A2A company; ``fallback`` is :class:`~coordkit.rep.fishbanks.policies.CompetitiveFleet`."""
    return a2a_call(client, fallback, a2a_request, lambda text, v: parse_boats(text, v.max_boats), "llm_a2a_company")


SYNTHESIS_SYSTEM = (
    "You are a fishing company's coordination agent in a shared fishbank. You update your local coordination "
    "variables from the sensitivities other companies share."
)

SYNTHESIS_PROMPT = """SENSITIVITY AGGREGATION FOR LOCAL VARIABLE UPDATE:

YOUR SENSITIVITY: "{own}"

NEIGHBOR SENSITIVITIES FROM CONNECTED AGENTS:
{neighbours}

CURRENT VARIABLES:
- quota_estimate: {quota:.1f} fish
- population_health: {health:.2f}
- coordination_confidence: {confidence:.2f}
- resource_stress: {stress:.2f}

TASK: Based on neighbor sensitivities and environmental outcomes, update your local variables:
- quota_estimate: Your personal estimate of sustainable catch limit (fish per company per season)
- population_health: Your assessment of fish stock health (0-1)
- coordination_confidence: Your trust in neighbor coordination (0-1)
- resource_stress: Your local assessment of resource pressure (0-1)

Output: JSON with updated values for each variable, e.g. {{"quota_estimate": 30.0, "population_health": 0.8, \
"coordination_confidence": 0.5, "resource_stress": 0.5}}"""


def synthesis_request(request: SynthesisRequest) -> LLMRequest:
    neighbours = "\n".join(f'Neighbor {k}: "{text}"' for k, (_, text) in enumerate(request.neighbour_texts, 1))
    prompt = SYNTHESIS_PROMPT.format(
        own=request.own_text,
        neighbours=neighbours or "(none this round)",
        quota=request.theta[QUOTA],
        health=request.theta[HEALTH],
        confidence=request.theta[CONFIDENCE],
        stress=request.theta[STRESS],
    )
    return LLMRequest.user(SYNTHESIS_SYSTEM, prompt, temperature=0.1, max_tokens=300, purpose="rep.fishbanks.aggregate")


def parse_synthesis(text: str, request: SynthesisRequest) -> Theta:
    """The JSON reply as θ: every variable present (keys matched case-insensitively), a finite number, the quota
    at least 0 and the other three from 0 to 1."""
    reply = {str(k).lower(): v for k, v in json_object(text).items()}
    theta = dict(request.theta)
    for name in THETA_NAMES:
        if name not in reply:
            raise ReplyParseError(f"the reply has no {name}")
        value = finite_number(reply[name], name)
        if value < 0 or (name != QUOTA and value > 1):
            raise ReplyParseError(f"{name} = {value:g} is out of range")
        theta[name] = value
    return theta


def synthesis_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """Call 2, the textual updater's synthesiser; ``fallback`` is :class:`RuleSynthesis`."""
    return synthesis_call(client, fallback, synthesis_request, parse_synthesis)
