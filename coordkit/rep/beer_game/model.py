"""The Beer Game (Sterman 1989) as a Mesa model, played by A2A, REP or base-stock players (REP paper §5).

A linear chain — retailer, wholesaler, distributor, factory (4 to 8 stages) — with order and shipping delays
between stages and a brewery behind the factory (production-request and production delays). Each round:

1. goods arrive from upstream; 2. orders arrive from downstream (the retailer sees customer demand);
3. every stage ships what it can of its backlog plus new order; 4. the protocol round — receive the
neighbours' messages, aggregate (REP), optional consensus, decide, send; 5. orders go into the mail;
6. each stage pays $0.50 per case held and $1.00 per case backlogged.
"""

import mesa
import numpy as np
import pandas as pd

from coordkit.llm import BudgetExceeded, LLMClient, aio
from coordkit.policies import LLMUse, RulePolicy
from coordkit.rep.beer_game.agents import A2APlayer, REPPlayer, Stage
from coordkit.rep.beer_game.llm_players import GameRules, a2a_policy, rep_policy
from coordkit.rep.beer_game.policies import ADJUSTMENT, TARGET, AnchorAndAdjust, BaseStock, REPOrdering
from coordkit.rep.beer_game.synthesis import RuleSynthesis, llm_synthesis
from coordkit.rep.protocol import InProcessTransport, Message, configure, configure_a2a, run_consensus

PROTOCOLS = ("a2a", "rep_numerical", "rep_textual", "base_stock")
STAGE_NAMES = ("retailer", "wholesaler", "distributor", "factory")
THETA_BOUNDS = {TARGET: (0.0, 60.0), ADJUSTMENT: (0.02, 1.0)}


