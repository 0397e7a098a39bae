"""The Beer Game's rule-based policies: how players order, the REP signals they write, and how the textual
updater reads them (REP paper §5, Appendix A).

All deterministic and stateless (the demand forecast they smooth lives in the stage's books):

- :class:`AnchorAndAdjust` — Sterman's (1989) heuristic for decision-only players, used by A2A players:
  O_t = max(0, L̂_t + α_S·(S′ − S_t − β·SL_t)), with L̂_t = θ·L_t + (1 − θ)·L̂_{t−1}.
- :class:`BaseStock` — the rational order-up-to reference: order the whole gap of the inventory position
  (net stock + supply line) to the lead-time demand plus safety stock.
- :class:`REPOrdering` — the same heuristic with S′ and α_S replaced by the REP coordination variables
  TARGET_INVENTORY and ORDER_ADJUSTMENT_FACTOR, plus the sensitivity it sends: numeric (the gradient of its
  projected cost with respect to each coordination variable, by finite differences) and textual (a templated
  sentence: "If demand rises 10%, I'd order 3 more; ... the change looks persistent").
- :class:`RuleSynthesis` — the textual updater's synthesiser without an LLM: the templated sentences → new θ.
"""

import math
import numbers
import re
from dataclasses import dataclass, replace

from coordkit.policies import (
    Classifier,
    DecisionError,
    Policy,
    StudentRule,
    decision_pair,
    policy_name,
    whole_number,
)
from coordkit.renamed import renamed
from coordkit.rep.protocol import Sensitivity, SynthesisRequest, Theta

TARGET = "target_inventory"
ADJUSTMENT = "order_adjustment"


@dataclass(frozen=True)
class StageObservation:
    """What one stage knows when it orders: its own books, its demand, and its neighbours' last messages.

    - ``stage``: "retailer", "wholesaler", "distributor" or "factory" ("stage 4", ... in a longer chain);
      ``round``: the round being played, from 1;
    - ``incoming_order``: the cases ordered from it this round (customer demand for the retailer);
      ``demand_history``: the incoming orders of the rounds before, oldest first (the last few);
      ``expected_demand``: its smoothed demand forecast L̂ before this round's update;
    - ``inventory``, ``backlog``: cases in stock, and cases owed downstream; ``net_stock`` = inventory − backlog;
    - ``supply_line``: cases it ordered that have not arrived yet; ``lead_time``: rounds from placing an order to
      receiving it, without shortages;
    - ``neighbour_notes``: its neighbours' last messages as text ("wholesaler ordered 8: ..."); ``neighbour_orders``:
      their last orders alone, (name, cases);
    - ``supplier``, ``customer``: whom it orders from and ships to.

    Quantities are cases, as floats (4.0): an order may be returned as a float if it is whole.
    """

    stage: str
    round: int
    incoming_order: float  # demand seen this round (customer demand for the retailer)
    inventory: float
    backlog: float
    supply_line: float  # ordered but not yet received
    expected_demand: float  # L̂ before this round's update
    lead_time: int  # rounds from placing an order to receiving it, without shortages
    demand_history: tuple[float, ...] = ()  # incoming orders of earlier rounds, oldest first
    neighbour_notes: tuple[str, ...] = ()  # "wholesaler ordered 8: <reasoning or sensitivity>", one per neighbour
    neighbour_orders: tuple[tuple[str, int], ...] = ()  # ("wholesaler", 8): the numbers alone, for A2A
    supplier: str = "supplier"  # who this stage orders from (the factory: the brewery)
    customer: str = "customer"  # who this stage ships to (the retailer: the customers)

    @property
    def net_stock(self) -> float:
        return self.inventory - self.backlog


@dataclass(frozen=True)
class REPSituation:
    """What a REP player decides from: its observation, its coordination variables θ, and customer demand as heard."""

    observation: StageObservation
    theta: Theta
    customer_demand: float


@dataclass(frozen=True)
class Order:
    """A stage's decision in a round: ``cases`` to order (a whole number, at least 0) and, optionally, the
    ``message`` an A2A player sends with it (its reasoning). A policy may return the plain number instead (4, or
    4.0), or a (cases, message) pair."""

    cases: int
    message: str = ""


