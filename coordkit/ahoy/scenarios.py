"""The Ahoy paper's four scenarios (§5), offline with rule brains, each a function returning :class:`Run` s.

- :func:`programming_freeness` (§5.1): the same agent set-up enacts Purchase as Buyer, then Logistics as Merchant.
- :func:`concurrent_roles` (§5.2): one agent "ahoy" plays Purchase:Buyer and Logistics:Merchant at once, with the
  goal of Listing 1.6 (buy a glass vase, a ceramic plate and a wooden bat; wrap and ship them to Alice and Bob).
- :func:`branching` (§5.3): FlexiblePurchase (the corrected, live one) with an urgent, a cost-conscious and an
  ambiguous goal: express, standard, standard.
- :func:`external_event` (§5.4): a Buyer buying a pen gets "buy a trolley" from its event queue mid-enactment and
  starts a second enactment, with its own budget and address.

Every scenario takes ``seed`` and ``brain_factory(protocol_name, role, goal) -> decision maker`` for the Ahoy agent
(None: :func:`coordkit.ahoy.brains.brain_factory`, the rule brains); its counterparts are rule-based
(:mod:`coordkit.ahoy.counterparts`). A brain that calls an LLM reports its calls in an ``llm_calls`` attribute.
In §5.1 the paper's Buyer heard two competing Sellers; a Kiko system maps a role to one agent, so the kit's Buyer
hears one Seller.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import altair as alt
import pandas as pd

from coordkit import figures, viz
from coordkit.ahoy.brains import brain_factory as rule_brains
from coordkit.ahoy.counterparts import counterpart
from coordkit.ahoy.goal import Goal, Order
from coordkit.ahoy.termination import done
from coordkit.bspl.kiko import DecisionMaker, EnactmentModel, Event, ProtocolAgent, messages_frame
from coordkit.bspl.parser import load
from coordkit.bspl.protocol import Protocol
from coordkit.bspl.semantics import Form, Instance
from coordkit.paths import paper_numbers
from coordkit.seeds import derive_seeds

AHOY = "ahoy"
EXTERNAL = "external event"
BrainFactory = Callable[[str, str, Goal], DecisionMaker]

RALEIGH = "123 Main St, Raleigh, NC 27606"  # Listing 1.9
PEN = Goal(items=("pen",), budget=20, address=RALEIGH)
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
CONCURRENT = Goal(items=("glass vase", "ceramic plate", "wooden bat"), address="123 Main Street, Portland, OR 97201",
                  budgets={"glass vase": 100, "ceramic plate": 50, "wooden bat": 50}, orders=ORDERS, text=LISTING_1_6)
TROLLEY = {  # §5.4; the paper calls the event's address "address2" without printing it
    "event_type": "purchase_request", "message": "Purchase Request: Buy a trolley", "priority": "normal",
    "metadata": {"item": "trolley", "budget": 29.99, "address": "400 Warehouse Rd, Durham, NC 27701"},
}
SYSTEMS = {
    "Purchase": {"Buyer": AHOY, "Seller": "seller", "Shipper": "shipper"},
    "Logistics": {"Merchant": AHOY, "Wrapper": "wrapper", "Labeler": "labeler", "Packer": "packer"},
    "FlexiblePurchase": {"FlexibleCustomer": AHOY, "FlexibleMerchant": "merchant"},
}


@dataclass
class EventQueue:
    """External events as in the authors' JSON queue (``{"timestamp", "event_type", "message", "priority",
    "metadata"}``), on ``agent.events``: ``pending`` ones (a prompt shows them), and those a brain ``take`` s."""

    pending: list[dict] = field(default_factory=list)
    handled: list[dict] = field(default_factory=list)

    def take(self, event_type: str) -> list[dict]:
        taken = [e for e in self.pending if e["event_type"] == event_type]
        self.pending[:] = [e for e in self.pending if e["event_type"] != event_type]  # in place: brains hold it
        self.handled += taken
        return taken


@dataclass
class Seat:
    """The Ahoy agent's brain for one role: it sees only that role's forms, and its decisions are counted."""

    protocol: Protocol
    role: str
    brain: DecisionMaker
    decisions: int = 0

    def __call__(self, agent: ProtocolAgent, forms: list[Form], event: Event) -> list[Instance]:
        self.decisions += 1
        mine = [f for f in forms if f.schema.sender == self.role and f.schema in self.protocol.messages]
        return self.brain(agent, mine, event)


@dataclass
class Run:
    """One enactment: the scenario's name, the model after the run, the Ahoy agent's seats, time, termination."""

    scenario: str
    seed: int
    model: EnactmentModel
    seats: list[Seat]
    seconds: float
    terminated: bool

    @property
    def messages(self) -> pd.DataFrame:
        return messages_frame(self.model)

    def summary(self) -> dict:
        """Messages in all and sent by the Ahoy agent, per protocol, decisions, LLM calls, violations, termination,
        and the delivery a FlexiblePurchase run took."""
        log = self.messages
        return {"scenario": self.scenario, "seed": self.seed, "messages": len(log),
                "ahoy_messages": int((log["sender"] == AHOY).sum()),
                **{name: int((log["protocol"] == name).sum()) for name in SYSTEMS},
                "decisions": sum(s.decisions for s in self.seats),
                "llm_calls": sum(getattr(s.brain, "llm_calls", 0) for s in self.seats),
                "seconds": self.seconds, "violations": self.model.violations, "terminated": self.terminated,
                "delivery": delivery_path(self) if "FlexiblePurchase" in self.model.protocols else ""}


def inject(agent: ProtocolAgent, event: dict) -> None:
    """Queue an external event for ``agent`` and call its decision makers: an external event is a decision event
    (§3.3)."""
    agent.events.pending.append(event)
    happening = Event(EXTERNAL, step=agent.model.steps)
    for maker in agent.decision_makers:
        for instance in maker(agent, agent.enabled(), happening) or ():
            agent.emit(instance)


def enact(scenario: str, protocols: list[Protocol], goal: Goal, seed: int = 0,
          brain_factory: BrainFactory | None = None, events: dict[int, dict] | None = None,
          max_delay: int = 2, max_steps: int = 200, max_llm_calls: int | None = None,
          time_limit_s: float | None = None) -> Run:
    """Run ``protocols`` with the Ahoy agent (roles as in :data:`SYSTEMS`) pursuing ``goal`` and rule-based
    counterparts, injecting ``events`` ({step: event}) into the Ahoy agent's queue. Stops when every agent is done
    and nothing is in transit, or when nothing happens any more and no event is due, or at a limit: ``max_steps``,
    ``max_llm_calls`` (the Ahoy agent's LLM calls) or ``time_limit_s`` of wall time (§3.3's call and time limits)."""
    factory = brain_factory or rule_brains
    system = {p.name: SYSTEMS[p.name] for p in protocols}
    model = EnactmentModel(protocols, system, max_delay=max_delay, rng=seed)
    ahoy = model.agent(AHOY)
    ahoy.events = EventQueue()
    seats = []
    for protocol in protocols:
        for role, name in system[protocol.name].items():
            if name == AHOY:
                seats.append(ahoy.decision(Seat(protocol, role, factory(protocol.name, role, goal))))
            else:
                model.agent(name).decision(counterpart(protocol.name, role))
    events = dict(events or {})
    asked = []

    def finished() -> bool:
        return not model.in_transit and all(
            done(a, goal, asked) if a is ahoy else done(a) for a in model.by_name.values())

    start = time.perf_counter()
    for _ in range(max_steps):
        before = len(model.log)
        model.step()
        if model.steps in events:
            event = {"timestamp": model.steps, **events.pop(model.steps)}
            asked.append(event["metadata"]["item"])
            inject(ahoy, event)
        if finished() or (not events and not model.in_transit and len(model.log) == before):
            break
        calls = sum(getattr(seat.brain, "llm_calls", 0) for seat in seats)
        if (max_llm_calls is not None and calls >= max_llm_calls) or (
                time_limit_s is not None and time.perf_counter() - start > time_limit_s):
            break
    return Run(scenario, seed, model, seats, time.perf_counter() - start, finished())


def programming_freeness(seed: int = 0, brain_factory: BrainFactory | None = None) -> list[Run]:
    """§5.1: Purchase as Buyer (a pen, up to $20), then Logistics as Merchant (the orders of Listing 1.6), both
    from the same brain factory."""
    return [enact("freeness-purchase", [load("purchase")], PEN, seed, brain_factory),
            enact("freeness-logistics", [load("logistics")], Goal(orders=ORDERS), seed, brain_factory)]


def concurrent_roles(seed: int = 0, brain_factory: BrainFactory | None = None) -> Run:
    """§5.2 and appendix B: Purchase:Buyer and Logistics:Merchant at once, for the goal of Listing 1.6."""
    return enact("concurrent", [load("purchase"), load("logistics")], CONCURRENT, seed, brain_factory)


BRANCHES = {"urgent": "urgent", "cheapest": "cheapest", "ambiguous": ""}


def branching(seed: int = 0, brain_factory: BrainFactory | None = None) -> list[Run]:
    """§5.3: FlexiblePurchase (corrected: the published one is not live) for a pen, with an urgent, a
    cost-conscious and an ambiguous goal."""
    protocol = load("flexible_purchase_corrected")
    return [enact(f"branching-{name}", [protocol], Goal(items=("pen",), budget=20, address=RALEIGH, delivery=wish),
                  seed, brain_factory) for name, wish in BRANCHES.items()]


def delivery_path(run: Run) -> str:
    """Which delivery a FlexiblePurchase run took: "express", "standard", "both" or "none"."""
    sent = set(run.messages["message"])
    paths = [p for p in ("express", "standard") if f"{p}_delivery_request" in sent]
    return "both" if len(paths) == 2 else paths[0] if paths else "none"


def external_event(seed: int = 0, brain_factory: BrainFactory | None = None, at_step: int = 2) -> Run:
    """§5.4: a Buyer buying a pen ($20, Raleigh) receives "buy a trolley" ($29.99, another address) at ``at_step``."""
    return enact("external-event", [load("purchase")], PEN, seed, brain_factory, events={at_step: TROLLEY})


def all_scenarios(seed: int = 0, brain_factory: BrainFactory | None = None) -> list[Run]:
    return [*programming_freeness(seed, brain_factory), concurrent_roles(seed, brain_factory),
            *branching(seed, brain_factory), external_event(seed, brain_factory)]


def table(runs: list[Run]) -> pd.DataFrame:
    """One row per run (:meth:`Run.summary`)."""
    return pd.DataFrame([run.summary() for run in runs])


def compute(seeds: int = 1, base_seed: int = 0, brain_factory: BrainFactory | None = None) -> pd.DataFrame:
    """Every scenario for ``seeds`` seeds derived from ``base_seed``: one row per scenario and seed."""
    return table([run for seed in derive_seeds(base_seed, seeds) for run in all_scenarios(seed, brain_factory)])


def chart(frame: pd.DataFrame):
    """Messages per scenario (mean over seeds): in all, and sent by the Ahoy agent."""
    means = frame.groupby("scenario", sort=False)[["messages", "ahoy_messages"]].mean().reset_index()
    tidy = means.rename(columns={"messages": "all agents", "ahoy_messages": "the Ahoy agent"}).melt(
        "scenario", var_name="sent by", value_name="messages")
    bars = viz.bars(tidy, x="scenario", y="messages", color="sent by", title="Ahoy §5: messages per scenario")
    return bars.encode(x=alt.X("scenario", sort=list(means["scenario"]), axis=alt.Axis(labelAngle=-30)))


def compare(frame: pd.DataFrame) -> pd.DataFrame:
    """The paper's §5 numbers (data/papers/ahoy_scenarios.csv) beside the kit's means over seeds."""
    kit = frame.groupby("scenario").agg({"messages": "mean", "ahoy_messages": "mean", "Purchase": "mean",
                                         "Logistics": "mean", "decisions": "mean", "llm_calls": "mean",
                                         "seconds": "mean", "violations": "sum", "terminated": "all",
                                         "delivery": lambda paths: ", ".join(sorted(set(paths)))})
    shown = {
        "messages": lambda k: f"{k['messages']:g} in all, {k['ahoy_messages']:g} sent by the Ahoy agent",
        "purchase_messages": lambda k: f"{k['Purchase']:g} in all",
        "logistics_messages": lambda k: f"{k['Logistics']:g} in all",
        "llm_calls": lambda k: f"{k['llm_calls']:g} LLM calls, {k['decisions']:g} decisions",
        "seconds": lambda k: f"{k['seconds']:.3f} s",
        "violations": lambda k: f"{k['violations']:g} (all roles terminated: {bool(k['terminated'])})",
        "delivery": lambda k: k["delivery"],
    }
    paper = paper_numbers("ahoy_scenarios")
    rows = [(f"{p.scenario}: {p.metric}", p.text, shown[p.metric](kit.loc[p.scenario]))
            for p in paper.itertuples() if p.scenario in kit.index]
    return pd.DataFrame(rows, columns=["metric", "paper", "kit"])


FIGURE = figures.register(figures.Figure(
    id="ahoy-scenarios",
    description="Ahoy §5: the four scenarios with rule brains (messages, decisions, violations, termination)",
    compute=lambda seeds, base_seed: compute(seeds, base_seed),
    chart=chart,
    compare=compare,
    default_seeds=5,
))
