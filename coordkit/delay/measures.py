"""The estimates that decide the delay paper's claims about its simplified model (§4.2, Fig. 4;
``data/papers/claims.csv``), from Figure 4's data: shares of the last 20 s, Fig. 4's four settings of p and α
pooled, in percent, each distinct trial counted once (:func:`distinct_trials`)."""

import numpy as np
import pandas as pd

from coordkit.replication import estimates


def distinct_trials(frame: pd.DataFrame) -> pd.DataFrame:
    """Fig. 4's trials, each counted once. A player defects unprompted with probability min(1, α·D) a second
    (:func:`coordkit.delay.fast.simulate`), and every setting plays the same trial seeds, so two values of α with
    the same min(1, α·D) play the same trials: α = 0.1 and 0.2 at 0 s and from 10 s on. Pooled, each of those
    trials would count twice and its interval would be too narrow."""
    temptation = np.minimum(1.0, frame["alpha"] * frame["delay"])
    return frame[~frame.assign(temptation=temptation).duplicated(["p", "delay", "temptation", "trial"])]


def by_delay(outcome: str):
    """The share of ``outcome`` per delay, mean over distinct trials, as a curve."""

    def measure(frame: pd.DataFrame) -> estimates.Curve:
        points = [
            (float(delay), estimates.mean(100 * group[outcome], unit="%", bounds=(0, 100)))
            for delay, group in distinct_trials(frame).groupby("delay")
        ]
        return estimates.curve("delay", points, x_unit="s")

    return measure


def mutual_defection_range(frame: pd.DataFrame) -> estimates.Estimate:
    """How far the share of mutual defection moves over the delays: the highest mean minus the lowest, in points."""
    trials = distinct_trials(frame)
    means = 100 * trials.groupby("delay")["mutual_defection"].mean()
    return estimates.exact(means.max() - means.min(), trials.groupby("delay").size().min(), unit="points")


def cooperation_recovered(frame: pd.DataFrame) -> estimates.Estimate:
    """Mutual cooperation at the longest delay minus at the trough, the lowest of the delays between none and the
    longest (§4.2 (iii): it recovers, though not to the 0 s level), over distinct trials, Welch's interval."""
    trials = distinct_trials(frame)
    longest = trials["delay"].max()
    inner = trials[(trials["delay"] > 0) & (trials["delay"] < longest)]
    trough = inner.groupby("delay")["mutual_cooperation"].mean().idxmin()
    at = {delay: 100 * trials.loc[trials["delay"] == delay, "mutual_cooperation"] for delay in (longest, trough)}
    label = f"{longest:g} s − {trough:g} s, the trough"
    return estimates.difference(at[longest], at[trough], unit="points", label=label)


MEASURES = {
    "mutual_cooperation_by_delay": by_delay("mutual_cooperation"),
    "exploitation_by_delay": by_delay("exploitation"),
    "mutual_defection_range": mutual_defection_range,
    "cooperation_recovered": cooperation_recovered,
}
