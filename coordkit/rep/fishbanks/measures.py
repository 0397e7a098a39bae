"""The estimates that decide REP's Fishbanks claims (§6, Fig. 2; ``data/papers/claims.csv``), from Figure 2's data.

REP is REP textual, the paper's updater; differences are REP's minus A2A's over independent games."""

import pandas as pd

from coordkit.rep.fishbanks import metrics
from coordkit.replication import estimates

REP = "rep_textual"


def _games(seasons: pd.DataFrame, protocol: str) -> pd.DataFrame:
    games = metrics.per_game(seasons)
    return games[games["protocol"] == protocol]


def final_population_gain(seasons: pd.DataFrame) -> estimates.Estimate:
    """REP's final fish population minus A2A's (App. B.4: 1,235 against 958), a difference, never a ratio: A2A's
    stock can die out, and a ratio over a near-empty sea explodes."""
    rep, a2a = _games(seasons, REP), _games(seasons, "a2a")
    return estimates.difference(rep["final_population"], a2a["final_population"], unit="fish")


def gain_in_points(column: str):
    """REP's ``column`` of :func:`.metrics.per_game` minus A2A's, in percentage points (Fig. 2(C)'s "improvements",
    read as differences, as :func:`.metrics.gains` reads them)."""

    def measure(seasons: pd.DataFrame) -> estimates.Estimate:
        rep, a2a = _games(seasons, REP), _games(seasons, "a2a")
        return estimates.difference(100 * rep[column], 100 * a2a[column], unit="points")

    return measure


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
    "final_population_gain": final_population_gain,
    "sustainability_gain": gain_in_points("final_sustainability_index"),
    "health_gain": gain_in_points("mean_health"),
    "coordination_gain": gain_in_points("mean_coordination"),
    "extra_seasons_above_threshold": extra_seasons_above_threshold,
    "a2a_profit_margin": profit_margin("a2a"),
    "rep_profit_margin": profit_margin(REP),
}
