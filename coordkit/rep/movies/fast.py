"""REP numerical and A2A vectorised over agents with numpy and scipy.sparse: the rounds of
:class:`~coordkit.rep.movies.model.MovieScheduling`, played for whole populations at once (to 10,000 agents).

From the model's own random streams (:mod:`coordkit.streams`, spawned from the seed as the model spawns them) it
draws what the Mesa model draws — the preferences, the network, the organiser, the opening offer, and for A2A under
the §7 reading the messages each agent weighs every round — and computes with the same preference functions
(:mod:`.preferences`), so that on the same seed the two play the same rounds: decisions exactly, proposals and
consensus to within float rounding (neighbour means are summed in another order). REP textual has no fast path:
its updater reads text.

REP's neighbour means are sparse matrix products, one a round. Under the Table 2 reading with the median every
agent opens a round at the group's proposal θ̄, and a numerical proposal is affine in θ (θ + w·(p_j − θ) for the
price), so each agent's neighbourhood mean is affine in θ̄: one product before the rounds serves them all (the
complete graph of 10,000 agents has 50 million edges).
"""

import numpy as np
import pandas as pd

from coordkit import networks
from coordkit.parameters import Choice, Integer, Parameters, check_rng
from coordkit.rep.movies import preferences
from coordkit.rep.movies.model import (
    PROTOCOL_NAMES,
    THETA_BOUNDS,
    MovieScheduling,
    attended,
    draw_network,
    draw_opening,
    draw_preferences,
)
from coordkit.rep.movies.policies import PRICE, TIME
from coordkit.streams import Streams, root_sequence

PROTOCOLS = ("a2a", "rep_numerical")
COLUMNS = ("round", "price", "time", "consensus", "participants", "converged", "spread")  # the model's frame()
MAX_POPULATION = 10_000
_REDECLARED = {
    "protocol": Choice(
        "protocol",
        "rep_numerical",
        PROTOCOLS,
        labels={p: PROTOCOL_NAMES[p] for p in PROTOCOLS},
        doc="A2A, or REP numerical (REP textual's updater reads text: play it with MovieScheduling)",
    ),
    "population": Integer(
        "population", 20, 2, MAX_POPULATION, doc="agents, to 10,000", unit="agents", slider=(5, MAX_POPULATION)
    ),
}
PARAMETERS = Parameters(
    *(
        _REDECLARED.get(param.name, param)
        for param in MovieScheduling.parameters
        if param.name not in ("policy", "llm", "max_concurrency")
    ),
    relations=MovieScheduling.parameters.relations,
)
"""The model's parameters for agents that decide by the protocol's own rules (no student's ``policy``, no ``llm``:
they play the Mesa model), with the fast path's protocols and populations."""


def simulate(seed: int, **params) -> pd.DataFrame:
    """One run of ``MovieScheduling(**params, rng=seed)`` with rule-based agents, as its ``frame()``: round,
    price, time, consensus, participants, converged, spread. The parameters are :data:`PARAMETERS`, and the seed
    is what the model takes for ``rng``, checked as the model checks its own."""
    p = PARAMETERS.resolve(params, owner="fast.simulate")
    n = p["population"]
    streams = _streams(seed)
    taste = draw_preferences(streams("population"), p)
    edges = draw_network(streams("network"), p)
    organiser = int(streams("organiser").integers(n))
    opening = np.array(draw_opening(streams("opening"), p, taste, organiser))
    if p["reading"] == "thresholds":
        return _thresholds(p, taste, edges, organiser, opening, streams)
    theta = np.tile(opening, (n, 1))  # θ_i: everyone opens with one
    adopts_median = p["reading"] == "table2" and p["consensus"] is not None
    if p["protocol"] == "rep_numerical":
        update = _rep_update(taste, edges, p, adopts_median)
    elif p["reading"] == "table2":
        update = _a2a_update_table2(taste)
    else:
        update = _a2a_update_section7(taste, networks.adjacency(n, edges), p, streams("attended"))
    organisers = p["consensus"] is None or (p["protocol"] == "a2a" and p["reading"] == "section7")
    rows, converged = [], False
    for round_number in range(p["rounds"] + 1):
        if round_number:
            theta = update(theta)
            if adopts_median:
                theta[:] = coordinate_median(theta)
        group = theta[organiser] if organisers else coordinate_median(theta)
        rows.append(_vote(taste, theta, group, round_number))
        converged = converged or (round_number > 0 and rows[-1]["consensus"] >= p["convergence_threshold"])
        rows[-1]["converged"] = converged
        if round_number and p["stop_at_convergence"] and converged:
            break
    return pd.DataFrame({column: [row[column] for row in rows] for column in COLUMNS})


