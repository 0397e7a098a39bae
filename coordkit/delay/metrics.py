"""What the paper measures in a trial (§4.1): the shares of mutual cooperation, mutual defection and exploitation
over the last 20 s, and the players' payoffs; and their means over trials, with 95% intervals."""

import numpy as np
import pandas as pd

from coordkit import stats
from coordkit.delay.game import CODE, TABLE_1, Payoffs, Timing

OUTCOMES = ("mutual_cooperation", "mutual_defection", "exploitation")
LAST_S = 20.0


def shares(effective: np.ndarray, timing: Timing, last_s: float = LAST_S) -> pd.DataFrame:
    """Per trial, the share of the last ``last_s`` seconds spent in each outcome.

    ``effective`` holds action codes of shape (2, trials, ticks). Columns: mutual_cooperation, mutual_defection,
    exploitation (either player exploited), a_exploited (A cooperates while B defects), b_exploited.
    """
    a, b = effective[:, :, -timing.ticks(last_s) :]
    c, d = CODE["C"], CODE["D"]
    return pd.DataFrame(
        {
            "mutual_cooperation": ((a == c) & (b == c)).mean(axis=1),
            "mutual_defection": ((a == d) & (b == d)).mean(axis=1),
            "exploitation": (((a == c) & (b == d)) | ((a == d) & (b == c))).mean(axis=1),
            "a_exploited": ((a == c) & (b == d)).mean(axis=1),
            "b_exploited": ((a == d) & (b == c)).mean(axis=1),
        }
    )


def outcomes(effective: np.ndarray) -> np.ndarray:
    """Each tick's outcome as text, shape (trials, ticks): "CC", "DD", "CD" (A exploited), "DC", or "?"."""
    letters = np.array(["C", "D", "?"])[effective]  # code −1 indexes the last letter
    a, b = letters
    return np.where((a == "?") | (b == "?"), "?", np.char.add(a, b))


def raster_rows(effective: np.ndarray, delay, first: int | None = None) -> pd.DataFrame:
    """The outcome of every second of the ``first`` trials, one row per trial and second, labelled ``delay`` (for
    :func:`~coordkit.delay.charts.raster`)."""
    labels = outcomes(effective[:, :first])
    trial_number, second = np.indices(labels.shape)
    return pd.DataFrame(
        {"delay": delay, "trial": trial_number.ravel(), "second": second.ravel(), "outcome": labels.ravel()}
    )


def payoff_totals(effective: np.ndarray, payoffs: Payoffs = TABLE_1) -> pd.DataFrame:
    """Per trial, each player's cumulative payoff over the whole trial (Unknown ticks pay 0)."""
    a, b = effective
    known = (a >= 0) & (b >= 0)
    table = payoffs.matrix()
    earned_a = np.where(known, table[a.clip(0), b.clip(0)], 0.0).sum(axis=1)
    earned_b = np.where(known, table[b.clip(0), a.clip(0)], 0.0).sum(axis=1)
    return pd.DataFrame({"payoff_a": earned_a, "payoff_b": earned_b})


def effective_codes(frame: pd.DataFrame) -> np.ndarray:
    """A Mesa trial's effective actions (its ``frame()``) as codes, shape (2, 1, ticks): ticks 1, 2, …, without the
    initial state of row 0."""
    ticks = frame[frame["tick"] > 0]
    return np.stack([ticks[column].map(CODE).to_numpy(np.int8)[None, :] for column in ("effective_a", "effective_b")])


def summarise(frame: pd.DataFrame, by: list[str], measures=OUTCOMES) -> pd.DataFrame:
    """Mean and 95% t-interval of each measure per group: columns *by, measure, mean, low, high, trials.

    A group of one trial has no interval: its low and high are NaN (charts draw no error bar)."""
    rows = []
    for keys, group in frame.groupby(by, sort=True):
        for measure in measures:
            interval = stats.mean_interval(group[measure])
            rows.append((*keys, measure, group[measure].mean(), interval.low, interval.high, len(group)))
    return pd.DataFrame(rows, columns=[*by, "measure", "mean", "low", "high", "trials"])
