"""Movie scheduling as a Mesa model: agents on a sparse or small-world network agree on a ticket PRICE and a
START TIME (REP paper §7, Figure 3).

Round 0 opens with one agent's ideal (the organiser, drawn at random) as everyone's local proposal θ_i. Each
round then has §7's two stages, on the REP core (:mod:`coordkit.rep.protocol`):

1. every agent decides at its θ_i whether it would join and sends its neighbours a message — REP: its
   preference sensitivities (numbers, or text); A2A: free-form reasoning — and updates θ_i: REP aggregates the
   neighbours' sensitivities (the numerical or the textual updater), A2A reasons locally (keeps a proposal it
   would join, else takes its own ideal);
2. the group proposal is the coordinate-wise median of the θ_i — with ``consensus``, REP's median consensus,
   which every agent adopts — and every agent votes on it.

Both protocols share the network, the transport and the consensus rule (Table 2). The consensus of a round
(the paper does not define it) is the share of agents who would join the round's group proposal (U ≥ 0); the
convergence round is the first round whose consensus reaches ``convergence_threshold`` (the paper's 70%).
"""

import statistics
import time
from dataclasses import dataclass

import mesa
import numpy as np
import pandas as pd
from mesa.discrete_space import Network

from coordkit import networks
from coordkit.model import Model
from coordkit.parameters import Choice, Flag, Integer, ParameterError, Parameters, Real
from coordkit.policies import Policy, decision_round, llm_parameters
from coordkit.rep.movies import preferences
from coordkit.rep.movies.agents import A2AMoviegoer, Moviegoer, REPMoviegoer
from coordkit.rep.movies.llm_policies import MovieNight, a2a_policy, rep_policy, synthesis_policy
from coordkit.rep.movies.policies import PRICE, TIME, RangeSynthesis, REPParticipation, Satisficer
from coordkit.rep.movies.preferences import EVENING, PRICE_RANGE
from coordkit.rep.protocol import (
    InProcessTransport,
    Message,
    Sensitivity,
    configure_protocol,
    consensus_parameter,
    run_consensus,
)

PROTOCOLS = ("a2a", "rep_numerical", "rep_textual")
PROTOCOL_NAMES = {"a2a": "A2A", "rep_numerical": "REP numerical", "rep_textual": "REP textual"}
NETWORKS = ("sparse", "small_world")
THETA_BOUNDS = {PRICE: PRICE_RANGE, TIME: EVENING}


@dataclass(frozen=True)
class RoundTiming:
    """The wall clock of one round played by LLM agents (:mod:`~coordkit.rep.movies.profiling` reads it): the
    round's wall time, each agent's own calls (decision and, for REP textual, synthesis), and the transport's
    send, deliver and receive."""

    round: int
    wall_s: float
    agent_call_s: tuple[float, ...]
    communication_s: float


def _sparse_network_can_connect(p: dict) -> None:
    if p["network"] != "sparse":
        return
    n, sparsity = p["population"], p["sparsity"]
    total = networks.pairs(n)
    deleted = round(sparsity * total)
    if total - deleted < n - 1:
        raise ParameterError(
            f"sparsity={sparsity} deletes {deleted} of the {total} edges among population={n} agents, leaving "
            f"fewer than the {n - 1} that connect them: lower sparsity or raise population"
        )


def _small_world_fits(p: dict) -> None:
    if p["network"] != "small_world":
        return
    if p["degree"] % 2:
        raise ParameterError(
            f"degree={p['degree']} is odd: a small-world ring links degree/2 neighbours on each side; "
            "use an even degree"
        )
    if p["degree"] >= p["population"]:
        raise ParameterError(
            f"degree={p['degree']} needs a population above it (population={p['population']}): "
            "lower degree or raise population"
        )


