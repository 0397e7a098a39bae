"""The ledger's estimates (coordkit.replication.estimates): each interval is made as its docstring says, and is
printed with its unit."""

import math

import numpy as np
import pytest

from coordkit import stats
from coordkit.replication import estimates


@pytest.mark.parametrize(
    ("a", "b", "low", "high"),
    [((56, 70), (48, 80), 5.24, 33.39), ((9, 10), (3, 10), 17.05, 80.90), ((6, 7), (2, 7), 5.82, 80.62)],
)
def test_a_difference_of_rates_has_newcombes_hybrid_score_interval(a, b, low, high):
    """Newcombe (1998), Statistics in Medicine 17:873, Table II, method 10."""
    difference = estimates.rate_difference(*a, *b)
    assert (round(difference.low, 2), round(difference.high, 2)) == (low, high)
    assert difference.value == pytest.approx(100 * (a[0] / a[1] - b[0] / b[1]))


def test_a_mean_has_students_interval_kept_in_its_bounds():
    values = [0.0, 0.0, 1.0, 0.0, 0.0]
    mean = estimates.mean(values, bounds=(0, 1))
    assert mean.low == 0 and mean.high == pytest.approx(stats.mean_interval(values).high)
    assert mean.value == 0.2 and mean.n == 5


def test_a_difference_of_means_has_welchs_interval():
    a, b = [10.0, 12, 11, 13, 9], [5.0, 7, 6, 4, 8]
    difference = estimates.difference(a, b, unit="fish")
    assert difference.value == 5
    assert difference.low < 5 < difference.high
    assert (5 - difference.low) == pytest.approx(difference.high - 5)  # symmetric around the difference


def test_a_reduction_is_one_minus_the_ratio_of_means():
    treated, baseline = [60.0, 55, 65, 58], [100.0, 110, 95, 105]
    ratio, reduction = estimates.ratio(treated, baseline), estimates.reduction(treated, baseline)
    assert reduction.value == pytest.approx(100 * (1 - ratio.value))
    assert (reduction.low, reduction.high) == pytest.approx((100 * (1 - ratio.high), 100 * (1 - ratio.low)))


def test_a_ratio_over_nothing_is_infinite_without_an_interval():
    ratio = estimates.ratio([3.0, 5.0], [0.0, 0.0])
    assert math.isinf(ratio.value) and not ratio.has_interval


def test_numbers_that_no_run_varies_give_a_point_and_one_run_gives_none():
    assert estimates.difference([3, 3], [1, 1]).low == 2
    assert not estimates.mean([4.0]).has_interval
    assert not estimates.reduction([1.0], [2.0]).has_interval


def test_an_estimate_refuses_an_unknown_unit_and_an_interval_that_misses_its_value():
    with pytest.raises(ValueError, match="unit"):
        estimates.Estimate(1, 0, 2, 3, unit="furlongs")
    with pytest.raises(ValueError, match="does not hold"):
        estimates.Estimate(5, 0, 2, 3)


@pytest.mark.parametrize(
    ("estimate", "text"),
    [
        (estimates.Estimate(50.0, 43.2, 56.4, 5, "%"), "50% (95% CI 43.2% to 56.4%, 5 runs)"),
        (
            estimates.Estimate(-57.6, -58.4, -56.9, 2000, "points"),
            "-57.6 points (95% CI -58.4 to -56.9 points, 2,000 runs)",
        ),
        (estimates.exact(3, 15), "3 (over 15 runs)"),
        (estimates.mean([17.0] * 5, unit="rounds"), "17 rounds (the same in all 5 runs)"),
        (estimates.mean([5.0], unit=""), "5 (one run: no interval)"),
        (estimates.Estimate(4251.0, 4000, 4500, 5, "$"), "$4,251 (95% CI $4,000 to $4,500, 5 runs)"),
        (
            estimates.rate_difference(5, 10, 3, 10, label="a − b"),
            "20 points (95% CI -20.2 to 52.6 points, 10 runs; a − b)",
        ),
    ],
)
def test_an_estimate_prints_its_value_interval_and_runs(estimate, text):
    assert estimate.text() == text


def test_a_curve_prints_each_point_and_its_widest_interval():
    points = [(0.0, estimates.mean(np.array([1.0, 0.0, 1.0, 1.0]) * 100, unit="%")), (5.0, estimates.exact(20, 4, "%"))]
    curve = estimates.curve("delay", points, x_unit="s")
    assert curve.text().startswith("by delay, 0 s: 75%, 5 s: 20% (95% intervals ±")
    assert curve.label(5.0) == "5 s" and curve.label("sparse_30") == "sparse_30"
    with pytest.raises(ValueError, match="two points"):
        estimates.curve("delay", points[:1])
