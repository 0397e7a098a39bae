"""A Kiko-style programming model (Ahoy §2.2) on Mesa: agents play roles, decision makers pick from enabled forms.

- A :class:`ProtocolAgent` plays roles in one or more protocols. Its **decision makers** are called on start, on
  each reception and whenever its set of enabled messages changes (its own emissions included: the next step); each gets the enabled :class:`Form` s and the
  :class:`Event`, and returns the instances to send (``form.bind(...)``).
- The adapter checks every emission (:meth:`LocalState.check_emission`): a violation is counted and the instance is
  not sent — the decision maker cannot break the protocol.
- The :class:`EnactmentModel` is the Mesa model. Each step delivers the messages due this step (each message in
  transit waits a seeded random number of steps, so arrival order varies by seed), then lets every agent decide.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import mesa
import pandas as pd

from coordkit.bspl.protocol import Protocol
from coordkit.bspl.semantics import Form, Instance, LocalState, ProtocolViolation

START, RECEIVED, ENABLED = "start", "received", "enabled changed"


@dataclass(frozen=True)
class Event:
    """Why a decision maker is called: "start", "received" (with the instance) or "enabled changed"."""

    kind: str
    instance: Instance | None = None
    step: int = 0


DecisionMaker = Callable[["ProtocolAgent", list[Form], Event], Iterable[Instance]]


@dataclass
class Delivery:
    instance: Instance
    recipient: str
    due: int


class ProtocolAgent(mesa.Agent):
    """An agent named ``name`` playing ``roles`` = {protocol name: (role, ...)}; decisions come from its makers."""

    def __init__(self, model: "EnactmentModel", name: str, roles: dict[str, tuple[str, ...]]):
        super().__init__(model)
        self.name = name
        self.states = {p: LocalState(model.protocols[p], tuple(r)) for p, r in roles.items()}
        self.decision_makers: list[DecisionMaker] = []
        self.inbox: list[Instance] = []
        self.violations: list[str] = []
        self.sent_count = 0
        self._last_enabled: tuple = ()
        self.started = False

    def decision(self, maker: DecisionMaker) -> DecisionMaker:
        """Register a decision maker (usable as a decorator, like Kiko's ``@adapter.decision``)."""
        self.decision_makers.append(maker)
        return maker

    def enabled(self) -> list[Form]:
        return [form for state in self.states.values() for form in state.enabled()]

    def state_of(self, instance_or_protocol) -> LocalState:
        name = instance_or_protocol if isinstance(instance_or_protocol, str) else self._protocol_of(instance_or_protocol)
        return self.states[name]

    def _protocol_of(self, instance: Instance) -> str:
        for name, state in self.states.items():
            if any(m is instance.schema for m in state.protocol.messages):
                return name
        raise KeyError(f"{self.name} does not play the protocol of {instance.schema.name}")

    def step(self) -> None:
        """Take this step's receptions, then decide on start, on each reception, and when the enabled set changed."""
        events = [] if self.started else [Event(START, step=self.model.steps)]
        self.started = True
        for instance in self.inbox:
            self.state_of(instance).receive(instance)
            events.append(Event(RECEIVED, instance, self.model.steps))
        self.inbox = []
        enabled = self.enabled()
        signature = tuple((f.schema.name, f.known) for f in enabled)
        if signature != self._last_enabled and not events:
            events.append(Event(ENABLED, step=self.model.steps))
        self._last_enabled = signature
        for event in events:
            for maker in self.decision_makers:
                for instance in maker(self, self.enabled(), event) or ():
                    self.emit(instance)

    def emit(self, instance: Instance) -> bool:
        """Send ``instance`` if the protocol allows it now; otherwise count the violation and send nothing."""
        try:
            self.state_of(instance).send(instance)
        except ProtocolViolation as violation:
            self.violations.append(str(violation))
            return False
        self.sent_count += 1
        self.model.transmit(self, instance)
        return True


class EnactmentModel(mesa.Model):
    """Agents enacting protocols through an in-memory transport with seeded asynchronous delivery.

    Args:
        protocols: the protocols in play, by name.
        system: {protocol name: {role: agent name}} — who plays which role (Kiko's MAS configuration).
        max_delay: a message in transit arrives 1..``max_delay`` steps after it is sent (uniform, seeded).
        rng: seed.
    """

    def __init__(self, protocols: Iterable[Protocol], system: dict[str, dict[str, str]], max_delay: int = 2, rng=None):
        super().__init__(rng=rng)
        if max_delay < 1:
            raise ValueError(f"max_delay={max_delay}: messages need at least one step to arrive")
        self.protocols = {p.name: p for p in protocols}
        unknown = sorted(set(system) - set(self.protocols))
        if unknown:
            raise ValueError(f"the system names protocols {unknown} that were not given: {sorted(self.protocols)}")
        self.system = system
        self.max_delay = max_delay
        self.in_transit: list[Delivery] = []
        self.log: list[dict[str, Any]] = []
        self.by_name: dict[str, ProtocolAgent] = {}
        names = sorted({agent for roles in system.values() for agent in roles.values()})
        for name in names:
            roles = {p: tuple(r for r, a in assignment.items() if a == name) for p, assignment in system.items()}
            self.by_name[name] = ProtocolAgent(self, name, {p: r for p, r in roles.items() if r})

    def agent(self, name: str) -> ProtocolAgent:
        return self.by_name[name]

    def transmit(self, sender: ProtocolAgent, instance: Instance) -> None:
        protocol = sender._protocol_of(instance)
        recipient = self.system[protocol][instance.schema.recipient]
        due = self.steps + int(self.rng.integers(1, self.max_delay + 1))
        self.in_transit.append(Delivery(instance, recipient, due))
        self.log.append({"step": self.steps, "protocol": protocol, "message": instance.schema.name,
                         "sender": sender.name, "recipient": recipient, "instance": str(instance)})

    def step(self) -> None:
        due = [d for d in self.in_transit if d.due <= self.steps]
        self.in_transit = [d for d in self.in_transit if d.due > self.steps]
        for delivery in due:
            self.by_name[delivery.recipient].inbox.append(delivery.instance)
        for agent in self.by_name.values():
            agent.step()

    def run(self, max_steps: int = 100, until: Callable[["EnactmentModel"], bool] | None = None) -> "EnactmentModel":
        """Step until ``until`` holds, or nothing is in transit and nobody sent anything, or ``max_steps``."""
        for _ in range(max_steps):
            before = len(self.log)
            self.step()
            if (until is not None and until(self)) or (not self.in_transit and len(self.log) == before):
                break
        return self

    @property
    def violations(self) -> int:
        return sum(len(a.violations) for a in self.by_name.values())


def messages_frame(model: EnactmentModel) -> pd.DataFrame:
    """One row per message sent: step, protocol, message, sender, recipient, instance."""
    return pd.DataFrame(model.log, columns=["step", "protocol", "message", "sender", "recipient", "instance"])
