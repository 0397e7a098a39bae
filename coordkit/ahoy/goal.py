"""What the user wants (§3.1): structured, so that a rule-based brain can pursue it and a prompt can state it."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Order:
    """One Logistics order: where it goes and which items it holds."""

    destination: str
    items: tuple[str, ...]


@dataclass(frozen=True)
class Goal:
    """A purchase goal (item, budget, address, delivery preference) and, for a merchant, the orders to prepare.

    ``delivery`` is "urgent", "cheapest" or "" (no preference). ``text`` is the goal in the user's words (the
    prompt's input.txt); :meth:`describe` writes one when it is empty.
    """

    items: tuple[str, ...] = ()
    budget: float = 0.0
    address: str = ""
    delivery: str = ""
    orders: tuple[Order, ...] = ()
    text: str = ""
    budgets: dict[str, float] = field(default_factory=dict)  # per-item budgets, overriding ``budget``

    def budget_for(self, item: str) -> float:
        return self.budgets.get(item, self.budget)

    def describe(self) -> str:
        if self.text:
            return self.text
        parts = []
        if self.items:
            wanted = ", ".join(f"a {i} up to ${self.budget_for(i):g}" for i in self.items)
            parts.append(f"I want to buy {wanted}, delivered to {self.address}.")
        if self.delivery == "urgent":
            parts.append("I want it delivered ASAP.")
        elif self.delivery == "cheapest":
            parts.append("I want the cheapest option.")
        for number, order in enumerate(self.orders, start=1):
            parts.append(f"Order {number}: destination {order.destination}, items: {' + '.join(order.items)}.")
        return " ".join(parts)