class MovieScheduling(Model):
    """``population`` agents with heterogeneous budgets and schedules (:mod:`.preferences`) on a ``network``
    agree on a movie night's PRICE and TIME over ``rounds`` rounds by REP or A2A.

    With ``llm``, every agent decides (call 1) through it and REP textual's updater synthesises (call 2) through
    it, each stage one round of concurrent calls; a reply that cannot be used falls back to the rules, counted
    in ``llm_fallbacks``. Such a model also keeps ``round_timings`` (wall-clock, for
    :mod:`~coordkit.rep.movies.profiling`; never in a frame or a summary).
    """

    parameters = Parameters(
        Choice(
            "protocol",
            "rep_numerical",
            PROTOCOLS,
            labels=PROTOCOL_NAMES,
            doc="how agents coordinate: A2A (decisions and reasoning), or REP with numerical or textual sensitivities",
        ),
        Integer("population", 20, 2, 1000, doc="agents (the paper: 20, and 5 to 200)", unit="agents", slider=(5, 200)),
        Choice(
            "network",
            "sparse",
            NETWORKS,
            labels={"sparse": "sparse (edges deleted)", "small_world": "small world"},
            doc="the complete graph with a fraction of edges deleted, or a Watts–Strogatz small world",
        ),
        Real(
            "sparsity",
            0.3,
            0,
            0.9,
            doc="for a sparse network, the fraction of edges deleted (the paper: 0, 0.3, 0.6)",
            slider=(0, 0.8),
        ),
        Integer("degree", 4, 2, 100, doc="for a small world, each agent's ring neighbours (even)", slider=(2, 12)),
        Real("rewiring", 0.1, 0, 1, doc="for a small world, the probability that an edge is rewired"),
        Integer("rounds", 20, 1, 200, doc="horizon (the paper plays 20)", unit="rounds", slider=(5, 60)),
        Real(
            "step_size",
            0.5,
            0,
            1,
            low_open=True,
            doc="η, the numerical updater's step towards the neighbours' mean proposal (§3.2)",
        ),
        consensus_parameter(
            "median_coordinate",
            "§7's stage 2: every agent adopts the coordinate-wise median of the proposals (None: local only)",
        ),
        Real(
            "convergence_threshold",
            0.7,
            0,
            1,
            low_open=True,
            doc="the consensus at which a run has converged (the paper's stars: 0.7)",
        ),
        Flag("stop_at_convergence", False, doc="end the run at its convergence round (fewer LLM calls)"),
        Real("price_mean", 12.0, *PRICE_RANGE, doc="mean ideal price (clipped to $4-$30)", unit="$", slider=(6, 20)),
        Real("price_sd", 4.0, 0, 20, doc="spread of ideal prices", unit="$", slider=(0, 8)),
        Real("time_mean", 20.0, *EVENING, doc="mean ideal start (clipped to 17:00-23:00)", unit="h", slider=(18, 22)),
        Real("time_sd", 1.5, 0, 6, doc="spread of ideal start times", unit="h", slider=(0, 3)),
        Real(
            "price_scale", 5.0, 1, 50, doc="P: a price this far from the ideal costs the whole price weight", unit="$"
        ),
        Real("time_scale", 2.0, 0.5, 6, doc="T: a start this far from the ideal costs the whole time weight", unit="h"),
        *llm_parameters(
            optional="rule-based agents, no calls",
            doc="the LLM client every agent decides with (call 1) and REP textual's updater synthesises with (call 2)",
        ),
        relations=(_sparse_network_can_connect, _small_world_fits),
    )

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        n = self.population
        self.preferences = draw_preferences(self.rng, self.params)
        self.edges = draw_network(self.rng, self.params)
        self.organiser = int(self.rng.integers(n))
        opening = {
            PRICE: float(self.preferences.price[self.organiser]),
            TIME: float(self.preferences.time[self.organiser]),
        }

        self.space = Network(networks.to_networkx(n, self.edges), random=self.random, layout=None)
        self.transport = InProcessTransport()
        self.night = MovieNight(n, self.rounds)
        rule_synthesis = RangeSynthesis(self.price_scale, self.time_scale)
        self.synthesiser = rule_synthesis if self.llm is None else synthesis_policy(self.llm, rule_synthesis)
        self.goers = [Moviegoer(self, node, self.preferences.of(node)) for node in range(n)]
        for goer in self.goers:
            goer.client = self._client(goer, opening)
            goer.local_price, goer.local_time = opening[PRICE], opening[TIME]
        self.round_timings: list[RoundTiming] = []
        self._notes_round, self._notes = -1, {}
        self.converged = False
        self._vote()
        for goer in self.goers:
            goer.joins = goer.votes  # round 0: who would join the opening proposal

        self.datacollector = mesa.DataCollector(
            model_reporters={
                "price": "group_price",
                "time": "group_time",
                "consensus": "share_joining",
                "participants": "participants",
                "converged": "converged",
            },
            agent_reporters={
                "agent": "node",
                "price": "local_price",
                "time": "local_time",
                "joins": "joins",
                "votes": "votes",
                "message": "message",
            },
        )
        self.datacollector.collect(self)

    def _client(self, goer: Moviegoer, opening: dict):
        """The agent's protocol client: the same transport, network and consensus for every protocol (§4)."""
        link = {
            "agent_id": goer.node,
            "neighbours": sorted(self.space.G.adj[goer.node]),
            "transport": self.transport,
            "consensus": self.consensus,
        }
        if self.protocol == "a2a":
            policy = Satisficer() if self.llm is None else a2a_policy(self.llm, Satisficer(), self.night)
            return configure_protocol("a2a", A2AMoviegoer(goer, opening, policy), **link)
        rule = REPParticipation("numerical" if self.protocol == "rep_numerical" else "textual")
        policy = rule if self.llm is None else rep_policy(self.llm, rule, self.night)
        agent = REPMoviegoer(goer, opening, policy)
        return configure_protocol(
            self.protocol, agent, synthesiser=self.synthesiser, eta=self.step_size, bounds=THETA_BOUNDS, **link
        )

    def describe(self, message: Message) -> str:
        """A neighbour's message as an agent reads it: who, its decision, and its sensitivity or reasoning."""
        words = message.sensitivity.text if message.sensitivity is not None else message.reasoning
        return f"Agent {message.sender} {'joins' if message.decision else 'declines'}: {words}"

    def notes(self, messages: list[Message]) -> tuple[str, ...]:
        """The messages as an agent reads them, each written out once a round however many neighbours read it."""
        if self._notes_round != self.steps:
            self._notes_round, self._notes = self.steps, {}
        for message in messages:
            if message.sender not in self._notes:
                self._notes[message.sender] = self.describe(message)
        return tuple(self._notes[message.sender] for message in messages)

    def step(self) -> None:
        """One round: stage 1 (decide, message, update θ_i), then stage 2 (consensus, vote)."""
        started = time.perf_counter()
        concurrent = self.llm is not None
        for goer in self.goers:
            goer.call_s = 0.0
        # stage 1: decide at θ_i, tell the neighbours, update θ_i
        decisions = decision_round("decide", self.goers, concurrent=concurrent, max_concurrency=self.max_concurrency)
        talking = time.perf_counter()
        for goer, (joins, signal) in zip(self.goers, decisions):
            goer.client.send(joins, signal)
        self.transport.deliver()
        for goer in self.goers:
            goer.client.receive()
        talking = time.perf_counter() - talking
        for goer, (joins, signal) in zip(self.goers, decisions):
            goer.joins = joins
            goer.message = signal.text if isinstance(signal, Sensitivity) else signal
        if self.protocol == "a2a":
            for goer in self.goers:
                goer.reason_locally()
        else:
            textual_llm = concurrent and self.protocol == "rep_textual"
            decision_round("sync", self.goers, concurrent=textual_llm, max_concurrency=self.max_concurrency)
        for goer in self.goers:
            goer.local_price, goer.local_time = goer.proposal[PRICE], goer.proposal[TIME]
        # stage 2: the median consensus and the vote on the group proposal
        run_consensus([goer.client for goer in self.goers])
        self._vote()
        if self.llm is not None:
            calls = tuple(goer.call_s for goer in self.goers)
            self.round_timings.append(RoundTiming(self.steps, time.perf_counter() - started, calls, talking))
        self.datacollector.collect(self)
        self.running = self.steps < self.rounds and not (self.stop_at_convergence and self.converged)

    def _vote(self) -> None:
        """The group proposal (the coordinate-wise median of the θ_i) and who would join it."""
        proposals = [goer.proposal for goer in self.goers]
        self.group_price = float(statistics.median(theta[PRICE] for theta in proposals))
        self.group_time = float(statistics.median(theta[TIME] for theta in proposals))  # Mesa's model.time is its clock
        votes = preferences.joins(self.preferences, self.group_price, self.group_time)
        for goer, vote in zip(self.goers, votes):
            goer.votes = bool(vote)
        self.participants = int(votes.sum())
        self.share_joining = self.participants / self.population
        self.converged = self.converged or self.share_joining >= self.convergence_threshold

    def policies(self) -> list[Policy]:
        """Every agent's policy, and the textual updater's synthesiser when it is used."""
        agents = [goer.client.agent.policy for goer in self.goers]
        return agents + ([self.synthesiser] if self.protocol == "rep_textual" else [])

    def frame(self) -> pd.DataFrame:
        """One row per round (round 0 is the opening proposal).

        Columns: round; price and time, the group proposal; consensus, the share of agents who would join it;
        participants, how many; converged, whether consensus has reached the threshold by this round.
        """
        rounds = self.datacollector.get_model_vars_dataframe().reset_index(drop=True)
        rounds.insert(0, "round", np.arange(len(rounds)))
        return rounds

    def agents_frame(self) -> pd.DataFrame:
        """One row per round and agent: round, agent, price and time (its θ_i after stage 1, before the
        consensus), joins (its stage-1 decision; in round 0, whether it would join the opening proposal), votes
        (its stage-2 vote on the group proposal), message (the sensitivity or reasoning it sent; empty in
        round 0)."""
        agents = self.datacollector.get_agent_vars_dataframe().reset_index()
        agents = agents.rename(columns={"Step": "round"}).drop(columns="AgentID")
        agents["round"] = agents["round"].astype(int)
        return agents

    def summary(self) -> dict:
        """The run's :func:`outcome` (final and best consensus, convergence round), the final proposal, the
        network's density and edges, and LLM use."""
        return {
            **outcome(self.datacollector.model_vars["consensus"], self.convergence_threshold),
            "final_price": self.group_price,
            "final_time": self.group_time,
            "density": networks.density(self.population, self.edges),
            "edges": len(self.edges),
            "llm_calls": self.llm_calls,
            "llm_fallbacks": self.llm_fallbacks,
        }


