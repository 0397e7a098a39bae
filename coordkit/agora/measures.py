"""The estimates that decide the Agora paper's claims (§5.2, §5.3, App. D.3; ``data/papers/claims.csv``), from the
two demos' data (one row per seed, arm and query; query 0 is the start)."""

import dataclasses

import pandas as pd

from coordkit.agora.costs import ACTIVITIES, weather_costs
from coordkit.replication import estimates

WINDOW = 100  # queries per block, as Fig. 5(a) averages its costs


def break_even_uses(frame: pd.DataFrame) -> estimates.Estimate:
    """Uses of the protocol that pay for negotiating and implementing it: the setup's cost over what each use saves
    (§5.2: 0.043 / 0.020, "more than twice"), mean over seeds."""
    uses = [
        costs["setup"] / (costs["natural_language"] - costs["protocol"])
        for costs in (weather_costs(seed) for _, seed in frame.groupby("seed"))
    ]
    return estimates.mean(uses, unit="", bounds=(0, float("inf")))


def _played(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["query"] > 0]


def cost_ratio(frame: pd.DataFrame) -> estimates.Estimate:
    """Natural language's total cost over Agora's (§5.3: 36.23 / 7.67 USD)."""
    totals = _played(frame).groupby(["protocol", "seed"])["cost"].sum()
    return estimates.ratio(totals["natural_language"], totals["agora"])


def _windows(frame: pd.DataFrame) -> pd.DataFrame:
    """The played queries, each with its block of ``WINDOW`` queries ("1–100", "101–200", ...) in ``window``."""
    played = _played(frame)
    start = (played["query"] - 1) // WINDOW * WINDOW + 1
    return played.assign(window=start.astype(str) + "–" + (start + WINDOW - 1).astype(str))


def cost_ratio_by_window(frame: pd.DataFrame) -> estimates.Curve:
    """Natural language's cost over Agora's in each block of 100 queries."""
    costs = _windows(frame).groupby(["window", "protocol", "seed"])["cost"].sum()
    points = [
        (window, estimates.ratio(costs.loc[window, "natural_language"], costs.loc[window, "agora"]))
        for window in _in_order(costs.index.unique("window"))
    ]
    return estimates.curve("block of queries", points)


def llm_turns_by_window(frame: pd.DataFrame) -> estimates.Curve:
    """Agora's LLM turns per query in each block of 100 queries, mean over seeds."""
    agora = _windows(frame[frame["protocol"] == "agora"])
    per_seed = agora.groupby(["window", "seed"])["llm_turns"].mean()
    points = [
        (window, estimates.mean(per_seed.loc[window], unit="calls", bounds=(0, float("inf"))))
        for window in _in_order(per_seed.index.unique("window"))
    ]
    return estimates.curve("block of queries", points)


def _in_order(windows) -> list[str]:
    """Blocks of queries in the order they were played ("1–100" before "101–200", not as text sorts them)."""
    return sorted(windows, key=lambda window: int(window.partition("–")[0]))


def _shares(frame: pd.DataFrame) -> pd.DataFrame:
    """The share of Agora's cost each activity took (App. D.3), in percent: one row per seed, one column per
    activity."""
    agora = _played(frame[frame["protocol"] == "agora"]).groupby("seed")
    return pd.DataFrame(
        {activity: 100 * agora[f"cost_{activity}"].sum() / agora["cost"].sum() for activity in ACTIVITIES}
    )


def share_of_cost(activity: str):
    """The share of Agora's cost spent on ``activity`` (App. D.3), in percent, mean over seeds."""

    def measure(frame: pd.DataFrame) -> estimates.Estimate:
        return estimates.mean(_shares(frame)[activity], unit="%", bounds=(0, 100))

    return measure


def negotiation_below_the_rest(frame: pd.DataFrame) -> estimates.Estimate:
    """Negotiation's share of Agora's cost minus the smallest other activity's (the smallest on average), seed by
    seed, mean over seeds: below 0 when negotiation is the smallest part (App. D.3: 6% against implementing's 17%)."""
    shares = _shares(frame)
    others = shares.drop(columns="negotiation")
    smallest = others.mean().idxmin()
    gap = estimates.mean(shares["negotiation"] - others[smallest], unit="points", bounds=(-100, 100))
    return dataclasses.replace(gap, label=f"negotiation − {smallest.replace('_', ' ')}, the smallest of the others")


WEATHER = {"break_even_uses": break_even_uses}
NETWORK = {
    "cost_ratio": cost_ratio,
    "cost_ratio_by_window": cost_ratio_by_window,
    "llm_turns_by_window": llm_turns_by_window,
    "natural_language_share": share_of_cost("natural_language"),
    "negotiation_below_the_rest": negotiation_below_the_rest,
    "checks_share": share_of_cost("checks"),
}
