"""A Kiko-style programming model (Ahoy §2.2) on Mesa: agents play roles, decision makers pick from enabled forms.

- A :class:`ProtocolAgent` plays roles in one or more protocols. Its **decision makers** are called on start, on
  each reception and whenever its set of enabled messages changes (its own emissions included: the next step);
  each gets the enabled :class:`Form` s and the :class:`Event`, and returns the instances to send
  (``form.bind(...)``).
- The adapter checks every emission (:meth:`LocalState.check_emission`): a violation is counted and the instance is
  not sent — the decision maker cannot break the protocol.
- :class:`Enactment` is the machinery every model that enacts protocols shares: agents by name, an in-memory
  transport in which each message waits a seeded random number of steps (so arrival order varies by seed), the
  message log, the exchange of one step (deliveries, then every agent decides), violations, and the per-step frame.
  Each agent's messages draw their delays from the agent's own random stream, "delay" keyed by its name
  (:mod:`coordkit.streams`), one uniform a message mapped onto 1..``max_delay``: so an agent's k-th message is as
  quick, relative to ``max_delay``, whatever the other settings and whoever else plays.
  :class:`EnactmentModel` is the plain Kiko system built on it; :class:`coordkit.ahoy.AhoyEnactment` is another.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import mesa
import numpy as np
import pandas as pd

from coordkit.bspl.parser import load
from coordkit.bspl.protocol import Protocol
from coordkit.bspl.semantics import Form, Instance, LocalState, ProtocolViolation
from coordkit.model import Model
from coordkit.parameters import Instance as InstanceParam
from coordkit.parameters import Integer, ParameterError, Parameters
from coordkit.streams import purpose_word

START, RECEIVED, ENABLED = "start", "received", "enabled changed"
MESSAGE_COLUMNS = ["step", "protocol", "enactment", "message", "sender", "recipient", "instance"]


@dataclass(frozen=True)
class Event:
    """Why a decision maker is called: "start", "received" (with the instance) or "enabled changed"."""

    kind: str
    instance: Instance | None = None
    step: int = 0


DecisionMaker = Callable[["ProtocolAgent", list[Form], Event], Iterable[Instance]]
Cast = dict[str, dict[str, str]]  # {protocol name: {role: agent name}}: who plays which role


@dataclass(frozen=True)
class Delivery:
    """A message in transit: it reaches ``recipient`` at step ``due``."""

    instance: Instance
    recipient: str
    due: int


class ProtocolAgent(mesa.Agent):
    """An agent named ``name`` playing ``roles`` = {protocol name: (role, ...)}; decisions come from its makers."""

    def __init__(self, model: "Enactment", name: str, roles: dict[str, tuple[str, ...]]):
        super().__init__(model)
        self.name = name
        self.states = {p: LocalState(model.in_play[p], tuple(r)) for p, r in roles.items()}
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
        name = instance_or_protocol if isinstance(instance_or_protocol, str) else self.protocol_of(instance_or_protocol)
        return self.states[name]

    def protocol_of(self, instance: Instance) -> str:
        """The name of the protocol (among the agent's) that ``instance`` belongs to."""
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
            self.decide(event)

    def decide(self, event: Event) -> None:
        """Call every decision maker on ``event`` and emit what they choose."""
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


class Enactment:
    """The Kiko machinery, mixed into a :class:`coordkit.model.Model` that enacts protocols.

    The model calls :meth:`set_up_enactment` in its ``__init__`` (after ``Model.__init__``, which checks the
    parameters and seeds ``rng``) and then collects the initial state; its ``step`` calls :meth:`exchange` and
    collects. It needs a ``max_delay`` parameter: a message in transit arrives 1..``max_delay`` steps after it is
    sent (uniform, from its sender's "delay" stream). Decision makers draw fresh key values from the "keys" stream
    (``model.streams("keys")``).
    """

    max_delay: int
    random_streams = {
        "delay": (),  # per sender (keyed by its name): one uniform a message, whatever max_delay
        "keys": (),  # fresh values that decision makers mint for out keys (an rfq's ID), drawn whatever the settings
    }

    def set_up_enactment(
        self, protocols: Iterable[Protocol], cast: Cast, classes: Mapping[str, type[ProtocolAgent]] | None = None
    ) -> None:
        """Create one agent per name in ``cast`` (of ``classes[name]``, default :class:`ProtocolAgent`), the
        transport, the message log and the data collector (:meth:`reporters`)."""
        self.in_play = {p.name: p for p in protocols}  # the protocols enacted, by name
        self.cast = cast
        self.in_transit: list[Delivery] = []
        self.log: list[dict[str, Any]] = []
        self.by_name: dict[str, ProtocolAgent] = {}
        for name in sorted({agent for roles in cast.values() for agent in roles.values()}):
            roles = {p: tuple(r for r, a in assignment.items() if a == name) for p, assignment in cast.items()}
            agent_class = (classes or {}).get(name, ProtocolAgent)
            self.by_name[name] = agent_class(self, name, {p: r for p, r in roles.items() if r})
        self.datacollector = mesa.DataCollector(model_reporters=self.reporters())

    def agent(self, name: str) -> ProtocolAgent:
        return self.by_name[name]

    def transmit(self, sender: ProtocolAgent, instance: Instance) -> None:
        """Put ``instance`` in transit to the agent playing its recipient role, and log it."""
        protocol = sender.protocol_of(instance)
        recipient = self.cast[protocol][instance.schema.recipient]
        due = self.steps + 1 + int(self.delays_of(sender).random() * self.max_delay)
        self.in_transit.append(Delivery(instance, recipient, due))
        self.log.append(
            {
                "step": self.steps,
                "protocol": protocol,
                "enactment": enactment_of(self.in_play[protocol], instance),
                "message": instance.schema.name,
                "sender": sender.name,
                "recipient": recipient,
                "instance": str(instance),
            }
        )

    def delays_of(self, agent: ProtocolAgent) -> np.random.Generator:
        """The random stream of ``agent``'s message delays, keyed by its name: its own whoever else plays."""
        return self.streams("delay", purpose_word(agent.name))

    def exchange(self) -> None:
        """One step of the system: the messages due now reach their recipients' inboxes, then every agent (in
        name order) takes its receptions and decides."""
        due = [d for d in self.in_transit if d.due <= self.steps]
        self.in_transit = [d for d in self.in_transit if d.due > self.steps]
        for delivery in due:
            self.by_name[delivery.recipient].inbox.append(delivery.instance)
        for agent in self.by_name.values():
            agent.step()

    @property
    def violations(self) -> int:
        """Emissions the adapters refused, so far."""
        return sum(len(a.violations) for a in self.by_name.values())

    def reporters(self) -> dict[str, Callable]:
        """The frame's columns after ``step``: messages sent so far, messages in transit, violations so far."""
        return {
            "messages": lambda m: len(m.log),
            "in_transit": lambda m: len(m.in_transit),
            "violations": lambda m: m.violations,
        }

    def frame(self) -> pd.DataFrame:
        """One row per step (step 0 is the initial state), with the columns of :meth:`reporters`."""
        frame = self.datacollector.get_model_vars_dataframe().reset_index(drop=True)
        frame.insert(0, "step", range(len(frame)))
        return frame

    def messages(self) -> pd.DataFrame:
        """The message log, one row per message sent: step, protocol, enactment (:func:`enactment_of`), message,
        sender, recipient, instance."""
        return pd.DataFrame(self.log, columns=MESSAGE_COLUMNS)


def enactment_of(protocol: Protocol, instance: Instance) -> str:
    """The outermost enactment ``instance`` belongs to, named by its values of the keys every message of
    ``protocol`` carries ("pen-850624225"; in Logistics the order's ``orderID``); all its key values if there are
    no such keys."""
    keys = protocol.enactment_keys or protocol.keys_of(instance.schema)
    return ", ".join(str(instance.payload[key]) for key in keys)


def _protocols_are_given(values: dict) -> None:
    protocols = values["protocols"]
    if protocols is not None and (not protocols or not all(isinstance(p, Protocol) for p in protocols)):
        raise ParameterError(
            f"protocols={protocols!r}: give a non-empty list of Protocol objects "
            "(coordkit.bspl.load(name) or parse(text))"
        )


def _system_casts_given_protocols(values: dict) -> None:
    """The system names only protocols that were given, and casts every role of each it names."""
    system = values["system"] or {}
    given = {p.name: p for p in values["protocols"] or [load("purchase")]}
    unknown = sorted(set(system) - set(given))
    if unknown:
        raise ParameterError(
            f"system={system!r} names protocols {unknown} that were not given: "
            f"{sorted(given)}; give them in protocols, or leave them out of the system"
        )
    for name, cast in system.items():
        uncast = [role for role in given[name].roles if role not in cast]
        if uncast:
            raise ParameterError(
                f"system={system!r} leaves the roles {uncast} of {name} to nobody: give each an agent name"
            )


class EnactmentModel(Enactment, Model):
    """Agents enacting protocols through an in-memory transport with seeded asynchronous delivery (Kiko, Ahoy §2.2).

    Register decision makers on its agents (``model.agent("ahoy").decision(maker)``), then ``run()``: each step
    delivers the messages due and lets every agent decide; the run stops when nothing is in transit and nobody sent
    anything in a step, or after ``max_steps``. ``messages()`` is the message log.
    """

    parameters = Parameters(
        InstanceParam(
            "protocols",
            None,
            (list, tuple),
            optional="Purchase alone (the paper's Listing 1.11)",
            doc="the protocols in play (Protocol objects: coordkit.bspl.load or parse)",
        ),
        InstanceParam(
            "system",
            None,
            dict,
            optional="each role played by an agent named after it",
            doc="who plays which role, {protocol name: {role: agent name}} (Kiko's MAS configuration)",
        ),
        Integer(
            "max_delay",
            2,
            1,
            50,
            doc="a message arrives 1 to max_delay steps after it is sent (seeded)",
            unit="steps",
            slider=(1, 6),
        ),
        Integer("max_steps", 100, 1, 10_000, doc="the most steps a run takes", unit="steps", slider=(1, 200)),
        relations=(_protocols_are_given, _system_casts_given_protocols),
    )

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        protocols = list(self.protocols or [load("purchase")])
        cast = self.system or {p.name: {role: role for role in p.roles} for p in protocols}
        self.set_up_enactment(protocols, cast)
        self.datacollector.collect(self)

    def step(self) -> None:
        sent_before = len(self.log)
        self.exchange()
        self.datacollector.collect(self)
        quiet = not self.in_transit and len(self.log) == sent_before
        self.running = not quiet and self.steps < self.max_steps

    def summary(self) -> dict:
        """Steps played, messages sent, messages still in transit, violations."""
        return {
            "steps": self.steps,
            "messages": len(self.log),
            "in_transit": len(self.in_transit),
            "violations": self.violations,
        }