class BeerGame(LLMUse, mesa.Model):
    """A supply chain of ``stages`` players facing a step in customer demand.

    Args:
        protocol: "a2a" (Sterman players sharing decisions and reasoning), "rep_numerical" / "rep_textual"
            (REP with the numerical or textual updater), or "base_stock" (the rational reference).
        stages: chain length, 4 to 8 (names beyond the classic four are "stage 5", ...).
        rounds: horizon (the paper plays 20).
        base_demand, step_round, step_size: customer demand is ``base_demand`` and rises by ``step_size`` from
            round ``step_round`` on (the paper: demand doubles at round 4).
        demand_noise: standard deviation of normal noise added to customer demand (0: the clean step).
        order_delay, shipping_delay: rounds an order, or a shipment, spends between two stages.
        production_request_delay, production_delay: the factory's delays to the brewery.
        initial_inventory: cases each stage holds at the start (pipelines start full of ``base_demand``).
        holding_cost, backlog_cost: dollars per case per round.
        player_spread: players' heuristic parameters are Sterman's means times U(1 − spread, 1 + spread),
            drawn per stage from the model's seed (0: identical players).
        consensus: None or "median_coordinate" (coordinate-wise median of θ over all players each round).
        llm: an LLMClient for the players: every A2A and REP player decides with the paper's call-1 prompt,
            and the textual updater synthesises with call 2; every reply that cannot be used falls back to the
            rules, counted in ``llm_fallbacks``. None (the default): rule-based players, no calls. Base-stock
            players always follow their rule.
        max_concurrency: with an LLM, one round's calls run concurrently, at most this many at a time.
        rng: seed.

    A run stopped by the LLM budget (:class:`~coordkit.llm.BudgetExceeded`) ends after the last complete
    round, with the reason in ``stopped``.
    """

    def __init__(
        self,
        protocol: str = "rep_textual",
        stages: int = 4,
        rounds: int = 20,
        base_demand: int = 4,
        step_round: int = 4,
        step_size: int = 4,
        demand_noise: float = 0.0,
        order_delay: int = 2,
        shipping_delay: int = 2,
        production_request_delay: int = 1,
        production_delay: int = 2,
        initial_inventory: int = 12,
        holding_cost: float = 0.5,
        backlog_cost: float = 1.0,
        player_spread: float = 0.2,
        consensus: str | None = None,
        llm: LLMClient | None = None,
        max_concurrency: int = aio.DEFAULT_CONCURRENCY,
        rng=None,
    ):
        super().__init__(rng=rng)
        check_parameters(locals())
        self.protocol = protocol
        self.rounds = rounds
        self.base_demand = base_demand
        self.step_round = step_round
        self.step_size = step_size
        self.demand_noise = demand_noise
        self.initial_inventory = initial_inventory
        self.holding_cost = holding_cost
        self.backlog_cost = backlog_cost
        self.customer_demand = self.brewed = self.delivered = float(base_demand)  # the steady state before round 1
        self.transport = InProcessTransport()
        self.llm = llm
        self.max_concurrency = max_concurrency
        self.rules = GameRules(stages, rounds, order_delay, shipping_delay, holding_cost, backlog_cost)
        self.synthesiser = llm_synthesis(llm) if llm is not None else RuleSynthesis()
        self.stopped = ""  # why the run ended early (the LLM budget), or "" when it played every round

        self.chain: list[Stage] = []
        for position in range(stages):
            is_factory = position == stages - 1
            mail = production_request_delay if is_factory else order_delay
            road = production_delay if is_factory else shipping_delay
            name = STAGE_NAMES[position] if stages == 4 or position < 3 else f"stage {position + 1}"
            name = "factory" if is_factory else name
            self.chain.append(Stage(self, name, position, mail + road, order_delay, road))
        for downstream, stage in zip(self.chain, self.chain[1:]):
            stage.downstream_id = downstream.unique_id
        for stage in self.chain:
            neighbours = [s.unique_id for s in self.chain if abs(s.position - stage.position) == 1]
            stage.client = self._client(stage, neighbours, consensus, player_spread)
        # the factory's orders go to the brewery, which starts brewing after the production-request delay
        self.brewery_orders = [float(base_demand)] * production_request_delay

        self.datacollector = mesa.DataCollector(
            model_reporters={
                "customer_demand": "customer_demand",
                "beer_in_system": lambda m: m.beer_in_system(),
                "brewed": "brewed",
                "delivered": "delivered",
            },
            agent_reporters={
                "stage": "name",
                "position": "position",
                "demand": "incoming_order",
                "order": "order",
                "received": "received",
                "shipped": "shipped",
                "inventory": "inventory",
                "backlog": "backlog",
                "supply_line": "supply_line",
                "cost": "round_cost",
                "target_inventory": lambda s: s.client.theta.get(TARGET, np.nan),
                "order_adjustment": lambda s: s.client.theta.get(ADJUSTMENT, np.nan),
                "message": "message",
            },
        )
        self.datacollector.collect(self)

    def _client(self, stage: Stage, neighbours: list[int], consensus: str | None, spread: float):
        """The stage's protocol client: same transport, topology and consensus for every protocol (§4)."""
        link = {"agent_id": stage.unique_id, "neighbours": neighbours, "transport": self.transport,
                "consensus": consensus}
        rule = sterman_player(self.rng, spread)
        if self.protocol in ("a2a", "base_stock"):
            if self.protocol == "base_stock":
                rule = BaseStock(desired_stock=self.initial_inventory)
            llm_player = self.llm is not None and self.protocol == "a2a"  # base-stock is the rational reference
            policy = a2a_policy(self.llm, RulePolicy(rule.decide), self.rules) if llm_player else None
            return configure_a2a(A2APlayer(stage, rule, policy), **link)
        ordering = REPOrdering(rule)
        policy = rep_policy(self.llm, RulePolicy(ordering.decide), self.rules) if self.llm is not None else None
        player = REPPlayer(stage, ordering, policy)
        if self.protocol == "rep_numerical":
            return configure(player, updater="numerical_grad", eta=0.5, bounds=THETA_BOUNDS, **link)
        return configure(player, updater="textual_grad", synthesiser=self.synthesiser, bounds=THETA_BOUNDS, **link)

    def demand_at(self, round_number: int) -> float:
        demand = self.base_demand + (self.step_size if round_number >= self.step_round else 0)
        if self.demand_noise > 0:
            demand += self.rng.normal(0.0, self.demand_noise)
        return float(max(0, int(demand + 0.5)))

    def describe(self, message: Message) -> str:
        """A neighbour's message as a player reads it: who ordered what, and why or how it would change."""
        words = message.sensitivity.text if message.sensitivity is not None else message.reasoning
        return f"{self.stage_name(message.sender)} ordered {message.decision}: {words}"

    def stage_name(self, unique_id: int) -> str:
        return next(stage.name for stage in self.chain if stage.unique_id == unique_id)

    def supplier_of(self, stage: Stage) -> str:
        return "the brewery" if stage is self.chain[-1] else f"the {self.chain[stage.position + 1].name}"

    def customer_of(self, stage: Stage) -> str:
        return "the customers" if stage is self.chain[0] else f"the {self.chain[stage.position - 1].name}"

    def beer_in_system(self) -> float:
        """Cases in stock or on the road (brewing included): changes only by brewing and customer deliveries."""
        return sum(s.inventory + sum(s.inbound_goods) for s in self.chain)

    def step(self) -> None:
        retailer, factory = self.chain[0], self.chain[-1]
        self.customer_demand = self.demand_at(self.steps)
        for stage in self.chain:
            stage.receive_goods()
        retailer.receive_order(self.customer_demand)
        for stage in self.chain[1:]:
            stage.receive_order(stage.inbound_orders.popleft())
        self.brewed = self.brewery_orders.pop(0)
        factory.inbound_goods.append(self.brewed)
        for downstream, stage in zip([None, *self.chain], self.chain):
            shipped = stage.ship()
            if downstream is not None:
                downstream.inbound_goods.append(shipped)
        self.delivered = retailer.shipped

        self._protocol_round()
        for stage in self.chain:
            stage.account(self.holding_cost, self.backlog_cost)
        self.datacollector.collect(self)
        if self.steps >= self.rounds:
            self.running = False

    def _protocol_round(self) -> None:
        """receive → sync → (consensus) → decide → send, then the orders go into the mail (REP §3.1)."""
        clients = [stage.client for stage in self.chain]
        for client in clients:
            client.receive()
        self._for_each(clients, "sync")
        run_consensus(clients)
        decisions = self._for_each(clients, "decide")
        for stage, client, (order, signal) in zip(self.chain, clients, decisions):
            client.send(order, signal)
            stage.place_order(order, signal if isinstance(signal, str) else signal.text)
        self.transport.deliver()
        for stage, upstream in zip(self.chain, self.chain[1:]):
            upstream.inbound_orders.append(stage.order)
        self.brewery_orders.append(self.chain[-1].order)

    def _for_each(self, clients: list, action: str) -> list:
        """Every client's ``sync`` or ``decide``; with an LLM, one round of concurrent calls (REP §3.1: the
        agents of a round act on the same information, so their calls are independent)."""
        if self.llm is None:
            return [getattr(client, action)() for client in clients]
        calls = (getattr(client, f"{action}_async")() for client in clients)
        return aio.run(aio.gather_bounded(calls, self.max_concurrency))

    def run(self) -> "BeerGame":
        """Play every round (``rounds``) and return the model; a budget stop ends it early (see ``stopped``)."""
        while self.running:
            try:
                self.step()
            except BudgetExceeded as stop:
                self.stopped = f"stopped after round {self.steps - 1}: {stop}"
                self.running = False
        return self

    def policies(self) -> list:
        """The players' policies and the synthesiser (the LLM ones are counted by :class:`LLMUse`)."""
        return [*(stage.client.agent.policy for stage in self.chain), self.synthesiser]


