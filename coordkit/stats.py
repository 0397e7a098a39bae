"""The statistics the papers report, as thin, checked wrappers around scipy.stats.

``scipy.stats`` is imported by the functions that use it, not with this module: it takes a second or more to
import, and every family's measures import this module (issue 48). :func:`mean_interval` needs only Student's t
quantile, from ``scipy.special`` (the function ``scipy.stats.t`` itself calls)."""

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import special


@dataclass(frozen=True)
class MeanSD:
    """Sample mean, sample standard deviation (ddof=1) and sample size."""

    mean: float
    sd: float
    n: int

    def __str__(self) -> str:
        return f"{self.mean:.2f} ± {self.sd:.2f}"


@dataclass(frozen=True)
class Interval:
    """A confidence interval (for a proportion or a mean), from ``low`` to ``high``."""

    low: float
    high: float


@dataclass(frozen=True)
class TestResult:
    """A test statistic, its p-value and, for tests that have them, the degrees of freedom."""

    __test__ = False  # not a pytest test class despite the name

    statistic: float
    p_value: float
    dof: float | None = None


def mean_sd(values: ArrayLike) -> MeanSD:
    """Mean ± sample standard deviation of ``values``; sd is nan for a single value."""
    sample = _sample(values, "values", min_n=1)
    sd = float(np.std(sample, ddof=1)) if sample.size >= 2 else float("nan")
    return MeanSD(mean=float(np.mean(sample)), sd=sd, n=int(sample.size))


def mean_interval(
    values: ArrayLike, confidence: float = 0.95, bounds: tuple[float, float] = (-np.inf, np.inf)
) -> Interval:
    """Student-t confidence interval for the mean of ``values`` (a point when they do not vary); like the sd of
    :func:`mean_sd`, it is NaN for a single value, which says nothing about the spread. ``bounds`` is the range
    the quantity cannot leave (``(0, np.inf)`` for a stock or a count, ``(0, 1)`` for a share): the interval is
    truncated to it, so that a skewed sample near a bound gives no impossible values."""
    sample = _sample(values, "values", min_n=1)
    if sample.size == 1:
        return Interval(low=float("nan"), high=float("nan"))
    mean, sem = float(np.mean(sample)), float(np.std(sample, ddof=1) / sample.size**0.5)
    if sem == 0:
        return Interval(low=mean, high=mean)
    dof = sample.size - 1  # scipy.stats.t.interval's arithmetic: the quantiles, scaled and shifted
    low, high = (special.stdtrit(dof, q) * sem + mean for q in ((1.0 - confidence) / 2, (1.0 + confidence) / 2))
    return Interval(low=float(max(low, bounds[0])), high=float(min(high, bounds[1])))


