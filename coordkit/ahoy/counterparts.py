"""The Ahoy agent's counterparts (§5): rule-based, as in the authors' code (quotes by item keyword,
``shipped=True``, ``outcome="delivered"``). Each answers every enabled form of its role at once.

``counterpart(protocol_name, role)`` returns the decision maker for Purchase's Seller and Shipper, Logistics'
Labeler, Wrapper and Packer, and FlexiblePurchase's FlexibleMerchant.
"""

from collections.abc import Callable

from coordkit.bspl.kiko import DecisionMaker, Event, ProtocolAgent
from coordkit.bspl.semantics import Form, Instance

# Prices by keyword; the paper's §5.2 quotes are $42 (glass vase), $27 (ceramic plate) and $39 (wooden bat).
PRICES = {"pen": 4, "vase": 42, "plate": 27, "bat": 39, "trolley": 25}
OTHER_PRICE = 10  # an item the table does not name
FRAGILE = ("glass", "ceramic")


def price_of(item: str) -> int:
    """The price of the first word of ``item`` that the table names ("glass vase" costs 42)."""
    return next((PRICES[w] for w in item.lower().split() if w in PRICES), OTHER_PRICE)


def wrapping_for(item: str) -> str:
    """"fragile" for glass and ceramic items, "standard" for the rest."""
    return "fragile" if any(material in item.lower() for material in FRAGILE) else "standard"


Outs = Callable[[dict], dict]

RULES: dict[tuple[str, str], dict[str, Outs]] = {
    ("Purchase", "Seller"): {"quote": lambda k: {"price": price_of(k["item"])}, "ship": lambda k: {"shipped": True}},
    ("Purchase", "Shipper"): {"deliver": lambda k: {"outcome": "delivered"}},
    ("Logistics", "Labeler"): {"Labeled": lambda k: {"label": f"label to {k['address']}"}},
    ("Logistics", "Wrapper"): {"Wrapped": lambda k: {"wrapping": wrapping_for(k["item"])}},
    ("Logistics", "Packer"): {"Packed": lambda k: {"status": "packed"}},
    ("FlexiblePurchase", "FlexibleMerchant"): {
        "offer": lambda k: {"price": price_of(k["item"])},
        "standard_delivery": lambda k: {},
        "express_delivery": lambda k: {},
        "receipt": lambda k: {"done": True},
    },
}


def counterpart(protocol_name: str, role: str) -> DecisionMaker:
    """The rule-based decision maker for ``role`` in ``protocol_name``."""
    if (protocol_name, role) not in RULES:
        known = ", ".join(f"{p}:{r}" for p, r in RULES)
        raise KeyError(f"no counterpart for {protocol_name}:{role}; there are counterparts for {known}")
    rules = RULES[protocol_name, role]

    def decide(agent: ProtocolAgent, forms: list[Form], event: Event) -> list[Instance]:
        protocol = agent.states[protocol_name].protocol
        return [form.bind(protocol, **rules[form.schema.name](dict(form.known)))
                for form in forms if form.schema.sender == role and form.schema.name in rules]

    return decide
