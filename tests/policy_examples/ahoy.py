"""Ahoy's policies: the rule brains of the Ahoy agent's roles, the counterparts, and the LLM access function.

Each observation is a real decision point: the turn a role's seat is given at its k-th call in a rule-brain
enactment, captured there with the model of its own it belongs to (so deciding one turn, which draws fresh keys
from its model's rng, leaves the others as they were).
"""

from coordkit.ahoy import stand_in
from coordkit.ahoy.llm_policies import ahoy_policy
from coordkit.ahoy.model import CONCURRENT, SYSTEMS, TROLLEY, AhoyEnactment
from coordkit.ahoy.policies import Buyer, Counterpart, FlexibleCustomer, Merchant, Turn
from coordkit.policies import Policy

from . import PolicyExample

PARAMS = {
    "Purchase": {},
    "Logistics": {"protocols": "logistics"},
    "FlexiblePurchase": {"protocols": "flexible_purchase", "delivery": "urgent"},
}


class Captured(Exception):
    def __init__(self, turn: Turn):
        self.turn = turn


class CaptureAt(Policy):
    """Decides as ``policy`` until its ``call``-th turn, which it captures instead."""

    def __init__(self, policy: Policy, call: int):
        self.policy, self.call, self.calls = policy, call, 0

    def decide(self, turn: Turn):
        if self.calls == self.call:
            raise Captured(turn)
        self.calls += 1
        return self.policy.decide(turn)


def turns(role: str, calls: int = 6, event_at: int | None = None, **params) -> list[Turn]:
    """The role's turns at its first ``calls`` calls (fewer if the run ends before) in ``AhoyEnactment(**params)``;
    with ``event_at``, §5.4's trolley request is pending at that call."""
    found = []
    for call in range(calls):
        model = AhoyEnactment(**params, rng=0)
        seat = next(s for s in (*model.seats, *model.counterparts) if s.role == role)
        seat.policy = CaptureAt(seat.policy, call)
        try:
            model.run()
        except Captured as captured:
            if call == event_at:
                captured.turn.agent.events.pending.append({"timestamp": model.steps, **TROLLEY})
            found.append(captured.turn)
    return found


def goal(protocol_name: str):
    """The Ahoy agent's goal for the role: a pen ($20, urgent for FlexiblePurchase); Listing 1.6 for the Merchant."""
    return AhoyEnactment(**PARAMS[protocol_name]).pursued_goal if protocol_name != "Logistics" else CONCURRENT


def llm_policy(protocol_name: str, brain):
    """A maker of the access function for the role ``brain`` plays, with ``brain`` as its fallback."""

    def make(rng, client):
        protocol = AhoyEnactment(**PARAMS[protocol_name]).in_play[protocol_name]
        return ahoy_policy(client, brain(goal(protocol_name)), goal(protocol_name), [protocol])

    return make


def buyer_turns():
    return turns("Buyer", event_at=3)


def merchant_turns():
    """As a Merchant alone, and as a Merchant that buys the items too (it waits for each to be delivered)."""
    return turns("Merchant", protocols="logistics") + turns("Merchant", calls=10, protocols="purchase+logistics")


def customer_turns():
    return turns("FlexibleCustomer", **PARAMS["FlexiblePurchase"])


COUNTERPARTS = [
    (protocol_name, role) for protocol_name, cast in SYSTEMS.items() for role, name in cast.items() if name != "ahoy"
]

EXAMPLES = [
    PolicyExample("ahoy_buyer", lambda rng, client: Buyer(goal("Purchase")), buyer_turns),
    PolicyExample("ahoy_merchant", lambda rng, client: Merchant(goal("Logistics")), merchant_turns),
    PolicyExample(
        "ahoy_flexible_customer", lambda rng, client: FlexibleCustomer(goal("FlexiblePurchase")), customer_turns
    ),
    *(
        PolicyExample(
            f"ahoy_{role.lower()}",
            lambda rng, client, p=p, r=role: Counterpart(p, r),
            lambda p=p, r=role: turns(r, **PARAMS[p]),
        )
        for p, role in COUNTERPARTS
    ),
    PolicyExample("ahoy_llm_buyer", llm_policy("Purchase", Buyer), buyer_turns, reply=stand_in.reply),
    PolicyExample("ahoy_llm_merchant", llm_policy("Logistics", Merchant), merchant_turns, reply=stand_in.reply),
    PolicyExample(
        "ahoy_llm_flexible_customer",
        llm_policy("FlexiblePurchase", FlexibleCustomer),
        customer_turns,
        reply=stand_in.reply,
    ),
]
