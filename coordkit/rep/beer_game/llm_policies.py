"""The Beer Game's LLM policies: the REP paper's API calls 1 and 2 (Appendix A.1, A.4), adapted from Fishbanks.

Call 1, the players:

- REP players answer ``DECISION`` + ``SENSITIVITY``: their order, and how it would change under other conditions.
  They see their own books, their coordination variables, and their neighbours' orders and sensitivity texts.
- A2A players answer ``DECISION`` + ``REASONING`` from numbers only: their own books and their neighbours' orders.

Both at temperature 0.1 and 300 tokens, as in the paper (Table 2). A reply without a usable order or message
falls back to the player's rule (:class:`~coordkit.policies.LLMPolicy`). The sensitivity's *numbers* (the
relayed customer demand, the numerical updater's proposals) stay the rule's: the LLM writes the text.

Call 2, the textual updater's synthesiser (Appendix A.4.2, adapted to the Beer Game's variables): the neighbours'
sensitivity texts → new θ, as JSON; it falls back to :class:`~coordkit.rep.beer_game.policies.RuleSynthesis`.
"""

from dataclasses import dataclass

from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.parsing import ReplyParseError, finite_number, json_object, labelled_number
from coordkit.policies import LLMPolicy, Policy
from coordkit.rep.beer_game.policies import ADJUSTMENT, TARGET, REPSituation, StageObservation
from coordkit.rep.llm_calls import a2a_call, rep_call, synthesis_call
from coordkit.rep.protocol import SynthesisRequest, Theta

MAX_ORDER = 1000  # cases: a larger order is a misreading, not a decision

SYSTEM = """You are the AI decision-maker for the {stage} in a {stages}-stage beer supply chain (the Beer Game).
Each round you receive beer from your supplier ({supplier}), ship what you can to your customer ({customer}), and
order cases from your supplier. An order takes {order_delay} rounds to reach your supplier and the beer takes
{shipping_delay} more rounds to arrive. Every round costs ${holding_cost:.2f} per case in stock and
${backlog_cost:.2f} per case of backlog (orders you could not fill yet). Nobody knows future customer demand.
The chain is scored on its total cost over {rounds} rounds."""

POSITION = """ROUND {round} of {rounds}

YOUR POSITION:
- Order received this round: {incoming:.0f} cases
- Inventory: {inventory:.0f} cases
- Backlog: {backlog:.0f} cases
- Supply line (ordered, not yet received): {supply_line:.0f} cases
- Lead time from ordering to receiving: {lead_time} rounds
- Orders received in earlier rounds (oldest first): {history}"""

REP_PROMPT = """{position}

PROTOCOL UNDERSTANDING (coordination variables):
- TARGET_INVENTORY: {target:.1f} cases (the stock you aim to hold)
- ORDER_ADJUSTMENT_FACTOR: {adjustment:.2f} (the share of a stock gap you correct each round)

NEIGHBOR INTELLIGENCE (orders and sensitivities, last round):
{neighbours}

TASK:
1. Decide how many cases to order this round (a whole number, 0 or more).
2. Provide a sensitivity analysis: how your order would change if demand rose or fell, whether the demand
you see looks temporary or persistent, and what your neighbors should know.

Your response format:
DECISION: [number]
SENSITIVITY: [detailed explanation of triggers and thresholds]"""

A2A_PROMPT = """{position}

NUMERICAL NEIGHBOR PATTERNS (orders last round):
{neighbours}

TASK:
Decide how many cases to order this round (a whole number, 0 or more) based solely on numerical information
and your position.

Your response format:
DECISION: [number]
REASONING: [brief explanation of your numerical analysis and decision logic]"""


@dataclass(frozen=True)
class GameRules:
    """What every player is told about the game (the system prompt)."""

    stages: int
    rounds: int
    order_delay: int
    shipping_delay: int
    holding_cost: float
    backlog_cost: float

    def system(self, seen: StageObservation) -> str:
        return SYSTEM.format(stage=seen.stage, supplier=seen.supplier, customer=seen.customer, **self.__dict__)


def position(seen: StageObservation, rules: GameRules) -> str:
    history = ", ".join(f"{d:.0f}" for d in seen.demand_history) or "none yet"
    return POSITION.format(
        round=seen.round,
        rounds=rules.rounds,
        incoming=seen.incoming_order,
        inventory=seen.inventory,
        backlog=seen.backlog,
        supply_line=seen.supply_line,
        lead_time=seen.lead_time,
        history=history,
    )


