"""Fishbanks with §6's REP textual companies, in plain Mesa: the rules of ``coordkit.rep.fishbanks`` with its
default protocol "rep_textual" (and the median consensus), on ``fishbanks.py``'s fishing ground, to time the kit's
model against.

The kit's twelve companies, each with r and v drawn from a stream of its own and reading errors from another (the
kit's common random numbers: a generator per purpose and company, spawned from the seed by the purpose's hashed
name). Each season every company reads the texts sent last season, its own first, and takes as θ the means of the
stated quotas, healths and trends (declining ¾, stable ½, recovering ¼), and as its coordination confidence the mean
of words (the share of the writers whose condition the others' stated holds meet) and deeds (the kept words the
writers report); θ becomes the coordinate-wise median over the companies; each deploys c·hold + (1 − c)·its
competitive fleet, and writes its assessment, its conditional hold and who kept their word for next season.
``same_game`` checks that it plays the kit's seasons, boats, stock, θ and texts alike."""

import math
import re
import statistics

import mesa
import numpy as np

from minimal_mesa import beer_game, fishbanks
from minimal_mesa.fishbanks import CAPACITY, CATCH, DENSITIES, EFFECT, MAX_BOATS, NAMES, PEAK, REGENERATION

THETA = ("quota_estimate", "population_health", "coordination_confidence", "resource_stress")
HIGH = dict(zip(THETA, (math.inf, 1.0, 1.0, 1.0)))  # θ is clipped to [0, HIGH]
PEAK_CATCH = CATCH * np.interp(PEAK, DENSITIES, EFFECT)  # a boat's catch at the peak: 23.25 fish
TREND_STRESS = {"declining": 0.75, "stable": 0.5, "recovering": 0.25}
ASSESSMENT = re.compile(r"quota estimate of (\d+) fish and population health of (\d\.\d\d) suggest a (.+?) stock")
CONDITION = re.compile(r"will hold at (\d+) if the others average at most (\d+)")
DEEDS = re.compile(r"(\d+) of (\d+) others kept their word")


def whole(boats):
    return int(min(max(boats + 0.5, 1), MAX_BOATS))


def read(text):
    """(quota, health, stress or None, hold, others_at_most, share kept or None) as a text states them."""
    quota, health, trend = ASSESSMENT.search(text).groups()
    hold, limit = CONDITION.search(text).groups()
    deeds = DEEDS.search(text)
    kept = int(deeds[1]) / int(deeds[2]) if deeds else None
    return float(quota), float(health), TREND_STRESS.get(trend), float(hold), float(limit), kept


def words(conditions):
    """The share of (hold, others_at_most) statements whose condition the other statements' holds meet."""
    total = sum(hold for hold, _ in conditions)
    return sum((total - hold) / (len(conditions) - 1) <= limit for hold, limit in conditions) / len(conditions)


