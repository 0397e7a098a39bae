"""Movie scheduling's LLM policies: the REP paper's API calls 1 and 2 (Appendix A.1, A.4), written for §7.

Call 1, every agent at its local proposal (stage 1 of §7):

- REP agents answer ``DECISION`` (JOIN or DECLINE) + ``SENSITIVITY``: what matters to them and the ranges they
  would accept. They see their preferences, their satisfaction U and its slopes ∂U/∂price, ∂U/∂time at the
  proposal, and their neighbours' decisions and sensitivities of the last round.
- A2A agents answer ``DECISION`` + ``REASONING``, seeing their neighbours' decisions and reasoning.

Both at temperature 0.1 and 300 tokens (Table 2). A reply without a usable decision or message falls back to
the rule (:class:`~coordkit.policies.LLMPolicy`). A REP sensitivity's *numbers* (the slopes and the numerical
updater's proposal) stay the rule's: the LLM writes the text.

Call 2, the textual updater's synthesiser (Appendix A.4.2, with PRICE and TIME as the local variables): the
sensitivity texts → a new local proposal as JSON ``{"price": 12.5, "time": "20:15"}``; it falls back to
:class:`~coordkit.rep.movies.policies.RangeSynthesis`.
"""

import re
from dataclasses import dataclass

from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.parsing import ReplyParseError, finite_number, json_object, labelled_text
from coordkit.policies import LLMPolicy, Policy
from coordkit.rep.llm_calls import a2a_call, rep_call, synthesis_call
from coordkit.rep.movies import preferences
from coordkit.rep.movies.policies import PRICE, TIME, Situation, clock
from coordkit.rep.movies.preferences import EVENING, PRICE_RANGE
from coordkit.rep.protocol import SynthesisRequest, Theta

SYSTEM = """You are agent {agent}, one of {population} friends planning a movie night together. The group must
agree on one ticket PRICE and one START TIME. You talk only with your direct contacts in a social network. Each
round every agent decides whether it would join at its current proposal, and a group proposal is formed from
everyone's local proposals by a coordinate-wise median. The plan is scored by how many agents would join it.

YOUR PREFERENCES (private):
- Ideal ticket price: ${price:.2f}
- Ideal start time: {hours:.3f} h ({clock})
- Weight of price: {weight:.3f} (of timing: {time_weight:.3f})
- Price scale P: ${price_scale:g}; time scale T: {time_scale:g} h
Your satisfaction with a price p and a start time t (in hours) is
U = 1 - {weight:.3f}*((p - {price:.2f})/{price_scale:g})^2 - {time_weight:.3f}*((t - {hours:.3f})/{time_scale:g})^2,
and you join when U is 0 or more."""

PROPOSAL = """ROUND {round} of {rounds}

CURRENT PROPOSAL (your local coordination variables):
- PRICE: ${price:.2f}
- TIME: {hours:.3f} h ({clock})
- Your satisfaction U at this proposal: {utility:+.3f}"""

REP_PROMPT = """{proposal}
- Sensitivities: dU/dprice = {price_slope:+.4f} per $, dU/dtime = {time_slope:+.4f} per hour

NEIGHBOR INTELLIGENCE (decisions and sensitivities, last round):
{neighbours}

TASK:
1. Decide whether you would join the movie night at the current proposal.
2. Provide your sensitivity: what matters more to you, price or timing, and how the proposal should move.
Include the sentence "I'd join at $LOW-$HIGH, starting HH:MM-HH:MM" with ranges inside which you would surely join.

Your response format:
DECISION: JOIN or DECLINE
SENSITIVITY: [what matters to you, your ranges, and how the proposal should move]"""

A2A_PROMPT = """{proposal}

NEIGHBORS' DECISIONS AND REASONING (last round):
{neighbours}

TASK:
Decide whether you would join the movie night at the current proposal, and explain briefly.

Your response format:
DECISION: JOIN or DECLINE
REASONING: [brief explanation of your decision]"""


@dataclass(frozen=True)
class MovieNight:
    """What every agent is told about the game (the system prompt), besides its own preferences."""

    population: int
    rounds: int

    def system(self, situation: Situation) -> str:
        taste = situation.taste
        return SYSTEM.format(
            agent=situation.agent,
            population=self.population,
            price=taste.price,
            hours=taste.time,
            clock=clock(taste.time),
            weight=taste.weight,
            time_weight=1 - taste.weight,
            price_scale=taste.price_scale,
            time_scale=taste.time_scale,
        )

    def proposal(self, situation: Situation) -> str:
        return PROPOSAL.format(
            round=situation.round,
            rounds=self.rounds,
            price=situation.price,
            hours=situation.time,
            clock=clock(situation.time),
            utility=situation.utility,
        )


def _notes(situation: Situation) -> str:
    return "\n".join(f"- {note}" for note in situation.neighbour_notes) or "(no messages yet)"


def rep_request(situation: Situation, night: MovieNight) -> LLMRequest:
    prompt = REP_PROMPT.format(
        proposal=night.proposal(situation),
        price_slope=float(preferences.price_slope(situation.taste, situation.price)),
        time_slope=float(preferences.time_slope(situation.taste, situation.time)),
        neighbours=_notes(situation),
    )
    return LLMRequest.user(
        night.system(situation), prompt, temperature=0.1, max_tokens=300, purpose="rep.movies.decide"
    )


