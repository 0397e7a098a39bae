"""The Ahoy agent's rule brains and its counterparts (§5): policies that decide from a :class:`Turn`.

A :class:`Turn` is what Kiko gives a decision maker — the agent, the enabled forms of one role, the triggering
event — and a decision is the list of instances to send. :class:`~coordkit.ahoy.agents.Seat` makes any of these
policies a Kiko decision maker.

- **Rule brains** for the Ahoy agent's roles, pursuing the structured :class:`~coordkit.ahoy.goal.Goal`:
  :class:`Buyer` (Purchase), :class:`Merchant` (Logistics), :class:`FlexibleCustomer` (FlexiblePurchase). They are
  *programmed*, one class per role as in Listing 1.2; the LLM access function (:mod:`.llm_policies`) is what makes
  an Ahoy agent programming-free, and falls back to them. They bind only enabled forms, so they never break the
  protocol themselves. Everything they go by is in the agent: its local states (what it requested, which orders
  it labelled, what was delivered) and its event queue (which purchase requests it took). So they hold no memory
  of their own, and continue any history — one an LLM wrote included.
- **Counterparts** (:class:`Counterpart`): the other roles, rule-based as in the authors' code (quotes by item
  keyword, ``shipped=True``, ``outcome="delivered"``); each answers every enabled form of its role at once.

Fresh key values come from the model's random stream "keys" (reproducible per seed), reached through the turn's
agent.
"""

from abc import abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from coordkit.ahoy.goal import Goal
from coordkit.bspl.kiko import Event, ProtocolAgent
from coordkit.bspl.semantics import Form, Instance, LocalState
from coordkit.policies import Classifier, Policy


@dataclass(frozen=True)
class Turn:
    """What a role's policy decides from: the agent (its local states, its event queue, its model's random streams
    for fresh keys), the enabled forms of the role, and the event that triggered the decision."""

    agent: ProtocolAgent
    forms: tuple[Form, ...]
    event: Event


def fresh_id(agent: ProtocolAgent, prefix: str) -> str:
    """A fresh key value from the model's "keys" stream (reproducible per seed), e.g. ``pen-482113709``."""
    return f"{prefix}-{agent.model.streams('keys').integers(10**9)}"


@dataclass(frozen=True)
class RuleBrain(Policy):
    """A rule brain for one role: :meth:`pick` chooses at most one instance per enabled form.

    A brain plans ahead, so that a chain of its own messages goes out in one step (Kiko would call it again only
    on the next step): it sends its picks in a copy of the agent's local state and picks again from the forms they
    enable (a Merchant's label request enables the order's wrapping requests), until it picks nothing. It returns
    every pick, in order. (It reads the forms from that copy, so the turn's forms are the first round of them.)
    """

    goal: Goal

    protocol_name: ClassVar[str]
    role: ClassVar[str]

    def decide(self, turn: Turn) -> list[Instance]:
        state = turn.agent.states[self.protocol_name]
        plan = LocalState(state.protocol, (self.role,), list(state.history))
        chosen = []
        while picks := [i for form in plan.enabled() if (i := self.pick(turn.agent, plan, form)) is not None]:
            chosen += [plan.send(instance) for instance in picks]
        return chosen

    @abstractmethod
    def pick(self, agent: ProtocolAgent, plan: LocalState, form: Form) -> Instance | None: ...


def _requested(plan: LocalState, message: str, **where) -> set:
    """The items of the ``message`` instances in the plan's history that match ``where``."""
    return {
        i.payload["item"]
        for i in plan.history
        if i.schema.name == message and all(i.payload.get(k) == v for k, v in where.items())
    }


def _knowledge(plan: LocalState, form: Form) -> dict:
    """What the plan knows in the enactment that ``form`` continues."""
    known = dict(form.known)
    return plan.knowledge({k: known[k] for k in plan.protocol.keys_of(form.schema) if k in known})


