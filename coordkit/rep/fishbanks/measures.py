"""The estimates that decide REP's Fishbanks claims (§6, Fig. 2; ``data/papers/claims.csv``), from Figure 2's data.

REP is REP textual, the paper's updater; differences are REP's minus A2A's over independent games."""

import pandas as pd

from coordkit.rep.fishbanks import metrics
from coordkit.replication import estimates

REP = "rep_textual"


def _games(seasons: pd.DataFrame, protocol: str) -> pd.DataFrame:
    games = metrics.per_game(seasons)
    return games[games["protocol"] == protocol]


def final_population_ratio(seasons: pd.DataFrame) -> estimates.Estimate:
    """REP's final fish population over A2A's (App. B.4: 1,235 over 958): a ratio, since the paper's sea and the
    kit's need not hold the same number of fish."""
    rep, a2a = _games(seasons, REP), _games(seasons, "a2a")
    return estimates.ratio(rep["final_population"], a2a["final_population"])


def extra_seasons_above_threshold(seasons: pd.DataFrame) -> estimates.Estimate:
    """REP's seasons with the sustainability index above 0.35 minus A2A's (Fig. 2(b): 2 seasons longer)."""
    rep, a2a = _games(seasons, REP), _games(seasons, "a2a")
    return estimates.difference(rep["seasons_above_threshold"], a2a["seasons_above_threshold"], unit="seasons")


def profit_margin(protocol: str):
    """``protocol``'s profit margin over the game (profit over revenue), in percent, mean over games."""

    def measure(seasons: pd.DataFrame) -> estimates.Estimate:
        return estimates.mean(100 * _games(seasons, protocol)["profit_margin"].dropna(), unit="%")

    return measure


MEASURES = {
    "final_population_ratio": final_population_ratio,
    "extra_seasons_above_threshold": extra_seasons_above_threshold,
    "a2a_profit_margin": profit_margin("a2a"),
    "rep_profit_margin": profit_margin(REP),
}
