"""A rule-based stand-in that answers the Ahoy prompts in the paper's JSON format — not an LLM.

It reads what an LLM would read: the user's goal in the system prompt (Listing 1.8, the goal as
:meth:`~coordkit.ahoy.goal.Goal.describe` or Listing 1.6 writes it), and in the user prompt (Listing 1.10) the
pending external events, the message history and the numbered options. It then chooses one option as the rule
brains would, most urgent first:

- Buyer: an rfq for a wanted item (the goal's, or a pending purchase request's) not yet requested; accept a quote
  within the item's budget, reject one above; ``completed`` once the outcome is known.
- Merchant: RequestLabel for an order not labelled yet; RequestWrapping for an item of a labelled order once it is
  at hand (delivered, when the agent buys it too).
- FlexibleCustomer: rfq; accept an offer within budget; the delivery the goal wishes (express when urgent);
  pay for it.

One thing it cannot know: the budget and address of a purchase request that has left the prompt (the access
function handled the event when the rfq went out). It then answers in words, so the access function falls back to
the Buyer's rule brain, which reads them from the agent's queue: one counted fallback per such quote.

``coordkit record ahoy-scenarios --stand-in`` makes a recording with it, labelled as the stand-in's.
"""

import json
import re
from dataclasses import dataclass, field

from coordkit.llm import LLMRequest

GOAL_START = "Your user wants you to fulfill the goal described in input.txt contents:\n"
GOAL_END = "\n\nTo accomplish this goal"
OPTION = re.compile(r"^(\d+)\) (\w+)/(\w+)(?: \[in: (.*)\])? - out: \[(.*)\]$", re.M)
ENTRY = re.compile(r"^\d+\. (\w+) \(from (\w+) to (\w+)\)\n((?:   .*\n?)*)", re.M)


@dataclass
class Wish:
    """The goal as the stand-in reads it: items with budgets and an address, a delivery wish, orders."""

    budgets: dict[str, float] = field(default_factory=dict)
    addresses: dict[str, str] = field(default_factory=dict)
    delivery: str = "standard"
    orders: list[tuple[str, list[str]]] = field(default_factory=list)  # (destination, items)


@dataclass(frozen=True)
class Option:
    index: int
    protocol: str
    message: str
    known: dict[str, str]


def reply(request: LLMRequest) -> str:
    prompt = request.messages[0][1]
    wish = read_goal(request.system)
    for event in pending_events(prompt):
        meta = event.get("metadata") or {}
        if event.get("event_type") == "purchase_request" and "item" in meta:
            wish.budgets.setdefault(meta["item"], float(meta["budget"]))
            wish.addresses.setdefault(meta["item"], meta["address"])
    history = read_history(prompt)
    options = [
        Option(int(i), protocol, message, _pairs(known)) for i, protocol, message, known, _ in OPTION.findall(prompt)
    ]
    buys = re.search(r"^Role: .*\bBuyer \(in ", prompt, re.M) is not None
    for choose in (_buyer, _merchant, _flexible_customer):
        answer = choose(options, wish, history, buys)
        if answer is not None:
            return answer
    return _choice(None)


def read_goal(system: str) -> Wish:
    """The goal text of the system prompt, read in both the kit's words and Listing 1.6's."""
    text = system.split(GOAL_START, 1)[-1].split(GOAL_END, 1)[0]
    wish = Wish(delivery="express" if "ASAP" in text else "standard")
    address = re.search(r", delivered to (.*?)\.(?:\s|$)", text) or re.search(r"Delivery location: (.*)", text)
    for item, budget in re.findall(r"\ba (.+?) up to \$([\d.]+)", text) + re.findall(
        r"- An? (.+?) upto \$([\d.]+)", text
    ):
        wish.budgets[item] = float(budget)
        wish.addresses[item] = address[1].strip() if address else ""
    for destination, items in re.findall(r"Order \d+: destination (.+?), items: (.+?)\.(?:\s|$)", text) + re.findall(
        r"\d+\. Destination: (.+?), Items: (.*)", text
    ):
        wish.orders.append((destination, [item.strip() for item in items.split(" + ")]))
    return wish


def pending_events(prompt: str) -> list[dict]:
    """The metadata and type of each pending external event."""
    return [
        {"event_type": kind, "metadata": json.loads(meta)}
        for kind, meta in re.findall(r"^\d+\. \[\w+\] (\w+) at .*\n   metadata: (\{.*\})$", prompt, re.M)
    ]


