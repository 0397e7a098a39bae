"""Explore every enactment of a protocol and check safety and liveness, with a counterexample trace when one fails.

One enactment (one binding of the keys), asynchronous reliable delivery in any order: a state is the set of sent
messages with their bindings and the set of delivered ones. From a state, any role may send any message enabled for
it (by :mod:`~coordkit.bspl.semantics`' rules: ``in`` known, ``out`` and ``nil`` unknown, not sent before), and any
message in transit may arrive. An ``out`` binding is the symbolic value ``param@message``.

- **Safe**: no reachable state binds a parameter to two different values.
- **Live**: every state where nothing more can happen (nothing enabled, nothing in transit) binds every public
  parameter — the enactment can always complete.

The number of states grows exponentially with the messages that can be sent independently (13 of them: millions),
so the search stops after ``max_states`` states and says so; the order is deterministic, and so is the report.
"""

import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral

from coordkit.bspl.protocol import Protocol

Sent = frozenset[tuple[str, tuple[tuple[str, str], ...]]]

# 14,000–20,000 states a second on the 13-independent-messages protocol (WIDE in tests/test_bspl_semantics.py) on
# the development machine: the limit in 2.5–3.5 s. More messages cost more per state. The paper's protocols have at
# most 375 states.
DEFAULT_MAX_STATES = 50_000
PROGRESS_EVERY = 10_000  # states explored between two calls of ``progress``


@dataclass(frozen=True)
class Report:
    """The verdict, the number of states explored, and a trace (events in order) for each property that fails.

    ``safe`` and ``live`` are True only when the search is ``complete`` and found no violation; False when it found
    one (a counterexample is real even in a partial search); None when the search stopped at ``max_states`` before
    finding any: unknown. ``states`` is the number of states explored (when complete, every reachable state).
    """

    protocol: str
    safe: bool | None
    live: bool | None
    states: int
    safety_counterexample: tuple[str, ...] = ()
    liveness_counterexample: tuple[str, ...] = ()
    unbound: tuple[str, ...] = ()  # the public parameters left unbound at the end of the liveness counterexample
    complete: bool = True  # False when the search stopped at max_states (then ``states`` is max_states)

    def __str__(self) -> str:
        safety = {True: "safe", False: "NOT safe", None: "safety unknown"}[self.safe]
        liveness = {True: "live", False: "NOT live", None: "liveness unknown"}[self.live]
        partial = f"too large to verify exhaustively; {self.states:,} states explored (max_states={self.states:,})"
        if self.complete:
            lines = [f"{self.protocol}: {safety}, {liveness} ({self.states} states)"]
        elif self.safe is None and self.live is None:
            lines = [f"{self.protocol}: {partial} — no conflict or stuck state among them"]
        else:
            lines = [f"{self.protocol}: {safety}, {liveness} — {partial}"]
        if self.safe is False:
            lines += [_wrapped("  conflict after: ", self.safety_counterexample)]
        if self.live is False:
            lines += [
                _wrapped("  stuck after: ", self.liveness_counterexample),
                _wrapped("  never bound: ", self.unbound, ", "),
            ]
        return "\n".join(lines)


