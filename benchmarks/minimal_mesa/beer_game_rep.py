"""The Beer Game's REP textual players (REP paper §5), in plain Mesa: the rules of ``coordkit.rep.beer_game`` with
protocol "rep_textual" and ``player_spread=0``, written out on ``beer_game.py``'s chain, to time the kit's model
against.

Each round, after the goods and orders of ``beer_game.py``'s chain move, every stage reads the sensitivity texts its
neighbours sent last round, takes the mean of the stock targets they state and its own pipeline's fill as its new
coordination variables (the rule-based synthesis), orders with them, anchored on the customer demand relayed from
downstream, and sends its sensitivity (numbers and the templated text) to its neighbours for the next round.
``same_orders`` checks that it plays the kit's rounds, order for order and θ for θ."""

import re

from minimal_mesa import beer_game

SMOOTHING, ADJUST, SUPPLY_WEIGHT, TARGET = 0.36, 0.26, 0.34, 17.0  # Sterman's mean player
BOUNDS = {"target_inventory": (0.0, 60.0), "order_adjustment": (0.02, 1.0)}
STATED_TARGET = re.compile(r"my stock target is (\d+(?:\.\d+)?)", re.I)
TREND = re.compile(r"my own orders in look (steady|temporary|persistent)", re.I)
SUPPLY = re.compile(r"\((\d+(?:\.\d+)?) rounds of supply for a (\d+)-round lead time\)", re.I)
NATURAL = re.compile(r"normally correct (\d+(?:\.\d+)?)% of a stock gap", re.I)


class Stage(beer_game.Stage):
    def __init__(self, model, name, position, order_delay, shipping_delay, lead_time):
        super().__init__(model, name, position, order_delay, shipping_delay)
        self.lead_time, self.supply_line = lead_time, model.base_demand * lead_time
        self.history = []
        self.theta = {"target_inventory": TARGET, "order_adjustment": ADJUST}
        self.sent = None  # (customer demand, text) of the last round
        self.inbox = []  # the neighbours' (position, customer demand, text) sent last round

    def order_for(self, inventory, backlog, theta, demand):
        gap = theta["target_inventory"] - (inventory - backlog) - SUPPLY_WEIGHT * self.supply_line
        return max(0.0, demand + theta["order_adjustment"] * gap)

    def synthesise(self):
        """The rule-based synthesis of the neighbours' texts and its own; θ ← θ − 1·(θ − proposal), clipped."""
        own = self.sent[1] if self.sent else ""
        texts = [own, *(text for _, _, text in self.inbox)]
        proposal = dict(self.theta)
        targets = [float(m[1]) for text in texts for m in STATED_TARGET.finditer(text)]
        if targets:
            proposal["target_inventory"] = sum(targets) / len(targets)
        supply, natural = SUPPLY.search(own), NATURAL.search(own)
        if supply and natural:
            fill = float(supply[1]) / max(float(supply[2]), 1.0)
            spike = any(m[1].lower() == "temporary" for _, _, text in self.inbox for m in TREND.finditer(text))
            proposal["order_adjustment"] = (
                float(natural[1]) / 100 * min(1.0, 1 / max(fill, 1e-9)) * (0.8 if spike else 1.0)
            )
        for name, (low, high) in BOUNDS.items():
            value = self.theta[name]
            self.theta[name] = min(max(value - 1.0 * (value - proposal[name]), low), high)

    def decide(self):
        """Order on the relayed customer demand with θ, and write the sensitivity the neighbours read next round."""
        forecast = SMOOTHING * self.incoming_order + (1 - SMOOTHING) * self.expected
        downstream = [demand for position, demand, _ in self.inbox if position == self.position - 1]
        demand = downstream[0] if downstream else forecast
        self.expected = forecast
        theta = self.theta
        self.order = float(int(self.order_for(self.inventory, self.backlog, theta, demand) + 0.5))
        extra = self.incoming_order * 0.10
        from_stock = min(extra, self.inventory)
        more = self.order_for(
            self.inventory - from_stock, self.backlog + extra - from_stock, theta, demand * 1.1
        ) - self.order_for(self.inventory, self.backlog, theta, demand)
        gap = self.inventory - self.backlog - theta["target_inventory"]
        self.sent = (demand, self.text(demand, more, gap))
        self.message = self.sent[1]
        self.supply_line += self.order
        self.history.append(self.incoming_order)

    def text(self, demand, more, gap):
        history = (*self.history[-4:], self.incoming_order)
        trend = "steady"
        if len(history) >= 3:
            before, last, now = history[-3:]
            if abs(now - before) > 0.1 * max(before, 1.0):
                trend = "persistent" if abs(now - last) <= 0.1 * max(last, 1.0) else "temporary"
        return (
            f"Customer demand looks like {demand:.1f} a round; my own orders in look {trend}. "
            f"If demand rises 10%, I'd order {more:.1f} more. "
            f"My stock target is {TARGET:.0f} and my stock is {abs(gap):.0f} {'above' if gap >= 0 else 'below'} my "
            f"current target, with {self.supply_line:.0f} on order ({self.supply_line / max(demand, 1e-9):.1f} rounds "
            f"of supply for a {self.lead_time}-round lead time). "
            f"I'd normally correct {ADJUST:.0%} of a stock gap a round."
        )


class BeerGame(beer_game.BeerGame):
    stage = Stage
    delays = [(2, 2, 4), (2, 2, 4), (2, 2, 4), (2, 2, 3)]  # (mail in, road in, lead time): the brewery's is 1 + 2

    def step(self):
        self.move_goods_and_orders()
        for stage in self.chain:
            if stage.inbox:
                stage.synthesise()
        for stage in self.chain:
            stage.decide()
        for stage in self.chain:  # what each sent reaches its neighbours next round
            stage.inbox = [(n.position, *n.sent) for n in self.chain if abs(n.position - stage.position) == 1]
        self.post_orders()


def one_game(seed: int) -> BeerGame:
    game = BeerGame(rng=seed)
    game.run_model()
    return game


def same_orders(kit_frame) -> bool:
    """Whether this model's orders and θ, round by round and stage by stage, are those of ``kit_frame`` (the kit's
    ``BeerGame(protocol="rep_textual", player_spread=0).run().frame()``)."""
    return beer_game.same_columns(one_game(0), kit_frame, ("order", "target_inventory", "order_adjustment"))
