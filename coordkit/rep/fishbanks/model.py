"""Fishbanks (Meadows; Sterman & King 2017) as a Mesa model, played by A2A or REP companies (REP paper §6).

Twelve companies (5 to 12 in the paper) fish one shared stock for 8 seasons, fully connected: everyone hears
everyone. Each season:

1. the protocol round — receive last season's messages, aggregate them into θ (REP), the optional coordinate-wise
   median consensus, decide how many boats to deploy (1 to 10), send;
2. fishing at the start-of-season density, regeneration, and the books (:mod:`.ecology`);
3. each company reads the stock again from its catch per boat (with noise).
"""

from typing import Any

import mesa
import numpy as np
import pandas as pd

from coordkit.contests import Population
from coordkit.model import Model
from coordkit.parameters import Choice, Integer, ParameterError, Parameters, PolicyChoice, Real
from coordkit.policies import Policy, llm_parameters
from coordkit.policy_registry import fresh_policy, per_agent
from coordkit.rep.fishbanks import metrics
from coordkit.rep.fishbanks.agents import A2ACompany, Company, REPCompany, note
from coordkit.rep.fishbanks.ecology import Fishery
from coordkit.rep.fishbanks.llm_policies import a2a_policy, rep_policy, synthesis_policy
from coordkit.rep.fishbanks.policies import (
    CONFIDENCE,
    HEALTH,
    QUOTA,
    STRESS,
    THETA_NAMES,
    CompetitiveFleet,
    REPFleet,
    RuleSynthesis,
    StudentFleet,
)
from coordkit.rep.protocol import Message, NeighbourMulticast, consensus_parameter
from coordkit.rep.protocol_network import ProtocolNetwork
from coordkit.rep.records import agent_table

PROTOCOLS = ("a2a", "rep_numerical", "rep_textual")
PROTOCOL_NAMES = {"a2a": "A2A", "rep_numerical": "REP numerical", "rep_textual": "REP textual"}
# the paper's three companies (Appendix A, B), then nine more; beyond twelve, "Company 13", ...
COMPANY_NAMES = (
    "GlobalMega_Corp",
    "EcoSustainable_Fisheries",
    "Traditional_Family_Fleet",
    "Atlantic_Harvest_Co",
    "Northern_Trawlers",
    "BlueWave_Seafoods",
    "Coastal_Cooperative",
    "Harbor_Light_Fishing",
    "DeepBlue_Industries",
    "Island_Fishers_Union",
    "Pacific_Catch",
    "Seaside_Brothers",
)
PROFILES = (
    "deep-sea industrial",
    "sustainability-focused",
    "traditional family",
    "export-oriented",
    "mid-size trawler",
    "coastal cooperative",
)
THETA_BOUNDS = {QUOTA: (0.0, float("inf")), HEALTH: (0.0, 1.0), CONFIDENCE: (0.0, 1.0), STRESS: (0.0, 1.0)}


def _stock_within_capacity(p: dict) -> None:
    if p["initial_stock"] > p["capacity"]:
        raise ParameterError(
            f"initial_stock={p['initial_stock']} is above the capacity ({p['capacity']}): "
            f"use an initial_stock of at most {p['capacity']}, or raise capacity"
        )


def initial_fleet(risk_tolerance: float, max_boats: int) -> int:
    """2 + round(4·r) boats, at most ``max_boats``: the kit's choice (the paper gives no initial fleets)."""
    return min(2 + int(4 * risk_tolerance + 0.5), max_boats)


def company_name(index: int) -> str:
    return COMPANY_NAMES[index] if index < len(COMPANY_NAMES) else f"Company {index + 1}"


