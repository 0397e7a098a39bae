"""The Beer Game (Sterman 1989) as a Mesa model, played by A2A, REP or base-stock players (REP paper §5).

A linear chain — retailer, wholesaler, distributor, factory (4 to 8 stages) — with order and shipping delays
between stages and a brewery behind the factory (production-request and production delays). Each round:

1. goods arrive from upstream; 2. orders arrive from downstream (the retailer sees customer demand);
3. every stage ships what it can of its backlog plus new order; 4. the protocol round — receive the
neighbours' messages, aggregate (REP), optional consensus, decide, send; 5. orders go into the mail;
6. each stage pays $0.50 per case held and $1.00 per case backlogged.
"""

from typing import Any

import mesa
import numpy as np
import pandas as pd

from coordkit.contests import Population
from coordkit.model import Model
from coordkit.parameters import Choice, Instance, Integer, ParameterError, Parameters, PolicyChoice, Real
from coordkit.policies import Policy, llm_parameters
from coordkit.policy_registry import fresh_policy, per_agent
from coordkit.rep.beer_game import metrics
from coordkit.rep.beer_game.agents import A2APlayer, REPPlayer, Stage
from coordkit.rep.beer_game.llm_policies import GameRules, a2a_policy, rep_policy, synthesis_policy
from coordkit.rep.beer_game.policies import (
    ADJUSTMENT,
    TARGET,
    AnchorAndAdjust,
    BaseStock,
    REPOrdering,
    RuleSynthesis,
    StudentOrders,
)
from coordkit.rep.protocol import Message, NeighbourMulticast, consensus_parameter
from coordkit.rep.protocol_network import ProtocolNetwork
from coordkit.rep.records import agent_columns, agent_table

PROTOCOLS = ("a2a", "rep_numerical", "rep_textual", "base_stock")
PROTOCOL_NAMES = {
    "a2a": "A2A",
    "rep_numerical": "REP numerical",
    "rep_textual": "REP textual",
    "base_stock": "base-stock",
}
STAGE_NAMES = ("retailer", "wholesaler", "distributor", "factory")
THETA_BOUNDS = {TARGET: (0.0, 60.0), ADJUSTMENT: (0.02, 1.0)}


def _step_within_horizon(p: dict) -> None:
    if p["step_round"] > p["rounds"]:
        raise ParameterError(
            f"step_round={p['step_round']} is after the last round (rounds={p['rounds']}): "
            "use a step round within the horizon, or raise rounds"
        )


def _demand_never_negative(p: dict) -> None:
    if p["base_demand"] + p["step_size"] < 0:
        raise ParameterError(
            f"step_size={p['step_size']} would make customer demand negative "
            f"(base_demand={p['base_demand']}): use a step_size of at least {-p['base_demand']}"
        )