def draw_preferences(rng: np.random.Generator, params: dict) -> preferences.Preferences:
    """The population's preferences the parameters ask for, drawn first from ``rng``."""
    names = ("price_mean", "price_sd", "time_mean", "time_sd", "price_scale", "time_scale")
    return preferences.draw(rng, params["population"], **{name: params[name] for name in names})


def draw_network(rng: np.random.Generator, params: dict) -> np.ndarray:
    """The edge list the parameters ask for, drawn from ``rng`` (after the preferences, before the organiser)."""
    if params["network"] == "sparse":
        return networks.sparse(params["population"], params["sparsity"], rng)
    return networks.small_world(params["population"], params["degree"], params["rewiring"], rng)


def outcome(consensus, threshold: float) -> dict:
    """From a run's consensus per round (round 0 first): the final and the best consensus, the convergence
    round — the first round whose consensus reaches ``threshold``, NaN if none does (DNF) — and whether it
    converged."""
    consensus = np.asarray(consensus, dtype=float)
    reached = np.flatnonzero(consensus >= threshold)
    return {
        "final_consensus": float(consensus[-1]),
        "max_consensus": float(consensus.max()),
        "convergence_round": float(reached[0]) if len(reached) else float("nan"),
        "converged": bool(len(reached)),
    }