class Buyer(RuleBrain):
    """Purchase:Buyer. One rfq per wanted item (a fresh ID each); accept a quote within the item's budget, reject
    it above; send ``completed`` once the outcome is known (delivered, or rejected).

    Wanted items: the goal's, and those of the ``purchase_request`` events in the agent's queue, each with its own
    budget and address (§5.4). It takes the pending ones, and goes by every one handled, whoever handled it."""

    name = "buyer"
    classifier = Classifier()
    protocol_name, role = "Purchase", "Buyer"

    def decide(self, turn: Turn) -> list[Instance]:
        turn.agent.events.take("purchase_request")
        return super().decide(turn)

    def wants(self, agent: ProtocolAgent) -> dict[str, tuple[float, str]]:
        """{item: (budget, address)}: the goal's items, then the purchase requests in the order they were handled."""
        wants = {item: (self.goal.budget_for(item), self.goal.address) for item in self.goal.items}
        for event in agent.events.handled:
            if event["event_type"] == "purchase_request":
                meta = event["metadata"]
                wants[meta["item"]] = (float(meta["budget"]), meta["address"])
        return wants

    def pick(self, agent: ProtocolAgent, plan: LocalState, form: Form) -> Instance | None:
        name, known, wants = form.schema.name, dict(form.known), self.wants(agent)
        if name == "rfq":
            new = [item for item in wants if item not in _requested(plan, "rfq")]
            return form.bind(plan.protocol, ID=fresh_id(agent, new[0]), item=new[0]) if new else None
        if known["item"] not in wants:
            return None  # an enactment this brain did not start
        budget, address = wants[known["item"]]
        if name == "accept" and known["price"] <= budget:
            return form.bind(plan.protocol, address=address, resp="accepted")
        if name == "reject" and known["price"] > budget:
            return form.bind(plan.protocol, outcome="rejected: over budget", resp="rejected")
        outcome = _knowledge(plan, form).get("outcome")
        if name == "completed" and outcome is not None:
            return form.bind(plan.protocol, satisfaction="satisfied" if outcome == "delivered" else "none")
        return None


class Merchant(RuleBrain):
    """Logistics:Merchant. RequestLabel for every order of the goal at once; RequestWrapping for each item of an
    order once the item is at hand: at once, or — when the agent buys the item itself (it plays Buyer and the goal
    lists the item) — once it is delivered (appendix B: "Once an item is received, ... wrapping").

    Which order an orderID stands for is read off the history: the k-th RequestLabel to a destination is the k-th
    order of the goal bound there."""

    name = "merchant"
    classifier = Classifier()
    protocol_name, role = "Logistics", "Merchant"

    def labelled(self, plan: LocalState) -> dict[str, int]:
        """{orderID: index of its order in goal.orders} for every RequestLabel in the plan's history."""
        found: dict[str, int] = {}
        for label in (i for i in plan.history if i.schema.name == "RequestLabel"):
            index = next(
                (
                    n
                    for n, order in enumerate(self.goal.orders)
                    if order.destination == label.payload["address"] and n not in found.values()
                ),
                None,
            )
            if index is not None:
                found[label.payload["orderID"]] = index
        return found

    def pick(self, agent: ProtocolAgent, plan: LocalState, form: Form) -> Instance | None:
        labelled = self.labelled(plan)
        if form.schema.name == "RequestLabel":
            waiting = [n for n in range(len(self.goal.orders)) if n not in labelled.values()]
            if not waiting:
                return None
            destination = self.goal.orders[waiting[0]].destination
            return form.bind(plan.protocol, orderID=fresh_id(agent, f"order{waiting[0] + 1}"), address=destination)
        order_id = dict(form.known)["orderID"]
        if order_id not in labelled:
            return None  # an order this brain did not label
        done = _requested(plan, "RequestWrapping", orderID=order_id)
        ready = [i for i in self.goal.orders[labelled[order_id]].items if i not in done and self._at_hand(agent, i)]
        return form.bind(plan.protocol, itemID=fresh_id(agent, ready[0]), item=ready[0]) if ready else None

    def _at_hand(self, agent: ProtocolAgent, item: str) -> bool:
        buys = item in self.goal.items and any("Buyer" in s.roles for s in agent.states.values())
        return not buys or any(
            i.payload.get("item") == item and i.payload.get("outcome") == "delivered"
            for s in agent.states.values()
            for i in s.history
        )


