"""Movie scheduling as a Mesa model: agents on a sparse small-world network agree on a ticket PRICE and a
START TIME (REP paper §7, Figure 3, Table 1).

Round 0 opens with one proposal for everyone: a venue's offer relayed by the organiser (an agent drawn at
random), or the organiser's own ideal. Each round then has §7's two stages, on the REP core
(:mod:`coordkit.rep.protocol`):

1. every agent decides at its own proposal θ_i whether it would join and tells its neighbours — REP: its
   preference sensitivities (numbers, or text); A2A: its decision and free-form reasoning — and updates θ_i:
   REP aggregates its own and its neighbours' sensitivities (the numerical or the textual updater); A2A
   reasons locally;
2. the group's proposal is formed and every agent votes on it.

The paper says several things about stage 2 (docs/rep-readings.md), and ``reading`` chooses. ``"table2"``: the
group's proposal is the coordinate-wise median of the θ_i, which every agent then adopts (§3.2, Table 2, A2A
on the same rule). ``"section7"``: the median is the proposal voted on, but each agent keeps its own θ_i, so
that sensitivities ripple one hop a round; A2A has no global aggregation: the group's proposal is the
organiser's, and an agent weighs at most ``attention`` messages a round. ``"thresholds"`` (Table 1's "preferred
price/time thresholds"): θ_i is what the agent is willing to accept, the centre of its participation ellipse,
starting at its ideal; it decides and votes against it; REP's sensitivities at the group's proposal draw it
towards the neighbours', A2A's decisions draw a declining agent towards the votes of the neighbours that join,
never out of its own ellipse U ≥ 0; the group's proposal, for both, is the median of the agents' local votes (the
point each accepts nearest the current proposal). Without ``consensus`` the group's proposal is the organiser's
(its local vote, under the thresholds reading).

The consensus of a round (the paper does not define it) is the share of agents who would join the group's
proposal (U ≥ 0); the convergence round is the first round from 1 on whose consensus reaches
``convergence_threshold`` (the paper's 70%).
"""

import statistics
import time
from dataclasses import dataclass
from typing import Any

import mesa
import numpy as np
import pandas as pd
import scipy.sparse as sp
from mesa.discrete_space import Network

from coordkit import networks
from coordkit.contests import Population
from coordkit.model import Model
from coordkit.parameters import Choice, Flag, Integer, ParameterError, Parameters, PolicyChoice, Real
from coordkit.policies import Policy, decision_round, llm_parameters
from coordkit.policy_registry import fresh_policy, per_agent
from coordkit.rep.movies import preferences
from coordkit.rep.movies.agents import A2AMoviegoer, Moviegoer, REPMoviegoer, Vote
from coordkit.rep.movies.llm_policies import MovieNight, a2a_policy, rep_policy, synthesis_policy
from coordkit.rep.movies.policies import (
    PRICE,
    TIME,
    RangeSynthesis,
    REPParticipation,
    Satisficer,
    StudentMoviegoer,
    ThresholdParticipation,
)
from coordkit.rep.movies.preferences import EVENING, PRICE_RANGE
from coordkit.rep.protocol import (
    Message,
    NeighbourMulticast,
    Sensitivity,
    consensus_parameter,
    run_consensus,
)
from coordkit.rep.protocol_network import ProtocolNetwork
from coordkit.rep.records import agent_table

PROTOCOLS = ("a2a", "rep_numerical", "rep_textual")
PROTOCOL_NAMES = {"a2a": "A2A", "rep_numerical": "REP numerical", "rep_textual": "REP textual"}
READINGS = ("section7", "table2", "thresholds")
READING_NAMES = {"section7": "§7 reading", "table2": "Table 2 reading", "thresholds": "thresholds reading"}
NETWORKS = ("small_world", "complete")
OPENINGS = ("offer", "organiser")
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