class Fishbanks(Model):
    """``companies`` fishing companies share one fish stock for ``seasons`` seasons (REP paper §6, Figure 2).

    Each company has a profile, a risk tolerance r ~ U(0, 1) and a sustainability value v ~ U(0, 1) (Appendix A's
    prompt), and starts with 2 + round(4·r) boats (the kit's choice: the paper gives no initial fleets). A2A
    companies escalate competitively (:class:`CompetitiveFleet`); REP companies hold as far as they trust the
    others to (:class:`REPFleet`) and update their coordination
    variables θ = {quota_estimate, population_health, coordination_confidence, resource_stress} (Appendix A.2)
    from the neighbours' sensitivities, numerically or textually.

    With ``llm``, every company decides with the paper's call-1 prompt and the textual updater synthesises with
    call 2; a reply that cannot be used falls back to the rules, counted in ``llm_fallbacks``. A run stopped by the
    LLM budget raises :class:`~coordkit.llm.BudgetExceeded` from ``run()``.

    With ``policy`` (issue 45), every company deploys with a student's rule instead: a function of the company's
    :class:`~coordkit.rep.fishbanks.policies.FleetObservation` that returns whole boats or a
    :class:`~coordkit.rep.fishbanks.policies.Deployment`, a Policy or a registered name. The rule replaces the boats
    alone: under REP the company still sends its sensitivity, with the conditional hold its REP rule states, and the
    protocol still updates θ; under A2A it sends the rule's message, or its own reasoning about those boats.
    """

    parameters = Parameters(
        Choice(
            "protocol",
            "rep_textual",
            PROTOCOLS,
            labels=PROTOCOL_NAMES,
            doc="how companies coordinate: A2A (decisions and reasoning), or REP with the numerical or the textual "
            "updater",
        ),
        Integer(
            "companies", 12, 2, 50, doc="fishing companies (the paper plays 12 in §6; its §4 says 5-8)", slider=(5, 12)
        ),
        Integer("seasons", 8, 1, 100, doc="horizon (the paper plays 8)", unit="seasons", slider=(2, 20)),
        Integer(
            "initial_stock",
            3000,
            0,
            1_000_000,
            doc="fish at the start; the paper gives none: the kit's choice is three quarters of capacity",
            unit="fish",
            slider=(0, 4000),
        ),
        Integer(
            "capacity",
            4000,
            100,
            1_000_000,
            doc="the most fish the ground holds (the classic game's 4,000)",
            unit="fish",
            slider=(1000, 8000),
        ),
        Real(
            "regeneration",
            1.0,
            0,
            5,
            doc="multiplier of the classic regeneration table (1: Meadows' Fishbanks)",
            step=0.1,
            slider=(0, 2),
        ),
        Real(
            "catch_per_boat",
            25.0,
            0,
            1000,
            low_open=True,
            doc="fish a boat lands in a season at full catch effect (the classic game's 25)",
            unit="fish",
            step=1,
            slider=(5, 50),
        ),
        Real(
            "fish_price",
            20.0,
            0,
            10_000,
            doc="price of a fish (the classic game's $20)",
            unit="$",
            step=1,
            slider=(0, 50),
        ),
        Real(
            "boat_cost",
            250.0,
            0,
            100_000,
            doc="operating cost of a boat for a season (the classic game's deep-sea $250)",
            unit="$",
            step=10,
            slider=(0, 600),
        ),
        Integer(
            "max_boats", 10, 1, 100, doc="most boats a company deploys in a season (the paper: 1-10)", slider=(1, 20)
        ),
        Real(
            "observation_noise",
            0.05,
            0,
            0.5,
            doc="standard deviation of each company's error in reading the fish density from its catch",
            step=0.01,
        ),
        Real(
            "viability_threshold",
            0.35,
            0,
            1,
            doc="the sustainability index below which the resource is not viable (the paper's 0.35, Fig. 2B)",
            step=0.05,
        ),
        consensus_parameter(
            "median_coordinate",
            "REP §3.2's consensus: the coordinate-wise median of θ over all companies, each season (the paper's "
            "setting for both protocols, Table 2)",
        ),
        PolicyChoice(
            "policy",
            None,
            (),
            optional="the protocol's own rule: the competitive fleet (A2A), blended with the REP hold (REP)",
            doc="how the companies deploy: a function of a FleetObservation that returns whole boats (or a "
            "Deployment), a Policy, or a name given to coordkit.register_policy, for every company or one per company "
            "(a list, or a mapping by name: 'GlobalMega_Corp', ...); the protocol keeps its messages",
            agents="company",
        ),
        *llm_parameters(
            optional="rule-based companies, no calls",
            doc="the LLM client the companies ask (call 1) and the textual updater synthesises with (call 2)",
        ),
        relations=(_stock_within_capacity,),
    )
    # common random numbers (coordkit.streams): each company's risk tolerance and sustainability value from its own
    # stream, and its reading errors from another (standard normal draws that observation_noise scales), so every
    # protocol meets the same companies with the same fleets and the same errors, and more companies keep the first
    contest = Population(
        "policy",
        "companies",
        score=lambda fishbanks: [company.cumulative_profit for company in fishbanks.industry],
        measure="a company's profit over the seasons ($)",
    )

    # a stochastic student's rule draws from its company's "policy" stream
    random_streams = {"company": (), "noise": (), "policy": ()}

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        self.fishery = Fishery(
            float(self.capacity), self.regeneration, self.catch_per_boat, self.fish_price, self.boat_cost
        )
        self.stock = float(self.initial_stock)
        self.regenerated = self.total_catch = 0.0
        self.transport = NeighbourMulticast()
        self.synthesiser = RuleSynthesis() if self.llm is None else synthesis_policy(self.llm, RuleSynthesis())
        self.protocol_network = ProtocolNetwork(
            self.transport, self.consensus, self.synthesiser, eta=0.5, bounds=THETA_BOUNDS
        )

        self.industry = [self._company(i) for i in range(self.companies)]
        self._names = {company.unique_id: company.name for company in self.industry}
        self._notes_season, self._notes = -1, {}
        self._observe(self.fishery.catch_per_boat_at(self.fishery.density(self.stock)))
        everyone = [company.unique_id for company in self.industry]
        students = per_agent("policy", self.policy, [company.name for company in self.industry])
        for company, student in zip(self.industry, students):
            others = [other for other in everyone if other != company.unique_id]
            company.client = self._client(company, others, student)

        self.datacollector = mesa.DataCollector(
            model_reporters={
                "stock": "stock",
                "regeneration": "regenerated",
                "total_catch": "total_catch",
                **{books: _industry_total(books) for books in ("boats", "revenue", "profit")},
            },
            agent_reporters={
                "company": "name",
                "profile": "profile",
                "boats": "boats",
                "catch": "catch",
                "revenue": "revenue",
                "cost": "cost",
                "profit": "profit",
                "density_estimate": "density_estimate",
                **{name: _theta_reporter(name) for name in THETA_NAMES},
                "message": "message",
                # the season's, repeated for every company (the frame's last columns)
                "stock": lambda company: company.model.stock,
                "regeneration": lambda company: company.model.regenerated,
                "total_catch": lambda company: company.model.total_catch,
            },
        )
        self.datacollector.collect(self)

    def _company(self, index: int) -> Company:
        """Company ``index``, its risk tolerance and sustainability value drawn from U(0, 1) in its own stream."""
        tolerance, value = self.streams("company", index).random(2)
        profile = PROFILES[index % len(PROFILES)]
        fleet = initial_fleet(tolerance, self.max_boats)
        return Company(self, company_name(index), profile, float(tolerance), float(value), fleet)

    def _client(self, company: Company, neighbours: list[int], student: Any):
        """The company's protocol client: same transport, topology and consensus for every protocol (Table 2);
        the company deploys with ``student`` (its ``policy``) if given."""
        rule = CompetitiveFleet()
        student = (
            None
            if student is None
            else fresh_policy(student, type(self), self.streams("policy", self.industry.index(company)))
        )
        if self.protocol == "a2a":
            policy = a2a_policy(self.llm, rule) if self.llm is not None else None
            agent = A2ACompany(company, rule, StudentFleet(student, rule) if student is not None else policy)
        else:
            fleet = REPFleet(rule)
            policy = rep_policy(self.llm, fleet) if self.llm is not None else None
            agent = REPCompany(company, fleet, StudentFleet(student, fleet) if student is not None else policy)
        return self.protocol_network.client(self.protocol, agent, company.unique_id, neighbours)

    def name_of(self, unique_id: int) -> str:
        return self._names[unique_id]

    def notes(self, messages: list[Message]) -> tuple[str, ...]:
        """The messages as a company reads them (:func:`~.agents.note`), each written out once a season however
        many companies read it."""
        if self._notes_season != self.steps:
            self._notes_season, self._notes = self.steps, {}
        for message in messages:
            if message.sender not in self._notes:
                self._notes[message.sender] = note(self.name_of(message.sender), message)
        return tuple(self._notes[message.sender] for message in messages)

    def step(self) -> None:
        self._protocol_round()
        fleet = sum(company.boats for company in self.industry)
        self.total_catch, self.regenerated, self.stock = self.fishery.season(self.stock, fleet)
        for company in self.industry:
            company.land(self.total_catch * company.boats / fleet)
        self._observe(self.total_catch / fleet)
        self.datacollector.collect(self)
        self.running = self.steps < self.seasons

    def _observe(self, catch_per_boat: float) -> None:
        """Every company reads the density from the catch per boat (shared in proportion to boats, so the same for
        all), each with its own noise, drawn from its own stream."""
        for index, company in enumerate(self.industry):
            error = self.observation_noise * self.streams("noise", index).standard_normal()
            company.observe(catch_per_boat, float(error))

    def _protocol_round(self) -> None:
        """The protocol round (REP §3.1; with an LLM, each stage of it one round of concurrent calls), then every
        company deploys what it decided."""
        clients = [company.client for company in self.industry]
        decisions = self.protocol_network.round(
            clients, concurrent=self.llm is not None, max_concurrency=self.max_concurrency
        )
        for company, (boats, signal) in zip(self.industry, decisions):
            company.deploy(boats, signal if isinstance(signal, str) else signal.text)

    def policies(self) -> list[Policy]:
        """The companies' policies and the synthesiser."""
        return [*(company.client.agent.policy for company in self.industry), self.synthesiser]

    def frame(self) -> pd.DataFrame:
        """One row per season and company (season 0 is the initial state).

        Columns: season, company, profile, boats (deployed this season; season 0: the initial fleet), catch,
        revenue, cost, profit (this season's books, $), density_estimate (the company's reading of stock /
        capacity after the season), quota_estimate, population_health, coordination_confidence, resource_stress
        (θ as the company decided with it this season; NaN for A2A), message (its reasoning or sensitivity text);
        and the season's stock (after the season), regeneration and total_catch (repeated for every company).
        """
        return agent_table(self.datacollector, "season")

    def summary(self) -> dict:
        """Final population, sustainability index, seasons above the threshold, mean health and coordination,
        profit margin, total profit (:mod:`.metrics`), and LLM use."""
        seasons = self.datacollector.get_model_vars_dataframe().rename_axis("season").reset_index()
        return {
            **metrics.summary(seasons, self.capacity, self.viability_threshold),
            "llm_calls": self.llm_calls,
            "llm_fallbacks": self.llm_fallbacks,
        }


def _industry_total(books: str):
    return lambda model: sum(getattr(company, books) for company in model.industry)


def _theta_reporter(name: str):
    return lambda company: company.client.theta.get(name, np.nan)
