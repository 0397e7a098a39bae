"""What the REP paper reports for the Beer Game (§5, Figure 1), computed from a model's per-round frame."""

import numpy as np
import pandas as pd

SUMMARY_COLUMNS = ("position", "stage", "cost", "customer_demand", "order", "backlog")  # (every table has the round)


def total_cost(rounds: pd.DataFrame) -> float:
    """Holding plus backlog cost over all stages and rounds."""
    return float(rounds["cost"].sum())


def stage_costs(rounds: pd.DataFrame) -> pd.Series:
    """Cost per stage, in chain order."""
    by_position = rounds.groupby("position", sort=True)
    stages = pd.Index(by_position["stage"].first(), name="stage")
    return pd.Series(by_position["cost"].sum().to_numpy(), index=stages, name="cost")


def bullwhip_ratio(rounds: pd.DataFrame) -> float:
    """Variance of the factory's orders over the variance of customer demand (Lee et al. 1997); NaN if demand
    never varies."""
    played = rounds["round"].to_numpy() > 0
    position = rounds["position"].to_numpy()[played]
    factory = position == position.max()
    demand_var = pd.Series(rounds["customer_demand"].to_numpy()[played][factory]).var()
    order_var = pd.Series(rounds["order"].to_numpy()[played][factory]).var()
    return float(order_var / demand_var) if demand_var > 0 else float("nan")


def final_backlog(rounds: pd.DataFrame) -> float:
    """The cases the chain still owes its customers and each other when the game ends (all stages' backlogs)."""
    played = rounds["round"].to_numpy()
    return float(rounds["backlog"].to_numpy()[played == played.max()].sum())


def rounds_to_stabilise(rounds: pd.DataFrame, step_round: int, tolerance: float = 0.25, hold: int = 3) -> float:
    """Rounds from the demand step until the chain is settled for good: from then to the end of the game, every
    stage orders within ``tolerance`` × customer demand of customer demand *and* owes nothing (no backlog).

    The paper reports REP settling "within 3–4 rounds" (Fig. 1) without saying what settled means; this is the kit's
    reading, so that a chain whose orders have calmed while its customers still wait does not count. NaN when the
    game ends before the chain has been settled for ``hold`` rounds in a row (never settled within the horizon).
    """
    after = rounds["round"].to_numpy() >= step_round
    played, order, demand, backlog = (
        rounds[c].to_numpy()[after] for c in ("round", "order", "customer_demand", "backlog")
    )
    settled = (np.abs(order - demand) <= tolerance * demand) & (backlog <= 0)  # per stage and round
    unsettled = played[~settled]
    settled_from = int(unsettled.max()) + 1 if len(unsettled) else step_round
    if len(played) and played.max() - settled_from + 1 < hold:
        return np.nan
    return float(settled_from - step_round)


def summary(rounds: pd.DataFrame, step_round: int) -> dict:
    """The headline numbers of one game: total cost, cost per stage, bullwhip ratio, rounds to stabilise, and the
    backlog left at the end."""
    per_stage = {f"cost_{stage}": cost for stage, cost in stage_costs(rounds).items()}
    return {
        "total_cost": total_cost(rounds),
        "bullwhip_ratio": bullwhip_ratio(rounds),
        "rounds_to_stabilise": rounds_to_stabilise(rounds, step_round),
        "final_backlog": final_backlog(rounds),
        **per_stage,
    }


def per_game(rounds: pd.DataFrame, step_round: int = 4) -> pd.DataFrame:
    """:func:`summary` for every (protocol, seed) game in a frame of many games (e.g. a sweep's)."""
    rows = [
        {"protocol": protocol, "seed": seed, **summary(game, step_round)}
        for (protocol, seed), game in rounds.groupby(["protocol", "seed"], sort=False)
    ]
    return pd.DataFrame(rows)