class Company(fishbanks.Company):
    """The A2A company's draws, readings and books, with θ, its promises and the health it reads."""

    def __init__(self, model, index, seed):
        super().__init__(model, index, seed)
        self.index = index
        self.promises = {}  # index → (hold, others_at_most) the others stated last season

    def observe(self, catch_per_boat):
        super().observe(catch_per_boat)
        self.health = min(1.0, self.density_estimate / PEAK)

    def synthesise(self, readings):
        """θ ← θ − 1·(θ − the proposal its own text, then the others', state), clipped."""
        proposal = dict(self.theta)
        for name, column in zip(THETA[:2], (0, 1)):
            proposal[name] = sum(r[column] for r in readings) / len(readings)
        if trends := [r[2] for r in readings if r[2] is not None]:
            proposal["resource_stress"] = sum(trends) / len(trends)
        reports = [r[5] for r in readings if r[5] is not None]
        trust = [words([r[3:5] for r in readings]), *([sum(reports) / len(reports)] if reports else [])]
        proposal["coordination_confidence"] = sum(trust) / len(trust)
        self.theta = {name: min(max(v - 1.0 * (v - proposal[name]), 0.0), HIGH[name]) for name, v in self.theta.items()}

    def decide(self, sent):
        """Boats between its hold and its competitive fleet, as far as it trusts the others; the text it sends."""
        others = [(j, boats, hold, limit) for j, (boats, hold, limit, _) in enumerate(sent or []) if j != self.index]
        fleets = [boats for _, boats, _, _ in others]
        kept = []
        if others:
            total = self.boats + sum(fleets)
            kept = [
                boats <= self.promises[j][0] or (total - boats) / len(others) > self.promises[j][1]
                for j, boats, _, _ in others
                if j in self.promises
            ]
        self.promises = {j: (hold, limit) for j, _, hold, limit in others}
        competitive, share = whole(self.competitive(fleets)), self.theta["quota_estimate"] / PEAK_CATCH
        hold, trust = share * 2 ** (self.tolerance - self.value), self.theta["coordination_confidence"]
        boats = whole(competitive if trust == 0 else trust * hold + (1 - trust) * competitive)
        held = whole(hold)
        limit = min(max(held, math.ceil(min(share, MAX_BOATS))), MAX_BOATS)
        return boats, held, limit, self.text(boats, held, limit, competitive, kept, others)

    def text(self, boats, hold, limit, competitive, kept, others):
        """Its assessment (the trend: last season's catch over catch plus regrowth at its reading), its conditional
        hold, how many others kept their word, and the widest gap between the others' fleets if 3 boats or more."""
        model = self.model
        trend = "not yet fished"
        if model.steps > 1:
            grown = model.total_catch + float(np.interp(self.density_estimate, DENSITIES, REGENERATION))
            stress = model.total_catch / grown if grown > 0 else 1.0
            trend = "declining" if stress > 0.55 else "recovering" if stress < 0.45 else "stable"
        text = (
            f"Sustainable quota estimate of {model.quota:.0f} fish and population health of {self.health:.2f} "
            f"suggest a {trend} stock. We deploy {boats} boat{'' if boats == 1 else 's'} and will hold at {hold} "
            f"if the others average at most {limit}; above that we would "
            f"{f'raise to {competitive}' if competitive > hold else 'still hold'}."
        )
        if kept:
            text += f" Last season {sum(kept)} of {len(kept)} others kept their word."
        if others:
            small, fewest, *_ = min(others, key=lambda other: other[1])  # the first of the smallest fleets
            big, most, *_ = max(others, key=lambda other: other[1])
            if most - fewest >= 3:
                text += (
                    f" Fleet sizes differ significantly ({NAMES[big]}: {most} boats vs {NAMES[small]}: {fewest} "
                    "boats), indicating emerging competitive clusters."
                )
        return text


class Fishbanks(mesa.Model):
    def __init__(self, companies=12, seasons=8, stock=3000.0, rng=None):
        super().__init__(rng=rng)
        self.seasons, self.stock = seasons, stock
        self.regeneration = self.total_catch = 0.0
        self.quota = float(np.interp(PEAK, DENSITIES, REGENERATION)) / companies
        self.industry = [Company(self, i, rng) for i in range(companies)]
        self.sent = None  # every company's (boats, hold, others_at_most, text) of last season
        for company in self.industry:
            company.observe(CATCH * np.interp(stock / CAPACITY, DENSITIES, EFFECT))
            company.theta = dict(zip(THETA, (self.quota, company.health, 0.5, 0.5)))
        self.datacollector = mesa.DataCollector(
            model_reporters=fishbanks.model_reporters(),
            agent_reporters={
                **{name: name for name in ("company", "profile", "boats", "catch", "revenue", "cost", "profit")},
                "density_estimate": "density_estimate",
                **{name: (lambda c, n=name: c.theta[n]) for name in THETA},
                "message": "message",
                **{name: (lambda c, n=name: getattr(c.model, n)) for name in fishbanks.SEASON},
            },
        )
        self.datacollector.collect(self)

    def step(self):
        if self.sent:
            readings = [read(text) for *_, text in self.sent]
            for i, company in enumerate(self.industry):
                company.synthesise([readings[i], *readings[:i], *readings[i + 1 :]])
        median = {name: float(statistics.median(c.theta[name] for c in self.industry)) for name in THETA}
        for company in self.industry:  # the consensus
            company.theta = dict(median)
        self.sent = [company.decide(self.sent) for company in self.industry]
        for company, (boats, *_, text) in zip(self.industry, self.sent):
            company.boats, company.message = boats, text
        fishbanks.fish_the_season(self)


def one_run(seed: int) -> Fishbanks:
    return fishbanks.one_run(seed, Fishbanks)


def same_game(kit_frame, seed: int = 0) -> bool:
    """Whether this model's boats, stock, θ and texts, season by season and company by company, are those of
    ``kit_frame`` (the kit's ``Fishbanks(rng=seed).run().frame()``)."""
    return beer_game.same_columns(one_run(seed), kit_frame, ("boats", "stock", *THETA, "message"))
