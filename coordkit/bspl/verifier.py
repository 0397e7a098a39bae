"""Explore every enactment of a protocol and check safety and liveness, with a counterexample trace when one fails.

One enactment (one binding of the keys), asynchronous reliable delivery in any order: a state is the set of sent
messages with their bindings and the set of delivered ones (a message to several recipients arrives at each on its
own). From a state, any role may send any message enabled for it (by :mod:`~coordkit.bspl.semantics`' rules: ``in``
known, ``out`` and ``nil`` unknown, not sent before), and any message in transit may arrive. An ``out`` binding is
the symbolic value ``param@message``. The protocol's own ``in`` parameters come from outside: every role knows them
from the start. A message that binds a key ``out`` starts an enactment: once one has, another such message would
start a second, explored on its own, so it is not enabled in this one (Singh 2011; the reference agrees).

- **Safe**: in no reachable state do two roles bind one parameter ``out`` in one key context (messages whose key
  parameters are the same names), as the reference checks it: a role cannot contradict itself there (it knows what
  it bound), and messages with other keys bind it in other enactments.
- **Live**: every state where nothing more can happen (nothing enabled, nothing in transit) binds every ``out``
  parameter of the protocol — the enactment can always complete (``opt``, ``any`` and ``nil`` ones may stay
  unbound, as in the reference's ``bspl verify liveness``).

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
    unused: tuple[str, ...] = ()  # parameters some sent message binds (``out``) and none reads (``in``, ``nil``)

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
        if unsafe is None and moves_from.conflict(state[0]):
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
        _unused(protocol, {name for sent, _ in parents for name, _ in sent} | moves_from.sendable),
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
        # a protocol's `in` parameters come from outside: every role knows them from the start (Singh 2011)
        self.given = {p.name: f"{p.name}@in" for p in protocol.parameters if p.adornment == "in"}
        self.senders = {m.name: m.sender for m in protocol.messages}
        # a delivery to each recipient: named by the message alone when it has one (``"rfq"``), else by message and
        # recipient (``"offer@Bank"``); each with its event's label
        self.deliveries = {
            m.name: {
                (m.name if len(m.recipients) == 1 else f"{m.name}@{r}"): (
                    r,
                    f"{m.name} arrives" + (f" at {r}" if len(m.recipients) > 1 else ""),
                )
                for r in m.recipients
            }
            for m in protocol.messages
        }
        self.inert = _inert(protocol)
        self.names = {m.name: frozenset(m.names) for m in protocol.messages}
        keys = {m.name: frozenset(protocol.keys_of(m)) for m in protocol.messages}  # each message's key context
        self.schemas = [  # once per message: name, sender, keys, ins, outs and nils, out keys, out bindings, label
            (
                m.name,
                m.sender,
                keys[m.name],
                frozenset(m.ins),
                frozenset((*m.outs, *m.nils)),
                keys[m.name].intersection(m.outs),
                [(n, f"{n}@{m.name}") for n in m.outs],
                f"{m.sender}→{', '.join(m.recipients)}: {m.name}",
            )
            for m in protocol.messages
            if m.name not in self.inert
        ]
        self.inert_schemas = [
            (m.name, m.sender, keys[m.name], frozenset(m.ins), frozenset((*m.outs, *m.nils)))
            for m in protocol.messages
            if m.name in self.inert
        ]
        self.sendable: set[str] = set()  # inert messages enabled in some state explored
        # for safety: the parameters each message binds `out`, under its key context
        self.bound_in = {m.name: [(p, keys[m.name]) for p in m.outs] for m in protocol.messages}

    def conflict(self, sent: Sent) -> bool:
        """Whether two roles bind one parameter ``out`` in one key context (the reference's safety,
        ``check_all_parameter_conflicts``): messages with other keys bind it in other enactments."""
        sources: dict = {}
        for name, _ in sent:
            for bound in self.bound_in[name]:
                sources.setdefault(bound, set()).add(self.senders[name])
        return any(len(roles) > 1 for roles in sources.values())

    def __call__(self, state) -> list[tuple[str, tuple[Sent, frozenset[str]]]]:
        sent, delivered = state
        seen: dict[str, list] = {role: [] for role in self.roles}  # per role: what it sent or received
        for name, bindings in sorted(sent):  # sorted, never in set order: the same search whatever the hash seed
            instance = (self.names[name], bindings)
            seen[self.senders[name]].append(instance)
            for delivery, (recipient, _) in self.deliveries[name].items():
                if delivery in delivered:
                    seen[recipient].append(instance)
        knowing: dict = {}

        def known(role: str, keys: frozenset[str]) -> dict[str, str]:
            if (role, keys) not in knowing:
                knowing[(role, keys)] = _knowledge(seen[role], keys, self.given)
            return knowing[(role, keys)]

        names = {name for name, _ in sent}
        keyed = {n for _, bindings in sent for n, _ in bindings}
        moves = []
        for name, sender, keys, ins, excluded, out_keys, outs, label in self.schemas:
            if name in names:
                continue
            if out_keys and out_keys <= keyed:  # it would start another enactment, explored on its own
                continue
            mine = known(sender, keys)
            if not mine.keys() >= ins or not mine.keys().isdisjoint(excluded):
                continue
            bindings = tuple(sorted([(n, mine[n]) for n in ins] + outs))
            moves.append((label, (sent | {(name, bindings)}, delivered)))
        for name, sender, keys, ins, excluded in self.inert_schemas:
            if name not in self.sendable:
                mine = known(sender, keys)
                if mine.keys() >= ins and mine.keys().isdisjoint(excluded):
                    self.sendable.add(name)
        moves += [
            (label, (sent, delivered | {delivery}))
            for name in sorted(names)
            for delivery, (_, label) in self.deliveries[name].items()
            if delivery not in delivered
        ]
        return moves


def _knowledge(seen: list, keys: frozenset[str], given: dict[str, str]) -> dict[str, str]:
    """What a role knows in the context of a message whose key parameters are ``keys`` (the reference's ``known``):
    the bindings of the messages it saw that name a parameter of the context, the context growing by what each
    brings (so that a message linked through another belongs to it), and the protocol's ``in`` parameters. A
    message whose own ``key`` marks put it in another context (``getData[in request key, ...]``) tells nothing
    here."""
    known, context, left = dict(given), set(keys), list(seen)
    grew = True
    while grew:
        grew = False
        for instance in list(left):
            names, bindings = instance
            if not context.isdisjoint(names):
                known.update(bindings)
                context.update(name for name, _ in bindings)
                left.remove(instance)
                grew = True
    return known


def _unbound(protocol: Protocol, sent: Sent) -> list[str]:
    """The protocol's ``out`` parameters that ``sent`` leaves unbound (``in`` ones are given; ``opt``, ``any`` and
    ``nil`` ones need not be bound, as in the reference's liveness)."""
    bound = {name for _, bindings in sent for name, _ in bindings}
    return [p.name for p in protocol.parameters if p.adornment == "out" and p.name not in bound]


def _inert(protocol: Protocol) -> set[str]:
    """The messages whose sending changes no verdict, left out of the search (a partial-order reduction): every
    parameter they bind ``out`` is private, no key, bound by no other message and read (``in``, ``nil``) by none,
    and their recipients send no message that names any parameter they carry. Such a message enables and disables
    nothing, cannot conflict (its ``in`` values copy what its sender knows) and binds nothing liveness asks for, so
    the states with and without it agree on every verdict; the verifier notes only whether it can be sent
    (``unused``)."""
    public = set(protocol.public_names)
    keys = {name for m in protocol.messages for name in protocol.keys_of(m)}
    binders: dict[str, int] = {}
    read = set()
    for m in protocol.messages:
        for name in m.outs:
            binders[name] = binders.get(name, 0) + 1
        read.update(m.ins, m.nils)

    def silent(m) -> bool:  # nothing its recipients could use: none of them sends a message naming what it carries
        return all(set(m.names).isdisjoint(other.names) for r in m.recipients for other in protocol.sent_by(r))

    return {
        m.name
        for m in protocol.messages
        if m.outs
        and all(n not in public and n not in keys and binders[n] == 1 and n not in read for n in m.outs)
        and silent(m)
    }


def _unused(protocol: Protocol, sent: set[str]) -> tuple[str, ...]:
    """As the reference's ``bspl verify unused``: bound ``out`` by a message that can be sent, and read (``in``) or
    excluded (``nil``) by none that can."""
    messages = [m for m in protocol.messages if m.name in sent]
    read = {name for m in messages for name in (*m.ins, *m.nils)}
    return tuple(sorted({name for m in messages for name in m.outs} - read))


def _trace(parents: dict, state) -> tuple[str, ...]:
    events = []
    while parents[state] is not None:
        state, label = parents[state]
        events.append(label)
    return tuple(reversed(events))
