"""Movie scheduling with REP numerical agents, in plain Mesa (REP §7): twenty agents with an ideal price, start and
price weight on a Watts-Strogatz small world with 30% of its edges removed (kept connected); each round every agent
joins iff U >= 0 at its own proposal θ_i, sends its sensitivities and its numerical proposal to its neighbours,
and moves θ_i half way to the mean proposal of itself and its neighbours; the group's proposal is the
coordinate-wise median, and every agent votes on it; a DataCollector with the kit's reporters
(``coordkit.rep.movies``, its defaults)."""

import statistics

import mesa
import networkx as nx
import numpy as np

PRICE_SCALE, TIME_SCALE, STEP, THRESHOLD = 5.0, 2.0, 0.5, 0.7


class Moviegoer(mesa.Agent):
    def __init__(self, model, node, opening):
        super().__init__(model)
        self.node = node
        self.ideal_price = float(np.clip(12.0 + 4.0 * model.rng.standard_normal(), 4.0, 30.0))
        self.ideal_time = float(np.clip(20.0 + 1.5 * model.rng.standard_normal(), 17.0, 23.0))
        self.weight = float(model.rng.uniform(0.2, 0.8))
        self.price, self.time = opening
        self.joins = self.votes = False
        self.message = ""

    def utility(self, price, time):
        """U(p, t) = 1 − w·((p − p_j)/P)² − (1 − w)·((t − t_j)/T)²."""
        price_gap, time_gap = (price - self.ideal_price) / PRICE_SCALE, (time - self.ideal_time) / TIME_SCALE
        return 1 - self.weight * price_gap**2 - (1 - self.weight) * time_gap**2

    def decide(self):
        """Join iff U ≥ 0 at θ_i; send ∂U/∂p, ∂U/∂t and the proposal θ_i + (w·(p_j − p), (1 − w)·(t_j − t))."""
        self.joins = self.utility(self.price, self.time) >= 0
        slopes = (
            -2 * self.weight * (self.price - self.ideal_price) / PRICE_SCALE**2,
            -2 * (1 - self.weight) * (self.time - self.ideal_time) / TIME_SCALE**2,
        )
        self.proposal = (self.price + PRICE_SCALE**2 / 2 * slopes[0], self.time + TIME_SCALE**2 / 2 * slopes[1])
        self.message = f"∂U/∂price = {slopes[0]:+.3f}, ∂U/∂time = {slopes[1]:+.3f}"

    def update(self):
        """θ_i ← θ_i − η·(θ_i − the mean proposal of i and its neighbours), clipped to $4-$30 and 17:00-23:00."""
        heard = [self.proposal] + [self.model.goers[j].proposal for j in self.model.graph.adj[self.node]]
        mean_price = sum(p for p, _ in heard) / len(heard)
        mean_time = sum(t for _, t in heard) / len(heard)
        self.price = min(max(self.price - STEP * (self.price - mean_price), 4.0), 30.0)
        self.time = min(max(self.time - STEP * (self.time - mean_time), 17.0), 23.0)


class MovieScheduling(mesa.Model):
    goer_class = Moviegoer

    def __init__(self, population=20, rounds=20, rng=None):
        super().__init__(rng=rng)
        self.population, self.rounds = population, rounds
        self.graph = thinned_small_world(population, self.rng)
        opening = (float(self.rng.uniform(4.0, 30.0)), float(self.rng.uniform(17.0, 23.0)))
        self.goers = [self.goer_class(self, node, opening) for node in range(population)]
        self.converged = False
        self.vote()
        self.datacollector = mesa.DataCollector(
            model_reporters={
                "price": "group_price",
                "time": "group_time",
                "consensus": "share_joining",
                "participants": "participants",
                "converged": "converged",
                "spread": "spread",
            },
            agent_reporters={name: name for name in ("node", "price", "time", "joins", "votes", "message")},
        )
        self.datacollector.collect(self)

    def vote(self):
        """The median proposal, who would join it, and the agents' mean distance from it."""
        self.group_price = statistics.median(goer.price for goer in self.goers)
        self.group_time = statistics.median(goer.time for goer in self.goers)
        votes = [goer.utility(self.group_price, self.group_time) >= 0 for goer in self.goers]
        for goer, vote in zip(self.goers, votes):
            goer.votes = vote
        self.participants = sum(votes)
        self.share_joining = self.participants / self.population
        self.converged = self.converged or (self.steps > 0 and self.share_joining >= THRESHOLD)
        gaps = [
            np.hypot((goer.price - self.group_price) / PRICE_SCALE, (goer.time - self.group_time) / TIME_SCALE)
            for goer in self.goers
        ]
        self.spread = float(np.mean(gaps))

    def step(self):
        for goer in self.goers:
            goer.decide()
        for goer in self.goers:
            goer.update()
        self.vote()
        self.datacollector.collect(self)
        self.running = self.steps < self.rounds


def thinned_small_world(n, rng, degree=6, rewiring=0.1, sparsity=0.3):
    """A connected Watts-Strogatz graph with ``sparsity`` of its edges removed, redrawn until still connected."""
    graph = nx.connected_watts_strogatz_graph(n, degree, rewiring, seed=int(rng.integers(2**31)))
    edges = list(graph.edges)
    while True:
        kept = [edges[i] for i in sorted(rng.permutation(len(edges))[: round(len(edges) * (1 - sparsity))])]
        thinned = nx.Graph(kept)
        thinned.add_nodes_from(range(n))
        if nx.is_connected(thinned):
            return thinned


def one_run(seed: int) -> MovieScheduling:
    model = MovieScheduling(rng=seed)
    model.run_model()
    return model
