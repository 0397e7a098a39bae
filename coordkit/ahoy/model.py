"""The Ahoy model: an Ahoy agent enacting BSPL protocols for a user's goal, among rule-based counterparts (Ahoy §3,
§5).

The agent named ``ahoy`` plays the user's roles — Purchase's Buyer, Logistics' Merchant, FlexiblePurchase's
FlexibleCustomer — each seated by its rule brain, or by the LLM access function with the rule brain as fallback.
The other roles are played by counterparts, one agent each. Messages travel through Kiko's transport with seeded
delays; the adapter refuses (and counts) any emission that would break a protocol.
"""

import time

from coordkit.ahoy.agents import AhoyAgent, Seat
from coordkit.ahoy.goal import Goal, Order
from coordkit.ahoy.llm_policies import ahoy_policy
from coordkit.ahoy.policies import Counterpart, rule_brain
from coordkit.ahoy.termination import done
from coordkit.bspl.kiko import Enactment
from coordkit.bspl.parser import load
from coordkit.llm import LLMClient
from coordkit.model import Model
from coordkit.parameters import Choice, Instance, Integer, ParameterError, Parameters, Real
from coordkit.policies import Policy

AHOY = "ahoy"
PROTOCOLS = ("purchase", "logistics", "flexible_purchase", "purchase+logistics")
PROTOCOL_NAMES = {
    "purchase": "Purchase",
    "logistics": "Logistics",
    "flexible_purchase": "FlexiblePurchase",
    "purchase+logistics": "Purchase + Logistics",
}
PROTOCOL_FILES = {  # FlexiblePurchase is the corrected, live one (data/protocols/README.md)
    "purchase": ("purchase",),
    "logistics": ("logistics",),
    "flexible_purchase": ("flexible_purchase_corrected",),
    "purchase+logistics": ("purchase", "logistics"),
}
SYSTEMS = {  # who plays which role: the Ahoy agent the user's, one counterpart agent each of the others
    "Purchase": {"Buyer": AHOY, "Seller": "seller", "Shipper": "shipper"},
    "Logistics": {"Merchant": AHOY, "Wrapper": "wrapper", "Labeler": "labeler", "Packer": "packer"},
    "FlexiblePurchase": {"FlexibleCustomer": AHOY, "FlexibleMerchant": "merchant"},
}
ITEMS = ("pen", "trolley", "wooden bat", "glass vase", "ceramic plate", "lamp")
DELIVERIES = {"": "no preference", "urgent": "urgent", "cheapest": "cheapest"}

RALEIGH = "123 Main St, Raleigh, NC 27606"  # Listing 1.9
ORDERS = (Order("Alice's House", ("glass vase",)), Order("Bob's House", ("ceramic plate", "wooden bat")))
LISTING_1_6 = """I need to buy and redistribute the following items:
- A glass vase upto $100
- A ceramic plate upto $50
- A wooden bat upto $50
Send only one rfq per item.
Delivery location: 123 Main Street, Portland, OR 97201

Once an item is received, they need to be prepared for redistribution by wrapping appropriately.

Orders to prepare for shipment:
1. Destination: Alice's House, Items: glass vase
2. Destination: Bob's House, Items: ceramic plate + wooden bat"""
CONCURRENT = Goal(
    items=("glass vase", "ceramic plate", "wooden bat"),
    address="123 Main Street, Portland, OR 97201",
    budgets={"glass vase": 100, "ceramic plate": 50, "wooden bat": 50},
    orders=ORDERS,
    text=LISTING_1_6,
)
TROLLEY = {  # §5.4; the paper calls the event's address "address2" without printing it
    "event_type": "purchase_request",
    "message": "Purchase Request: Buy a trolley",
    "priority": "normal",
    "metadata": {"item": "trolley", "budget": 29.99, "address": "400 Warehouse Rd, Durham, NC 27701"},
}


def _event_within_the_run(values: dict) -> None:
    if values["event_step"] is not None and values["event_step"] > values["max_steps"]:
        raise ParameterError(
            f"event_step={values['event_step']} comes after the last step "
            f"(max_steps={values['max_steps']}): inject it earlier, or raise max_steps"
        )


