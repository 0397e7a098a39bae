"""Fishbanks' rule-based policies: how companies deploy boats, the REP signals they write, and how the textual
updater reads them (REP paper §6, Appendices A and B).

All deterministic and stateless (what a company remembers — its books, the holds its neighbours stated — lives in
its agent):

- :class:`CompetitiveFleet` — the A2A company, §6's "competitive escalation: each company acts defensively,
  deploying aggressively to avoid being left behind". It keeps up with the neighbours' average fleet, adds a boat
  while boats pay (if it is risk-tolerant or behind the others), and drops one when they lose money.
- :class:`REPFleet` — the REP company: conditional cooperation. It restrains as far as it trusts the others to
  (its coordination confidence), between a cooperative fleet (landing its sustainable quota) and the competitive
  one; its sensitivity carries its ecosystem assessment and its conditional willingness to restrain (App. B).
- :class:`RuleSynthesis` — the textual updater's synthesiser without an LLM: the templated sentences → new θ.
"""

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from statistics import pvariance

from coordkit.policies import Classifier, Policy
from coordkit.rep.fishbanks.ecology import PEAK_DENSITY, Fishery
from coordkit.rep.protocol import Sensitivity, SynthesisRequest, Theta

QUOTA = "quota_estimate"
HEALTH = "population_health"
CONFIDENCE = "coordination_confidence"
STRESS = "resource_stress"
THETA_NAMES = (QUOTA, HEALTH, CONFIDENCE, STRESS)  # REP Appendix A.2


@dataclass(frozen=True)
class FleetView:
    """What one company knows when it deploys: its books, its estimate of the stock, and its neighbours' last
    decisions (with their reasoning or sensitivity text). Before the first season, "last season" is the survey
    every company starts from: the catch per boat at the initial stock, and the profit it would bring."""

    company: str
    profile: str
    season: int  # the season being decided, from 1
    seasons: int
    companies: int
    max_boats: int
    fishery: Fishery
    risk_tolerance: float  # r in [0, 1]: from cautious to aggressive
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
    """What a REP company decides from: its view, its coordination variables θ, and the promises it can check —
    (neighbour, boats last season, the hold that neighbour stated the season before)."""

    view: FleetView
    theta: Theta
    promises: tuple[tuple[str, int, int], ...] = ()


def whole_boats(boats: float, max_boats: int) -> int:
    """Boats are whole, rounded half up, from 1 to ``max_boats``."""
    return min(max(int(boats + 0.5), 1), max_boats)


@dataclass(frozen=True)
class CompetitiveFleet(Policy):
    """§6's competitive escalation, as a rule. Anchor on max(own fleet, the neighbours' average fleet, rounded);
    add a boat while boats earn money if the company is risk-tolerant (r ≥ ½) or behind the others' average; drop
    one when a boat lost money last season; 1 to ``max_boats`` boats. Its reasoning states the numbers."""

    name = "competitive_fleet"
    classifier = Classifier()

    def boats(self, view: FleetView) -> int:
        mean = view.neighbour_mean
        anchor = view.boats if mean is None else max(view.boats, int(mean + 0.5))
        if view.profit_per_boat <= 0:
            anchor -= 1
        elif view.risk_tolerance >= 0.5 or (mean is not None and mean > view.boats):
            anchor += 1
        return whole_boats(anchor, view.max_boats)

    def decide(self, view: FleetView) -> tuple[int, str]:
        """The A2A company's call: boats and its reasoning."""
        boats = self.boats(view)
        return boats, self.reasoning(view, boats)

    def reasoning(self, view: FleetView, boats: int) -> str:
        """The A2A message: a decision explained from the company's numbers (§4)."""
        aim = "cut our losses" if boats < view.boats else "keep our share"
        deploying = f"deploying {boats_text(boats)} to {aim}"
        if view.neighbour_mean is None:
            return f"No neighbour decisions yet; we expect ${view.profit_per_boat:,.0f} a boat: {deploying}."
        return (
            f"Neighbours average {view.neighbour_mean:.1f} boats (total {view.neighbour_total}); our profit per boat "
            f"was ${view.profit_per_boat:,.0f}: {deploying}."
        )


def boats_text(boats: int) -> str:
    return f"{boats} boat{'' if boats == 1 else 's'}"


