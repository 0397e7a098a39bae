"""What a figure's data says about a claim: one number with its 95% interval (:class:`Estimate`), or one such number
at each value of a swept quantity (:class:`Curve`).

A family's figure declares its measures (``@figure(..., measures={"cost_reduction": ...})``): functions of the
figure's data that return one of these, built with the constructors below, so that every interval in the ledger is
made in one of a few stated ways.
"""

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from coordkit import stats

UNITS = ("", "%", "points", "$", "×", "rounds", "seasons", "fish", "calls", "messages")
SYMBOLS = ("%", "$", "×")  # units written on every number of a range; a word is written once, after the last


@dataclass(frozen=True)
class Estimate:
    """``value`` with its 95% interval ``low``–``high`` over ``n`` runs (NaN when one run gives no interval; equal
    to the value for a count over all the runs or a number no run varies), how it was made (``method``) and, where
    the value compares two things, which (``label``: "hierarchical − conversation")."""

    value: float
    low: float
    high: float
    n: int
    unit: str = ""
    method: str = ""
    label: str = ""

    def __post_init__(self):
        if self.unit not in UNITS:
            raise ValueError(f"unit={self.unit!r} is not one of the ledger's units {UNITS}")
        if self.has_interval and not self.low <= self.value <= self.high:
            raise ValueError(f"the interval {self.low}–{self.high} does not hold the value {self.value}")

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

    def text(self) -> str:
        """ "50% (95% CI 43% to 56%, 5 runs)"; "3 (over 15 runs)"; "17 rounds (the same in all 5 runs; what it
        counts)"."""
        if not self.has_interval:
            spread = "one run: no interval"
        elif self.low == self.high:
            spread = f"over {self.n:,} runs" if self.method == COUNTED else f"the same in all {self.n:,} runs"
        else:
            low = number(self.low, self.unit if self.unit in SYMBOLS else "")
            spread = f"95% CI {low} to {number(self.high, self.unit)}, {self.n:,} runs"
        return f"{number(self.value, self.unit)} ({spread}{'; ' + self.label if self.label else ''})"


@dataclass(frozen=True)
class Curve:
    """An estimate at each value of ``x`` (a delay, a connectivity regime, a population), in the order of ``x``."""

    x_name: str
    points: tuple[tuple[float | str, Estimate], ...]
    x_unit: str = ""

    def __post_init__(self):
        if len(self.points) < 2:
            raise ValueError(f"a curve needs at least two points, got {len(self.points)}")

    @property
    def xs(self) -> list[float | str]:
        return [x for x, _ in self.points]

    @property
    def estimates(self) -> list[Estimate]:
        return [estimate for _, estimate in self.points]

    def label(self, x: float | str) -> str:
        """One x as the ledger prints it: "5 s", "sparse_30", "200 agents"."""
        return x if isinstance(x, str) else f"{x:g} {self.x_unit}".strip()

    def text(self) -> str:
        """ "by delay, 0 s: 100%, 5 s: 26%, ... (95% intervals ±1 point at most, 2,000 runs a point)"."""
        values = ", ".join(f"{self.label(x)}: {number(e.value, e.unit)}" for x, e in self.points)
        if not all(e.has_interval for e in self.estimates):
            return f"by {self.x_name}, {values} (one run a point: no intervals)"
        unit = self.estimates[0].unit
        widest = number(max((e.high - e.low) / 2 for e in self.estimates), "points" if unit == "%" else unit)
        runs = min(e.n for e in self.estimates)
        return f"by {self.x_name}, {values} (95% intervals ±{widest} at most, {runs:,} runs a point)"


COUNTED = "counted over all the runs"


def mean(values: ArrayLike, unit: str = "", bounds: tuple[float, float] = (-np.inf, np.inf)) -> Estimate:
    """The mean over runs, with Student's t interval (:func:`coordkit.stats.mean_interval`), kept in ``bounds``."""
    sample = np.asarray(values, dtype=float)
    interval = stats.mean_interval(sample, bounds=bounds)
    return Estimate(float(np.mean(sample)), interval.low, interval.high, sample.size, unit, "mean, Student's t")


def exact(value: float, n: int, unit: str = "") -> Estimate:
    """A count over all ``n`` runs (no sampling error is stated for it)."""
    return Estimate(float(value), float(value), float(value), n, unit, COUNTED)


