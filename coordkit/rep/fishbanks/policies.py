"""Fishbanks' rule-based policies: how companies deploy boats, the REP signals they write, and how the textual
updater reads them (REP paper §6, Appendices A and B).

All deterministic and stateless (what a company remembers — its books, the holds its neighbours stated — lives in
its agent):

- :class:`CompetitiveFleet` — the A2A company, §6's "competitive escalation: each company acts defensively,
  deploying aggressively to avoid being left behind". It moves half way towards the neighbours' average fleet,
  adds a boat while boats pay if it values risk above sustainability, and drops one when boats lose money, or
  when it values sustainability more and reads the stock below its most productive density.
- :class:`REPFleet` — the REP company: conditional cooperation. It restrains as far as it trusts the others to
  (its coordination confidence), between its hold (its share of the stock's best regeneration, scaled by its
  values) and the competitive fleet; its sensitivity carries its ecosystem assessment, its conditional
  willingness to restrain, and what the others did (App. B).
- :class:`RuleSynthesis` — the textual updater's synthesiser without an LLM: the templated sentences → new θ.
"""

import math
import numbers
import re
from dataclasses import dataclass
from functools import lru_cache
from statistics import pvariance

from coordkit.policies import Classifier, DecisionError, Policy, StudentRule, decision_pair, policy_name, whole_number
from coordkit.renamed import renamed
from coordkit.rep.fishbanks.ecology import PEAK_DENSITY, Fishery
from coordkit.rep.protocol import Sensitivity, SynthesisRequest, Theta

QUOTA = "quota_estimate"
HEALTH = "population_health"
CONFIDENCE = "coordination_confidence"
STRESS = "resource_stress"
THETA_NAMES = (QUOTA, HEALTH, CONFIDENCE, STRESS)  # REP Appendix A.2


@dataclass(frozen=True)
class FleetObservation:
    """What one company knows when it deploys: its books, its estimate of the stock, and its neighbours' last
    decisions (with their reasoning or sensitivity text). Before the first season, "last season" is the survey
    every company starts from: the catch per boat at the initial stock, and the profit it would bring.

    - ``company``, ``profile``: its name and character; ``season``: the season being decided, from 1, of
      ``seasons``; ``companies``: how many fish the sea; ``max_boats``: the most it may send out;
    - ``risk_tolerance`` r and ``sustainability`` v, each in [0, 1]: from cautious to aggressive, from profit first
      to the stock first;
    - ``boats``: its fleet last season; ``catch_per_boat``, ``profit_per_boat``: what a boat landed and earned then
      ($); ``expected_catch_per_boat()``: what a boat would land at its reading of the stock;
    - ``density_estimate``: its reading of the stock over the sea's capacity (1: a full sea);
    - ``industry_catch``: the whole industry's catch last season (None before the first);
    - ``neighbour_boats``: its neighbours' fleets last season, (name, boats); ``neighbour_total``,
      ``neighbour_mean``, ``neighbour_variance`` sum them up; ``neighbour_notes``: their messages as text;
    - ``fishery``: the sea's rules (prices, costs, regrowth).

    A decision is whole boats from 1 to ``max_boats`` (5 or 5.0, or a Deployment).
    """

    company: str
    profile: str
    season: int  # the season being decided, from 1
    seasons: int
    companies: int
    max_boats: int
    fishery: Fishery
    risk_tolerance: float  # r in [0, 1]: from cautious to aggressive
    sustainability: float  # v in [0, 1]: from profit first to the stock first
    boats: int  # deployed last season (the initial fleet before the first)
    catch_per_boat: float  # landed per boat last season
    profit_per_boat: float  # earned per boat last season
    density_estimate: float  # the company's reading of stock / capacity
    industry_catch: float | None = None  # the whole industry's catch last season (None before the first season)
    neighbour_boats: tuple[tuple[str, int], ...] = ()  # the neighbours' decisions last season
    neighbour_notes: tuple[str, ...] = ()  # 'Name: 4 boats - "their reasoning or sensitivity"', one per neighbour

    @property
    def neighbour_total(self) -> int:
        return sum(boats for _, boats in self.neighbour_boats)

    @property
    def neighbour_mean(self) -> float | None:
        return self.neighbour_total / len(self.neighbour_boats) if self.neighbour_boats else None

    @property
    def neighbour_variance(self) -> float | None:
        """The population variance of the neighbours' fleets (the A2A prompt's "deployment variance")."""
        return pvariance([boats for _, boats in self.neighbour_boats]) if self.neighbour_boats else None

    def expected_catch_per_boat(self) -> float:
        return self.fishery.catch_per_boat_at(self.density_estimate)


