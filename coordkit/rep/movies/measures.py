"""The estimates that decide REP's movie-scheduling claims (§7, Fig. 3; ``data/papers/claims.csv``), from Figure 3's
data. REP is REP numerical, as the notebook's comparisons take it (its consensus is the paper's REP line's)."""

import pandas as pd

from coordkit.rep.movies.metrics import per_run
from coordkit.rep.movies.model import MovieScheduling
from coordkit.replication import estimates

HORIZON = MovieScheduling.parameters["rounds"].default  # a run that never converges counts as one round past it


def _by_regime(protocol: str, column: str, scale: float, unit: str, bounds: tuple[float, float]):
    """A curve over the connectivity regimes, in the figure's order, of ``column`` of :func:`per_run` for
    ``protocol``, mean over runs."""

    def measure(rounds: pd.DataFrame) -> estimates.Curve:
        runs = per_run(rounds[rounds["protocol"] == protocol], ["protocol", "regime"])
        values = runs.assign(value=scale * runs[column].fillna(HORIZON + 1))
        points = [
            (regime, estimates.mean(values.loc[values["regime"] == regime, "value"], unit=unit, bounds=bounds))
            for regime in rounds["regime"].unique()
        ]
        return estimates.curve("regime", points)

    return measure


def rounds_by_population(protocol: str, largest: int | None = None):
    """``protocol``'s mean convergence round per population, up to ``largest`` agents (every population with None; a
    run that never converges counts as one round past the horizon)."""

    def measure(runs: pd.DataFrame) -> estimates.Curve:
        played = runs[(runs["protocol"] == protocol) & (runs["population"] <= (largest or runs["population"].max()))]
        points = [
            (
                int(size),
                estimates.mean(group["convergence_round"].fillna(HORIZON + 1), unit="rounds", bounds=(1, HORIZON + 1)),
            )
            for size, group in played.groupby("population")
        ]
        return estimates.curve("population", points, x_unit="agents")

    return measure


def a2a_converged_beyond_20(runs: pd.DataFrame) -> estimates.Estimate:
    """How many A2A runs with more than 20 agents reach the consensus threshold."""
    large = runs[(runs["protocol"] == "a2a") & (runs["population"] > 20)]
    return estimates.exact(int(large["converged"].sum()), len(large), unit="")


def of_reading(reading: str, measure):
    """``measure`` of the runs of the readings figure (``rep-movies-readings``) played under ``reading``."""

    def measured(rounds: pd.DataFrame):
        return measure(rounds[rounds["reading"] == reading])

    return measured


SPARSITY = {
    "rep_final_consensus_by_regime": _by_regime("rep_numerical", "final_consensus", 100, "%", (0, 100)),
    "rep_convergence_round_by_regime": _by_regime("rep_numerical", "convergence_round", 1, "rounds", (1, HORIZON + 1)),
    "a2a_max_consensus_by_regime": _by_regime("a2a", "max_consensus", 100, "%", (0, 100)),
}
SCALING = {
    "rep_rounds_by_population": rounds_by_population("rep_numerical"),
    "a2a_rounds_up_to_20": rounds_by_population("a2a", largest=20),
    "a2a_converged_beyond_20": a2a_converged_beyond_20,
}
READINGS = {
    **{
        f"rep_convergence_round_by_regime_{reading}": of_reading(reading, SPARSITY["rep_convergence_round_by_regime"])
        for reading in ("table2", "thresholds")
    },
    "rep_final_consensus_by_regime_thresholds": of_reading("thresholds", SPARSITY["rep_final_consensus_by_regime"]),
    "a2a_max_consensus_by_regime_thresholds": of_reading("thresholds", SPARSITY["a2a_max_consensus_by_regime"]),
}
