"""The estimates that decide the Agora paper's claims (§5.2, §5.3, App. D.3; ``data/papers/claims.csv``), from the
two demos' data (one row per seed, arm and query; query 0 is the start)."""

import pandas as pd

from coordkit.agora.costs import weather_costs
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


def share_of_cost(activity: str):
    """The share of Agora's cost spent on ``activity`` (App. D.3), in percent, mean over seeds."""

    def measure(frame: pd.DataFrame) -> estimates.Estimate:
        agora = _played(frame[frame["protocol"] == "agora"]).groupby("seed")
        shares = 100 * agora[f"cost_{activity}"].sum() / agora["cost"].sum()
        return estimates.mean(shares, unit="%", bounds=(0, 100))

    return measure


WEATHER = {"break_even_uses": break_even_uses}
NETWORK = {
    "cost_ratio": cost_ratio,
    "cost_ratio_by_window": cost_ratio_by_window,
    "llm_turns_by_window": llm_turns_by_window,
    "natural_language_share": share_of_cost("natural_language"),
    "negotiation_share": share_of_cost("negotiation"),
}