def coordinate_median(points: np.ndarray) -> np.ndarray:
    """``np.median(points, axis=0)``, the same floats, by one sort: the middle row, or the mean of the two middle
    rows, of each column (np.median's own machinery costs ten times more on a round's few agents)."""
    ordered = np.sort(points, axis=0)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _thresholds(p: dict, taste, edges: np.ndarray, organiser: int, opening: np.ndarray, streams) -> pd.DataFrame:
    """The rounds under the thresholds reading: θ_i are the agents' thresholds, from their ideals; each round
    REP's sensitivities (or A2A's decisions) move them, within each agent's own ellipse, and the group's proposal
    is the median of the local votes (the organiser's without consensus)."""
    theta = np.column_stack([taste.price, taste.time])
    if p["protocol"] == "rep_numerical":
        update = _rep_thresholds_update(taste, edges, p)
    else:
        update = _a2a_thresholds_update(taste, networks.adjacency(p["population"], edges), p, streams("attended"))
    group, rows, converged = opening, [], False
    for round_number in range(p["rounds"] + 1):
        if round_number:
            theta = update(theta, group)
        accepting = _accepting(taste, theta)
        if round_number:
            votes = np.column_stack(preferences.pulled_in(accepting, group[0], group[1]))
            group = votes[organiser] if p["consensus"] is None else coordinate_median(votes)
        rows.append(_vote(taste, theta, group, round_number, accepting=accepting))
        converged = converged or (round_number > 0 and rows[-1]["consensus"] >= p["convergence_threshold"])
        rows[-1]["converged"] = converged
        if round_number and p["stop_at_convergence"] and converged:
            break
    return pd.DataFrame({column: [row[column] for row in rows] for column in COLUMNS})


def _accepting(taste: preferences.Preferences, theta: np.ndarray) -> preferences.Preferences:
    """What the agents accept under the thresholds reading: their ellipses centred on their thresholds θ."""
    return preferences.centred(taste, theta[:, 0], theta[:, 1])


def _within_bounds(taste: preferences.Preferences, theta: np.ndarray) -> np.ndarray:
    """Thresholds kept inside each agent's own ellipse U ≥ 0."""
    return np.column_stack(preferences.pulled_in(taste, theta[:, 0], theta[:, 1]))


def _streams(seed) -> Streams:
    """The random streams ``MovieScheduling(rng=seed)`` draws from, the seed checked as the model checks its own."""
    return Streams(root_sequence(check_rng(seed, name="seed")), MovieScheduling.random_streams, "fast.simulate")


def _neighbourhood_mean(n: int, edges: np.ndarray):
    """A function of per-agent rows giving each agent's mean over itself and its neighbours (sparse products)."""
    upper = networks.upper_triangle(n, edges)
    lower = upper.T  # transposed once, not every round
    size = (networks.degrees(n, edges) + 1)[:, None]  # the neighbourhood, the agent included
    return lambda x: (upper @ x + lower @ x + x) / size


def _step(p: dict):
    """The numerical updater's step for everyone: θ ← θ − η·(θ − mean), clipped into θ's bounds."""
    bounds = np.array([THETA_BOUNDS[PRICE], THETA_BOUNDS[TIME]])  # rows: price, time; columns: low, high
    return lambda theta, mean: np.clip(theta - p["step_size"] * (theta - mean), bounds[:, 0], bounds[:, 1])


def _rep_update(taste: preferences.Preferences, edges: np.ndarray, p: dict, adopts_median: bool):
    """Stage 1 of REP numerical for everyone: θ_i ← θ_i − η·(θ_i − the mean proposal of i and its neighbours)."""
    n = p["population"]
    neighbourhood_mean, step = _neighbourhood_mean(n, edges), _step(p)

    def proposals(theta: np.ndarray) -> np.ndarray:
        return np.column_stack(preferences.proposal(taste, theta[:, 0], theta[:, 1]))

    if not adopts_median:
        return lambda theta: step(theta, neighbourhood_mean(proposals(theta)))
    ones = np.ones((n, 2))
    intercept = proposals(np.zeros((n, 2)))
    means = neighbourhood_mean(np.hstack([proposals(ones) - intercept, intercept]))  # slope and intercept
    return lambda theta: step(theta, theta[0] * means[:, :2] + means[:, 2:])