def _network_can_connect(p: dict) -> None:
    n, sparsity, network = p["population"], p["sparsity"], p["network"]
    total = networks.pairs(n) if network == "complete" else networks.small_world_edges(n, p["degree"])
    removed = round(sparsity * total)
    if total - removed < n - 1:
        more = "raise population" if network == "complete" else "raise degree"
        raise ParameterError(
            f"sparsity={sparsity} removes {removed} of the {total} edges of the {network} network among "
            f"population={n} agents, leaving fewer than the {n - 1} that connect them: lower sparsity or {more}"
        )


def agent_name(node: int) -> str:
    """How agent ``node`` is called: "Agent 3", as its neighbours read its messages."""
    return f"Agent {node}"


def plan_utilities(movies: "MovieScheduling") -> list[float]:
    """Each agent's utility U of the group's proposal when the run ends if it would join it (U ≥ 0), else 0."""
    utilities = preferences.utility(movies.preferences, movies.group_price, movies.group_time)
    return [float(max(utility, 0.0)) for utility in utilities]


def _small_world_degree_is_even(p: dict) -> None:
    if p["network"] == "small_world" and p["degree"] % 2:
        raise ParameterError(
            f"degree={p['degree']} is odd: a small-world ring links degree/2 neighbours on each side; "
            "use an even degree"
        )


