"""A moviegoer as a Mesa agent on a network cell, and the adapters that let REP or A2A wrap its policy.

The agent times its own calls (the wall time of its decision and, for REP textual, its synthesis) so that a
round played by LLM agents can be profiled (:mod:`~coordkit.rep.movies.profiling`); timings never enter a
frame or a summary.
"""

import time
from dataclasses import dataclass

import numpy as np
from mesa.discrete_space import FixedAgent

from coordkit.policies import Policy
from coordkit.rep.movies import preferences
from coordkit.rep.movies.policies import PRICE, TIME, Situation
from coordkit.rep.movies.preferences import Taste
from coordkit.rep.protocol import Message, Sensitivity, Theta


@dataclass(frozen=True)
class Vote:
    """A stage-1 decision as its neighbours receive it: whether the agent would join, at its proposal θ_i
    (Table 1: "participation (Y/N) or local preference votes")."""

    joins: bool
    price: float
    time: float


class Moviegoer(FixedAgent):
    """Agent ``node`` of the network: its taste, its protocol client, what it said and how it voted.

    ``joins`` is its stage-1 decision at its local proposal, ``message`` the sensitivity or reasoning it sent,
    ``votes`` its stage-2 vote on the group proposal (REP paper §7). ``call_s`` is the wall time its calls
    took this round, kept only for profiling.
    """

    def __init__(self, model, node: int, taste: Taste):
        super().__init__(model)
        self.node = node
        self.taste = taste
        self.cell = model.space[node]
        self.client = None  # a REPClient or A2AClient, set by the model
        self.joins = self.votes = False
        self.local_price = self.local_time = float("nan")  # θ_i after stage 1, before the consensus
        self.message = ""
        self.heard: dict[int, Vote] = {}  # this round's neighbours' votes, by sender
        self.call_s = 0.0

    @property
    def proposal(self) -> Theta:
        """θ_i, the agent's local proposal (its thresholds, under the thresholds reading)."""
        return self.client.theta

    def acceptance(self, theta: Theta) -> Taste:
        """What the agent accepts: its taste, or under the thresholds reading its participation ellipse centred on
        its thresholds ``theta``."""
        if self.model.reading != "thresholds":
            return self.taste
        return preferences.centred(self.taste, theta[PRICE], theta[TIME])

    def local_vote(self) -> Theta:
        """Thresholds reading: the point the agent accepts nearest the group's proposal, pulled straight towards its
        thresholds (the proposal itself if it accepts it): Table 1's "local preference vote"."""
        price, time = preferences.pulled_in(
            self.acceptance(self.proposal), self.model.group_price, self.model.group_time
        )
        return {PRICE: float(price), TIME: float(time)}

    def keep_within_bounds(self) -> None:
        """Thresholds reading: thresholds never leave the agent's own participation ellipse U ≥ 0 (a step that would
        leave it stops at its edge, on the line from its ideal)."""
        price, time = preferences.pulled_in(self.taste, self.proposal[PRICE], self.proposal[TIME])
        self.client.theta = {PRICE: float(price), TIME: float(time)}

    def situation(self, theta: Theta, neighbour_messages: list[Message]) -> Situation:
        """What the agent decides from. Its neighbours' messages are written out only for an LLM or a student's
        rule (``policy``) to read: the built-in rules decide from the agent's own preferences."""
        reads_notes = self.model.llm is not None or self.model.policy is not None
        notes = self.model.notes(neighbour_messages) if reads_notes else ()
        if self.model.reading == "thresholds":  # it decides on the group's proposal, against its thresholds
            price, time = self.model.group_price, self.model.group_time
        else:
            price, time = theta[PRICE], theta[TIME]
        return Situation(
            agent=self.node,
            round=self.model.steps,
            taste=self.acceptance(theta),
            price=price,
            time=time,
            neighbour_notes=notes,
        )

    def decide(self) -> tuple[bool, Sensitivity | str]:
        return self.client.decide()

    async def decide_async(self) -> tuple[bool, Sensitivity | str]:
        started = time.perf_counter()
        decision = await self.client.decide_async()
        self.call_s += time.perf_counter() - started
        return decision

    def sync(self) -> Theta:
        return self.client.sync()

    async def sync_async(self) -> Theta:
        started = time.perf_counter()
        theta = await self.client.sync_async()
        self.call_s += time.perf_counter() - started
        return theta

    def read(self, attended: np.ndarray) -> list[Vote]:
        """The neighbours' votes of this round that the agent weighs, by sender: those ``attended`` marks (a
        mask over the model's adjacency entries, by receiver then sender; see
        :func:`~coordkit.rep.movies.model.attended`)."""
        start, end = self.model.adjacency.indptr[self.node : self.node + 2]
        return [self.heard[int(sender)] for sender in self.model.adjacency.indices[start:end][attended[start:end]]]

    def reason_locally(self, read: list[Vote] | None) -> None:
        """A2A's update of its private state (Table 2: "local reasoning only"). An agent that would join at its
        proposal keeps it. Otherwise, under the Table 2 reading (``read`` None), it takes its own ideal; under
        the §7 reading it adopts the offer it likes best among those it ``read`` from neighbours who join at
        theirs and that it would join too (the first sender on a tie), and failing one moves a step η towards
        its ideal."""
        if self.joins:
            return
        ideal = {PRICE: self.taste.price, TIME: self.taste.time}
        if read is None:
            self.client.theta = ideal
            return
        offers = [vote for vote in read if vote.joins and preferences.joins(self.taste, vote.price, vote.time)]
        if offers:
            best = max(offers, key=lambda vote: preferences.utility(self.taste, vote.price, vote.time))
            self.client.theta = {PRICE: best.price, TIME: best.time}
            return
        eta, theta = self.model.step_size, self.client.theta
        self.client.theta = {name: theta[name] + eta * (ideal[name] - theta[name]) for name in (PRICE, TIME)}

    def follow_decisions(self, read: list[Vote]) -> None:
        """A2A under the thresholds reading (decisions, not sensitivities): an agent that declines the group's
        proposal moves its thresholds a step η towards the mean of the votes it ``read`` from neighbours who accept
        it; one that accepts, or read no one who does, keeps them."""
        joining = [vote for vote in read if vote.joins]
        if self.joins or not joining:
            return
        target = {
            PRICE: sum(v.price for v in joining) / len(joining),
            TIME: sum(v.time for v in joining) / len(joining),
        }
        eta, theta = self.model.step_size, self.client.theta
        self.client.theta = {name: theta[name] + eta * (target[name] - theta[name]) for name in (PRICE, TIME)}