@dataclass(frozen=True)
class REPFleet(Policy):
    """The REP company: conditional cooperation between a cooperative and the competitive fleet (§6, Insight 4).

    - cooperative fleet = QUOTA_ESTIMATE / (catch per boat at its density estimate) × (1 − ½·RESOURCE_STRESS):
      the boats that land its sustainable quota, fewer under stress;
    - boats = c·cooperative + (1 − c)·competitive with c = COORDINATION_CONFIDENCE: it restrains as far as it
      trusts the others to, rounded, 1 to ``max_boats``.

    Its sensitivity (REP call 1's output): numbers for the numerical updater, each a proposal for θ —
    quota: regeneration at its density estimate / companies; health: its density estimate / 0.6 (the density of
    maximum regeneration), at most 1; confidence: the share of neighbours whose boats last season were at most the
    hold they had stated the season before (promises kept); stress: industry catch / (industry catch +
    regeneration) last season — plus ``hold`` (the cooperative fleet it commits to if others restrain),
    ``others_at_most`` (its condition: the sustainable fleet per company at its own assessment, at least its hold)
    and ``raise_to`` (its competitive fleet). The text says the same in Appendix B's style; only the text's
    conditions let a reader judge whether the others' stated intentions are compatible (:class:`RuleSynthesis`).
    """

    rule: CompetitiveFleet = CompetitiveFleet()

    name = "rep_fleet"
    classifier = Classifier()

    def assessment(self, view: FleetView) -> tuple[float, float, float | None]:
        """(quota, health, stress) from the company's own reading: its share of the regeneration at its density
        estimate; that density relative to the density of maximum regeneration, at most 1; and last season's
        industry catch over catch plus regeneration (the estimate was read from last season's catch, so the
        regeneration there is last season's): ½ when the stock just held, 1 when nothing grew back (None before
        the first season)."""
        regenerated = view.fishery.regeneration(view.density_estimate)
        health = min(1.0, view.density_estimate / PEAK_DENSITY)
        if view.industry_catch is None:
            return regenerated / view.companies, health, None
        total = view.industry_catch + regenerated
        return regenerated / view.companies, health, view.industry_catch / total if total > 0 else 1.0

    def initial_theta(self, view: FleetView) -> Theta:
        quota, health, _ = self.assessment(view)
        return {QUOTA: quota, HEALTH: health, CONFIDENCE: 0.5, STRESS: 0.5}

    def sustainable_fleet(self, view: FleetView, theta: Theta) -> float:
        """The boats that land QUOTA_ESTIMATE at the company's density estimate (1 when boats would land nothing)."""
        catch = view.expected_catch_per_boat()
        return theta[QUOTA] / catch if catch > 0 else 1.0

    def decide(self, situation: REPSituation) -> tuple[int, Sensitivity]:
        """The REP company's call: boats and the sensitivity it sends."""
        view, theta = situation.view, situation.theta
        sustainable = self.sustainable_fleet(view, theta)
        cooperative, competitive = sustainable * (1 - theta[STRESS] / 2), self.rule.boats(view)
        trust = theta[CONFIDENCE]
        boats = whole_boats(trust * cooperative + (1 - trust) * competitive, view.max_boats)
        hold = whole_boats(cooperative, view.max_boats)
        condition = {"hold": hold, "others_at_most": max(hold, whole_boats(sustainable, view.max_boats))}
        return boats, self.sensitivity(situation, boats, condition | {"raise_to": competitive})

    def sensitivity(self, situation: REPSituation, boats: int, condition: dict[str, int]) -> Sensitivity:
        """The message: proposals for θ, the conditional hold (hold, others_at_most, raise_to), and the text."""
        quota, health, stress = self.assessment(situation.view)
        values = {f"propose:{QUOTA}": quota, f"propose:{HEALTH}": health}
        if situation.promises:
            kept = [boats_then <= held for _, boats_then, held in situation.promises]
            values[f"propose:{CONFIDENCE}"] = sum(kept) / len(kept)
        if stress is not None:
            values[f"propose:{STRESS}"] = stress
        text = sensitivity_text(situation.view, quota, health, stress, boats, **condition)
        return Sensitivity(values | condition, text)


def stock_trend(stress: float | None) -> str:
    """The word for what last season did to the stock: the catch above (declining), near (stable) or below
    (recovering) what grew back, within ±10% of a half share."""
    if stress is None:
        return "not yet fished"
    return "declining" if stress > 0.55 else "recovering" if stress < 0.45 else "stable"


def sensitivity_text(
    view: FleetView,
    quota: float,
    health: float,
    stress: float | None,
    boats: int,
    hold: int,
    others_at_most: int,
    raise_to: int,
) -> str:
    """The templated textual sensitivity of a rule-based REP company, in Appendix B's three kinds: an ecosystem
    assessment (B.1), a conditional willingness to restrain (B.2, §6 Insight 4), and a competitive remark where
    the neighbours' fleets differ widely (B.3)."""
    otherwise = f"raise to {raise_to}" if raise_to > hold else "still hold"
    text = (
        f"Sustainable quota estimate of {quota:.0f} fish and population health of {health:.2f} suggest a "
        f"{stock_trend(stress)} stock. We deploy {boats_text(boats)} and will hold at {hold} if the others average at "
        f"most {others_at_most}; above that we would {otherwise}."
    )
    if view.neighbour_boats:
        (small, fewest), (big, most) = min(view.neighbour_boats, key=_boats), max(view.neighbour_boats, key=_boats)
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
STRESS_OF_TREND = {"declining": 0.75, "stable": 0.5, "recovering": 0.25}


@dataclass(frozen=True)
class Reading:
    """What one templated sensitivity text states (None: it does not say)."""

    quota: float | None = None
    health: float | None = None
    stress: float | None = None  # the stated trend, read as declining ¾, stable ½, recovering ¼
    hold: float | None = None
    others_at_most: float | None = None


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
    return Reading(**{k: v for k, v in numbers.items() if v is not None and math.isfinite(v)})


@dataclass(frozen=True)
class RuleSynthesis(Policy):
    """The textual updater's synthesiser without an LLM (API call 2's job, REP Appendix A.4.2): it turns the
    templated sensitivity texts (the company's own and its neighbours') into a θ proposal:

    - QUOTA_ESTIMATE and POPULATION_HEALTH: the means of the stated assessments;
    - RESOURCE_STRESS: the mean of the stated trends, read as declining ¾, stable ½, recovering ¼;
    - COORDINATION_CONFIDENCE, forward-looking: the share of writers whose stated condition ("if the others
      average at most X") is met by the holds the other writers state — what only text carries, as the Beer
      Game's "temporary / persistent" does.

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
        conditions = [
            (r.hold, r.others_at_most) for r in readings if r.hold is not None and r.others_at_most is not None
        ]
        if len(conditions) >= 2:
            total = sum(hold for hold, _ in conditions)
            met = [(total - hold) / (len(conditions) - 1) <= limit for hold, limit in conditions]
            theta[CONFIDENCE] = sum(met) / len(met)
        return theta
