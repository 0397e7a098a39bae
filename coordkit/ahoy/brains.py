"""Rule-based brains for the Ahoy agent's roles (§5): Kiko decision makers that pursue the structured :class:`Goal`.

``brain_factory(protocol_name, role, goal)`` returns a decision maker ``(agent, forms, event) -> [Instance]`` for
Purchase:Buyer, Logistics:Merchant and FlexiblePurchase:FlexibleCustomer. An LLM brain with the same signature
(the LLM access function of §3.3) can replace it in every scenario: the scenarios take a ``brain_factory``.

These brains are *programmed* (one class per role, as in Listing 1.2); the LLM brain is what makes an Ahoy agent
programming-free. They bind only enabled forms, so they never break the protocol themselves.
"""

from coordkit.ahoy.goal import Goal
from coordkit.bspl.kiko import DecisionMaker, Event, ProtocolAgent
from coordkit.bspl.semantics import Form, Instance, LocalState


def fresh_id(agent: ProtocolAgent, prefix: str) -> str:
    """A fresh key value from the model's rng (reproducible per seed), e.g. ``pen-482113709``."""
    return f"{prefix}-{agent.model.rng.integers(10**9)}"


class RuleBrain:
    """A decision maker for one role: :meth:`pick` chooses at most one instance per enabled form.

    A brain plans ahead, so that a chain of its own messages goes out in one step (Kiko would call it again only
    on the next step): it sends its picks in a copy of the agent's local state and picks again from the forms they
    enable (a Merchant's label
    request enables the order's wrapping requests), until it picks nothing. It returns every pick, in order. (It
    reads the forms from that copy, so the ``forms`` it is given are the first round of them.)
    """

    def __init__(self, protocol_name: str, role: str, goal: Goal):
        self.protocol_name, self.role, self.goal = protocol_name, role, goal

    def __call__(self, agent: ProtocolAgent, forms: list[Form], event: Event) -> list[Instance]:
        state = agent.states[self.protocol_name]
        plan = LocalState(state.protocol, (self.role,), list(state.history))
        chosen = []
        while picks := [i for form in plan.enabled() if (i := self.pick(agent, plan, form)) is not None]:
            chosen += [plan.send(instance) for instance in picks]
        return chosen

    def pick(self, agent: ProtocolAgent, plan: LocalState, form: Form) -> Instance | None:
        raise NotImplementedError


def _requested(plan: LocalState, message: str, **where) -> set:
    """The items of the ``message`` instances in the plan's history that match ``where``."""
    return {i.payload["item"] for i in plan.history
            if i.schema.name == message and all(i.payload.get(k) == v for k, v in where.items())}


def _knowledge(plan: LocalState, form: Form) -> dict:
    """What the plan knows in the enactment that ``form`` continues."""
    known = dict(form.known)
    return plan.knowledge({k: known[k] for k in plan.protocol.keys_of(form.schema) if k in known})


class Buyer(RuleBrain):
    """Purchase:Buyer. One rfq per wanted item (a fresh ID each); accept a quote within the item's budget, reject
    it above; send ``completed`` once the outcome is known (delivered, or rejected).

    Wanted items: the goal's, and those of ``purchase_request`` events taken from ``agent.events`` (an
    :class:`~coordkit.ahoy.scenarios.EventQueue`), each with its own budget and address (§5.4)."""

    def __init__(self, protocol_name: str, role: str, goal: Goal):
        super().__init__(protocol_name, role, goal)
        self.wants = {item: (goal.budget_for(item), goal.address) for item in goal.items}

    def __call__(self, agent: ProtocolAgent, forms: list[Form], event: Event) -> list[Instance]:
        queue = getattr(agent, "events", None)
        for external in queue.take("purchase_request") if queue is not None else ():
            meta = external["metadata"]
            self.wants[meta["item"]] = (float(meta["budget"]), meta["address"])
        return super().__call__(agent, forms, event)

    def pick(self, agent: ProtocolAgent, plan: LocalState, form: Form) -> Instance | None:
        name, known = form.schema.name, dict(form.known)
        if name == "rfq":
            new = [item for item in self.wants if item not in _requested(plan, "rfq")]
            return form.bind(plan.protocol, ID=fresh_id(agent, new[0]), item=new[0]) if new else None
        budget, address = self.wants[known["item"]]
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
    lists the item) — once it is delivered (appendix B: "Once an item is received, ... wrapping")."""

    def __init__(self, protocol_name: str, role: str, goal: Goal):
        super().__init__(protocol_name, role, goal)
        self.orders: dict[str, int] = {}  # orderID -> index of the order in goal.orders

    def pick(self, agent: ProtocolAgent, plan: LocalState, form: Form) -> Instance | None:
        if form.schema.name == "RequestLabel":
            waiting = [n for n in range(len(self.goal.orders)) if n not in self.orders.values()]
            if not waiting:
                return None
            order_id = fresh_id(agent, f"order{waiting[0] + 1}")
            self.orders[order_id] = waiting[0]
            return form.bind(plan.protocol, orderID=order_id, address=self.goal.orders[waiting[0]].destination)
        order_id = dict(form.known)["orderID"]
        done = _requested(plan, "RequestWrapping", orderID=order_id)
        ready = [i for i in self.goal.orders[self.orders[order_id]].items if i not in done and self._at_hand(agent, i)]
        return form.bind(plan.protocol, itemID=fresh_id(agent, ready[0]), item=ready[0]) if ready else None

    def _at_hand(self, agent: ProtocolAgent, item: str) -> bool:
        buys = item in self.goal.items and any("Buyer" in s.roles for s in agent.states.values())
        return not buys or any(i.payload.get("item") == item and i.payload.get("outcome") == "delivered"
                               for s in agent.states.values() for i in s.history)


class FlexibleCustomer(RuleBrain):
    """FlexiblePurchase:FlexibleCustomer (§5.3). rfq per item; accept an offer within budget; request express
    delivery when the goal is urgent, standard otherwise (cheapest, or no preference); pay for the chosen option."""

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


RULES = {("Purchase", "Buyer"): Buyer, ("Logistics", "Merchant"): Merchant,
         ("FlexiblePurchase", "FlexibleCustomer"): FlexibleCustomer}


def brain_factory(protocol_name: str, role: str, goal: Goal) -> DecisionMaker:
    """The rule brain for ``role`` in ``protocol_name``, pursuing ``goal``."""
    if (protocol_name, role) not in RULES:
        known = ", ".join(f"{p}:{r}" for p, r in RULES)
        raise KeyError(f"no rule brain for {protocol_name}:{role}; there are brains for {known}")
    return RULES[protocol_name, role](protocol_name, role, goal)
