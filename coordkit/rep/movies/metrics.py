"""What a movie-scheduling run achieved, from its consensus per round (§7): shared by the figures' comparisons and
the claims' measures."""

import pandas as pd

from coordkit.rep.movies.model import MovieScheduling, outcome

THRESHOLD = MovieScheduling.parameters["convergence_threshold"].default


def per_run(rounds: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """:func:`~coordkit.rep.movies.model.outcome` of every run (``by`` and seed) in a frame of many runs, with
    its final spread."""
    rows = [
        {
            **dict(zip([*by, "seed"], keys)),
            **outcome(run["consensus"], THRESHOLD),
            "final_spread": float(run["spread"].iloc[-1]),
        }
        for keys, run in rounds.groupby([*by, "seed"], sort=False)
    ]
    return pd.DataFrame(rows)