@dataclass(frozen=True)
class REPSituation:
    """What a REP company decides from: its observation, its coordination variables θ, the deeds it can check —
    (neighbour, whether it kept last season's conditional promise) — and the words it has read — (neighbour,
    the hold it states, the most the others may average for it to hold)."""

    observation: FleetObservation
    theta: Theta
    kept: tuple[tuple[str, bool], ...] = ()
    conditions: tuple[tuple[str, int, int], ...] = ()

    @property
    def deeds(self) -> float | None:
        """The share of neighbours who kept their word last season (None before anyone could)."""
        return sum(kept for _, kept in self.kept) / len(self.kept) if self.kept else None

    @property
    def words(self) -> float | None:
        """The share of neighbours whose stated condition the others' stated holds meet (None with fewer than two)."""
        return conditions_met([(hold, limit) for _, hold, limit in self.conditions])


@dataclass(frozen=True)
class Deployment:
    """A company's decision for a season: ``boats`` to send out (a whole number from 1 to the model's
    ``max_boats``) and, optionally, the ``message`` an A2A company sends with it. A policy may return the plain
    number instead (3, or 3.0), or a (boats, message) pair."""

    boats: int
    message: str = ""


def deployment_of(decision: object, policy: object, max_boats: int) -> Deployment:
    """``decision`` as a :class:`Deployment`; a :class:`~coordkit.policies.DecisionError` that names ``policy``,
    the value it returned and what a company deploys, for anything else."""
    deployment = decision_pair(decision, Deployment)
    boats, whole = deployment.boats, whole_number(deployment.boats)
    if whole is not None and 1 <= whole <= max_boats and isinstance(deployment.message, str):
        return Deployment(whole, deployment.message)
    real = isinstance(boats, numbers.Real) and not isinstance(boats, bool) and math.isfinite(boats)
    hint = f"; round it: {whole_boats(boats, max_boats)}" if real and whole is None and 1 <= boats <= max_boats else ""
    raise DecisionError(
        f"policy {policy_name(policy)!r} returned {decision!r}: a company deploys a whole number of boats from 1 to "
        f"{max_boats}, as an int, a (boats, message) pair or Deployment(boats, message=''){hint}"
    )


class StudentFleet(StudentRule):
    """A student's deployment rule in a company (issue 45): the rule decides the boats from the company's
    :class:`FleetObservation`, whatever the protocol; the protocol keeps its part. An A2A company sends the rule's
    message, or its own rule's reasoning about those boats; a REP company still sends its sensitivity, with the
    conditional hold its REP rule states (:meth:`REPFleet.plan`), so that the protocol shares it and updates θ as
    ever."""

    def decide(self, observation: "FleetObservation | REPSituation") -> tuple[int, object]:
        seen = observation.observation if isinstance(observation, REPSituation) else observation
        deployment = deployment_of(self.student.decide(seen), self.student, seen.max_boats)
        if isinstance(observation, REPSituation):
            _, condition = self.rule.plan(observation)
            return deployment.boats, self.rule.sensitivity(observation, deployment.boats, condition)
        return deployment.boats, deployment.message or self.rule.reasoning(seen, deployment.boats)


def whole_boats(boats: float, max_boats: int) -> int:
    """Boats are whole, rounded half up, from 1 to ``max_boats`` (an unbounded fleet, inf, is ``max_boats``)."""
    return int(min(max(boats + 0.5, 1), max_boats))


def conditions_met(conditions: list[tuple[float, float]]) -> float | None:
    """Of companies stating "hold at h if the others average at most X", the share whose X the others' stated
    holds meet (None with fewer than two statements)."""
    if len(conditions) < 2:
        return None
    total = sum(hold for hold, _ in conditions)
    met = [(total - hold) / (len(conditions) - 1) <= limit for hold, limit in conditions]
    return sum(met) / len(met)


