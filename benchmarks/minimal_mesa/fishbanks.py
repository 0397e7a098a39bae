"""Fishbanks with §6's competitive (A2A) companies, in plain Mesa: twelve companies on one fishing ground for eight
seasons, Meadows' regeneration and catch-effect tables, each company reading the stock from its catch with noise,
deploying half way towards the others' last fleets plus or minus a boat and saying why, and a DataCollector with
the kit's reporters (``coordkit.rep.fishbanks``, protocol "a2a"; θ is NaN there as here). Each company draws r and
v from a stream of its own and its reading errors from another, as the kit's common random numbers do (a generator
per purpose and company, spawned from the seed by the purpose's hashed name); ``same_game`` checks that it plays
the kit's seasons."""

import hashlib
import math

import mesa
import numpy as np

from minimal_mesa import beer_game

DENSITIES = np.linspace(0.0, 1.0, 11)
REGENERATION = np.array([0, 58, 132, 212, 339, 517, 582, 517, 240, 74, 0], dtype=float)
EFFECT = np.array([0, 0.30, 0.56, 0.69, 0.79, 0.88, 0.93, 0.98, 1, 1, 1])
PEAK = DENSITIES[REGENERATION.argmax()]  # the density of maximum regeneration: 0.6000000000000001, as the kit has it
CAPACITY, CATCH, PRICE, BOAT_COST, MAX_BOATS, NOISE = 4000.0, 25.0, 20.0, 250.0, 10, 0.05
NAMES = (  # the kit's companies (the paper's three, then nine more), and their profiles in turn
    "GlobalMega_Corp EcoSustainable_Fisheries Traditional_Family_Fleet Atlantic_Harvest_Co Northern_Trawlers "
    "BlueWave_Seafoods Coastal_Cooperative Harbor_Light_Fishing DeepBlue_Industries Island_Fishers_Union Pacific_Catch "
    "Seaside_Brothers"
).split()
PROFILES = (
    "deep-sea industrial, sustainability-focused, traditional family, export-oriented, mid-size trawler, "
    "coastal cooperative"
).split(", ")


def stream(seed, purpose, index):
    """The kit's stream of ``purpose`` for company ``index``: spawn key (blake2b of the purpose, the index)."""
    word = int.from_bytes(hashlib.blake2b(purpose.encode(), digest_size=4).digest(), "little")
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(word, index)))


SEASON = ("stock", "regeneration", "total_catch")  # the model's own reporters, also each company's


def model_reporters() -> dict:
    """The kit's model reporters: the season's stock, regrowth and catch, and the industry's boats and books."""
    books = {b: (lambda m, b=b: sum(getattr(c, b) for c in m.industry)) for b in ("boats", "revenue", "profit")}
    return {**{name: name for name in SEASON}, **books}


def fish_the_season(model: mesa.Model) -> None:
    """The season on the ground with the fleets deployed: the catch at the stock's density (grouped as the kit groups
    it, to the last bit), the regrowth, each company's share by its boats, its books and its reading; the records."""
    fleet = sum(company.boats for company in model.industry)
    density = model.stock / CAPACITY
    catch = min(model.stock, fleet * (CATCH * float(np.interp(density, DENSITIES, EFFECT))))
    regrown = min(float(np.interp(density, DENSITIES, REGENERATION)), CAPACITY - (model.stock - catch))
    model.total_catch, model.regeneration, model.stock = catch, regrown, model.stock - catch + regrown
    for company in model.industry:
        company.land(catch * company.boats / fleet)
        company.observe(catch / fleet)
    model.datacollector.collect(model)
    model.running = model.steps < model.seasons