def order_of(decision: object, policy: object) -> Order:
    """``decision`` as an :class:`Order`; a :class:`~coordkit.policies.DecisionError` that names ``policy``, the
    value it returned and what a stage orders, for anything else."""
    order = decision_pair(decision, Order)
    cases, whole = order.cases, whole_number(order.cases)
    if whole is not None and whole >= 0 and isinstance(order.message, str):
        return Order(whole, order.message)
    real = isinstance(cases, numbers.Real) and not isinstance(cases, bool) and math.isfinite(cases) and cases >= 0
    hint = f"; round it: {whole_cases(cases)}" if real and whole is None else ""
    raise DecisionError(
        f"policy {policy_name(policy)!r} returned {decision!r}: a stage orders a whole number of cases, at least 0, "
        f"as an int, a (cases, message) pair or Order(cases, message=''){hint}"
    )


class StudentOrders(StudentRule):
    """A student's ordering rule in a stage (issue 45): the rule decides the order from the stage's
    :class:`StageObservation`, whatever the protocol; the protocol keeps its part. An A2A stage sends the rule's
    message, or its own rule's reasoning about that order; a REP stage still sends its sensitivity
    (:meth:`REPOrdering.sensitivity`), so that the protocol shares it and updates θ as ever."""

    def decide(self, observation: "StageObservation | REPSituation") -> tuple[int, object]:
        seen = observation.observation if isinstance(observation, REPSituation) else observation
        order = order_of(self.student.decide(seen), self.student)
        if isinstance(observation, REPSituation):
            return order.cases, self.rule.sensitivity(seen, observation.theta, observation.customer_demand)
        return order.cases, order.message or self.rule.reasoning(seen, order.cases)


def whole_cases(quantity: float) -> int:
    """Orders are whole cases, rounded half up."""
    return int(quantity + 0.5)


@dataclass(frozen=True)
class AnchorAndAdjust(Policy):
    """Sterman's anchoring-and-adjustment ordering rule; defaults are his mean estimates (θ, α_S, β, S′)."""

    smoothing: float = 0.36  # θ
    stock_adjustment: float = 0.26  # α_S
    supply_line_weight: float = 0.34  # β
    desired_stock: float = 17.0  # S′

    name = "anchor_and_adjust"
    classifier = Classifier()

    def forecast(self, seen: StageObservation) -> float:
        """Adaptive expectations: L̂_t = θ·L_t + (1 − θ)·L̂_{t−1}."""
        return self.smoothing * seen.incoming_order + (1 - self.smoothing) * seen.expected_demand

    def order(self, seen: StageObservation) -> float:
        gap = self.desired_stock - seen.net_stock - self.supply_line_weight * seen.supply_line
        return max(0.0, self.forecast(seen) + self.stock_adjustment * gap)

    def decide(self, seen: StageObservation) -> tuple[int, str]:
        """The A2A player's call: an order in whole cases and its reasoning."""
        order = whole_cases(self.order(seen))
        return order, self.reasoning(seen, order)

    def reasoning(self, seen: StageObservation, order: float) -> str:
        """The A2A message: a decision explained from the player's own numbers (§4)."""
        state = f"net stock {seen.net_stock:+.0f}" if seen.backlog == 0 else f"backlog {seen.backlog:.0f}"
        return (
            f"Ordering {order:.0f}: demand looks like {self.forecast(seen):.1f}/round, {state}, "
            f"{seen.supply_line:.0f} already on order."
        )