@dataclass(frozen=True)
class CompetitiveFleet(Policy):
    """§6's competitive escalation, as a rule, without a ratchet: move half way from the company's fleet towards
    the neighbours' average; then drop a boat if a boat lost money last season, add one if boats paid and the
    company values risk above sustainability (r > v), or drop one if it values sustainability more and reads the
    stock below the density of maximum regeneration; 1 to ``max_boats`` boats. Its reasoning states the numbers."""

    name = "competitive_fleet"
    classifier = Classifier()

    def boats(self, seen: FleetObservation) -> int:
        mean = seen.neighbour_mean
        target = seen.boats if mean is None else seen.boats + (mean - seen.boats) / 2
        if seen.profit_per_boat <= 0:
            target -= 1
        elif seen.risk_tolerance > seen.sustainability:
            target += 1
        elif seen.density_estimate < PEAK_DENSITY:
            target -= 1
        return whole_boats(target, seen.max_boats)

    def decide(self, seen: FleetObservation) -> tuple[int, str]:
        """The A2A company's call: boats and its reasoning."""
        boats = self.boats(seen)
        return boats, self.reasoning(seen, boats)

    def reasoning(self, seen: FleetObservation, boats: int) -> str:
        """The A2A message: a decision explained from the company's numbers (§4)."""
        aim = "cut our losses" if boats < seen.boats else "keep our share"
        deploying = f"deploying {boats_text(boats)} to {aim}"
        if seen.neighbour_mean is None:
            return f"No neighbour decisions yet; we expect ${seen.profit_per_boat:,.0f} a boat: {deploying}."
        return (
            f"Neighbours average {seen.neighbour_mean:.1f} boats (total {seen.neighbour_total}); our profit per boat "
            f"was ${seen.profit_per_boat:,.0f}: {deploying}."
        )


def boats_text(boats: int) -> str:
    return f"{boats} boat{'' if boats == 1 else 's'}"