class Company(mesa.Agent):
    def __init__(self, model, index, seed):
        super().__init__(model)
        tolerance, value = stream(seed, "company", index).random(2)
        self.tolerance, self.value = float(tolerance), float(value)
        self.noise = stream(seed, "noise", index)
        self.company, self.profile = NAMES[index], PROFILES[index % len(PROFILES)]
        self.boats = min(2 + int(4 * self.tolerance + 0.5), MAX_BOATS)
        self.catch = self.revenue = self.cost = self.profit = 0.0
        self.profit_per_boat = self.density_estimate = 0.0
        self.quota_estimate = self.population_health = math.nan
        self.coordination_confidence = self.resource_stress = math.nan
        self.message = ""

    def observe(self, catch_per_boat):
        """The density read back from the catch-effect table, plus N(0, 0.05) noise, clipped to [0, 1]."""
        self.profit_per_boat = catch_per_boat * PRICE - BOAT_COST
        density = float(np.interp(min(1.0, catch_per_boat / CATCH), EFFECT[:9], DENSITIES[:9]))
        self.density_estimate = min(1.0, max(0.0, density + float(NOISE * self.noise.standard_normal())))

    def competitive(self, heard):
        """Half way towards the others' mean fleet; −1 if boats lose money, +1 if r > v, −1 below the peak."""
        target = self.boats if not heard else self.boats + (sum(heard) / len(heard) - self.boats) / 2
        if self.profit_per_boat <= 0:
            return target - 1
        if self.tolerance > self.value:
            return target + 1
        return target - 1 if self.density_estimate < PEAK else target

    def decide(self, heard):
        """Its competitive fleet, and why, in words."""
        mean = sum(heard) / len(heard) if heard else None
        boats = int(min(max(self.competitive(heard) + 0.5, 1), MAX_BOATS))
        aim = "cut our losses" if boats < self.boats else "keep our share"
        if mean is None:
            why = f"No neighbour decisions yet; we expect ${self.profit_per_boat:,.0f} a boat"
        else:
            why = f"Neighbours average {mean:.1f} boats (total {sum(heard)})"
            why += f"; our profit per boat was ${self.profit_per_boat:,.0f}"
        return boats, f"{why}: deploying {boats} boat{'' if boats == 1 else 's'} to {aim}."

    def land(self, catch):
        self.catch, self.revenue = catch, catch * PRICE
        self.cost = self.boats * BOAT_COST
        self.profit = self.revenue - self.cost


class Fishbanks(mesa.Model):
    def __init__(self, companies=12, seasons=8, stock=3000.0, rng=None):
        super().__init__(rng=rng)
        self.seasons, self.stock = seasons, stock
        self.regeneration = self.total_catch = 0.0
        self.industry = [Company(self, i, rng) for i in range(companies)]
        self.last_fleets = None  # the messages of last season: every company hears every other
        for company in self.industry:
            company.observe(CATCH * np.interp(stock / CAPACITY, DENSITIES, EFFECT))
        self.datacollector = mesa.DataCollector(
            model_reporters=model_reporters(),
            agent_reporters={
                **{name: name for name in ("company", "profile", "boats", "catch", "revenue", "cost", "profit")},
                **{name: name for name in ("density_estimate", "quota_estimate", "population_health")},
                **{name: name for name in ("coordination_confidence", "resource_stress", "message")},
                **{name: (lambda c, n=name: getattr(c.model, n)) for name in SEASON},
            },
        )
        self.datacollector.collect(self)

    def step(self):
        fleets = self.last_fleets
        decisions = [
            company.decide([] if fleets is None else fleets[:i] + fleets[i + 1 :])
            for i, company in enumerate(self.industry)
        ]
        for company, (boats, message) in zip(self.industry, decisions):
            company.boats, company.message = boats, message
        self.last_fleets = [boats for boats, _ in decisions]
        fish_the_season(self)


def one_run(seed: int, model: type[mesa.Model] = Fishbanks) -> mesa.Model:
    played = model(rng=seed)
    played.run_model()
    return played


def same_game(kit_frame, seed: int = 0) -> bool:
    """Whether this model's boats, stock, catches, readings and texts, season by season and company by company, are
    those of ``kit_frame`` (the kit's ``Fishbanks(protocol="a2a", rng=seed).run().frame()``)."""
    return beer_game.same_columns(one_run(seed), kit_frame, ("boats", "stock", "catch", "density_estimate", "message"))
