"""The Beer Game with Sterman's (1989) anchor-and-adjust players, in plain Mesa: four stages, an order delay and a
shipping delay between stages, a production-request delay and a production delay at the brewery, and a
DataCollector with the kit's reporters (``coordkit.rep.beer_game``, protocol "a2a", ``player_spread=0``)."""

from collections import deque

import mesa

NAMES = ("retailer", "wholesaler", "distributor", "factory")


class Stage(mesa.Agent):
    def __init__(self, model, name, position, order_delay, shipping_delay):
        super().__init__(model)
        base = model.base_demand
        self.name, self.position = name, position
        self.lead_time = order_delay + shipping_delay
        self.inventory, self.backlog = 12.0, 0.0
        self.inbound_orders = deque([base] * 2)
        self.inbound_goods = deque([base] * shipping_delay)
        self.supply_line = base * self.lead_time
        self.expected = base
        self.incoming_order = self.received = self.shipped = self.order = base
        self.cost, self.message = 0.0, ""
        self.theta = {"target_inventory": float("nan"), "order_adjustment": float("nan")}  # no REP here

    def decide(self):
        """O = max(0, L̂ + α_S·(S′ − S − β·SL)), L̂ ← θ·L + (1 − θ)·L̂ (Sterman's 0.36, 0.26, 0.34, 17)."""
        self.expected = 0.36 * self.incoming_order + 0.64 * self.expected
        gap = 17.0 - (self.inventory - self.backlog) - 0.34 * self.supply_line
        self.order = float(int(max(0.0, self.expected + 0.26 * gap) + 0.5))
        self.supply_line += self.order
        self.message = f"Ordering {self.order:.0f}: demand looks like {self.expected:.1f}/round"


class BeerGame(mesa.Model):
    stage = Stage
    delays = [(2, 2), (2, 2), (2, 2), (1, 2)]  # (mail, road); the factory's are the brewery's

    def __init__(self, rounds=20, base_demand=4.0, step_round=4, step_size=4.0, rng=None):
        super().__init__(rng=rng)
        self.rounds, self.base_demand, self.step_round, self.step_size = rounds, base_demand, step_round, step_size
        self.customer_demand = self.brewed = self.delivered = base_demand
        self.chain = [self.stage(self, NAMES[i], i, *self.delays[i]) for i in range(4)]
        self.brewery_orders = deque([base_demand])
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "customer_demand": "customer_demand",
                "beer_in_system": lambda m: sum(s.inventory + sum(s.inbound_goods) for s in m.chain),
                "brewed": "brewed",
                "delivered": "delivered",
            },
            agent_reporters={
                "stage": "name",
                "position": "position",
                "customer_demand": lambda s: s.model.customer_demand,
                "demand": "incoming_order",
                "order": "order",
                "received": "received",
                "shipped": "shipped",
                "inventory": "inventory",
                "backlog": "backlog",
                "supply_line": "supply_line",
                "cost": "cost",
                "target_inventory": lambda s: s.theta["target_inventory"],
                "order_adjustment": lambda s: s.theta["order_adjustment"],
                "message": "message",
                "orders_in_mail": lambda s: tuple(s.model.mail_of(s)),
                "goods_on_road": lambda s: tuple(s.inbound_goods),
            },
        )
        self.datacollector.collect(self)

    def mail_of(self, stage):
        """The orders ``stage`` placed that its supplier (for the factory, the brewery) has not received yet."""
        return self.brewery_orders if stage is self.chain[-1] else self.chain[stage.position + 1].inbound_orders

    def step(self):
        self.move_goods_and_orders()
        for stage in self.chain:
            stage.decide()
        self.post_orders()

    def move_goods_and_orders(self):
        """Goods arrive, orders are read, the brewery brews, every stage ships what it can."""
        demand = self.base_demand + (self.step_size if self.steps >= self.step_round else 0.0)
        self.customer_demand = demand
        for stage in self.chain:
            stage.received = stage.inbound_goods.popleft()
            stage.inventory += stage.received
            stage.supply_line -= stage.received
        self.chain[0].incoming_order = demand
        for stage in self.chain[1:]:
            stage.incoming_order = stage.inbound_orders.popleft()
        self.brewed = self.brewery_orders.popleft()
        self.chain[-1].inbound_goods.append(self.brewed)
        for position, stage in enumerate(self.chain):
            wanted = stage.backlog + stage.incoming_order
            stage.shipped = min(stage.inventory, wanted)
            stage.inventory -= stage.shipped
            stage.backlog = wanted - stage.shipped
            if position > 0:
                self.chain[position - 1].inbound_goods.append(stage.shipped)
        self.delivered = self.chain[0].shipped

    def post_orders(self):
        """The orders go into the mail (the factory's to the brewery); the round's costs; the reporters."""
        for stage, upstream in zip(self.chain, self.chain[1:]):
            upstream.inbound_orders.append(stage.order)
        self.brewery_orders.append(self.chain[-1].order)
        for stage in self.chain:
            stage.cost = 0.5 * stage.inventory + 1.0 * stage.backlog
        self.datacollector.collect(self)
        self.running = self.steps < self.rounds


def one_game(seed: int) -> BeerGame:
    game = BeerGame(rng=seed)
    game.run_model()
    return game


def same_columns(game: BeerGame, kit_frame, columns=("order",)) -> bool:
    """Whether ``game``'s ``columns``, round by round and stage by stage, are those of the kit's ``kit_frame``."""
    ours = game.datacollector.get_agent_vars_dataframe().reset_index()
    return ours[list(columns)].to_numpy().tolist() == kit_frame[list(columns)].to_numpy().tolist()