def rate(successes: int, n: int) -> Estimate:
    """A success rate in percent, with its Wilson interval."""
    interval = stats.wilson_interval(int(successes), int(n))
    return Estimate(100 * successes / n, 100 * interval.low, 100 * interval.high, n, "%", "rate, Wilson")


def difference(a: ArrayLike, b: ArrayLike, unit: str = "", label: str = "") -> Estimate:
    """mean(a) − mean(b) over independent runs, with Welch's interval."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    value, n = float(a.mean() - b.mean()), min(a.size, b.size)
    if n < 2:
        return Estimate(value, np.nan, np.nan, n, unit, "difference of means", label)
    if np.ptp(a) == 0 and np.ptp(b) == 0:
        return Estimate(value, value, value, n, unit, "difference of means, no run varies", label)
    from scipy import stats as scipy_stats  # here: a second to import, and most measures never need it

    with warnings.catch_warnings():  # one sample that does not vary (every REP game above the threshold) is fine
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        interval = scipy_stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    return Estimate(value, float(interval.low), float(interval.high), n, unit, "difference of means, Welch", label)


def ratio(numerator: ArrayLike, denominator: ArrayLike) -> Estimate:
    """mean(numerator) / mean(denominator) over independent runs, with the BCa bootstrap interval
    (:func:`coordkit.stats.ratio_interval`); infinite, without an interval, when every denominator is 0."""
    top, bottom = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    n = min(top.size, bottom.size)
    if bottom.mean() == 0:
        return Estimate(math.inf, np.nan, np.nan, n, "×", "ratio of means: every denominator is 0")
    value = float(top.mean() / bottom.mean())
    if n < 2:
        return Estimate(value, np.nan, np.nan, n, "×", "ratio of means")
    if np.ptp(top) == 0 and np.ptp(bottom) == 0:
        return Estimate(value, value, value, n, "×", "ratio of means, no run varies")
    with np.errstate(divide="ignore", invalid="ignore"):  # a resample whose denominators are all 0 is infinite
        interval = stats.ratio_interval(top, bottom)
    return Estimate(value, min(interval.low, value), max(interval.high, value), n, "×", "ratio of means, BCa bootstrap")


def reduction(treated: ArrayLike, baseline: ArrayLike) -> Estimate:
    """How much lower mean(treated) is than mean(baseline), in percent of the baseline: 100 × (1 − the ratio of
    means, :func:`ratio`)."""
    share = ratio(treated, baseline)
    low, high = (100 * (1 - share.high), 100 * (1 - share.low)) if share.has_interval else (np.nan, np.nan)
    return Estimate(100 * (1 - share.value), low, high, share.n, "%", share.method.replace("ratio", "reduction"))


def rate_difference(successes_a: int, n_a: int, successes_b: int, n_b: int, label: str = "") -> Estimate:
    """rate(a) − rate(b) in percentage points, with Newcombe's hybrid score interval (his method 10, from the two
    Wilson intervals; Newcombe 1998, Statistics in Medicine 17:873)."""
    p_a, p_b = successes_a / n_a, successes_b / n_b
    a, b = stats.wilson_interval(int(successes_a), int(n_a)), stats.wilson_interval(int(successes_b), int(n_b))
    low = p_a - p_b - math.hypot(p_a - a.low, b.high - p_b)
    high = p_a - p_b + math.hypot(a.high - p_a, p_b - b.low)
    method = "difference of rates, Newcombe"
    return Estimate(100 * (p_a - p_b), 100 * low, 100 * high, min(n_a, n_b), "points", method, label)


def curve(x_name: str, points: Sequence[tuple[float | str, Estimate]], x_unit: str = "") -> Curve:
    return Curve(x_name, tuple(points), x_unit)


def number(value: float, unit: str = "") -> str:
    """``value`` with its unit, to three significant figures: "43%", "$4,251", "2.58×", "6.2 seasons", "1 point"."""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return ("∞" if value > 0 else "−∞") + (unit if unit in ("%", "×") else f" {unit}".rstrip())
    digits = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
    if unit == "$":
        return f"${digits}" if value >= 0 else f"−${digits[1:]}"
    if unit in ("%", "×"):
        return digits + unit
    if unit == "points" and digits in ("1", "-1"):
        return f"{digits} point"
    return f"{digits} {unit}".strip()
