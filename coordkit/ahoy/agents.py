"""The Ahoy agent's pieces (§3): the agent with its queue of external events, and the seat that makes a policy a
Kiko decision maker for one role."""

from dataclasses import dataclass, field

from coordkit.ahoy.policies import Turn
from coordkit.bspl.kiko import Event, ProtocolAgent
from coordkit.bspl.protocol import Protocol
from coordkit.bspl.semantics import Form, Instance
from coordkit.policies import Policy

EXTERNAL = "external event"


@dataclass
class EventQueue:
    """External events as in the authors' JSON queue (``{"timestamp", "event_type", "message", "priority",
    "metadata"}``): the ``pending`` ones (a prompt shows them) and the ``handled`` ones, in the order they were
    handled. A rule brain :meth:`take` s the events of a type; the LLM access function :meth:`handle` s one."""

    pending: list[dict] = field(default_factory=list)
    handled: list[dict] = field(default_factory=list)

    def take(self, event_type: str) -> list[dict]:
        taken = [e for e in self.pending if e["event_type"] == event_type]
        self.pending[:] = [e for e in self.pending if e["event_type"] != event_type]
        self.handled += taken
        return taken

    def handle(self, event: dict) -> None:
        """Move ``event`` (the very object, if still pending) from pending to handled."""
        for index, pending in enumerate(self.pending):
            if pending is event:
                self.handled.append(self.pending.pop(index))
                return


class AhoyAgent(ProtocolAgent):
    """The Ahoy agent (§3): a Kiko agent whose roles are seated by policies, with a queue of external events."""

    def __init__(self, model, name: str, roles: dict[str, tuple[str, ...]]):
        super().__init__(model, name, roles)
        self.events = EventQueue()

    def inject(self, event: dict) -> None:
        """Queue an external event and call the decision makers: an external event is a decision event (§3.3)."""
        self.events.pending.append(event)
        self.decide(Event(EXTERNAL, step=self.model.steps))


@dataclass
class Seat:
    """A policy seated in one role of one protocol, as a Kiko decision maker ``(agent, forms, event)``: it shows
    the policy only that role's forms, as a :class:`~coordkit.ahoy.policies.Turn`, and counts its decisions."""

    protocol: Protocol
    role: str
    policy: Policy
    decisions: int = 0

    def __call__(self, agent: ProtocolAgent, forms: list[Form], event: Event) -> list[Instance]:
        self.decisions += 1
        mine = tuple(f for f in forms if f.schema.sender == self.role and f.schema in self.protocol.messages)
        return self.policy.decide(Turn(agent, mine, event))