def read_history(prompt: str) -> list[tuple[str, dict[str, str]]]:
    """(message, bindings) for each entry of the message history, in order."""
    block = prompt.split("=== MESSAGE HISTORY ===", 1)[-1].split("=== END HISTORY", 1)[0]
    return [(name, dict(re.findall(r"^   (\w+): (.*)$", body, re.M))) for name, _, _, body in ENTRY.findall(block)]


def _pairs(known: str) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=([^,]*(?:, (?!\w+=)[^,]*)*)", known)) if known else {}


def _choice(option: Option | None, **params) -> str:
    return json.dumps({"choice": None if option is None else option.index, "params": params, "tool_requests": []})


def _first(options: list[Option], protocol: str, message: str, test=lambda option: True) -> Option | None:
    return next((o for o in options if o.protocol == protocol and o.message == message and test(o)), None)


def _sent(history, message: str, **where) -> list[dict[str, str]]:
    return [b for name, b in history if name == message and all(b.get(k) == v for k, v in where.items())]


def _buyer(options, wish: Wish, history, buys: bool) -> str | None:
    rfq = _first(options, "Purchase", "rfq")
    new = [item for item in wish.budgets if not _sent(history, "rfq", item=item)]
    if rfq is not None and new:
        return _choice(rfq, item=new[0])
    for option in (o for o in options if o.protocol == "Purchase" and o.message in ("accept", "reject")):
        item, price = option.known["item"], float(option.known["price"])
        if item not in wish.budgets:
            return f"I cannot tell the budget for {item!r}: it is not in my prompt any more."
        if (option.message == "accept") == (price <= wish.budgets[item]):
            if option.message == "accept":
                return _choice(option, address=wish.addresses[item], resp="accepted")
            return _choice(option, outcome="rejected: over budget", resp="rejected")
    for option in (o for o in options if o.protocol == "Purchase" and o.message == "completed"):
        outcome = [
            b["outcome"]
            for b in _sent(history, "deliver", ID=option.known["ID"]) + _sent(history, "reject", ID=option.known["ID"])
        ]
        if outcome:
            return _choice(option, satisfaction="satisfied" if outcome[0] == "delivered" else "none")
    return None


def _merchant(options, wish: Wish, history, buys: bool) -> str | None:
    labels = _sent(history, "RequestLabel")
    labelled: dict[str, int] = {}
    for label in labels:
        index = next(
            (
                n
                for n, (destination, _) in enumerate(wish.orders)
                if destination == label["address"] and n not in labelled.values()
            ),
            None,
        )
        if index is not None:
            labelled[label["orderID"]] = index
    request_label = _first(options, "Logistics", "RequestLabel")
    waiting = [n for n in range(len(wish.orders)) if n not in labelled.values()]
    if request_label is not None and waiting:
        return _choice(request_label, address=wish.orders[waiting[0]][0])
    delivered = {b["item"] for b in _sent(history, "deliver", outcome="delivered")}
    for option in (o for o in options if o.protocol == "Logistics" and o.message == "RequestWrapping"):
        order_id = option.known["orderID"]
        if order_id not in labelled:
            continue
        done = {b["item"] for b in _sent(history, "RequestWrapping", orderID=order_id)}
        ready = [
            item
            for item in wish.orders[labelled[order_id]][1]
            if item not in done and (not buys or item not in wish.budgets or item in delivered)
        ]
        if ready:
            return _choice(option, item=ready[0])
    return None


def _flexible_customer(options, wish: Wish, history, buys: bool) -> str | None:
    rfq = _first(options, "FlexiblePurchase", "rfq")
    new = [item for item in wish.budgets if not _sent(history, "rfq", item=item)]
    if rfq is not None and new:
        return _choice(rfq, item=new[0])
    accept = _first(
        options,
        "FlexiblePurchase",
        "accept",
        lambda o: float(o.known["price"]) <= wish.budgets.get(o.known["item"], -1),
    )
    if accept is not None:
        return _choice(accept, confirmation="confirmed")
    request = _first(options, "FlexiblePurchase", f"{wish.delivery}_delivery_request")
    if request is not None:
        return _choice(request, **{f"{wish.delivery}_delivery": wish.delivery})
    pay = _first(options, "FlexiblePurchase", f"pay_{wish.delivery}")
    if pay is not None:
        return _choice(pay, payment=f"${pay.known['price']}")
    return None
