"""The estimates that decide REP's Beer Game claims (§5, Fig. 1; ``data/papers/claims.csv``), from Figure 1's data."""

import dataclasses
import math

import pandas as pd

from coordkit.rep.beer_game import metrics
from coordkit.replication import estimates

STEP_ROUND = 4  # the paper's demand shock: customer demand doubles at round 4


def cost_reduction(rounds: pd.DataFrame) -> estimates.Estimate:
    """How much lower REP textual's mean total cost is than A2A's, in percent (Insight 1: 41.8%)."""
    games = metrics.per_game(rounds, STEP_ROUND)
    cost = games.groupby("protocol")["total_cost"]
    return estimates.reduction(cost.get_group("rep_textual"), cost.get_group("a2a"))


def rounds_to_stabilise(protocol: str):
    """Rounds from the shock until ``protocol``'s chain is settled for good (:func:`.metrics.rounds_to_stabilise`),
    mean over games; a game that never settles counts as all the rounds after the shock plus one."""

    def measure(rounds: pd.DataFrame) -> estimates.Estimate:
        games = metrics.per_game(rounds[rounds["protocol"] == protocol], STEP_ROUND)
        never = rounds["round"].max() - STEP_ROUND + 1
        unsettled = int(games["rounds_to_stabilise"].isna().sum())
        mean = estimates.mean(games["rounds_to_stabilise"].fillna(never), unit="rounds", bounds=(0, never))
        counted = f"each counted as {never} rounds, one more than the game has after the shock"
        label = f"{unsettled} of {len(games)} games never settle, {counted}" if unsettled else ""
        return dataclasses.replace(mean, label=label)

    return measure


def settling_gap(rounds: pd.DataFrame) -> estimates.Estimate:
    """A2A's rounds to stabilise minus REP textual's (Insight 1: 10 or more against 3–4), over independent games. A
    game that never settles would settle, if ever, after the game's end: when no game of either protocol settles,
    the game is too short to tell which settles sooner, and the interval is open both ways."""
    a2a, rep = (
        metrics.per_game(rounds[rounds["protocol"] == protocol], STEP_ROUND)["rounds_to_stabilise"]
        for protocol in ("a2a", "rep_textual")
    )
    label = "A2A − REP textual"
    if a2a.isna().all() and rep.isna().all():
        never = "no game of either protocol settles within the game: a longer game would tell which settles sooner"
        return estimates.Estimate(0.0, -math.inf, math.inf, min(len(a2a), len(rep)), "rounds", "censored", never)
    never = rounds["round"].max() - STEP_ROUND + 1
    unsettled = int(a2a.isna().sum() + rep.isna().sum())
    if unsettled:
        label += f"; {unsettled} of {len(a2a) + len(rep)} games never settle, each counted as {never} rounds"
    return estimates.difference(a2a.fillna(never), rep.fillna(never), unit="rounds", label=label)


MEASURES = {
    "cost_reduction": cost_reduction,
    "rep_rounds_to_stabilise": rounds_to_stabilise("rep_textual"),
    "settling_gap": settling_gap,
}