class BeerGame(Model):
    """A supply chain of ``stages`` players facing a step in customer demand: customer demand is ``base_demand``
    and rises by ``step_size`` from round ``step_round`` on (the paper: it doubles at round 4). Stages beyond the
    classic four are named "stage 5", ...

    With ``llm``, every A2A and REP player decides with the paper's call-1 prompt and the textual updater
    synthesises with call 2; a reply that cannot be used falls back to the rules, counted in ``llm_fallbacks``.
    Base-stock players always follow their rule (the rational reference). A run stopped by the LLM budget raises
    :class:`~coordkit.llm.BudgetExceeded` from ``run()``; ``frame()`` then holds the rounds played before it.

    With ``policy`` (issue 45), every stage orders with a student's rule instead: a function of the stage's
    :class:`~coordkit.rep.beer_game.policies.StageObservation` that returns whole cases or an
    :class:`~coordkit.rep.beer_game.policies.Order` (branch on its ``stage`` for a rule per stage), a Policy or a
    registered name. The rule replaces the order alone: under REP the stage still sends its sensitivity and the
    protocol still updates θ; under A2A it sends the rule's message, or its own reasoning about that order. The
    stage's demand forecast is kept as ever. With an LLM too, the rule orders and the LLM synthesises (call 2).
    """

    parameters = Parameters(
        Choice(
            "protocol",
            "rep_textual",
            PROTOCOLS,
            labels=PROTOCOL_NAMES,
            doc="how players coordinate: A2A (decisions and reasoning), REP with the numerical or the textual "
            "updater, or base-stock (the rational reference, no messages)",
        ),
        Integer("stages", 4, 2, 8, doc="chain length (the paper plays 4 to 8)"),
        Integer("rounds", 20, 1, 500, doc="horizon (the paper plays 20)", unit="rounds", slider=(4, 60)),
        Integer("base_demand", 4, 0, 1000, doc="customer demand before the step", unit="cases", slider=(0, 12)),
        Integer("step_round", 4, 1, 500, doc="the round from which demand is stepped up", unit="round", slider=(1, 20)),
        Integer(
            "step_size", 4, -1000, 1000, doc="the change of customer demand at the step", unit="cases", slider=(-4, 12)
        ),
        Real(
            "demand_noise",
            0.0,
            0,
            100,
            doc="standard deviation of normal noise on customer demand (0: the clean step)",
            unit="cases",
            step=0.5,
            slider=(0, 5),
        ),
        Integer(
            "order_delay",
            2,
            1,
            20,
            doc="rounds an order spends in the mail between two stages",
            unit="rounds",
            slider=(1, 4),
        ),
        Integer(
            "shipping_delay",
            2,
            1,
            20,
            doc="rounds a shipment spends on the road between two stages",
            unit="rounds",
            slider=(1, 4),
        ),
        Integer(
            "production_request_delay",
            1,
            1,
            20,
            doc="rounds the factory's order takes to reach the brewery",
            unit="rounds",
            slider=(1, 4),
        ),
        Integer(
            "production_delay", 2, 1, 20, doc="rounds the brewery takes to brew an order", unit="rounds", slider=(1, 4)
        ),
        Integer(
            "initial_inventory",
            12,
            0,
            1000,
            doc="cases each stage holds at the start (pipelines start full of base_demand)",
            unit="cases",
            slider=(0, 40),
        ),
        Real("holding_cost", 0.5, 0, 100, doc="cost of a case in stock for a round", unit="$", slider=(0, 2)),
        Real("backlog_cost", 1.0, 0, 100, doc="cost of a case of backlog for a round", unit="$", slider=(0, 4)),
        Real(
            "smoothing",
            0.36,
            0,
            1,
            doc="forecast smoothing θ: the weight a player's demand forecast gives this round's incoming order, "
            "L̂ ← θ·L + (1 − θ)·L̂ (Sterman 1989's mean estimate 0.36)",
            step=0.01,
        ),
        Real(
            "stock_adjustment",
            0.26,
            0,
            1,
            doc="α_S, the share of its stock gap a player orders to close each round (Sterman's 0.26); "
            "REP players start their order adjustment here",
            step=0.01,
        ),
        Real(
            "supply_line_weight",
            0.34,
            0,
            1,
            doc="β, the share of its supply line (ordered, not yet received) a player counts when it orders "
            "(Sterman's 0.34; 1: all of it, as base-stock players do)",
            step=0.01,
        ),
        Real(
            "desired_stock",
            17.0,
            0,
            60,
            doc="S′, the stock a player aims for (Sterman's 17); REP players start their target inventory here",
            unit="cases",
            step=1.0,
        ),
        Real(
            "player_spread",
            0.2,
            0,
            1,
            high_open=True,
            doc="each A2A or REP player's θ, α_S, β and S′ are the values above "
            "times U(1 - spread, 1 + spread), drawn per stage, θ and β at most 1 (0: identical players)",
            slider=(0, 0.95),
        ),
        consensus_parameter(
            None,
            "REP §3.2's optional consensus: every round, all players adopt the coordinate-wise median of the "
            "players' coordination variables (REP players only)",
        ),
        PolicyChoice(
            "policy",
            None,
            (),
            optional="each protocol's own rule: Sterman's players (A2A, REP), base stock (base-stock)",
            doc="how the stages order: a function of a StageObservation that returns whole cases (or an Order), a "
            "Policy, or a name given to coordkit.register_policy, for every stage or one per stage (a list, "
            "retailer first, or a mapping by name); the protocol keeps its messages",
            agents="stage",
        ),
        Instance(
            "synthesiser",
            None,
            Policy,
            optional="RuleSynthesis(), which reads the templated sensitivity sentences",
            doc="REP textual's synthesiser: a policy whose decide(SynthesisRequest) returns new coordination "
            "variables (§3.2; with llm, call 2 falls back to it)",
        ),
        *llm_parameters(
            optional="rule-based players, no calls",
            doc="the LLM client the A2A and REP players ask (call 1) and the textual updater synthesises with (call 2)",
        ),
        relations=(_step_within_horizon, _demand_never_negative),
    )
    # common random numbers (coordkit.streams): each stage's player from its own stream, as uniform draws that the
    # spread scales, so more stages keep the first players and the spread moves them without redrawing them; the
    # customers' noise as standard normal draws that demand_noise scales, one a round
    contest = Population(
        "policy",
        "stages",
        score=lambda game: metrics.stage_costs(game.frame()).to_list(),
        measure="a stage's cost over the game ($)",
        lower_is_better=True,
    )

    # a stochastic student's rule draws from its stage's "policy" stream
    random_streams = {"player": (), "demand": (), "policy": ()}

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        self.customer_demand = self.brewed = self.delivered = float(self.base_demand)  # the steady state
        self.transport = NeighbourMulticast()
        self.rules = GameRules(
            self.stages, self.rounds, self.order_delay, self.shipping_delay, self.holding_cost, self.backlog_cost
        )
        # the textual updater reads with the given synthesiser (or the rules); with an LLM, call 2 falls back to it
        rule_synthesis = RuleSynthesis() if self.synthesiser is None else self.synthesiser
        self.synthesis = rule_synthesis if self.llm is None else synthesis_policy(self.llm, rule_synthesis)
        self.protocol_network = ProtocolNetwork(
            self.transport, self.consensus, self.synthesis, eta=0.5, bounds=THETA_BOUNDS
        )

        self.chain: list[Stage] = []
        for position in range(self.stages):
            is_factory = position == self.stages - 1
            mail = self.production_request_delay if is_factory else self.order_delay
            road = self.production_delay if is_factory else self.shipping_delay
            name = STAGE_NAMES[position] if self.stages == 4 or position < 3 else f"stage {position + 1}"
            name = "factory" if is_factory else name
            self.chain.append(Stage(self, name, position, mail + road, self.order_delay, road))
        for downstream, stage in zip(self.chain, self.chain[1:]):
            stage.downstream_id = downstream.unique_id
        self._names = {stage.unique_id: stage.name for stage in self.chain}
        students = per_agent("policy", self.policy, [stage.name for stage in self.chain])
        for stage, student in zip(self.chain, students):
            neighbours = [s.unique_id for s in self.chain if abs(s.position - stage.position) == 1]
            stage.client = self._client(stage, neighbours, student)
        # the factory's orders go to the brewery, which starts brewing after the production-request delay
        self.brewery_orders = [float(self.base_demand)] * self.production_request_delay

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
                "customer_demand": lambda s: s.model.customer_demand,
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
                "orders_in_mail": lambda s: s.model.orders_in_mail(s),
                "goods_on_road": lambda s: tuple(map(float, s.inbound_goods)),
            },
        )
        self.datacollector.collect(self)

    def _client(self, stage: Stage, neighbours: list[int], student: Any):
        """The stage's protocol client: same transport, topology and consensus for every protocol (§4); the
        stage orders with ``student`` (its ``policy``) if given."""
        if self.protocol == "base_stock":
            rule = BaseStock(smoothing=self.smoothing, desired_stock=self.initial_inventory)
        else:
            mean = AnchorAndAdjust(
                smoothing=self.smoothing,
                stock_adjustment=self.stock_adjustment,
                supply_line_weight=self.supply_line_weight,
                desired_stock=self.desired_stock,
            )
            rule = sterman_player(self.streams("player", stage.position), self.player_spread, mean)
        student = None if student is None else fresh_policy(student, type(self), self.streams("policy", stage.position))
        if self.protocol in ("a2a", "base_stock"):
            llm_player = self.llm is not None and self.protocol == "a2a"  # base-stock is the rational reference
            policy = a2a_policy(self.llm, rule, self.rules) if llm_player else None
            policy = StudentOrders(student, rule) if student is not None else policy
            return self.protocol_network.client("a2a", A2APlayer(stage, rule, policy), stage.unique_id, neighbours)
        ordering = REPOrdering(rule)
        policy = rep_policy(self.llm, ordering, self.rules) if self.llm is not None else None
        policy = StudentOrders(student, ordering) if student is not None else policy
        player = REPPlayer(stage, ordering, policy)
        return self.protocol_network.client(self.protocol, player, stage.unique_id, neighbours)

    def demand_at(self, round_number: int) -> float:
        """Customer demand in round ``round_number``, with the next draw of the customers' noise (one a round)."""
        demand = self.base_demand + (self.step_size if round_number >= self.step_round else 0)
        if self.demand_noise > 0:
            demand += self.demand_noise * self.streams("demand").standard_normal()
        return float(max(0, int(demand + 0.5)))

    def describe(self, message: Message) -> str:
        """A neighbour's message as a player reads it: who ordered what, and why or how it would change."""
        words = message.sensitivity.text if message.sensitivity is not None else message.reasoning
        return f"{self.stage_name(message.sender)} ordered {message.decision}: {words}"

    def stage_name(self, unique_id: int) -> str:
        return self._names[unique_id]

    def supplier_of(self, stage: Stage) -> str:
        return "the brewery" if stage is self.chain[-1] else f"the {self.chain[stage.position + 1].name}"

    def customer_of(self, stage: Stage) -> str:
        return "the customers" if stage is self.chain[0] else f"the {self.chain[stage.position - 1].name}"

    def orders_in_mail(self, stage: Stage) -> tuple[float, ...]:
        """The orders ``stage`` has placed that its supplier has not received yet, the next to arrive first (the
        factory's: production requests on their way to the brewery)."""
        mail = self.brewery_orders if stage is self.chain[-1] else self.chain[stage.position + 1].inbound_orders
        return tuple(map(float, mail))

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
        self.running = self.steps < self.rounds

    def _protocol_round(self) -> None:
        """The protocol round (REP §3.1; with an LLM, each stage of it one round of concurrent calls), then the
        orders go into the mail."""
        clients = [stage.client for stage in self.chain]
        decisions = self.protocol_network.round(
            clients, concurrent=self.llm is not None, max_concurrency=self.max_concurrency
        )
        for stage, (order, signal) in zip(self.chain, decisions):
            stage.place_order(order, signal if isinstance(signal, str) else signal.text)
        for stage, upstream in zip(self.chain, self.chain[1:]):
            upstream.inbound_orders.append(stage.order)
        self.brewery_orders.append(self.chain[-1].order)

    def policies(self) -> list[Policy]:
        """The players' policies and the textual updater's synthesiser."""
        return [*(stage.client.agent.policy for stage in self.chain), self.synthesis]

    def frame(self) -> pd.DataFrame:
        """One row per round and stage (round 0 is the initial state), with the customer demand of the round.

        Columns: round, stage, position, customer_demand, demand (incoming order), order, received, shipped,
        inventory, backlog, supply_line, cost, target_inventory, order_adjustment (θ; NaN without REP), message,
        and the pipelines at the end of the round, as tuples, the next to arrive first: orders_in_mail (the stage's
        orders its supplier has not received; the factory's, on their way to the brewery) and goods_on_road (the
        shipments on their way to the stage; the factory's, being brewed). A stage's supply line is its orders in
        the mail, its supplier's backlog and its goods on the road.
        """
        return agent_table(self.datacollector, "round")

    def summary(self) -> dict:
        """Total cost, cost per stage, bullwhip ratio, rounds to stabilise, final backlog (:mod:`.metrics`), LLM use:
        from the recorded columns the metrics read, without building :meth:`frame`."""
        rounds = agent_columns(self.datacollector, "round", metrics.SUMMARY_COLUMNS)
        return {
            **metrics.summary(rounds, self.step_round),
            "llm_calls": self.llm_calls,
            "llm_fallbacks": self.llm_fallbacks,
        }


def sterman_player(rng: np.random.Generator, spread: float, mean: AnchorAndAdjust) -> AnchorAndAdjust:
    """A player whose θ, α_S, β and S′ are ``mean``'s (by default Sterman's estimates 0.36, 0.26, 0.34, 17), each
    scaled by U(1 − spread, 1 + spread), from four uniform draws of ``rng`` on [0, 1); θ and β at most 1."""
    scale = 1 - spread + 2 * spread * rng.random(4)
    return AnchorAndAdjust(
        smoothing=min(1.0, mean.smoothing * scale[0]),
        stock_adjustment=mean.stock_adjustment * scale[1],
        supply_line_weight=min(1.0, mean.supply_line_weight * scale[2]),
        desired_stock=mean.desired_stock * scale[3],
    )