def rep_request(situation: REPSituation, rules: GameRules) -> LLMRequest:
    seen = situation.observation
    prompt = REP_PROMPT.format(
        position=position(seen, rules),
        target=situation.theta[TARGET],
        adjustment=situation.theta[ADJUSTMENT],
        neighbours="\n".join(f"- {note}" for note in seen.neighbour_notes) or "(no messages yet)",
    )
    return LLMRequest.user(rules.system(seen), prompt, temperature=0.1, max_tokens=300, purpose="rep.beer_game.decide")


def a2a_request(seen: StageObservation, rules: GameRules) -> LLMRequest:
    neighbours = "\n".join(f"- {name} ordered {order} cases" for name, order in seen.neighbour_orders)
    prompt = A2A_PROMPT.format(position=position(seen, rules), neighbours=neighbours or "(no orders seen yet)")
    return LLMRequest.user(rules.system(seen), prompt, temperature=0.1, max_tokens=300, purpose="a2a.beer_game.decide")


def parse_order(text: str) -> int:
    """The DECISION as whole cases (half up); a negative, huge or missing order is unparseable."""
    order = labelled_number(text, "DECISION")
    if not 0 <= order <= MAX_ORDER:
        raise ReplyParseError(f"DECISION {order:g} is outside 0..{MAX_ORDER} cases")
    return int(order + 0.5)


def rep_policy(client: LLMClient, fallback: Policy, rules: GameRules) -> LLMPolicy:
    """Call 1 of a REP player; ``fallback`` is its rule (:class:`REPOrdering` as a policy)."""
    return rep_call(
        client, fallback, lambda s: rep_request(s, rules), lambda text, _: parse_order(text), "llm_rep_player"
    )


def a2a_policy(client: LLMClient, fallback: Policy, rules: GameRules) -> LLMPolicy:
    """Call 1 of an A2A player; ``fallback`` is Sterman's rule as a policy."""
    return a2a_call(
        client, fallback, lambda v: a2a_request(v, rules), lambda text, _: parse_order(text), "llm_a2a_player"
    )


SYNTHESIS_SYSTEM = (
    "You are a supply-chain coordination agent in the Beer Game. You update shared coordination variables."
)

SYNTHESIS_PROMPT = """SENSITIVITY AGGREGATION FOR LOCAL VARIABLE UPDATE:

YOUR SENSITIVITY: "{own}"

NEIGHBOR SENSITIVITIES FROM CONNECTED AGENTS:
{neighbours}

CURRENT VARIABLES:
- TARGET_INVENTORY: {target:.1f} cases (the net stock you aim to hold)
- ORDER_ADJUSTMENT_FACTOR: {adjustment:.3f} (fraction of the stock gap you correct each round, 0-1)

TASK: Based on neighbor sensitivities, update your local variables. Distinguish temporary spikes from
persistent shifts in demand, and avoid over- and under-reacting along the chain.

Output: JSON only, e.g. {{"TARGET_INVENTORY": 17.0, "ORDER_ADJUSTMENT_FACTOR": 0.26}}"""


def synthesis_request(request: SynthesisRequest) -> LLMRequest:
    neighbours = "\n".join(f'Neighbor {sender}: "{text}"' for sender, text in request.neighbour_texts)
    prompt = SYNTHESIS_PROMPT.format(
        own=request.own_text,
        neighbours=neighbours or "(none this round)",
        target=request.theta[TARGET],
        adjustment=request.theta[ADJUSTMENT],
    )
    return LLMRequest.user(SYNTHESIS_SYSTEM, prompt, temperature=0.1, max_tokens=300, purpose="rep.beer_game.aggregate")


def parse_synthesis(text: str, request: SynthesisRequest) -> Theta:
    """The JSON reply as θ; keys are matched case-insensitively and values must be finite numbers."""
    reply = {str(k).upper(): v for k, v in json_object(text).items()}
    theta = dict(request.theta)
    for name, key in ((TARGET, "TARGET_INVENTORY"), (ADJUSTMENT, "ORDER_ADJUSTMENT_FACTOR")):
        if key not in reply:
            raise ReplyParseError(f"the reply has no {key}")
        theta[name] = finite_number(reply[key], key)
    return theta


def synthesis_policy(client: LLMClient, fallback: Policy) -> LLMPolicy:
    """Call 2, the textual updater's synthesiser; ``fallback`` is :class:`RuleSynthesis`."""
    return synthesis_call(client, fallback, synthesis_request, parse_synthesis)
