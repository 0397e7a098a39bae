"""When a role is done (Ahoy §3.1): termination conditions inferred from the protocol, not written per role.

The paper's examples: Purchase's Buyer ends by sending ``completed``, Logistics' Merchant by receiving ``Packed``.
The kit derives such conditions with one general rule:

- A role's **final messages** are the messages it sends or receives that bind something (an ``out`` parameter)
  which none of the role's messages needs as ``in``: nothing the role does depends on them. Buyer: ``reject``,
  ``deliver``, ``completed``. Merchant: ``Packed``. FlexibleCustomer: ``receipt``.
- A role is **finished in an enactment** (a maximal binding of keys in its history: order o1 *and* item i1, not
  order o1 alone once an item of it exists) when a final message of the enactment is in its history and no
  enabled message of the role continues that enactment.

So a Buyer that received ``deliver`` is not finished while ``completed`` is enabled; a Buyer that rejected must
send ``completed`` too, because the protocol still enables it (the paper's condition: "sending completed"). A
FlexibleCustomer that paid waits for ``receipt``: the delivery messages bind nothing, so they are not final.

:func:`done` adds the goal: an agent is done when it is finished in every enactment it took part in and every
item of its goal appears in a finished enactment of each protocol in which it chooses items (binds ``out item``).
"""

from collections.abc import Iterable
from typing import Any

from coordkit.ahoy.goal import Goal
from coordkit.bspl.kiko import ProtocolAgent
from coordkit.bspl.protocol import MessageSchema, Protocol
from coordkit.bspl.semantics import Form, LocalState


def final_messages(protocol: Protocol, role: str) -> tuple[MessageSchema, ...]:
    """The role's messages that bind parameters none of the role's messages takes as ``in``."""
    mine = [m for m in protocol.messages if role in (m.sender, m.recipient)]
    needed = {name for m in mine for name in m.ins}
    return tuple(m for m in mine if m.outs and not needed & set(m.outs))


def enactments(state: LocalState) -> list[dict[str, Any]]:
    """The enactments in this history: key bindings not contained in another one, first seen first."""
    bindings = list({tuple(sorted(i.key_bindings.items())): i.key_bindings for i in state.history}.values())
    return [b for b in bindings if not any(b.items() < other.items() for other in bindings)]


def continues(protocol: Protocol, form: Form, context: dict[str, Any]) -> bool:
    """Whether ``form`` continues the enactment ``context`` (a form with an ``out`` key starts a new one)."""
    keys = protocol.keys_of(form.schema)
    known = dict(form.known)
    return all(form.schema.adornment(k) == "in" for k in keys) and {k: known[k] for k in keys} == context


def finished(state: LocalState, context: dict[str, Any]) -> bool:
    """Whether the agent's roles in ``state`` are done in the enactment ``context`` (see the module's rule)."""
    final = {m.name for role in state.roles for m in final_messages(state.protocol, role)}
    reached = any(i.schema.name in final and i.key_bindings == context for i in state.history)
    return reached and not any(continues(state.protocol, f, context) for f in state.enabled())


def goal_items(goal: Goal | None) -> set[str]:
    """Every item the goal names: to buy, and in the orders to prepare."""
    if goal is None:
        return set()
    return set(goal.items) | {item for order in goal.orders for item in order.items}


def chooses_items(state: LocalState) -> bool:
    """Whether the agent's roles here pick items themselves (Buyer's rfq, Merchant's RequestWrapping)."""
    return any("item" in m.outs for m in state.protocol.messages if m.sender in state.roles)


def done(agent: ProtocolAgent, goal: Goal | None = None, extra_items: Iterable[str] = ()) -> bool:
    """Whether ``agent`` has finished every enactment it took part in and covered its goal's items (and
    ``extra_items``, e.g. from external events) in every protocol where it chooses items."""
    wanted = goal_items(goal) | set(extra_items)
    for state in agent.states.values():
        contexts = enactments(state)
        closed = [c for c in contexts if finished(state, c)]
        if len(closed) < len(contexts):
            return False
        if chooses_items(state):
            covered = {state.knowledge(c).get("item") for c in closed}
            if not wanted <= covered:
                return False
    return True