@dataclass(frozen=True)
class BaseStock(Policy):
    """The order-up-to reference, closing both gaps in full (α_S = 1, β = 1): order what brings the supply
    line back to a lead time of expected demand and the stock back to its target,
    O = (S* − S) + (L̂·lead time − SL), with the stock target S* the game's initial inventory."""

    smoothing: float = 0.36
    desired_stock: float = 12.0

    name = "base_stock"
    classifier = Classifier()

    def forecast(self, seen: StageObservation) -> float:
        return self.smoothing * seen.incoming_order + (1 - self.smoothing) * seen.expected_demand

    def order(self, seen: StageObservation) -> float:
        demand = self.forecast(seen)
        stock_gap = self.desired_stock - seen.net_stock
        supply_gap = demand * seen.lead_time - seen.supply_line
        return max(0.0, stock_gap + supply_gap)

    def decide(self, seen: StageObservation) -> tuple[int, str]:
        order = whole_cases(self.order(seen))
        return order, self.reasoning(seen, order)

    def reasoning(self, seen: StageObservation, order: float) -> str:
        return f"Ordering {order:.0f} to restore {self.desired_stock:.0f} in stock and a full supply line."


@dataclass(frozen=True)
class REPOrdering(Policy):
    """Anchor-and-adjust whose S′ and α_S are REP's coordination variables, and the sensitivity it sends.

    The ripple: every sensitivity carries the customer demand as it reached its writer (the retailer's own
    forecast, relayed one stage per round — faster than orders, which spend ``order_delay`` rounds in the
    mail and arrive amplified). A REP player anchors its order on that customer demand instead of on its own
    incoming orders: O = max(0, D̂ + AF·(TI − S − β·SL)).

    Its sensitivity also says how its order would move if demand rose 10% (a what-if on its own rule) and
    proposes coordination variables (§5):

    - TARGET_INVENTORY: its own stock goal S′ — averaging aligns the chain's targets;
    - ORDER_ADJUSTMENT_FACTOR: its own α_S, scaled down by how overfull its supply line is,
      α_S · min(1, D̂·lead time / SL): a full pipeline is the sign that orders are over-reacting.

    The numerical updater averages these numbers; the text says the same in words, plus the player's
    judgement of whether its own incoming orders look temporary or persistent, which only text carries.
    """

    rule: AnchorAndAdjust

    name = "rep"
    classifier = Classifier()

    def initial_theta(self) -> Theta:
        return {TARGET: self.rule.desired_stock, ADJUSTMENT: self.rule.stock_adjustment}

    def forecast(self, seen: StageObservation) -> float:
        return self.rule.forecast(seen)

    def order(self, seen: StageObservation, theta: Theta, customer_demand: float) -> float:
        gap = theta[TARGET] - seen.net_stock - self.rule.supply_line_weight * seen.supply_line
        return max(0.0, customer_demand + theta[ADJUSTMENT] * gap)

    def order_change_for_demand_rise(
        self, seen: StageObservation, theta: Theta, customer_demand: float, rise: float = 0.10
    ) -> float:
        """How many more cases the player would order if demand were ``rise`` higher this round."""
        extra = seen.incoming_order * rise
        from_stock = min(extra, seen.inventory)
        bumped = replace(seen, inventory=seen.inventory - from_stock, backlog=seen.backlog + extra - from_stock)
        return self.order(bumped, theta, customer_demand * (1 + rise)) - self.order(seen, theta, customer_demand)

    def proposal(self, seen: StageObservation, customer_demand: float) -> Theta:
        pipeline_fill = seen.supply_line / max(customer_demand * seen.lead_time, 1e-9)
        return {
            TARGET: self.rule.desired_stock,
            ADJUSTMENT: self.rule.stock_adjustment * min(1.0, 1 / max(pipeline_fill, 1e-9)),
        }

    def decide(self, situation: REPSituation) -> tuple[int, Sensitivity]:
        """The REP player's call: an order in whole cases and the sensitivity it sends."""
        seen, theta, demand = situation.observation, situation.theta, situation.customer_demand
        return whole_cases(self.order(seen, theta, demand)), self.sensitivity(seen, theta, demand)

    def sensitivity(self, seen: StageObservation, theta: Theta, customer_demand: float) -> Sensitivity:
        """The message; ``customer_demand`` is the retailer's forecast as heard from downstream."""
        more = self.order_change_for_demand_rise(seen, theta, customer_demand)
        values = {f"propose:{k}": v for k, v in self.proposal(seen, customer_demand).items()}
        values |= {"customer_demand": customer_demand, "order_per_10pct_demand": more}
        text = sensitivity_text(seen, theta, self.rule, customer_demand, more, demand_trend(seen))
        return Sensitivity(values, text)