def sterman_player(rng: np.random.Generator, spread: float) -> AnchorAndAdjust:
    """Sterman's mean estimates (θ 0.36, α_S 0.26, β 0.34, S′ 17), each scaled by U(1 − spread, 1 + spread)."""
    scale = rng.uniform(1 - spread, 1 + spread, size=4)
    mean = AnchorAndAdjust()
    return AnchorAndAdjust(
        smoothing=min(1.0, mean.smoothing * scale[0]),
        stock_adjustment=mean.stock_adjustment * scale[1],
        supply_line_weight=min(1.0, mean.supply_line_weight * scale[2]),
        desired_stock=mean.desired_stock * scale[3],
    )


def check_parameters(p: dict) -> None:
    """Clear errors for parameters that would make the chain meaningless."""
    if p["protocol"] not in PROTOCOLS:
        raise ValueError(f"unknown protocol {p['protocol']!r}; choose one of {', '.join(PROTOCOLS)}")
    if not 2 <= p["stages"] <= 8:
        raise ValueError(f"stages={p['stages']}: a chain needs 2 to 8 stages (the paper plays 4 to 8)")
    if p["rounds"] < 1:
        raise ValueError(f"rounds={p['rounds']}: play at least one round")
    if not 1 <= p["step_round"] <= p["rounds"]:
        raise ValueError(
            f"step_round={p['step_round']} is outside the horizon 1..{p['rounds']}; "
            "use a step round within it, or raise rounds"
        )
    for name in ("order_delay", "shipping_delay", "production_request_delay", "production_delay"):
        if p[name] < 1:
            raise ValueError(f"{name}={p[name]}: delays are whole rounds >= 1 (1 = arrives next round)")
    for name in ("base_demand", "initial_inventory", "holding_cost", "backlog_cost", "demand_noise"):
        if p[name] < 0:
            raise ValueError(f"{name}={p[name]} must not be negative")
    if p["base_demand"] + p["step_size"] < 0:
        raise ValueError("step_size would make customer demand negative")
    if not 0 <= p["player_spread"] < 1:
        raise ValueError(f"player_spread={p['player_spread']} must be in [0, 1)")
    if p["max_concurrency"] < 1:
        raise ValueError(f"max_concurrency={p['max_concurrency']}: allow at least 1 LLM call at a time")
    if p["consensus"] not in (None, "median_coordinate"):
        raise ValueError(f"unknown consensus {p['consensus']!r}; use None or 'median_coordinate'")


def rounds_frame(model: BeerGame) -> pd.DataFrame:
    """One row per round and stage (round 0 is the initial state), with the customer demand of the round.

    Columns: round, stage, position, customer_demand, demand (incoming order), order, received, shipped,
    inventory, backlog, supply_line, cost, target_inventory, order_adjustment, message.
    """
    agents = model.datacollector.get_agent_vars_dataframe().reset_index()
    rounds = model.datacollector.get_model_vars_dataframe()["customer_demand"]
    agents = agents.rename(columns={"Step": "round"}).drop(columns="AgentID")
    agents["round"] = agents["round"].astype(int)
    agents.insert(3, "customer_demand", agents["round"].map(rounds.reset_index(drop=True)))
    return agents
