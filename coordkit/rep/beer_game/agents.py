"""A Beer Game stage as a Mesa agent, and the two adapters that let REP or A2A wrap its ordering rule."""

from collections import deque

import mesa

from coordkit.policies import Policy
from coordkit.rep.beer_game.policies import AnchorAndAdjust, BaseStock, REPOrdering, REPSituation, StageObservation
from coordkit.rep.protocol import Message, Sensitivity, Theta


class Stage(mesa.Agent):
    """One echelon of the chain: its books (inventory, backlog, supply line) and its inbound pipelines.

    ``inbound_orders`` holds the orders of the stage downstream that are still in the mail; ``inbound_goods``
    the shipments from upstream still on the road (for the factory: beer being brewed). Both are FIFO queues
    whose length is the delay (Sterman 1989).
    """

    def __init__(self, model, name: str, position: int, lead_time: int, order_delay: int, shipping_delay: int):
        super().__init__(model)
        self.name = name
        self.position = position
        self.lead_time = lead_time
        base = model.base_demand
        self.inventory = float(model.initial_inventory)
        self.backlog = 0.0
        self.inbound_orders = deque([float(base)] * order_delay)
        self.inbound_goods = deque([float(base)] * shipping_delay)
        self.supply_line = float(base) * lead_time
        self.expected_demand = float(base)
        self.demand_history: list[float] = []
        self.incoming_order = self.received = self.shipped = self.order = float(base)  # the steady state
        self.round_cost = 0.0
        self.message = ""
        self.client = None  # a REPClient or A2AClient, set by the model
        self.downstream_id = None  # the unique_id of the stage it ships to (None for the retailer)

    def observation(self, neighbour_messages: list[Message] = ()) -> StageObservation:
        """What this stage knows when it orders, its neighbours' last messages included (as text)."""
        return StageObservation(
            stage=self.name,
            round=self.model.steps,
            incoming_order=self.incoming_order,
            inventory=self.inventory,
            backlog=self.backlog,
            supply_line=self.supply_line,
            expected_demand=self.expected_demand,
            lead_time=self.lead_time,
            demand_history=tuple(self.demand_history[-4:]),
            neighbour_notes=tuple(self.model.describe(message) for message in neighbour_messages),
            neighbour_orders=tuple((self.model.stage_name(m.sender), m.decision) for m in neighbour_messages),
            supplier=self.model.supplier_of(self),
            customer=self.model.customer_of(self),
        )

    def receive_goods(self) -> None:
        self.received = self.inbound_goods.popleft()
        self.inventory += self.received
        self.supply_line -= self.received

    def receive_order(self, quantity: float) -> None:
        self.incoming_order = quantity

    def ship(self) -> float:
        """Fill the backlog and this round's order from inventory; what cannot be shipped is backlogged."""
        wanted = self.backlog + self.incoming_order
        self.shipped = min(self.inventory, wanted)
        self.inventory -= self.shipped
        self.backlog = wanted - self.shipped
        return self.shipped

    def place_order(self, quantity: float, message: str) -> None:
        self.order = quantity
        self.supply_line += quantity
        self.message = message
        self.demand_history.append(self.incoming_order)

    def account(self, holding_cost: float, backlog_cost: float) -> None:
        self.round_cost = holding_cost * self.inventory + backlog_cost * self.backlog


class A2APlayer:
    """The A2A baseline's player: orders and explains in words (REP paper §4).

    ``policy`` decides from the stage's observation: by default the player's own ordering rule, or an LLM policy
    (:mod:`~coordkit.rep.beer_game.llm_policies`) falling back to that rule. The rule also keeps the stage's
    demand forecast, whoever decides.
    """

    def __init__(self, stage: Stage, rule: AnchorAndAdjust | BaseStock, policy: Policy | None = None):
        self.stage = stage
        self.rule = rule
        self.policy = policy or rule

    def private_state(self) -> Theta:
        return {}

    def decide(self, neighbour_messages: list[Message]) -> tuple[int, str]:
        return self.policy.decide(self._observe(neighbour_messages))

    async def decide_async(self, neighbour_messages: list[Message]) -> tuple[int, str]:
        return await self.policy.decide_async(self._observe(neighbour_messages))

    def _observe(self, neighbour_messages: list[Message]) -> StageObservation:
        seen = self.stage.observation(neighbour_messages)
        self.stage.expected_demand = self.rule.forecast(seen)
        return seen


class REPPlayer:
    """The REP player: orders with its coordination variables θ and sends a sensitivity (REP paper §5).

    ``policy`` decides from a :class:`REPSituation`: by default :class:`REPOrdering`, or an LLM policy
    falling back to it.
    """

    def __init__(self, stage: Stage, rule: REPOrdering, policy: Policy | None = None):
        self.stage = stage
        self.rule = rule
        self.policy = policy or rule

    def initial_theta(self) -> Theta:
        return self.rule.initial_theta()

    def decide(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[int, Sensitivity]:
        return self.policy.decide(self._observe(theta, neighbour_messages))

    async def decide_async(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[int, Sensitivity]:
        return await self.policy.decide_async(self._observe(theta, neighbour_messages))

    def _observe(self, theta: Theta, neighbour_messages: list[Message]) -> REPSituation:
        seen = self.stage.observation(neighbour_messages)
        situation = REPSituation(seen, theta, self.customer_demand(seen, neighbour_messages))
        self.stage.expected_demand = self.rule.forecast(seen)
        return situation

    def customer_demand(self, seen: StageObservation, neighbour_messages: list[Message]) -> float:
        """The retailer forecasts customer demand; every other stage relays what its downstream neighbour said."""
        downstream = self.stage.downstream_id
        for message in neighbour_messages:
            if message.sender == downstream and message.sensitivity is not None:
                return message.sensitivity.values.get("customer_demand", self.rule.forecast(seen))
        return self.rule.forecast(seen)