def demand_trend(seen: StageObservation) -> str:
    """A player's judgement of its incoming orders: "steady", a "temporary" jump, or a "persistent" shift.

    A change of more than 10% from two rounds ago is "temporary" until the new level has held for a round;
    then it is "persistent". This is the qualitative part of a sensitivity that numbers do not carry (§5).
    """
    history = (*seen.demand_history, seen.incoming_order)
    if len(history) < 3:
        return "steady"
    before, last, now = history[-3], history[-2], history[-1]
    if abs(now - before) <= 0.1 * max(before, 1.0):
        return "steady"
    return "persistent" if abs(now - last) <= 0.1 * max(last, 1.0) else "temporary"


def sensitivity_text(
    seen: StageObservation, theta: Theta, rule: AnchorAndAdjust, customer_demand: float, order_change: float, trend: str
) -> str:
    """The templated textual sensitivity a rule-based REP player sends (the paper's example, §3.1 and §5)."""
    gap = seen.net_stock - theta[TARGET]
    supply_rounds = seen.supply_line / max(customer_demand, 1e-9)
    return (
        f"Customer demand looks like {customer_demand:.1f} a round; my own orders in look {trend}. "
        f"If demand rises 10%, I'd order {order_change:.1f} more. "
        f"My stock target is {rule.desired_stock:.0f} and my stock is {abs(gap):.0f} "
        f"{'above' if gap >= 0 else 'below'} my current target, with {seen.supply_line:.0f} on order "
        f"({supply_rounds:.1f} rounds of supply for a {seen.lead_time}-round lead time). "
        f"I'd normally correct {rule.stock_adjustment:.0%} of a stock gap a round."
    )


_TARGET = re.compile(r"my stock target is (\d+(?:\.\d+)?)", re.I)
_TREND = re.compile(r"my own orders in look (steady|temporary|persistent)", re.I)
_SUPPLY = re.compile(r"\((\d+(?:\.\d+)?) rounds of supply for a (\d+)-round lead time\)", re.I)
_NATURAL = re.compile(r"normally correct (\d+(?:\.\d+)?)% of a stock gap", re.I)


@dataclass(frozen=True)
class RuleSynthesis(Policy):
    """The textual updater's synthesiser without an LLM (API call 2's job, REP Appendix A.4.2): it turns the
    templated sensitivity texts into a θ proposal, the way a careful reader of them would:

    - TARGET_INVENTORY: the mean of the stock targets the writers state (mine included);
    - ORDER_ADJUSTMENT_FACTOR: my natural adjustment, scaled down when my supply line holds more than a lead
      time of supply, and damped (×``damping``) while a neighbour says its orders look "temporary" — a spike
      travelling up the chain is not worth chasing. Texts without these phrases leave θ unchanged.
    """

    damping: float = 0.8

    name = "rule_synthesis"
    classifier = Classifier()

    def decide(self, request: SynthesisRequest) -> Theta:
        theta = dict(request.theta)
        texts = [request.own_text, *(text for _, text in request.neighbour_texts)]
        targets = [float(m[1]) for text in texts for m in _TARGET.finditer(text)]
        if targets:
            theta[TARGET] = sum(targets) / len(targets)
        supply, natural = _SUPPLY.search(request.own_text), _NATURAL.search(request.own_text)
        if supply and natural:
            fill = float(supply[1]) / max(float(supply[2]), 1.0)
            spike = any(
                m[1].lower() == "temporary" for _, text in request.neighbour_texts for m in _TREND.finditer(text)
            )
            damping = self.damping if spike else 1.0
            theta[ADJUSTMENT] = float(natural[1]) / 100 * min(1.0, 1 / max(fill, 1e-9)) * damping
        return theta


__getattr__ = renamed(__name__, {"StageView": "StageObservation"}, globals())  # the old name, for one release
