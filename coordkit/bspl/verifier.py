"""Explore every enactment of a protocol and check safety and liveness, with a counterexample trace when one fails.

One enactment (one binding of the keys), asynchronous reliable delivery in any order: a state is the set of sent
messages with their bindings and the set of delivered ones. From a state, any role may send any message enabled for
it (by :mod:`~coordkit.bspl.semantics`' rules: ``in`` known, ``out`` and ``nil`` unknown, not sent before), and any
message in transit may arrive. An ``out`` binding is the symbolic value ``param@message``.

- **Safe**: no reachable state binds a parameter to two different values.
- **Live**: every state where nothing more can happen (nothing enabled, nothing in transit) binds every public
  parameter — the enactment can always complete.
"""

from collections import deque
from dataclasses import dataclass

from coordkit.bspl.protocol import MessageSchema, Protocol

Sent = frozenset[tuple[str, tuple[tuple[str, str], ...]]]


@dataclass(frozen=True)
class Report:
    """The verdict, the number of states explored, and a trace (events in order) for each property that fails."""

    protocol: str
    safe: bool
    live: bool
    states: int
    safety_counterexample: tuple[str, ...] = ()
    liveness_counterexample: tuple[str, ...] = ()
    unbound: tuple[str, ...] = ()  # the public parameters left unbound at the end of the liveness counterexample

    def __str__(self) -> str:
        lines = [
            f"{self.protocol}: {'safe' if self.safe else 'NOT safe'}, {'live' if self.live else 'NOT live'} "
            f"({self.states} states)"
        ]
        if not self.safe:
            lines += ["  conflict after: " + " → ".join(self.safety_counterexample)]
        if not self.live:
            lines += [
                "  stuck after: " + " → ".join(self.liveness_counterexample),
                f"  never bound: {', '.join(self.unbound)}",
            ]
        return "\n".join(lines)


def verify(protocol: Protocol) -> Report:
    """Explore every enactment of ``protocol`` (breadth first, so counterexamples are shortest; each state once)."""
    start: tuple[Sent, frozenset[str]] = (frozenset(), frozenset())
    parents: dict = {start: None}
    queue = deque([start])
    unsafe = stuck = None
    while queue:
        state = queue.popleft()
        sent, delivered = state
        if unsafe is None and _conflict(sent):
            unsafe = state
        moves = [(f"{m.sender}→{m.recipient}: {m.name}", _send(protocol, state, m)) for m in _enabled(protocol, state)]
        moves += [(f"{name} arrives", (sent, delivered | {name})) for name in _in_transit(state)]
        if not moves and stuck is None and _unbound(protocol, sent):
            stuck = state
        for label, successor in moves:
            if successor not in parents:
                parents[successor] = (state, label)
                queue.append(successor)
    return Report(
        protocol.name,
        unsafe is None,
        stuck is None,
        len(parents),
        _trace(parents, unsafe) if unsafe else (),
        _trace(parents, stuck) if stuck else (),
        tuple(_unbound(protocol, stuck[0])) if stuck else (),
    )


def _knowledge(protocol: Protocol, state, role: str) -> dict[str, str]:
    sent, delivered = state
    known: dict[str, str] = {}
    for name, bindings in sorted(sent):
        schema = protocol.message(name)
        if schema.sender == role or (schema.recipient == role and name in delivered):
            known.update(bindings)
    return known


def _enabled(protocol: Protocol, state) -> list[MessageSchema]:
    names = {name for name, _ in state[0]}
    enabled = []
    for schema in protocol.messages:
        if schema.name in names:
            continue
        known = _knowledge(protocol, state, schema.sender)
        if all(n in known for n in schema.ins) and not any(n in known for n in (*schema.outs, *schema.nils)):
            enabled.append(schema)
    return enabled


def _send(protocol: Protocol, state, schema: MessageSchema):
    sent, delivered = state
    known = _knowledge(protocol, state, schema.sender)
    bindings = {n: known[n] for n in schema.ins} | {n: f"{n}@{schema.name}" for n in schema.outs}
    return sent | {(schema.name, tuple(sorted(bindings.items())))}, delivered


def _in_transit(state) -> list[str]:
    sent, delivered = state
    return sorted(name for name, _ in sent if name not in delivered)


def _conflict(sent: Sent) -> bool:
    values: dict[str, str] = {}
    for _, bindings in sent:
        for name, value in bindings:
            if values.setdefault(name, value) != value:
                return True
    return False


def _unbound(protocol: Protocol, sent: Sent) -> list[str]:
    bound = {name for _, bindings in sent for name, _ in bindings}
    return [name for name in protocol.public_names if name not in bound]


def _trace(parents: dict, state) -> tuple[str, ...]:
    events = []
    while parents[state] is not None:
        state, label = parents[state]
        events.append(label)
    return tuple(reversed(events))