class FlexibleCustomer(RuleBrain):
    """FlexiblePurchase:FlexibleCustomer (§5.3). rfq per item; accept an offer within budget; request express
    delivery when the goal is urgent, standard otherwise (cheapest, or no preference); pay for the chosen option."""

    name = "flexible_customer"
    classifier = Classifier()
    protocol_name, role = "FlexiblePurchase", "FlexibleCustomer"

    def pick(self, agent: ProtocolAgent, plan: LocalState, form: Form) -> Instance | None:
        name, known = form.schema.name, dict(form.known)
        option = "express" if self.goal.delivery == "urgent" else "standard"
        if name == "rfq":
            new = [item for item in self.goal.items if item not in _requested(plan, "rfq")]
            return form.bind(plan.protocol, ID=fresh_id(agent, new[0]), item=new[0]) if new else None
        if name == "accept" and known["price"] <= self.goal.budget_for(known["item"]):
            return form.bind(plan.protocol, confirmation="confirmed")
        if name == f"{option}_delivery_request":
            return form.bind(plan.protocol, **{f"{option}_delivery": option})
        if name in ("pay_express", "pay_standard"):  # only the requested option's payment is enabled
            return form.bind(plan.protocol, payment=f"${known['price']}")
        return None


RULE_BRAINS = {(brain.protocol_name, brain.role): brain for brain in (Buyer, Merchant, FlexibleCustomer)}


def rule_brain(protocol_name: str, role: str, goal: Goal) -> RuleBrain:
    """The rule brain for ``role`` in ``protocol_name``, pursuing ``goal``."""
    if (protocol_name, role) not in RULE_BRAINS:
        known = ", ".join(f"{p}:{r}" for p, r in RULE_BRAINS)
        raise KeyError(f"no rule brain for {protocol_name}:{role}; there are brains for {known}")
    return RULE_BRAINS[protocol_name, role](goal)


# Prices by keyword; the paper's §5.2 quotes are $42 (glass vase), $27 (ceramic plate) and $39 (wooden bat).
PRICES = {"pen": 4, "vase": 42, "plate": 27, "bat": 39, "trolley": 25}
OTHER_PRICE = 10  # an item the table does not name
FRAGILE = ("glass", "ceramic")


def price_of(item: str) -> int:
    """The price of the first word of ``item`` that the table names ("glass vase" costs 42)."""
    return next((PRICES[w] for w in str(item).lower().split() if w in PRICES), OTHER_PRICE)


def wrapping_for(item: str) -> str:
    """ "fragile" for glass and ceramic items, "standard" for the rest."""
    return "fragile" if any(material in str(item).lower() for material in FRAGILE) else "standard"


Reply = Callable[[dict], dict]  # the form's known values -> the out values to bind

REPLIES: dict[tuple[str, str], dict[str, Reply]] = {
    ("Purchase", "Seller"): {"quote": lambda k: {"price": price_of(k["item"])}, "ship": lambda k: {"shipped": True}},
    ("Purchase", "Shipper"): {"deliver": lambda k: {"outcome": "delivered"}},
    ("Logistics", "Labeler"): {"Labeled": lambda k: {"label": f"label to {k['address']}"}},
    ("Logistics", "Wrapper"): {"Wrapped": lambda k: {"wrapping": wrapping_for(k["item"])}},
    ("Logistics", "Packer"): {"Packed": lambda k: {"status": "packed"}},
    ("FlexiblePurchase", "FlexibleMerchant"): {
        "offer": lambda k: {"price": price_of(k["item"])},
        "standard_delivery": lambda k: {},
        "express_delivery": lambda k: {},
        "receipt": lambda k: {"done": True},
    },
}


@dataclass(frozen=True)
class Counterpart(Policy):
    """A counterpart role (Purchase's Seller and Shipper, Logistics' Labeler, Wrapper and Packer, FlexiblePurchase's
    FlexibleMerchant): it answers every enabled form of its role at once, with the values of :data:`REPLIES`."""

    protocol_name: str
    role: str

    name = "counterpart"
    classifier = Classifier()

    def __post_init__(self):
        if (self.protocol_name, self.role) not in REPLIES:
            known = ", ".join(f"{p}:{r}" for p, r in REPLIES)
            raise KeyError(f"no counterpart for {self.protocol_name}:{self.role}; there are counterparts for {known}")

    def decide(self, turn: Turn) -> list[Instance]:
        protocol = turn.agent.states[self.protocol_name].protocol
        replies = REPLIES[self.protocol_name, self.role]
        return [
            form.bind(protocol, **replies[form.schema.name](dict(form.known)))
            for form in turn.forms
            if form.schema.name in replies
        ]
