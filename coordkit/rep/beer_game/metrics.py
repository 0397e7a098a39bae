"""What the REP paper reports for the Beer Game (§5, Figure 1), computed from a game's per-round records: a model's
frame (one row per round and stage), or the same columns as sequences (``records.agent_columns``, which
``BeerGame.summary`` reads without building a frame)."""

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

SUMMARY_COLUMNS = ("position", "stage", "cost", "customer_demand", "order", "backlog")  # (every table has the round)

Rounds = pd.DataFrame | Mapping[str, Sequence]  # a per-round frame, or its columns by name


def total_cost(rounds: Rounds) -> float:
    """Holding plus backlog cost over all stages and rounds."""
    return float(_numbers(rounds, "cost").sum())


def stage_costs(rounds: Rounds) -> pd.Series:
    """Cost per stage, in chain order."""
    costs = costs_by_stage(rounds)
    return pd.Series(list(costs.values()), index=pd.Index(list(costs), name="stage"), name="cost")


def costs_by_stage(rounds: Rounds) -> dict[str, float]:
    """Each stage's cost over the game, by stage name, in chain order (by position): a compensated sum of its
    rounds' costs, in the rows' order."""
    costs: dict[int, list[float]] = {}
    names: dict[int, str] = {}
    for position, stage, cost in zip(rounds["position"], rounds["stage"], rounds["cost"], strict=True):
        costs.setdefault(position, []).append(float(cost))
        names.setdefault(position, stage)
    return {names[position]: compensated_sum(costs[position]) for position in sorted(costs)}


def compensated_sum(values: Iterable[float]) -> float:
    """Kahan's compensated sum, in the order given: the sum pandas' groupby kernel computes for rows in round order
    (as every frame of the kit is), so that a stage's cost is the figure the kit reported when it summed with a
    groupby, to the last bit."""
    total = compensation = 0.0
    for value in values:
        corrected = value - compensation
        new_total = total + corrected
        compensation = (new_total - total) - corrected
        total = new_total
    return total


def bullwhip_ratio(rounds: Rounds) -> float:
    """Variance of the factory's orders over the variance of customer demand (Lee et al. 1997); NaN if demand
    never varies."""
    played = np.asarray(rounds["round"]) > 0
    position = np.asarray(rounds["position"])[played]
    factory = position == position.max()
    demand_var = sample_variance(_numbers(rounds, "customer_demand")[played][factory])
    order_var = sample_variance(_numbers(rounds, "order")[played][factory])
    return float(order_var / demand_var) if demand_var > 0 else float("nan")


def sample_variance(values: np.ndarray) -> float:
    """The variance with n − 1 in the denominator (the same float as ``pandas.Series.var``); NaN for fewer than two
    values."""
    return float(np.var(values, ddof=1)) if len(values) >= 2 else float("nan")


def final_backlog(rounds: Rounds) -> float:
    """The cases the chain still owes its customers and each other when the game ends (all stages' backlogs)."""
    played = np.asarray(rounds["round"])
    return float(_numbers(rounds, "backlog")[played == played.max()].sum())


def rounds_to_stabilise(rounds: Rounds, step_round: int, tolerance: float = 0.25, hold: int = 3) -> float:
    """Rounds from the demand step until the chain is settled for good: from then to the end of the game, every
    stage orders within ``tolerance`` × customer demand of customer demand *and* owes nothing (no backlog).

    The paper reports REP settling "within 3–4 rounds" (Fig. 1) without saying what settled means; this is the kit's
    reading, so that a chain whose orders have calmed while its customers still wait does not count. NaN when the
    game ends before the chain has been settled for ``hold`` rounds in a row (never settled within the horizon).
    """
    after = np.asarray(rounds["round"]) >= step_round
    played = np.asarray(rounds["round"])[after]
    order, demand, backlog = (_numbers(rounds, c)[after] for c in ("order", "customer_demand", "backlog"))
    settled = (np.abs(order - demand) <= tolerance * demand) & (backlog <= 0)  # per stage and round
    unsettled = played[~settled]
    settled_from = int(unsettled.max()) + 1 if len(unsettled) else step_round
    if len(played) and played.max() - settled_from + 1 < hold:
        return np.nan
    return float(settled_from - step_round)


def summary(rounds: Rounds, step_round: int) -> dict:
    """The headline numbers of one game: total cost, cost per stage, bullwhip ratio, rounds to stabilise, and the
    backlog left at the end."""
    per_stage = {f"cost_{stage}": cost for stage, cost in costs_by_stage(rounds).items()}
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


def _numbers(rounds: Rounds, column: str) -> np.ndarray:
    """A numeric column as floats (the frame's float64 column, or the recorded numbers, ints among them, converted
    as the frame converts them)."""
    return np.asarray(rounds[column], dtype=float)