class REPMoviegoer:
    """What REP wraps (§3.3): decides from its coordination variables θ = {PRICE, TIME} and sends a sensitivity.

    ``policy`` is :class:`~coordkit.rep.movies.policies.REPParticipation`, an LLM policy falling back to it, or a
    student's rule (:class:`~coordkit.rep.movies.policies.StudentMoviegoer`).
    """

    def __init__(self, goer: Moviegoer, opening: Theta, policy: Policy):
        self.goer = goer
        self.opening = opening
        self.policy = policy

    def initial_theta(self) -> Theta:
        return dict(self.opening)

    def decide(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[bool, Sensitivity]:
        return self.policy.decide(self.goer.situation(theta, neighbour_messages))

    async def decide_async(self, theta: Theta, neighbour_messages: list[Message]) -> tuple[bool, Sensitivity]:
        return await self.policy.decide_async(self.goer.situation(theta, neighbour_messages))


class A2AMoviegoer:
    """What the A2A baseline wraps: decides at its private proposal and explains itself in words.

    ``policy`` is :class:`~coordkit.rep.movies.policies.Satisficer`, an LLM policy falling back to it, or a
    student's rule (:class:`~coordkit.rep.movies.policies.StudentMoviegoer`).
    """

    def __init__(self, goer: Moviegoer, opening: Theta, policy: Policy):
        self.goer = goer
        self.opening = opening
        self.policy = policy

    def private_state(self) -> Theta:
        return dict(self.opening)

    def decide(self, neighbour_messages: list[Message]) -> tuple[bool, str]:
        return self.policy.decide(self.goer.situation(self.goer.proposal, neighbour_messages))

    async def decide_async(self, neighbour_messages: list[Message]) -> tuple[bool, str]:
        return await self.policy.decide_async(self.goer.situation(self.goer.proposal, neighbour_messages))