class MovieScheduling(Model):
    """``population`` agents with heterogeneous budgets and schedules (:mod:`.preferences`) on a ``network``
    agree on a movie night's PRICE and TIME over ``rounds`` rounds by REP or A2A.

    With ``llm``, every agent decides (call 1) through it and REP textual's updater synthesises (call 2) through
    it, each stage one round of concurrent calls; a reply that cannot be used falls back to the rules, counted
    in ``llm_fallbacks``. Such a model also keeps ``round_timings`` (wall-clock, for
    :mod:`~coordkit.rep.movies.profiling`; never in a frame or a summary).

    With ``policy`` (issue 45), agents decide in stage 1 with a student's rule instead: a function of the agent's
    :class:`~coordkit.rep.movies.policies.Situation` that returns True (join) or False, or an
    :class:`~coordkit.rep.movies.policies.Attendance`; a Policy or a registered name. The rule replaces the join
    decision alone. Under A2A that decision moves the agent's proposal (an agent that joins keeps it) and its
    neighbours read it; the agent sends the rule's message, or the Satisficer's reasoning about that decision.
    Under REP the agent still sends its :class:`~coordkit.rep.movies.policies.REPParticipation` sensitivity and θ
    updates from the sensitivities as ever, so the rule's decisions are what the agent says, and move no proposal.
    The stage-2 vote stays the agents' taste (U ≥ 0; under the thresholds reading, their thresholds), which the
    consensus measures.

    ``attended`` marks the messages A2A agents weighed in the last round under the §7 reading (a mask over
    ``adjacency``'s entries, by receiver then sender, as :func:`attended` draws it); None when every message is read.
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
            "reading",
            "section7",
            READINGS,
            labels={
                "section7": "§7: own proposals",
                "table2": "Table 2: one median",
                "thresholds": "thresholds travel",
            },
            doc="§7: each agent keeps its own proposal and votes on the median; Table 2: everyone adopts the median "
            "each round; thresholds: what each agent accepts moves towards its neighbours' (docs/rep-readings.md)",
        ),
        Choice(
            "network",
            "small_world",
            NETWORKS,
            labels={"small_world": "small world", "complete": "complete graph"},
            doc="Table 1's sparse small world (Watts–Strogatz), or the complete graph (the paper's fully connected)",
        ),
        Real(
            "sparsity",
            0.3,
            0,
            0.9,
            doc="the fraction of the network's edges removed, keeping it connected (the paper: 0, 0.3, 0.6)",
            slider=(0, 0.6),
        ),
        Integer(
            "degree",
            6,
            2,
            1000,
            doc="for a small world, each agent's ring neighbours (even; population − 1 or more: the complete graph)",
            slider=(2, 12),
        ),
        Real("rewiring", 0.1, 0, 1, doc="for a small world, the probability that an edge is rewired"),
        Choice(
            "opening",
            "offer",
            OPENINGS,
            labels={"offer": "a venue's offer", "organiser": "the organiser's ideal"},
            doc="round 0's proposal: an offer drawn uniformly from $4-$30 and 17:00-23:00, or the organiser's ideal",
        ),
        Integer(
            "attention",
            4,
            1,
            1000,
            doc="A2A under the §7 and thresholds readings: the messages an agent can weigh in a round; the rest go "
            "unread",
            unit="messages",
            slider=(1, 20),
        ),
        Integer("rounds", 20, 1, 200, doc="horizon (the paper plays 20)", unit="rounds", slider=(5, 60)),
        Real(
            "step_size",
            0.5,
            0,
            1,
            low_open=True,
            doc="η, the numerical updater's step towards the neighbours' mean proposal (§3.2), and an A2A agent's "
            "step towards its ideal (§7 reading) or towards the votes of the neighbours that join (thresholds)",
        ),
        consensus_parameter(
            "median_coordinate",
            "§7's stage 2: the group's proposal is the coordinate-wise median of the agents' (None: the organiser's)",
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
        PolicyChoice(
            "policy",
            None,
            (),
            optional="the protocol's own rule: join iff U ≥ 0 at the agent's proposal (the Satisficer under A2A, "
            "REP participation under REP)",
            doc="how the agents decide whether to join: a function of a Situation that returns True or False (or an "
            "Attendance), a Policy, or a name given to coordkit.register_policy, for every agent or one per agent "
            "(a list in node order, or a mapping by name: 'Agent 0', 'Agent 1', ...); the protocol keeps its "
            "messages",
            agents="agent",
        ),
        *llm_parameters(
            optional="rule-based agents, no calls",
            doc="the LLM client every agent decides with (call 1) and REP textual's updater synthesises with (call 2)",
        ),
        relations=(_small_world_degree_is_even, _network_can_connect),
    )
    contest = Population(
        "policy",
        "population",
        score=plan_utilities,
        measure="an agent's utility of the final group proposal if it would join it, else 0",
    )
    # common random numbers (coordkit.streams): what each stream's draws depend on. The tastes are one row of draws
    # per agent that the means and spreads scale (preferences.draw), so more agents keep the first agents' tastes.
    # A small world's ring and a complete graph's deletions span all the agents at once: the network is drawn anew
    # for another population; the organiser is one of the population; A2A's messages weighed under the §7 reading
    # are one draw per link a round. The venue's offer is drawn alone, so nothing before it moves it.
    random_streams = {
        "population": (),
        "network": ("population", "network", "sparsity", "degree", "rewiring"),
        "organiser": ("population",),
        "opening": (),
        "attended": ("population", "network", "sparsity", "degree", "rewiring"),
        "policy": (),  # a stochastic student's rule's own draws, one stream per agent
    }

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        n = self.population
        self.preferences = draw_preferences(self.streams("population"), self.params)
        self.edges = draw_network(self.streams("network"), self.params)
        self.organiser = int(self.streams("organiser").integers(n))
        offer = draw_opening(self.streams("opening"), self.params, self.preferences, self.organiser)
        opening = dict(zip((PRICE, TIME), offer))
        self.group_price, self.group_time = opening[PRICE], opening[TIME]  # round 0's proposal
        self.adjacency = networks.adjacency(n, self.edges)

        self.space = Network(networks.to_networkx(n, self.edges), random=self.random, layout=None)
        self.transport = NeighbourMulticast()
        self.night = MovieNight(n, self.rounds)
        rule_synthesis = RangeSynthesis(self.price_scale, self.time_scale)
        self.synthesiser = rule_synthesis if self.llm is None else synthesis_policy(self.llm, rule_synthesis)
        self.protocol_network = ProtocolNetwork(
            self.transport, self.consensus, self.synthesiser, eta=self.step_size, bounds=THETA_BOUNDS
        )
        self.goers = [Moviegoer(self, node, self.preferences.of(node)) for node in range(n)]
        students = per_agent("policy", self.policy, [agent_name(goer.node) for goer in self.goers])
        for goer, student in zip(self.goers, students):
            start = {PRICE: goer.taste.price, TIME: goer.taste.time} if self.reading == "thresholds" else opening
            goer.client = self._client(goer, start, student)
            goer.local_price, goer.local_time = start[PRICE], start[TIME]
        self.round_timings: list[RoundTiming] = []
        self._notes_round, self._notes = -1, {}
        self.attended: np.ndarray | None = None  # the messages weighed this round (A2A, §7 reading); None: all
        self.converged = False
        self._vote(opening=True)
        for goer in self.goers:
            goer.joins = goer.votes  # round 0: who would join the opening proposal

        self.datacollector = mesa.DataCollector(
            model_reporters={
                "price": "group_price",
                "time": "group_time",
                "consensus": "share_joining",
                "participants": "participants",
                "converged": "converged",
                "spread": "spread",
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

    def _client(self, goer: Moviegoer, start: dict, student: Any):
        """The agent's protocol client, its θ_i at ``start``: the same transport, network and consensus for every
        protocol (§4); the agent decides whether to join with ``student`` (its ``policy``) if given."""
        student = None if student is None else fresh_policy(student, type(self), self.streams("policy", goer.node))
        if self.protocol == "a2a":
            rule = Satisficer()
            policy = rule if self.llm is None else a2a_policy(self.llm, rule, self.night)
            agent = A2AMoviegoer(goer, start, StudentMoviegoer(student, rule) if student is not None else policy)
        else:
            participation = ThresholdParticipation if self.reading == "thresholds" else REPParticipation
            rule = participation("numerical" if self.protocol == "rep_numerical" else "textual")
            policy = rule if self.llm is None else rep_policy(self.llm, rule, self.night)
            agent = REPMoviegoer(goer, start, StudentMoviegoer(student, rule) if student is not None else policy)
        return self.protocol_network.client(self.protocol, agent, goer.node, sorted(self.space.G.adj[goer.node]))

    def describe(self, message: Message) -> str:
        """A neighbour's message as an agent reads it: who, its decision, and its sensitivity or reasoning."""
        words = message.sensitivity.text if message.sensitivity is not None else message.reasoning
        return f"{agent_name(message.sender)} {'joins' if message.decision.joins else 'declines'}: {words}"

    def notes(self, messages: list[Message]) -> tuple[str, ...]:
        """The messages as an agent reads them, each written out once a round however many neighbours read it."""
        if self._notes_round != self.steps:
            self._notes_round, self._notes = self.steps, {}
        for message in messages:
            if message.sender not in self._notes:
                self._notes[message.sender] = self.describe(message)
        return tuple(self._notes[message.sender] for message in messages)

    def step(self) -> None:
        """One round: stage 1 (decide, message, update θ_i), then stage 2 (the group's proposal, the vote)."""
        started = time.perf_counter()
        concurrent = self.llm is not None
        for goer in self.goers:
            goer.call_s = 0.0
        # stage 1: decide at θ_i, tell the neighbours, update θ_i
        decisions = decision_round("decide", self.goers, concurrent=concurrent, max_concurrency=self.max_concurrency)
        talking = time.perf_counter()
        for goer, (joins, signal) in zip(self.goers, decisions):
            offer = goer.local_vote() if self.reading == "thresholds" else goer.proposal
            goer.client.send(Vote(bool(joins), float(offer[PRICE]), float(offer[TIME])), signal)
        self.transport.deliver()
        for goer in self.goers:
            goer.heard, _ = goer.client.receive()  # the neighbours' votes, by sender
        talking = time.perf_counter() - talking
        for goer, (joins, signal) in zip(self.goers, decisions):
            goer.joins = bool(joins)
            goer.message = signal.text if isinstance(signal, Sensitivity) else signal
        if self.protocol == "a2a":
            local = self.reading != "table2"
            self.attended = attended(self.streams("attended"), self.adjacency, self.attention) if local else None
            for goer in self.goers:
                read = None if self.attended is None else goer.read(self.attended)
                if self.reading == "thresholds":
                    goer.follow_decisions(read)
                else:
                    goer.reason_locally(read)
        else:
            textual_llm = concurrent and self.protocol == "rep_textual"
            decision_round("sync", self.goers, concurrent=textual_llm, max_concurrency=self.max_concurrency)
        if self.reading == "thresholds":
            for goer in self.goers:
                goer.keep_within_bounds()
        for goer in self.goers:
            goer.local_price, goer.local_time = goer.proposal[PRICE], goer.proposal[TIME]
        # stage 2: under the Table 2 reading every agent adopts the median; then the vote on the group's proposal
        if self.reading == "table2":
            run_consensus([goer.client for goer in self.goers])
        self._vote()
        if self.llm is not None:
            calls = tuple(goer.call_s for goer in self.goers)
            self.round_timings.append(RoundTiming(self.steps, time.perf_counter() - started, calls, talking))
        self.datacollector.collect(self)
        self.running = self.steps < self.rounds and not (self.stop_at_convergence and self.converged)

    @property
    def organisers_proposal(self) -> bool:
        """Whether the group's proposal is the organiser's θ (its local vote, under the thresholds reading):
        without consensus, and for A2A under the §7 reading (no global aggregation)."""
        return self.consensus is None or (self.protocol == "a2a" and self.reading == "section7")

    @property
    def acceptance(self) -> preferences.Preferences:
        """What the agents vote against: their tastes, or under the thresholds reading their participation
        ellipses centred on their thresholds θ_i."""
        if self.reading != "thresholds":
            return self.preferences
        thresholds = np.array([[goer.proposal[PRICE], goer.proposal[TIME]] for goer in self.goers])
        return preferences.centred(self.preferences, thresholds[:, 0], thresholds[:, 1])

    def _vote(self, opening: bool = False) -> None:
        """The group's proposal (:meth:`_group_proposal`; round 0's under the thresholds reading is the ``opening``
        offer, set already), who would join it, and how far the agents' own proposals are from it."""
        if not (opening and self.reading == "thresholds"):
            self.group_price, self.group_time = self._group_proposal()
        proposals = [goer.proposal for goer in self.goers]
        votes = preferences.joins(self.acceptance, self.group_price, self.group_time)
        for goer, vote in zip(self.goers, votes):
            goer.votes = bool(vote)
        self.participants = int(votes.sum())
        self.share_joining = self.participants / self.population
        self.converged = self.converged or (self.steps > 0 and self.share_joining >= self.convergence_threshold)
        price_gaps = np.array([theta[PRICE] for theta in proposals]) - self.group_price
        time_gaps = np.array([theta[TIME] for theta in proposals]) - self.group_time
        self.spread = float(np.hypot(price_gaps / self.price_scale, time_gaps / self.time_scale).mean())

    def _group_proposal(self) -> tuple[float, float]:
        """The coordinate-wise median of the agents' θ_i (of their local votes, under the thresholds reading), or
        the organiser's."""
        thresholds = self.reading == "thresholds"
        offers = [goer.local_vote() if thresholds else goer.proposal for goer in self.goers]
        if self.organisers_proposal:
            return float(offers[self.organiser][PRICE]), float(offers[self.organiser][TIME])
        price = statistics.median(float(offer[PRICE]) for offer in offers)
        return float(price), float(statistics.median(float(offer[TIME]) for offer in offers))  # not model.time

    def policies(self) -> list[Policy]:
        """Every agent's policy, and the textual updater's synthesiser when it is used."""
        agents = [goer.client.agent.policy for goer in self.goers]
        return agents + ([self.synthesiser] if self.protocol == "rep_textual" else [])

    def frame(self) -> pd.DataFrame:
        """One row per round (round 0 is the opening proposal).

        Columns: round; price and time, the group's proposal; consensus, the share of agents who would join it;
        participants, how many; converged, whether consensus has reached the threshold by this round (counted
        from round 1); spread, the agents' mean distance from the group's proposal in units of the utility's
        scales (√(Δp²/P² + Δt²/T²); 0 when everyone holds it).
        """
        rounds = self.datacollector.get_model_vars_dataframe().reset_index(drop=True)
        rounds.insert(0, "round", np.arange(len(rounds)))
        return rounds

    def agents_frame(self) -> pd.DataFrame:
        """One row per round and agent: round, agent, price and time (its θ_i after stage 1, before the
        consensus), joins (its stage-1 decision; in round 0, whether it would join the opening proposal), votes
        (its stage-2 vote on the group proposal), message (the sensitivity or reasoning it sent; empty in
        round 0)."""
        return agent_table(self.datacollector, "round")

    def summary(self) -> dict:
        """The run's :func:`outcome` (final and best consensus, convergence round, whether the opening had
        converged already), the final proposal and spread, the network's density and edges, and LLM use."""
        return {
            **outcome(self.datacollector.model_vars["consensus"], self.convergence_threshold),
            "final_price": self.group_price,
            "final_time": self.group_time,
            "final_spread": self.spread,
            "density": networks.density(self.population, self.edges),
            "edges": len(self.edges),
            "llm_calls": self.llm_calls,
            "llm_fallbacks": self.llm_fallbacks,
        }


