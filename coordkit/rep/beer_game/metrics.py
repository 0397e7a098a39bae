"""What the REP paper reports for the Beer Game (§5, Figure 1), computed from a model's per-round frame."""

import numpy as np
import pandas as pd


def total_cost(rounds: pd.DataFrame) -> float:
    """Holding plus backlog cost over all stages and rounds."""
    return float(rounds["cost"].sum())


def stage_costs(rounds: pd.DataFrame) -> pd.Series:
    """Cost per stage, in chain order."""
    return (
        rounds.groupby("position", sort=True)
        .agg(stage=("stage", "first"), cost=("cost", "sum"))
        .set_index("stage")["cost"]
    )


def bullwhip_ratio(rounds: pd.DataFrame) -> float:
    """Variance of the factory's orders over the variance of customer demand (Lee et al. 1997); NaN if demand
    never varies."""
    played = rounds[rounds["round"] > 0]
    factory = played[played["position"] == played["position"].max()]
    demand_var = factory["customer_demand"].var()
    return float(factory["order"].var() / demand_var) if demand_var > 0 else float("nan")


def rounds_to_stabilise(rounds: pd.DataFrame, step_round: int, tolerance: float = 0.25) -> float:
    """Rounds after the demand step until no stage changes its order by more than ``tolerance`` × customer
    demand from one round to the next, for the rest of the game. NaN if that never happens in the horizon."""
    played = rounds[rounds["round"] > 0].sort_values(["position", "round"])
    change = played.groupby("position")["order"].diff().abs()
    calm = (change <= tolerance * played["customer_demand"]) | change.isna()
    calm_round = calm.groupby(played["round"]).all().sort_index()
    unsettled = calm_round.index[~calm_round.to_numpy()]
    last_unsettled = int(unsettled.max()) if len(unsettled) else 0
    settled_from = max(last_unsettled + 1, step_round)
    return float(settled_from - step_round) if settled_from <= calm_round.index.max() else np.nan


def summary(rounds: pd.DataFrame, step_round: int) -> dict:
    """The headline numbers of one game: total cost, cost per stage, bullwhip ratio, rounds to stabilise."""
    per_stage = {f"cost_{stage}": cost for stage, cost in stage_costs(rounds).items()}
    return {
        "total_cost": total_cost(rounds),
        "bullwhip_ratio": bullwhip_ratio(rounds),
        "rounds_to_stabilise": rounds_to_stabilise(rounds, step_round),
        **per_stage,
    }


def per_game(rounds: pd.DataFrame, step_round: int = 4) -> pd.DataFrame:
    """:func:`summary` for every (protocol, seed) game in a frame of many games (e.g. a sweep's)."""
    rows = [
        {"protocol": protocol, "seed": seed, **summary(game, step_round)}
        for (protocol, seed), game in rounds.groupby(["protocol", "seed"], sort=False)
    ]
    return pd.DataFrame(rows)