@dataclass(frozen=True)
class REPFleet(Policy):
    """The REP company: conditional cooperation between its hold and the competitive fleet (§6, Insight 4, App. B).

    - hold = QUOTA_ESTIMATE / (catch per boat at the density of maximum regeneration) × 2^(r − v): the boats that
      land its share of what the stock regrows at its best, more for a risk-tolerant company, fewer for one that
      values sustainability (from half to twice the share), whole boats from 1 to ``max_boats``;
    - boats = c·hold + (1 − c)·competitive with c = COORDINATION_CONFIDENCE: it holds as far as it trusts the
      others to, rounded.

    Its sensitivity (REP call 1's output): numbers for the numerical updater, each a proposal for θ —
    quota: the regeneration at the density of maximum regeneration / companies; health: its density estimate /
    0.6, at most 1; confidence: the mean of deeds (the share of neighbours who kept last season's conditional
    promise) and words (the share whose stated condition the others' stated holds meet), whichever it has;
    stress: industry catch / (industry catch + regeneration) last season — plus ``hold``, ``others_at_most`` (its
    condition: the others' average fleet at which it still holds, at least its hold and at least the share
    rounded up) and ``raise_to`` (its competitive fleet). The text says the same in Appendix B's style, with the
    deeds in words, so that a reader of text alone weighs both (:class:`RuleSynthesis`).
    """

    rule: CompetitiveFleet = CompetitiveFleet()

    name = "rep_fleet"
    classifier = Classifier()

    def assessment(self, seen: FleetObservation) -> tuple[float, float, float | None]:
        """(quota, health, stress) from the company's own reading: its equal share of what the stock regrows at
        its most productive density; its density estimate relative to that density, at most 1; and last
        season's industry catch over catch plus regeneration at its density estimate: ½ when the stock just held,
        1 when nothing grew back (None before the first season)."""
        quota = seen.fishery.regeneration(PEAK_DENSITY) / seen.companies
        health = min(1.0, seen.density_estimate / PEAK_DENSITY)
        if seen.industry_catch is None:
            return quota, health, None
        total = seen.industry_catch + seen.fishery.regeneration(seen.density_estimate)
        return quota, health, seen.industry_catch / total if total > 0 else 1.0

    def initial_theta(self, seen: FleetObservation) -> Theta:
        quota, health, _ = self.assessment(seen)
        return {QUOTA: quota, HEALTH: health, CONFIDENCE: 0.5, STRESS: 0.5}

    def share(self, seen: FleetObservation, theta: Theta) -> float:
        """The boats that land QUOTA_ESTIMATE at the density of maximum regeneration: inf when a boat's catch is so
        small (a catch_per_boat of 1e-310 fish) that the quotient overflows."""
        return theta[QUOTA] / seen.fishery.catch_per_boat_at(PEAK_DENSITY)

    def hold(self, seen: FleetObservation, theta: Theta) -> float:
        """The share, scaled by the company's values: 2^(r − v) times it."""
        return self.share(seen, theta) * 2 ** (seen.risk_tolerance - seen.sustainability)

    def decide(self, situation: REPSituation) -> tuple[int, Sensitivity]:
        """The REP company's call: boats and the sensitivity it sends."""
        boats, condition = self.plan(situation)
        return boats, self.sensitivity(situation, boats, condition)

    def plan(self, situation: REPSituation) -> tuple[int, dict[str, int]]:
        """The boats this rule deploys, and the conditional hold it states (hold, others_at_most, raise_to)."""
        seen, theta = situation.observation, situation.theta
        hold, competitive = self.hold(seen, theta), self.rule.boats(seen)
        trust = theta[CONFIDENCE]
        blend = competitive if trust == 0 else trust * hold + (1 - trust) * competitive  # not 0 × inf (NaN)
        held = whole_boats(hold, seen.max_boats)
        limit = max(held, math.ceil(min(self.share(seen, theta), seen.max_boats)))
        condition = {"hold": held, "others_at_most": min(limit, seen.max_boats), "raise_to": competitive}
        return whole_boats(blend, seen.max_boats), condition

    def sensitivity(self, situation: REPSituation, boats: int, condition: dict[str, int]) -> Sensitivity:
        """The message: proposals for θ, the conditional hold (hold, others_at_most, raise_to), and the text."""
        quota, health, stress = self.assessment(situation.observation)
        values = {f"propose:{QUOTA}": quota, f"propose:{HEALTH}": health}
        trust = [share for share in (situation.deeds, situation.words) if share is not None]
        if trust:
            values[f"propose:{CONFIDENCE}"] = sum(trust) / len(trust)
        if stress is not None:
            values[f"propose:{STRESS}"] = stress
        text = sensitivity_text(situation.observation, quota, health, stress, boats, kept=situation.kept, **condition)
        return Sensitivity(values | condition, text)


def stock_trend(stress: float | None) -> str:
    """The word for what last season did to the stock: the catch above (declining), near (stable) or below
    (recovering) what grew back, within ±10% of a half share."""
    if stress is None:
        return "not yet fished"
    return "declining" if stress > 0.55 else "recovering" if stress < 0.45 else "stable"


def sensitivity_text(
    seen: FleetObservation,
    quota: float,
    health: float,
    stress: float | None,
    boats: int,
    hold: int,
    others_at_most: int,
    raise_to: int,
    kept: tuple[tuple[str, bool], ...] = (),
) -> str:
    """The templated textual sensitivity of a rule-based REP company, in Appendix B's three kinds: an ecosystem
    assessment (B.1), a conditional willingness to restrain and what the others did (B.2, §6 Insight 4), and a
    competitive remark where the neighbours' fleets differ widely (B.3)."""
    otherwise = f"raise to {raise_to}" if raise_to > hold else "still hold"
    text = (
        f"Sustainable quota estimate of {quota:.0f} fish and population health of {health:.2f} suggest a "
        f"{stock_trend(stress)} stock. We deploy {boats_text(boats)} and will hold at {hold} if the others average at "
        f"most {others_at_most}; above that we would {otherwise}."
    )
    if kept:
        text += f" Last season {sum(k for _, k in kept)} of {len(kept)} others kept their word."
    if seen.neighbour_boats:
        (small, fewest), (big, most) = min(seen.neighbour_boats, key=_boats), max(seen.neighbour_boats, key=_boats)
        if most - fewest >= 3:
            text += (
                f" Fleet sizes differ significantly ({big}: {most} boats vs {small}: {fewest} boats), indicating "
                "emerging competitive clusters."
            )
    return text


