"""The estimates that decide the delay paper's claims about its simplified model (§4.2, Fig. 4;
``data/papers/claims.csv``), from Figure 4's data: shares of the last 20 s, Fig. 4's four settings of p and α
pooled, in percent."""

import pandas as pd

from coordkit.replication import estimates


def by_delay(outcome: str):
    """The share of ``outcome`` per delay, mean over trials, as a curve."""

    def measure(frame: pd.DataFrame) -> estimates.Curve:
        points = [
            (float(delay), estimates.mean(100 * group[outcome], unit="%", bounds=(0, 100)))
            for delay, group in frame.groupby("delay")
        ]
        return estimates.curve("delay", points, x_unit="s")

    return measure


def mutual_defection_range(frame: pd.DataFrame) -> estimates.Estimate:
    """How far the share of mutual defection moves over the delays: the highest mean minus the lowest, in points."""
    means = 100 * frame.groupby("delay")["mutual_defection"].mean()
    return estimates.exact(means.max() - means.min(), frame.groupby("delay").size().min(), unit="points")


def cooperation_20s_minus_0s(frame: pd.DataFrame) -> estimates.Estimate:
    """Mutual cooperation at the longest delay minus at none (§4.2 (iii): it recovers, but not fully)."""
    longest, none = (100 * frame.loc[frame["delay"] == d, "mutual_cooperation"] for d in (frame["delay"].max(), 0))
    return estimates.difference(longest, none, unit="points")


MEASURES = {
    "mutual_cooperation_by_delay": by_delay("mutual_cooperation"),
    "exploitation_by_delay": by_delay("exploitation"),
    "mutual_defection_range": mutual_defection_range,
    "cooperation_20s_minus_0s": cooperation_20s_minus_0s,
}