def ratio_interval(numerator: ArrayLike, denominator: ArrayLike, confidence: float = 0.95) -> Interval:
    """Bootstrap (BCa, 9,999 resamples, a fixed seed) confidence interval for mean(numerator) / mean(denominator),
    the two samples drawn independently (two conditions' games): "REP's cost as a share of A2A's". Like
    :func:`mean_interval`, NaN when either sample has a single value."""
    top, bottom = _sample(numerator, "numerator", min_n=1), _sample(denominator, "denominator", min_n=1)
    if top.size == 1 or bottom.size == 1:
        return Interval(low=float("nan"), high=float("nan"))
    from scipy import stats

    result = stats.bootstrap(
        (top, bottom),
        lambda a, b, axis: np.mean(a, axis=axis) / np.mean(b, axis=axis),
        n_resamples=9_999,
        confidence_level=confidence,
        method="BCa",
        rng=np.random.default_rng(0),
    )
    return Interval(low=float(result.confidence_interval.low), high=float(result.confidence_interval.high))


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for the success rate ``successes / n``."""
    _check_proportion(successes, n, "successes", "n")
    from scipy import stats

    ci = stats.binomtest(int(successes), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(low=float(ci.low), high=float(ci.high))


def fisher_exact(successes_a: int, n_a: int, successes_b: int, n_b: int) -> TestResult:
    """Two-sided Fisher exact test comparing two success rates.

    The statistic is the sample odds ratio of the table
    ``[[successes_a, failures_a], [successes_b, failures_b]]``.
    """
    _check_proportion(successes_a, n_a, "successes_a", "n_a")
    _check_proportion(successes_b, n_b, "successes_b", "n_b")
    table = [[successes_a, n_a - successes_a], [successes_b, n_b - successes_b]]
    from scipy import stats

    result = stats.fisher_exact(table, alternative="two-sided")
    return TestResult(statistic=float(result.statistic), p_value=float(result.pvalue))


def chi_square(successes: Sequence[int], totals: Sequence[int]) -> TestResult:
    """Chi-square test that k groups share one success rate (a k x 2 table).

    Group ``i`` has ``successes[i]`` successes out of ``totals[i]`` trials.
    scipy applies Yates' continuity correction only to a 2 x 2 table (two
    groups); tables with three or more groups are uncorrected.
    """
    if len(successes) != len(totals):
        raise ValueError(f"successes and totals must have one entry per group, got {len(successes)} and {len(totals)}")
    if len(totals) < 2:
        raise ValueError(f"chi_square needs at least 2 groups, got {len(totals)}")
    for i, (group_successes, group_total) in enumerate(zip(successes, totals, strict=True)):
        _check_proportion(group_successes, group_total, f"successes[{i}]", f"totals[{i}]")
    if sum(successes) in (0, sum(totals)):
        raise ValueError(
            "chi_square is undefined when every trial in every group has the same "
            "outcome (all successes or all failures)"
        )
    table = [[s, t - s] for s, t in zip(successes, totals, strict=True)]
    from scipy import stats

    result = stats.chi2_contingency(table)
    return TestResult(statistic=float(result.statistic), p_value=float(result.pvalue), dof=int(result.dof))


def welch_t(a: ArrayLike, b: ArrayLike) -> TestResult:
    """Welch's two-sample t-test (unequal variances), with Welch-Satterthwaite dof. Undefined, and refused, when
    neither sample varies."""
    sample_a, sample_b = _spread_samples(a, b, "Welch's t")
    from scipy import stats

    with warnings.catch_warnings():
        # scipy suspects rounding in a sample whose values are all alike; one constant sample is exact, and fine
        warnings.filterwarnings("ignore", "Precision loss occurred in moment calculation", RuntimeWarning)
        result = stats.ttest_ind(sample_a, sample_b, equal_var=False)
    return TestResult(statistic=float(result.statistic), p_value=float(result.pvalue), dof=float(result.df))


def cohens_d(a: ArrayLike, b: ArrayLike) -> float:
    """Cohen's d: the difference in means, ``mean(a) - mean(b)``, over the pooled sd.

    The pooled variance is ``((n_a - 1) s_a² + (n_b - 1) s_b²) / (n_a + n_b - 2)``.
    Undefined, and refused, when neither sample varies (the pooled sd is 0), or when they vary so little that the
    square of their spread is below the smallest float.
    """
    sample_a, sample_b = _spread_samples(a, b, "Cohen's d")
    n_a, n_b = sample_a.size, sample_b.size
    pooled_var = ((n_a - 1) * sample_a.var(ddof=1) + (n_b - 1) * sample_b.var(ddof=1)) / (n_a + n_b - 2)
    if pooled_var == 0:
        raise NoSpread(
            f"Cohen's d is undefined here: a and b vary by at most {max(np.ptp(sample_a), np.ptp(sample_b)):.1e}, "
            "so little that the square of their spread is 0 in floating point; compare the means directly"
        )
    return float((sample_a.mean() - sample_b.mean()) / np.sqrt(pooled_var))


def proportion_table(df: pd.DataFrame, group: str | list[str], success: str, confidence: float = 0.95) -> pd.DataFrame:
    """Success rate with a Wilson interval per group, one row per group.

    ``success`` names a column of booleans (or 0/1). The result has the group
    column(s) then ``n``, ``successes``, ``rate``, ``wilson_low`` and
    ``wilson_high``, with groups in order of first appearance.
    """
    groups = [group] if isinstance(group, str) else list(group)
    missing = [column for column in [*groups, success] if column not in df.columns]
    if missing:
        raise ValueError(f"df has no column(s) {missing}; its columns are {list(df.columns)}")
    if df.empty:
        raise ValueError("df has no rows, so there are no proportions to tabulate")
    if not df[success].isin([0, 1]).all():
        raise ValueError(f"column {success!r} must hold only booleans or 0/1 (no missing values)")
    table = (
        df.groupby(groups, sort=False)[success].agg(n="size", successes="sum").reset_index().astype({"successes": int})
    )
    table["rate"] = table["successes"] / table["n"]
    intervals = [wilson_interval(s, n, confidence) for s, n in zip(table["successes"], table["n"], strict=True)]
    table["wilson_low"] = [interval.low for interval in intervals]
    table["wilson_high"] = [interval.high for interval in intervals]
    return table


def _sample(values: ArrayLike, name: str, min_n: int) -> np.ndarray:
    """``values`` as a 1-D float array with at least ``min_n`` entries."""
    sample = np.asarray(values, dtype=float)
    if sample.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {sample.shape}")
    if sample.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} value(s), got {sample.size}")
    return sample


class NoSpread(ValueError):
    """Two samples neither of which varies, given to a measure that divides by their spread."""


def _spread_samples(a: ArrayLike, b: ArrayLike, measure: str) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` as samples of at least two values, at least one of which varies: ``measure`` divides by
    their spread, and two constant samples (every trial alike, as at zero delay) have none."""
    sample_a, sample_b = _sample(a, "a", min_n=2), _sample(b, "b", min_n=2)
    if np.ptp(sample_a) == 0 and np.ptp(sample_b) == 0:
        verdict = "the same value" if sample_a[0] == sample_b[0] else "different values"
        raise NoSpread(
            f"{measure} is undefined: every value of a is {sample_a[0]:g} and every value of b is {sample_b[0]:g}, "
            f"so neither sample varies ({verdict}, nothing to weigh them against); compare the values directly, or "
            "leave this pair of samples out"
        )
    return sample_a, sample_b


def _check_proportion(successes: int, n: int, successes_name: str, n_name: str) -> None:
    """Check that ``successes`` out of ``n`` trials is a valid count pair."""
    for value, name in ((successes, successes_name), (n, n_name)):
        if isinstance(value, bool) or not isinstance(value, Integral) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer count, got {value!r}")
    if n == 0:
        raise ValueError(f"{n_name} is 0: a rate needs at least one trial")
    if successes > n:
        raise ValueError(f"{successes_name} ({successes}) cannot exceed the number of trials {n_name} ({n})")