def _boats(neighbour: tuple[str, int]) -> int:
    return neighbour[1]


_ASSESSMENT = re.compile(  # the kit's template, and Appendix B.1's wording ("health indicator", "condition")
    r"quota estimate of (\d+(?:\.\d+)?) fish and population health(?: indicator)? of (\d+(?:\.\d+)?) "
    r"suggests? an? ([\w ]+?) (?:stock|condition)",
    re.I,
)
_CONDITION = re.compile(r"will hold at (\d+) if the others average at most (\d+)", re.I)
_DEEDS = re.compile(r"(\d+) of (\d+) others kept their word", re.I)
STRESS_OF_TREND = {"declining": 0.75, "stable": 0.5, "recovering": 0.25}


@dataclass(frozen=True)
class Reading:
    """What one templated sensitivity text states (None: it does not say)."""

    quota: float | None = None
    health: float | None = None
    stress: float | None = None  # the stated trend, read as declining ¾, stable ½, recovering ¼
    hold: float | None = None
    others_at_most: float | None = None
    kept: float | None = None  # the share of the others the writer saw keep their word last season


@lru_cache(maxsize=4096)
def read(text: str) -> Reading:
    """The numbers and words of a templated sensitivity text; non-finite numbers are ignored. (Cached: every
    company of a season reads the same texts.)"""
    numbers = {}
    if assessment := _ASSESSMENT.search(text):
        quota, health, trend = float(assessment[1]), float(assessment[2]), assessment[3].lower()
        numbers |= {"quota": quota, "health": health, "stress": STRESS_OF_TREND.get(trend)}
    if condition := _CONDITION.search(text):
        numbers |= {"hold": float(condition[1]), "others_at_most": float(condition[2])}
    if (deeds := _DEEDS.search(text)) and 0 < int(deeds[2]) and int(deeds[1]) <= int(deeds[2]):
        numbers |= {"kept": int(deeds[1]) / int(deeds[2])}
    return Reading(**{k: v for k, v in numbers.items() if v is not None and math.isfinite(v)})


@dataclass(frozen=True)
class RuleSynthesis(Policy):
    """The textual updater's synthesiser without an LLM (API call 2's job, REP Appendix A.4.2): it turns the
    templated sensitivity texts (the company's own and its neighbours') into a θ proposal:

    - QUOTA_ESTIMATE and POPULATION_HEALTH: the means of the stated assessments;
    - RESOURCE_STRESS: the mean of the stated trends, read as declining ¾, stable ½, recovering ¼;
    - COORDINATION_CONFIDENCE: the mean of words and deeds, whichever the texts carry — words, forward-looking:
      the share of writers whose stated condition ("if the others average at most X") the holds the other
      writers state meet (what only text carries, as the Beer Game's "temporary / persistent" does); deeds: the
      mean of the writers' reports of who kept their word last season.

    A variable no text speaks to keeps its value.
    """

    name = "rule_synthesis"
    classifier = Classifier()

    def decide(self, request: SynthesisRequest) -> Theta:
        theta = dict(request.theta)
        readings = [read(request.own_text), *(read(text) for _, text in request.neighbour_texts)]
        for name, said in ((QUOTA, "quota"), (HEALTH, "health"), (STRESS, "stress")):
            stated = [value for r in readings if (value := getattr(r, said)) is not None]
            if stated:
                theta[name] = sum(stated) / len(stated)
        words = conditions_met(
            [(r.hold, r.others_at_most) for r in readings if r.hold is not None and r.others_at_most is not None]
        )
        reports = [r.kept for r in readings if r.kept is not None]
        trust = [share for share in (words, sum(reports) / len(reports) if reports else None) if share is not None]
        if trust:
            theta[CONFIDENCE] = sum(trust) / len(trust)
        return theta


__getattr__ = renamed(__name__, {"FleetView": "FleetObservation"}, globals())  # the old name, for one release