def a2a_request(situation: Situation, night: MovieNight) -> LLMRequest:
    prompt = A2A_PROMPT.format(proposal=night.proposal(situation), neighbours=_notes(situation))
    return LLMRequest.user(
        night.system(situation), prompt, temperature=0.1, max_tokens=300, purpose="a2a.movies.decide"
    )


_DECISION = re.compile(r"^\W*(join|joins|yes|decline|declines|no)\b", re.IGNORECASE)


def parse_decision(text: str) -> bool:
    """DECISION: JOIN (or yes) is True, DECLINE (or no) False; anything else is unparseable."""
    match = _DECISION.match(labelled_text(text, "DECISION"))
    if not match:
        raise ReplyParseError("DECISION is neither JOIN nor DECLINE")
    return match[1].lower() in ("join", "joins", "yes")


def rep_policy(client: LLMClient, fallback: Policy, night: MovieNight) -> LLMPolicy:
    """Call 1 of a REP agent; ``fallback`` is :class:`~coordkit.rep.movies.policies.REPParticipation`."""
    return rep_call(
        client, fallback, lambda s: rep_request(s, night), lambda text, _: parse_decision(text), "llm_rep_moviegoer"
    )


def a2a_policy(client: LLMClient, fallback: Policy, night: MovieNight) -> LLMPolicy:
    """Call 1 of an A2A agent; ``fallback`` is :class:`~coordkit.rep.movies.policies.Satisficer`."""
    return a2a_call(
        client, fallback, lambda s: a2a_request(s, night), lambda text, _: parse_decision(text), "llm_a2a_moviegoer"
    )


SYNTHESIS_SYSTEM = "You are a coordination agent for a group movie night. You update shared coordination variables."

SYNTHESIS_PROMPT = """SENSITIVITY AGGREGATION FOR LOCAL VARIABLE UPDATE:

YOUR SENSITIVITY: "{own}"

NEIGHBOR SENSITIVITIES FROM CONNECTED AGENTS:
{neighbours}

CURRENT VARIABLES:
- PRICE: ${price:.2f}
- TIME: {hours:.3f} h ({clock})

TASK: Based on these sensitivities, update your local proposal: the ticket price and start time that bring as
many of these people as possible inside the ranges they would accept, moving as little as possible from the
current variables (a change of ${price_scale:g} in price counts as much as {time_scale:g} h in time). Prices
run from ${low:g} to ${high:g}, start times from {start} to {end}.

Output: JSON only, e.g. {{"price": 12.5, "time": "20:15"}}"""


def synthesis_request(request: SynthesisRequest, price_scale: float, time_scale: float) -> LLMRequest:
    neighbours = "\n".join(f'Neighbor {sender}: "{text}"' for sender, text in request.neighbour_texts)
    prompt = SYNTHESIS_PROMPT.format(
        own=request.own_text,
        neighbours=neighbours or "(none this round)",
        price=request.theta[PRICE],
        hours=request.theta[TIME],
        clock=clock(request.theta[TIME]),
        price_scale=price_scale,
        time_scale=time_scale,
        low=PRICE_RANGE[0],
        high=PRICE_RANGE[1],
        start=clock(EVENING[0]),
        end=clock(EVENING[1]),
    )
    return LLMRequest.user(SYNTHESIS_SYSTEM, prompt, temperature=0.1, max_tokens=300, purpose="rep.movies.aggregate")


_CLOCK = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")
_MONEY = re.compile(r"^\s*\$?\s*([-+]?\d+(?:\.\d+)?)\s*$")


def _price(value) -> float:
    if isinstance(value, str):
        match = _MONEY.match(value)
        if not match:
            raise ReplyParseError(f"price is not a number: {value!r}")
        value = match[1]
    return finite_number(value, "price")


def _hours(value) -> float:
    if isinstance(value, str) and (match := _CLOCK.match(value)):
        if int(match[2]) >= 60:
            raise ReplyParseError(f"time {value!r} is not a time of day")
        return int(match[1]) + int(match[2]) / 60
    return finite_number(value, "time")


def parse_synthesis(text: str, request: SynthesisRequest) -> Theta:
    """The JSON reply as θ: price in dollars, time in hours or as "HH:MM", both within the game's ranges."""
    reply = {str(k).lower(): v for k, v in json_object(text).items()}
    missing = [key for key in (PRICE, TIME) if key not in reply]
    if missing:
        raise ReplyParseError(f"the reply has no {' or '.join(missing)}")
    price, hours = _price(reply[PRICE]), _hours(reply[TIME])
    if not PRICE_RANGE[0] <= price <= PRICE_RANGE[1]:
        raise ReplyParseError(f"price {price:g} is outside ${PRICE_RANGE[0]:g}-${PRICE_RANGE[1]:g}")
    if not EVENING[0] <= hours <= EVENING[1]:
        raise ReplyParseError(f"time {hours:g} h is outside {clock(EVENING[0])}-{clock(EVENING[1])}")
    return {PRICE: price, TIME: hours}


def synthesis_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """Call 2, the textual updater's synthesiser; ``fallback`` is
    :class:`~coordkit.rep.movies.policies.RangeSynthesis` (whose scales the prompt states)."""
    scales = (fallback.price_scale, fallback.time_scale)
    return synthesis_call(client, fallback, lambda r: synthesis_request(r, *scales), parse_synthesis)