def draw_preferences(rng: np.random.Generator, params: dict) -> preferences.Preferences:
    """The population's preferences the parameters ask for, drawn from ``rng`` (:func:`.preferences.draw`)."""
    names = ("price_mean", "price_sd", "time_mean", "time_sd", "price_scale", "time_scale")
    return preferences.draw(rng, params["population"], **{name: params[name] for name in names})


def draw_network(rng: np.random.Generator, params: dict) -> np.ndarray:
    """The edge list the parameters ask for, drawn from ``rng``: the complete graph with ``sparsity`` of its edges
    deleted (redrawn until connected), or the small world with ``sparsity`` of its edges removed, sparing a
    spanning tree (a higher sparsity removes the same edges and more)."""
    n, sparsity = params["population"], params["sparsity"]
    if params["network"] == "complete":
        return networks.sparse(n, sparsity, rng)
    return networks.thin(n, networks.small_world(n, params["degree"], params["rewiring"], rng), sparsity, rng)


def draw_opening(
    rng: np.random.Generator, params: dict, taste: preferences.Preferences, organiser: int
) -> tuple[float, float]:
    """Round 0's proposal (price, time): a venue's offer drawn from ``rng``, uniform on the price range, then on the
    evening; or the organiser's ideal (no draw)."""
    if params["opening"] == "organiser":
        return float(taste.price[organiser]), float(taste.time[organiser])
    return float(rng.uniform(*PRICE_RANGE)), float(rng.uniform(*EVENING))


