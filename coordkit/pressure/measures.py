"""The estimates that decide the pressure-field paper's claims (§6, Tables 2–7; ``data/papers/claims.csv``), from
the calibrated actors' tables (``pressure-calibrated``): solve rates with Wilson intervals, their differences with
Newcombe's.

The ledger reads the calibrated actors, not the default ones: at their default (``failure=0``) the rule-based
actors solve nearly every puzzle, so no rate of theirs can speak to the paper's sizes. The calibration fits one
number, Table 2's pressure-field rate, in the open (:mod:`coordkit.pressure.calibration`); every other rate is a
prediction.
"""

import pandas as pd

from coordkit.pressure.design import BASELINES, TOP_TIER
from coordkit.replication import estimates

LOWER_TIER = (*BASELINES, "conversation")


def _solved(frame: pd.DataFrame, strategies: tuple[str, ...]) -> tuple[int, int]:
    """Puzzles solved, and trials, by ``strategies`` pooled."""
    played = frame[frame["strategy"].isin(strategies)]
    return int(played["solved"].sum()), len(played)


def _rates(frame: pd.DataFrame) -> pd.Series:
    return frame.groupby("strategy")["solved"].mean()


def pressure_field_minus_hierarchical(frame: pd.DataFrame) -> estimates.Estimate:
    """Pressure-field's solve rate minus hierarchical's (Table 2: 38.2% against 38.8%)."""
    return estimates.rate_difference(*_solved(frame, ("pressure_field",)), *_solved(frame, ("hierarchical",)))


def top_tier_margin(frame: pd.DataFrame) -> estimates.Estimate:
    """The closest pair across the tiers: the lower top-tier rate minus the highest lower-tier rate."""
    rates = _rates(frame)
    weakest_top = rates[list(TOP_TIER)].idxmin()
    strongest_lower = rates[[s for s in LOWER_TIER if s in rates]].idxmax()
    pair = f"{weakest_top} − {strongest_lower}"
    return estimates.rate_difference(*_solved(frame, (weakest_top,)), *_solved(frame, (strongest_lower,)), label=pair)


def conversation_minus_lowest_other(frame: pd.DataFrame) -> estimates.Estimate:
    """Conversation's solve rate minus the lowest rate among the other strategies (Table 2: 8.6% against
    random's 11.7%)."""
    lowest = _rates(frame).drop("conversation").idxmin()
    pair = f"conversation − {lowest}"
    return estimates.rate_difference(*_solved(frame, ("conversation",)), *_solved(frame, (lowest,)), label=pair)


def decay_off_over_on(frame: pd.DataFrame) -> estimates.Estimate:
    """Mean final pressure without decay over with it (Table 3: 58.14 / 1.18, 49-fold)."""
    off, on = (frame.loc[frame["decay"] == flag, "final_pressure"] for flag in (False, True))
    return estimates.ratio(off, on)


def solved_without_decay(frame: pd.DataFrame) -> estimates.Estimate:
    """Puzzles solved over the configurations without decay (Table 4: 0 of 120)."""
    return estimates.exact(*_solved(frame[frame["decay"].eq(False)], ("pressure_field",)))


def solved_with_decay(frame: pd.DataFrame) -> estimates.Estimate:
    """Pressure-field's solve rate over the configurations with decay (Table 4: 65 of 120, 54%)."""
    return estimates.rate(*_solved(frame[frame["decay"].eq(True)], ("pressure_field",)))


def pressure_field_minus_conversation(frame: pd.DataFrame) -> estimates.Estimate:
    """Pressure-field's solve rate minus conversation's (Table 7, easy puzzles: 86.7% against 15%)."""
    solved = (*_solved(frame, ("pressure_field",)), *_solved(frame, ("conversation",)))
    return estimates.rate_difference(*solved, label="pressure_field − conversation")


def pressure_field_rate_by_agents(frame: pd.DataFrame) -> estimates.Curve:
    """Pressure-field's solve rate per agent count (Table 5)."""
    pressure_field = frame[frame["strategy"] == "pressure_field"]
    points = [
        (int(count), estimates.rate(int(group["solved"].sum()), len(group)))
        for count, group in pressure_field.groupby("agent_count")
    ]
    return estimates.curve("agent count", points, x_unit="agents")


def pressure_field_rate(frame: pd.DataFrame) -> estimates.Estimate:
    """Pressure-field's solve rate (Table 7, easy puzzles: 86.7%)."""
    return estimates.rate(*_solved(frame, ("pressure_field",)))


def hard_top_minus_baselines(frame: pd.DataFrame) -> estimates.Estimate:
    """With escalation (as Table 6 ran), the top tier's pooled rate minus the lower tier's."""
    escalated = frame[frame["escalation"].eq(True)]  # with escalation, as Table 6 ran
    return estimates.rate_difference(*_solved(escalated, TOP_TIER), *_solved(escalated, LOWER_TIER))


def of_table(table: str, measure):
    """``measure`` of the rows of the calibrated frame that play ``table`` (a figure id: ``pressure-table2``)."""

    def measured(frame: pd.DataFrame):
        return measure(frame[frame["figure"] == table])

    return measured


CALIBRATED = {
    "pressure_field_minus_hierarchical": of_table("pressure-table2", pressure_field_minus_hierarchical),
    "top_tier_margin": of_table("pressure-table2", top_tier_margin),
    "conversation_minus_lowest_other": of_table("pressure-table2", conversation_minus_lowest_other),
    "decay_off_over_on": of_table("pressure-ablation", decay_off_over_on),
    "solved_without_decay": of_table("pressure-ablation", solved_without_decay),
    "solved_with_decay": of_table("pressure-ablation", solved_with_decay),
    "pressure_field_rate_by_agents": of_table("pressure-table5", pressure_field_rate_by_agents),
    "hard_top_minus_baselines": of_table("pressure-table6", hard_top_minus_baselines),
    "pressure_field_rate": of_table("pressure-table7", pressure_field_rate),
    "pressure_field_minus_conversation": of_table("pressure-table7", pressure_field_minus_conversation),
}