def _rep_thresholds_update(taste: preferences.Preferences, edges: np.ndarray, p: dict):
    """REP numerical's stage 1 under the thresholds reading: θ_i ← θ_i − η·(θ_i − the mean of its own and its
    neighbours' thresholds, the proposals their sensitivities carry), then kept within its own ellipse. (The
    group's proposal, which A2A's update reads, plays no part.)"""
    neighbourhood_mean, step = _neighbourhood_mean(p["population"], edges), _step(p)
    return lambda theta, group: _within_bounds(taste, step(theta, neighbourhood_mean(theta)))


def _a2a_thresholds_update(taste: preferences.Preferences, adjacency, p: dict, rng: np.random.Generator):
    """A2A's stage 1 under the thresholds reading (:meth:`~coordkit.rep.movies.agents.Moviegoer.follow_decisions`):
    an agent that declines the group's proposal steps η towards the mean vote of the ``attention`` neighbours it
    reads who accept it; then every agent's thresholds are kept within its own ellipse."""
    n = adjacency.shape[0]
    receivers = np.repeat(np.arange(n), np.diff(adjacency.indptr))
    senders = adjacency.indices

    def update(theta: np.ndarray, group: np.ndarray) -> np.ndarray:
        accepting = _accepting(taste, theta)
        joins = preferences.joins(accepting, group[0], group[1])
        votes = np.column_stack(preferences.pulled_in(accepting, group[0], group[1]))
        read = attended(rng, adjacency, p["attention"])
        heard = read & joins[senders] & ~joins[receivers]
        counts = np.bincount(receivers[heard], minlength=n)
        sums = np.zeros((n, 2))
        np.add.at(sums, receivers[heard], votes[senders[heard]])
        moving = counts > 0
        updated = theta.copy()
        target = sums[moving] / counts[moving][:, None]
        updated[moving] = theta[moving] + p["step_size"] * (target - theta[moving])
        return _within_bounds(taste, updated)

    return update


def _a2a_update_table2(taste: preferences.Preferences):
    """A2A's local reasoning under the Table 2 reading: keep θ_i if it would join there, else take its ideal."""
    ideals = np.column_stack([taste.price, taste.time])
    return lambda theta: np.where(preferences.joins(taste, theta[:, 0], theta[:, 1])[:, None], theta, ideals)


def _a2a_update_section7(taste: preferences.Preferences, adjacency, p: dict, rng: np.random.Generator):
    """A2A's local reasoning under the §7 reading (:meth:`~coordkit.rep.movies.agents.Moviegoer.reason_locally`):
    an agent that declines at θ_i adopts the offer it likes best among the ``attention`` messages it weighs
    from neighbours who join at theirs and that it would join, else steps η towards its ideal."""
    ideals = np.column_stack([taste.price, taste.time])
    receivers = np.repeat(np.arange(adjacency.shape[0]), np.diff(adjacency.indptr))
    senders = adjacency.indices

    def update(theta: np.ndarray) -> np.ndarray:
        joins = preferences.joins(taste, theta[:, 0], theta[:, 1])
        read = attended(rng, adjacency, p["attention"])
        looking = read & joins[senders] & ~joins[receivers]
        to, offer = receivers[looking], senders[looking]
        readers = preferences.Preferences(
            taste.price[to], taste.time[to], taste.weight[to], taste.price_scale, taste.time_scale
        )
        liking = preferences.utility(readers, theta[offer, 0], theta[offer, 1])
        acceptable = liking >= 0
        to, offer, liking = to[acceptable], offer[acceptable], liking[acceptable]
        order = np.lexsort((offer, -liking, to))  # by reader, best liked first, then the first sender
        best = order[np.r_[True, to[order][1:] != to[order][:-1]]] if len(order) else order
        updated = np.where(joins[:, None], theta, theta + p["step_size"] * (ideals - theta))
        updated[to[best]] = theta[offer[best]]
        return updated

    return update


def _vote(
    taste: preferences.Preferences,
    theta: np.ndarray,
    group: np.ndarray,
    round_number: int,
    accepting: preferences.Preferences | None = None,
) -> dict:
    """The group's proposal, who would join it (by their tastes, or by what they are ``accepting``), and the
    agents' mean distance from it (in the utility's scales)."""
    price, time = (float(x) for x in group)
    participants = int(np.count_nonzero(preferences.joins(taste if accepting is None else accepting, price, time)))
    gaps = np.hypot((theta[:, 0] - price) / taste.price_scale, (theta[:, 1] - time) / taste.time_scale)
    return {
        "round": round_number,
        "price": price,
        "time": time,
        "consensus": participants / len(taste),
        "participants": participants,
        "spread": float(gaps.mean()),
    }
