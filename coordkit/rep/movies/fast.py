"""REP numerical and A2A vectorised over agents with numpy and scipy.sparse: the rounds of
:class:`~coordkit.rep.movies.model.MovieScheduling`, played for whole populations at once (to 10,000 agents).

From ``numpy.random.default_rng(seed)`` it draws what the Mesa model draws, in its order — the preferences, the
network, the organiser — and computes with the same preference functions (:mod:`.preferences`), so that on the
same seed the two play the same rounds: decisions exactly, proposals and consensus to within float rounding
(neighbour means are summed in another order). REP textual has no fast path: its updater reads text.

REP's neighbour means are sparse matrix products. With the median consensus every agent opens a round at the
group proposal θ̄, and a numerical proposal is affine in θ (θ + w·(p_j − θ) for the price), so each agent's
neighbourhood mean is affine in θ̄: one product before the rounds serves them all.
"""

import numpy as np
import pandas as pd

from coordkit import networks
from coordkit.parameters import Choice, Integer, Parameters
from coordkit.rep.movies import preferences
from coordkit.rep.movies.model import PROTOCOL_NAMES, THETA_BOUNDS, MovieScheduling, draw_network, draw_preferences
from coordkit.rep.movies.policies import PRICE, TIME

PROTOCOLS = ("a2a", "rep_numerical")
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
        if param.name not in ("llm", "max_concurrency")
    ),
    relations=MovieScheduling.parameters.relations,
)
"""The model's parameters for rule-based agents (no ``llm``), with the fast path's protocols and populations."""


def simulate(seed: int, **params) -> pd.DataFrame:
    """One run of ``MovieScheduling(**params, rng=seed)`` with rule-based agents, as its ``frame()``: round,
    price, time, consensus, participants, converged. The parameters are :data:`PARAMETERS`, checked as the
    model checks its own."""
    p = PARAMETERS.resolve(params, owner="fast.simulate")
    rng = np.random.default_rng(seed)
    taste = draw_preferences(rng, p)
    edges = draw_network(rng, p)
    organiser = int(rng.integers(p["population"]))
    ideals = np.column_stack([taste.price, taste.time])
    theta = np.tile(ideals[organiser], (p["population"], 1))  # θ_i: everyone opens with the organiser's ideal
    update = _rep_update(taste, edges, p) if p["protocol"] == "rep_numerical" else _a2a_update(taste, ideals)
    rows, converged = [], False
    for round_number in range(p["rounds"] + 1):
        if round_number:
            theta = update(theta)
            if p["consensus"] is not None:
                theta[:] = np.median(theta, axis=0)
        rows.append(_vote(taste, theta, round_number))
        converged = converged or rows[-1]["consensus"] >= p["convergence_threshold"]
        rows[-1]["converged"] = converged
        if round_number and p["stop_at_convergence"] and converged:
            break
    return pd.DataFrame(rows)


def _rep_update(taste: preferences.Preferences, edges: np.ndarray, p: dict):
    """Stage 1 of REP numerical for everyone: θ_i ← θ_i − η·(θ_i − the mean proposal of i and its neighbours)."""
    n = p["population"]
    upper = networks.upper_triangle(n, edges)
    size = (networks.degrees(n, edges) + 1)[:, None]  # the neighbourhood, the agent included

    def neighbourhood_mean(x: np.ndarray) -> np.ndarray:
        return (upper @ x + upper.T @ x + x) / size

    bounds = np.array([THETA_BOUNDS[PRICE], THETA_BOUNDS[TIME]])  # rows: price, time; columns: low, high

    def step(theta: np.ndarray, mean: np.ndarray) -> np.ndarray:
        return np.clip(theta - p["step_size"] * (theta - mean), bounds[:, 0], bounds[:, 1])

    def proposals(theta: np.ndarray) -> np.ndarray:
        return np.column_stack(preferences.proposal(taste, theta[:, 0], theta[:, 1]))

    if p["consensus"] is None:
        return lambda theta: step(theta, neighbourhood_mean(proposals(theta)))
    ones = np.ones((n, 2))
    intercept = proposals(np.zeros((n, 2)))
    means = neighbourhood_mean(np.hstack([proposals(ones) - intercept, intercept]))  # slope and intercept
    return lambda theta: step(theta, theta[0] * means[:, :2] + means[:, 2:])


def _a2a_update(taste: preferences.Preferences, ideals: np.ndarray):
    """A2A's local reasoning for everyone: keep θ_i if it would join there, else take its own ideal."""
    return lambda theta: np.where(preferences.joins(taste, theta[:, 0], theta[:, 1])[:, None], theta, ideals)


def _vote(taste: preferences.Preferences, theta: np.ndarray, round_number: int) -> dict:
    """The group proposal (the coordinate-wise median of the θ_i) and who would join it."""
    price, time = np.median(theta, axis=0)
    participants = int(np.count_nonzero(preferences.joins(taste, price, time)))
    return {
        "round": round_number,
        "price": float(price),
        "time": float(time),
        "consensus": participants / len(taste),
        "participants": participants,
    }
