"""What the REP paper reports for Fishbanks (§6, Figure 2), computed from a model's per-season frame.

The paper names its metrics — population, a sustainability index with a viability threshold at 0.35, population
health, coordination, profit margin — but defines none beyond the threshold. The kit's definitions are in
:func:`per_season`; each says where it is the kit's choice.
"""

import numpy as np
import pandas as pd

from coordkit.rep.fishbanks.ecology import PEAK_DENSITY

GAME = ("protocol", "seed")  # the columns that tell games apart in a frame of many (a sweep's)


def per_season(frame: pd.DataFrame, capacity: float = 4000, viability_threshold: float = 0.35) -> pd.DataFrame:
    """One row per season (and per protocol and seed, when the frame holds many games); season 0 is the start.

    - population: the fish stock after the season.
    - sustainability_index: population / the initial population. The paper does not define it beyond its 0.35
      viability threshold (Fig. 2B); the stock relative to its start is the natural reading (NaN with no fish at
      the start).
    - above_threshold: whether the sustainability index is above ``viability_threshold``.
    - population_health: min(1, population / (0.6 × capacity)), the stock relative to the stock of maximum
      regeneration: 1 where the stock grows back fastest or fuller. The paper does not define it.
    - coordination: min(1, regeneration / total catch), the share of the season's catch the stock replaced: 1
      when the fleet takes no more than grows back. The paper does not define it. NaN in season 0 (no fishing).
    - profit_margin: the industry's profit / its revenue in the season (NaN when nothing was sold).
    - boats: the boats deployed by all companies.
    """
    keys = [*(column for column in GAME if column in frame.columns), "season"]
    grouped = frame.groupby(keys, sort=False)
    seasons = grouped[["stock", "regeneration", "total_catch"]].first()
    seasons[["profit", "revenue", "boats"]] = grouped[["profit", "revenue", "boats"]].sum()
    seasons = seasons.reset_index()
    if len(keys) > 1:
        initial = seasons.groupby(keys[:-1], sort=False)["stock"].transform("first")
    else:
        initial = pd.Series(seasons["stock"].iloc[0], index=seasons.index)
    played, catch = seasons["season"] > 0, seasons["total_catch"]
    table = seasons[keys].copy()
    table["population"] = seasons["stock"]
    table["sustainability_index"] = seasons["stock"] / initial.where(initial > 0)
    table["above_threshold"] = table["sustainability_index"] > viability_threshold
    table["population_health"] = (seasons["stock"] / (PEAK_DENSITY * capacity)).clip(upper=1.0)
    replaced = seasons["regeneration"] / catch.where(catch > 0)
    table["coordination"] = replaced.clip(upper=1.0).fillna(1.0).where(played)
    table["profit_margin"] = seasons["profit"] / seasons["revenue"].where(seasons["revenue"] > 0)
    table["boats"] = seasons["boats"]
    return table


def summary(
    frame: pd.DataFrame,
    capacity: float = 4000,
    viability_threshold: float = 0.35,
    seasons: pd.DataFrame | None = None,
) -> dict:
    """The headline numbers of one game (seasons 1 on; :func:`per_season` defines the metrics):

    final_population, final_sustainability_index, seasons_above_threshold (seasons whose index is above the
    threshold), collapse_season (the first season whose index is not above it; NaN if none within the game),
    mean_sustainability_index, mean_health and mean_coordination (means over the seasons), profit_margin (the
    industry's total profit / its total revenue over the game) and total_profit ($).
    ``seasons`` is the game's :func:`per_season` table, if the caller has it already.
    """
    if seasons is None:
        seasons = per_season(frame, capacity, viability_threshold)
    played = seasons[seasons["season"] > 0]
    collapsed = played.loc[~played["above_threshold"], "season"]
    profit, revenue = float(frame["profit"].sum()), float(frame["revenue"].sum())  # overflow: inf, not a warning
    return {
        "final_population": float(seasons["population"].iloc[-1]),
        "final_sustainability_index": float(seasons["sustainability_index"].iloc[-1]),
        "seasons_above_threshold": int(played["above_threshold"].sum()),
        "collapse_season": float(collapsed.iloc[0]) if len(collapsed) else float("nan"),
        "mean_sustainability_index": float(played["sustainability_index"].mean()),
        "mean_health": float(played["population_health"].mean()),
        "mean_coordination": float(played["coordination"].mean()),
        "profit_margin": profit / revenue if revenue > 0 else np.nan,  # -inf at a subnormal revenue
        "total_profit": profit,
    }


def per_game(frame: pd.DataFrame, capacity: float = 4000, viability_threshold: float = 0.35) -> pd.DataFrame:
    """:func:`summary` for every (protocol, seed) game in a frame of many games (e.g. a sweep's)."""
    rows = [
        {"protocol": protocol, "seed": seed, **summary(game, capacity, viability_threshold)}
        for (protocol, seed), game in frame.groupby(list(GAME), sort=False)
    ]
    return pd.DataFrame(rows)


def gains(games: pd.DataFrame, rep: str = "rep_textual", baseline: str = "a2a") -> dict[str, float]:
    """REP's gains over A2A as differences of means over games, never ratios (a ratio over a near-empty stock
    explodes). ``games`` is :func:`per_game`'s table.

    - sustainability: the final sustainability index, REP's minus A2A's, in percentage points of the initial
      stock (the difference in final population over the initial stock);
    - health and coordination: the season means, REP's minus A2A's, in percentage points;
    - final_population: REP's final population minus A2A's, in fish;
    - seasons_above_threshold: REP's seasons above the threshold minus A2A's.

    The paper calls its numbers "improvements" without saying how it computes them; its health gain equals its
    ratio of final populations minus 1 (see data/papers/rep.csv), which the kit does not reproduce as a ratio.
    """
    columns = [
        "final_sustainability_index",
        "mean_health",
        "mean_coordination",
        "final_population",
        "seasons_above_threshold",
    ]
    mean = games.groupby("protocol")[columns].mean()
    difference = mean.loc[rep] - mean.loc[baseline]
    return {
        "sustainability": 100 * float(difference["final_sustainability_index"]),
        "health": 100 * float(difference["mean_health"]),
        "coordination": 100 * float(difference["mean_coordination"]),
        "final_population": float(difference["final_population"]),
        "seasons_above_threshold": float(difference["seasons_above_threshold"]),
    }
