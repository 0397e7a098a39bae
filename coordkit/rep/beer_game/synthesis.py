"""The textual updater's synthesiser for the Beer Game: neighbours' sensitivity texts → new θ (API call 2).

:class:`RuleSynthesis` reads the templated sentences rule-based players write; :func:`llm_synthesis` asks an
LLM with the REP paper's call-2 prompt (Appendix A.4.2, adapted to the Beer Game's variables) and falls back
to the rules when the call fails or the reply is not the JSON asked for.
"""

import re
from dataclasses import dataclass

from coordkit.llm import LLMClient, LLMRequest
from coordkit.llm.parsing import json_object
from coordkit.policies import LLMPolicy, Policy, ReplyParseError
from coordkit.rep.beer_game.policies import ADJUSTMENT, TARGET
from coordkit.rep.protocol import SynthesisRequest, Theta

_TARGET = re.compile(r"my stock target is (\d+(?:\.\d+)?)", re.I)
_TREND = re.compile(r"my own orders in look (steady|temporary|persistent)", re.I)
_SUPPLY = re.compile(r"\((\d+(?:\.\d+)?) rounds of supply for a (\d+)-round lead time\)", re.I)
_NATURAL = re.compile(r"normally correct (\d+(?:\.\d+)?)% of a stock gap", re.I)


@dataclass(frozen=True)
class RuleSynthesis(Policy):
    """Turns the templated sensitivity texts into a θ proposal, the way a careful reader of them would:

    - TARGET_INVENTORY: the mean of the stock targets the writers state (mine included);
    - ORDER_ADJUSTMENT_FACTOR: my natural adjustment, scaled down when my supply line holds more than a lead
      time of supply, and damped (×``damping``) while a neighbour says its orders look "temporary" — a spike
      travelling up the chain is not worth chasing. Texts without these phrases leave θ unchanged.
    """

    damping: float = 0.8

    name = "rule_synthesis"

    def decide(self, request: SynthesisRequest) -> Theta:
        theta = dict(request.theta)
        texts = [request.own_text, *(text for _, text in request.neighbour_texts)]
        targets = [float(m[1]) for text in texts for m in _TARGET.finditer(text)]
        if targets:
            theta[TARGET] = sum(targets) / len(targets)
        supply, natural = _SUPPLY.search(request.own_text), _NATURAL.search(request.own_text)
        if supply and natural:
            fill = float(supply[1]) / max(float(supply[2]), 1.0)
            spike = any(m[1].lower() == "temporary" for _, text in request.neighbour_texts
                        for m in _TREND.finditer(text))
            damping = self.damping if spike else 1.0
            theta[ADJUSTMENT] = float(natural[1]) / 100 * min(1.0, 1 / max(fill, 1e-9)) * damping
        return theta


SYSTEM = "You are a supply-chain coordination agent in the Beer Game. You update shared coordination variables."

PROMPT = """SENSITIVITY AGGREGATION FOR LOCAL VARIABLE UPDATE:

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
    prompt = PROMPT.format(
        own=request.own_text,
        neighbours=neighbours or "(none this round)",
        target=request.theta[TARGET],
        adjustment=request.theta[ADJUSTMENT],
    )
    return LLMRequest.user(SYSTEM, prompt, temperature=0.1, max_tokens=300, purpose="rep.beer_game.aggregate")


def parse_synthesis(text: str, request: SynthesisRequest) -> Theta:
    """The JSON reply as θ; keys are matched case-insensitively and values must be finite numbers."""
    reply = {str(k).upper(): v for k, v in json_object(text).items()}
    theta = dict(request.theta)
    for name, key in ((TARGET, "TARGET_INVENTORY"), (ADJUSTMENT, "ORDER_ADJUSTMENT_FACTOR")):
        if key not in reply:
            raise ReplyParseError(f"the reply has no {key}")
        try:
            value = float(reply[key])
        except (TypeError, ValueError):
            raise ReplyParseError(f"{key} is not a number: {reply[key]!r}") from None
        if value != value or abs(value) == float("inf"):
            raise ReplyParseError(f"{key} is not finite")
        theta[name] = value
    return theta


def llm_synthesis(client: LLMClient, fallback: Policy | None = None) -> LLMPolicy:
    """The LLM synthesiser with the rule-based one as its fallback."""
    return LLMPolicy(
        client, synthesis_request, parse_synthesis, fallback or RuleSynthesis(), name="llm_synthesis"
    )