def attended(rng: np.random.Generator, adjacency: sp.csr_array, attention: int) -> np.ndarray:
    """Which of a round's messages their receivers weigh (A2A under the §7 reading: cognitive overload), as a
    mask over the adjacency's entries (by receiver, then sender): one uniform key per message, and each
    receiver reads the ``attention`` messages with the smallest keys."""
    keys = rng.random(adjacency.nnz)
    starts = adjacency.indptr
    receivers = np.repeat(np.arange(adjacency.shape[0]), np.diff(starts))
    order = np.lexsort((keys, receivers))
    rank = np.empty(adjacency.nnz, dtype=np.int64)
    rank[order] = np.arange(adjacency.nnz) - starts[receivers[order]]
    return rank < attention


def outcome(consensus, threshold: float) -> dict:
    """From a run's consensus per round (round 0, the opening, first): the final and the best consensus from
    round 1 on, the convergence round — the first round from 1 on whose consensus reaches ``threshold``, NaN if
    none does (DNF) — whether it converged, and whether the opening alone had reached the threshold."""
    consensus = np.asarray(consensus, dtype=float)
    played = consensus[1:] if len(consensus) > 1 else consensus
    reached = np.flatnonzero(consensus[1:] >= threshold) + 1
    return {
        "final_consensus": float(consensus[-1]),
        "max_consensus": float(played.max()),
        "convergence_round": float(reached[0]) if len(reached) else float("nan"),
        "converged": bool(len(reached)),
        "opening_converged": bool(consensus[0] >= threshold),
    }