class AhoyEnactment(Enactment, Model):
    """An Ahoy agent (named "ahoy") enacting ``protocols`` for a user's goal, among rule-based counterparts (§5).

    The goal is ``goal`` when given (§5.2's Listing 1.6 needs per-item budgets and orders), else made of ``item``,
    ``budget`` and ``delivery`` (address: Listing 1.9's); a Merchant prepares Listing 1.6's orders. With
    ``event_step``, §5.4's purchase request for a trolley reaches the Ahoy agent's event queue at that step.

    A step delivers the messages due and lets every agent decide (Kiko's machinery, the
    :class:`~coordkit.bspl.kiko.Enactment` mixin that :class:`~coordkit.bspl.kiko.EnactmentModel` uses too), then
    injects the event when it is due. The run stops when every agent is done (:mod:`.termination`) and nothing is in
    transit; when nothing happens any more and no event is due; or at a limit (``max_steps``, ``max_llm_calls``,
    ``time_limit_s``: §3.3's call and time limits). With ``llm``, every role of the Ahoy agent decides through the
    LLM access function (:mod:`.llm_policies`), its rule brain deciding when a reply cannot be used (counted in
    ``llm_fallbacks``).

    ``frame()`` has one row per step, step 0 the initial state (columns: :meth:`reporters`); ``messages()`` is the
    message log, one row per message; ``summary()`` is one row (:meth:`summary`).
    """

    parameters = Parameters(
        Choice(
            "protocols",
            "purchase",
            PROTOCOLS,
            labels=PROTOCOL_NAMES,
            doc="what the Ahoy agent enacts: Purchase as Buyer, Logistics as Merchant, FlexiblePurchase (the "
            "corrected, live one) as FlexibleCustomer, or Purchase and Logistics at once (§5.2)",
        ),
        Choice(
            "item",
            "pen",
            ITEMS,
            doc="what the user buys (Purchase, FlexiblePurchase); the counterparts price it "
            "by keyword (policies.PRICES)",
        ),
        Real(
            "budget",
            20.0,
            0,
            10_000,
            unit="$",
            step=1,
            slider=(0, 60),
            doc="the most the user pays for the item (§5.1: a pen up to $20)",
        ),
        Choice(
            "delivery",
            "",
            tuple(DELIVERIES),
            labels=DELIVERIES,
            doc="the user's delivery wish (§5.3): express when urgent, standard when cheapest or no preference",
        ),
        Instance(
            "goal",
            None,
            Goal,
            doc="the user's goal in full (§3.1), overriding item, budget and delivery",
            optional="the goal made of item, budget and delivery; Purchase + Logistics: Listing 1.6's",
        ),
        Integer(
            "event_step",
            None,
            1,
            10_000,
            unit="step",
            slider=(1, 8),
            optional="no external event",
            doc="the step at which §5.4's external event, a purchase request for a trolley, reaches the agent",
        ),
        Integer(
            "max_delay",
            2,
            1,
            50,
            unit="steps",
            slider=(1, 6),
            doc="a message arrives 1 to max_delay steps after it is sent (seeded)",
        ),
        Integer("max_steps", 200, 1, 10_000, unit="steps", slider=(1, 200), doc="the most steps a run takes"),
        Integer(
            "max_llm_calls",
            None,
            1,
            100_000,
            unit="calls",
            optional="no limit",
            doc="stop after this many LLM calls of the Ahoy agent (§3.3's call limit)",
        ),
        Real(
            "time_limit_s",
            None,
            0,
            86_400,
            low_open=True,
            unit="s",
            optional="no limit",
            doc="stop after this much wall time (§3.3's time limit); a run it stops does not repeat",
        ),
        Instance(
            "llm",
            None,
            LLMClient,
            optional="rule brains, no calls",
            doc="the LLM the Ahoy agent's access function asks, for every role (its rule brain as fallback)",
        ),
        relations=(_event_within_the_run,),
    )

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        self.pursued_goal = self.goal or self.goal_from_parameters()
        protocols = [load(name) for name in PROTOCOL_FILES[self.protocols]]
        cast = {p.name: SYSTEMS[p.name] for p in protocols}
        self.set_up_enactment(protocols, cast, classes={AHOY: AhoyAgent})
        self.ahoy: AhoyAgent = self.agent(AHOY)
        self.seats: list[Seat] = []  # the Ahoy agent's, one per role
        self.counterparts: list[Seat] = []
        for protocol in protocols:
            for role, name in cast[protocol.name].items():
                if name != AHOY:
                    seat = Seat(protocol, role, Counterpart(protocol.name, role))
                    self.counterparts.append(self.agent(name).decision(seat))
                    continue
                policy = rule_brain(protocol.name, role, self.pursued_goal)
                if self.llm is not None:
                    policy = ahoy_policy(self.llm, policy, self.pursued_goal, [protocol])
                self.seats.append(self.ahoy.decision(Seat(protocol, role, policy)))
        self.asked: list[str] = []  # the items of the external events injected so far
        self.started_at: float | None = None  # wall time of the first step, for time_limit_s
        # whether time_limit_s stopped the run: the one outcome that depends on the machine's speed (off by default)
        self.out_of_time = False
        self.datacollector.collect(self)

    def goal_from_parameters(self) -> Goal:
        if self.protocols == "purchase+logistics":
            return CONCURRENT
        orders = ORDERS if self.protocols == "logistics" else ()
        items = () if self.protocols == "logistics" else (self.item,)
        return Goal(items=items, budget=self.budget, address=RALEIGH, delivery=self.delivery, orders=orders)

    def step(self) -> None:
        self.started_at = self.started_at or time.perf_counter()
        sent_before = len(self.log)
        self.exchange()
        if self.steps == self.event_step:
            event = {"timestamp": self.steps, **TROLLEY}
            self.asked.append(event["metadata"]["item"])
            self.ahoy.inject(event)
        self.datacollector.collect(self)
        self.running = not self._stops(sent_before)

    def _stops(self, sent_before: int) -> bool:
        event_due = self.event_step is not None and self.steps < self.event_step
        quiet = not event_due and not self.in_transit and len(self.log) == sent_before
        out_of_calls = self.max_llm_calls is not None and self.llm_calls >= self.max_llm_calls
        self.out_of_time = self.time_limit_s is not None and time.perf_counter() - self.started_at > self.time_limit_s
        return self.finished() or quiet or self.steps >= self.max_steps or out_of_calls or self.out_of_time

    def finished(self) -> bool:
        """Every agent is done (the Ahoy agent with its goal and the events' items) and nothing is in transit."""
        return not self.in_transit and all(
            done(a, self.pursued_goal, self.asked) if a is self.ahoy else done(a) for a in self.by_name.values()
        )

    @property
    def decisions(self) -> int:
        """The Ahoy agent's decisions so far: calls of its seats."""
        return sum(seat.decisions for seat in self.seats)

    def delivery_path(self) -> str:
        """Which delivery a FlexiblePurchase enactment took: "express", "standard", "both" or "none"."""
        sent = {entry["message"] for entry in self.log}
        paths = [p for p in ("express", "standard") if f"{p}_delivery_request" in sent]
        return "both" if len(paths) == 2 else paths[0] if paths else "none"

    def policies(self) -> list[Policy]:
        """The Ahoy agent's policies (rule brains, or LLM access functions), then the counterparts'."""
        return [seat.policy for seat in (*self.seats, *self.counterparts)]

    def reporters(self) -> dict:
        """The frame's columns after each step: messages sent so far (by anyone, and by the Ahoy agent), messages
        in transit, the Ahoy agent's decisions and LLM calls so far, violations so far, and whether the run is
        finished."""
        return {
            "messages": lambda m: len(m.log),
            "ahoy_messages": lambda m: sum(entry["sender"] == AHOY for entry in m.log),
            "in_transit": lambda m: len(m.in_transit),
            "decisions": lambda m: m.decisions,
            "llm_calls": lambda m: m.llm_calls,
            "violations": lambda m: m.violations,
            "finished": lambda m: m.finished(),
        }

    def summary(self) -> dict:
        """Messages in all and sent by the Ahoy agent, per protocol, the Ahoy agent's decisions, LLM calls and
        fallbacks, violations, whether the run terminated (:meth:`finished`), whether the wall-clock time limit
        stopped it (then it does not repeat), and the delivery a FlexiblePurchase run took ("" for the other
        protocols)."""
        return {
            "messages": len(self.log),
            "ahoy_messages": sum(entry["sender"] == AHOY for entry in self.log),
            **{name: sum(entry["protocol"] == name for entry in self.log) for name in SYSTEMS},
            "decisions": self.decisions,
            "llm_calls": self.llm_calls,
            "llm_fallbacks": self.llm_fallbacks,
            "violations": self.violations,
            "terminated": self.finished(),
            "out_of_time": self.out_of_time,
            "delivery": self.delivery_path() if "FlexiblePurchase" in self.in_play else "",
        }