def verify(
    protocol: Protocol,
    *,
    max_states: int = DEFAULT_MAX_STATES,
    progress: Callable[[int, int], object] | bool | None = None,
) -> Report:
    """Explore every enactment of ``protocol`` (breadth first, so counterexamples are shortest; each state once).

    Stops after ``max_states`` states with an incomplete :class:`Report`. ``progress(states_explored, waiting)`` is
    called every ``PROGRESS_EVERY`` states and once at the end; ``progress=True`` shows a line on stderr.
    """
    if isinstance(max_states, bool) or not isinstance(max_states, Integral) or max_states < 1:
        raise ValueError(f"max_states must be a positive integer (a number of states, e.g. 50000), got {max_states!r}")
    if not (progress is None or isinstance(progress, bool) or callable(progress)):
        raise TypeError(f"progress must be None, True or a function (states_explored, waiting), got {progress!r}")
    show = _stderr_progress(protocol.name) if progress is True else progress or None
    start: tuple[Sent, frozenset[str]] = (frozenset(), frozenset())
    parents: dict = {start: None}
    queue = deque([start])
    explored = 0
    unsafe = stuck = None
    moves_from = _Moves(protocol)
    while queue and explored < max_states:
        if show is not None and explored and explored % PROGRESS_EVERY == 0:
            show(explored, len(queue))
        state = queue.popleft()
        explored += 1
        if unsafe is None and _conflict(state[0]):
            unsafe = state
        moves = moves_from(state)
        if not moves and stuck is None and _unbound(protocol, state[0]):
            stuck = state
        for label, successor in moves:
            if successor not in parents:
                parents[successor] = (state, label)
                queue.append(successor)
    if show is not None:
        show(explored, len(queue))
        if progress is True:
            print(file=sys.stderr)
    complete = not queue
    return Report(
        protocol.name,
        False if unsafe is not None else (True if complete else None),
        False if stuck is not None else (True if complete else None),
        explored,
        _trace(parents, unsafe) if unsafe is not None else (),
        _trace(parents, stuck) if stuck is not None else (),
        tuple(_unbound(protocol, stuck[0])) if stuck is not None else (),
        complete,
    )


def _wrapped(label: str, items: tuple[str, ...], separator: str = " → ", width: int = 110) -> str:
    """``label`` then ``items`` joined by ``separator``, in lines of at most ``width`` characters broken only
    between items (a notebook would otherwise break an event's name in the middle)."""
    lines, line = [], label + (items[0] if items else "")
    for item in items[1:]:
        if len(line) + len(separator) + len(item) + len(separator.rstrip()) > width:  # room for the line's end
            lines.append(line + separator.rstrip())
            line = "    " + item
        else:
            line += separator + item
    return "\n".join([*lines, line])


def _stderr_progress(name: str) -> Callable[[int, int], None]:
    def show(explored: int, waiting: int) -> None:
        print(f"\rverifying {name}: {explored:,} states explored, {waiting:,} waiting", end="", file=sys.stderr)
        sys.stderr.flush()

    return show


class _Moves:
    """Every event possible in a state: a role sends an enabled message, or a message in transit arrives."""

    def __init__(self, protocol: Protocol):
        self.roles = protocol.roles
        self.ends = {m.name: (m.sender, m.recipient) for m in protocol.messages}
        self.arrivals = {m.name: f"{m.name} arrives" for m in protocol.messages}
        self.schemas = [  # computed once per message: name, sender, ins, outs and nils, out bindings, label
            (
                m.name,
                m.sender,
                frozenset(m.ins),
                frozenset((*m.outs, *m.nils)),
                [(n, f"{n}@{m.name}") for n in m.outs],
                f"{m.sender}→{m.recipient}: {m.name}",
            )
            for m in protocol.messages
        ]

    def __call__(self, state) -> list[tuple[str, tuple[Sent, frozenset[str]]]]:
        sent, delivered = state
        known: dict[str, dict[str, str]] = {role: {} for role in self.roles}
        for name, bindings in sorted(sent):  # sorted, never in set order: the same search whatever the hash seed
            sender, recipient = self.ends[name]
            known[sender].update(bindings)
            if name in delivered:
                known[recipient].update(bindings)
        names = {name for name, _ in sent}
        moves = []
        for name, sender, ins, excluded, outs, label in self.schemas:
            mine = known[sender]
            if name in names or not mine.keys() >= ins or not mine.keys().isdisjoint(excluded):
                continue
            bindings = tuple(sorted([(n, mine[n]) for n in ins] + outs))
            moves.append((label, (sent | {(name, bindings)}, delivered)))
        moves += [(self.arrivals[name], (sent, delivered | {name})) for name in sorted(names - delivered)]
        return moves


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
