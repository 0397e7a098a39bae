import math
import statistics
import subprocess
import sys
import warnings
from math import comb

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from coordkit.stats import (
    Interval,
    MeanSD,
    NoSpread,
    chi_square,
    cohens_d,
    fisher_exact,
    mean_sd,
    proportion_table,
    ratio_interval,
    welch_t,
    wilson_interval,
)

A = [1, 2, 3, 4]
B = [2, 4, 6, 8, 10]


# mean_sd


def test_mean_sd_known_values():
    assert mean_sd([4.0, 4.5, 4.25]) == MeanSD(mean=4.25, sd=0.25, n=3)


def test_mean_sd_str():
    assert str(MeanSD(mean=4.25, sd=0.3125, n=8)) == "4.25 ± 0.31"


def test_mean_sd_single_value_has_nan_sd():
    result = mean_sd([3.0])
    assert result.mean == 3.0 and math.isnan(result.sd) and result.n == 1


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=30))
def test_mean_sd_agrees_with_statistics_module(values):
    result = mean_sd(values)
    assert result.mean == pytest.approx(statistics.fmean(values), abs=1e-6)
    assert result.sd == pytest.approx(statistics.stdev(values), abs=1e-6)
    assert result.n == len(values)


@pytest.mark.parametrize("values", [[], np.empty(0)])
def test_mean_sd_empty(values):
    with pytest.raises(ValueError, match="values needs at least 1 value"):
        mean_sd(values)


def test_mean_sd_rejects_2d():
    with pytest.raises(ValueError, match="one-dimensional"):
        mean_sd([[1, 2], [3, 4]])


# wilson_interval


def test_wilson_8_of_10():
    interval = wilson_interval(8, 10)
    assert interval.low == pytest.approx(0.490, abs=1e-3)
    assert interval.high == pytest.approx(0.943, abs=1e-3)


def test_wilson_matches_closed_form():
    k, n, z = 8, 10, 1.959963984540054
    p = k / n
    centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
    half = z / (1 + z**2 / n) * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
    assert wilson_interval(k, n) == Interval(pytest.approx(centre - half), pytest.approx(centre + half))


def test_wilson_wider_at_higher_confidence():
    narrow, wide = wilson_interval(8, 10, 0.90), wilson_interval(8, 10, 0.99)
    assert wide.low < narrow.low and narrow.high < wide.high


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_rate_and_stays_in_unit_interval(counts):
    k, n = counts
    interval = wilson_interval(k, n)
    assert 0 <= interval.low <= k / n <= interval.high <= 1


def test_wilson_zero_trials():
    with pytest.raises(ValueError, match="n is 0: a rate needs at least one trial"):
        wilson_interval(0, 0)


@pytest.mark.parametrize(
    ("k", "n", "message"),
    [
        (11, 10, r"successes \(11\) cannot exceed the number of trials n \(10\)"),
        (-1, 10, "successes must be a non-negative integer count"),
        (1, -10, "n must be a non-negative integer count"),
        (1.5, 10, "successes must be a non-negative integer count"),
    ],
)
def test_wilson_bad_counts(k, n, message):
    with pytest.raises(ValueError, match=message):
        wilson_interval(k, n)


# fisher_exact


def test_fisher_exact_by_hand():
    # Table [[8, 2], [1, 5]]: margins 10/6 rows, 9/7 columns, N = 16.
    # Two-sided p sums the tables no more likely than the observed one: a = 8, 9 and 3.
    total = comb(16, 9)
    p = (comb(10, 8) * comb(6, 1) + comb(10, 9) * comb(6, 0) + comb(10, 3) * comb(6, 6)) / total
    result = fisher_exact(8, 10, 1, 6)
    assert result.p_value == pytest.approx(p) == pytest.approx(0.0350, abs=1e-4)
    assert result.statistic == pytest.approx((8 * 5) / (2 * 1))
    assert result.dof is None


def test_fisher_exact_same_rates_is_not_significant():
    assert fisher_exact(5, 10, 5, 10).p_value == pytest.approx(1.0)


def test_fisher_exact_bad_counts_name_the_argument():
    with pytest.raises(ValueError, match=r"successes_b \(7\) cannot exceed .* n_b \(6\)"):
        fisher_exact(8, 10, 7, 6)


# chi_square


def test_chi_square_2x2_uses_yates_correction():
    # Corrected: N (|ad - bc| - N/2)^2 / (row and column margins product).
    expected = 16 * (abs(8 * 5 - 2 * 1) - 8) ** 2 / (10 * 6 * 9 * 7)
    result = chi_square([8, 1], [10, 6])
    assert result.statistic == pytest.approx(expected)
    assert result.dof == 1


def test_chi_square_3_groups_is_uncorrected():
    successes, totals = np.array([8, 1, 3]), np.array([10, 6, 6])
    observed = np.column_stack([successes, totals - successes])
    expected = np.outer(totals, observed.sum(axis=0)) / totals.sum()
    statistic = ((observed - expected) ** 2 / expected).sum()
    result = chi_square(successes.tolist(), totals.tolist())
    assert result.statistic == pytest.approx(statistic)
    assert result.dof == 2
    assert 0 < result.p_value < 0.05


@pytest.mark.parametrize(
    ("successes", "totals", "message"),
    [
        ([1, 2], [3], "one entry per group, got 2 and 1"),
        ([1], [3], "at least 2 groups, got 1"),
        ([1, 4], [3, 3], r"successes\[1\] \(4\) cannot exceed .* totals\[1\] \(3\)"),
        ([0, 0], [3, 3], "all successes or all failures"),
        ([3, 3], [3, 3], "all successes or all failures"),
    ],
)
def test_chi_square_bad_input(successes, totals, message):
    with pytest.raises(ValueError, match=message):
        chi_square(successes, totals)


# welch_t and cohens_d


def test_welch_t_by_hand():
    se = math.sqrt(statistics.variance(A) / 4 + statistics.variance(B) / 5)
    result = welch_t(A, B)
    assert result.statistic == pytest.approx((2.5 - 6) / se)
    assert result.dof == pytest.approx(
        se**4 / ((statistics.variance(A) / 4) ** 2 / 3 + (statistics.variance(B) / 5) ** 2 / 4)
    )
    assert 0 < result.p_value < 1


def test_cohens_d_by_hand():
    # Sums of squares 5 and 40 over 4 + 5 - 2 = 7 dof; means 2.5 and 6.
    assert cohens_d(A, B) == pytest.approx(-3.5 / math.sqrt(45 / 7))


@given(
    st.lists(st.floats(-100, 100), min_size=2, max_size=20),
    st.lists(st.floats(-100, 100), min_size=2, max_size=20),
)
def test_cohens_d_is_antisymmetric(a, b):
    assume(len(set(a)) > 1 or len(set(b)) > 1)  # two constant samples are refused (below)
    assume(max(np.ptp(a), np.ptp(b)) > 1e-150)  # a spread whose square underflows is refused (below)
    d = cohens_d(a, b)
    assert math.isfinite(d)
    assert cohens_d(b, a) == pytest.approx(-d)


def test_cohens_d_refuses_a_spread_whose_square_is_zero_in_floating_point_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(NoSpread, match="vary by at most 1.0e-200, so little that the square"):
            cohens_d([0.0, 1e-200], [0.0, 0.0])


@pytest.mark.parametrize("test", [welch_t, cohens_d])
@pytest.mark.parametrize(("a", "b", "name"), [([], B, "a"), (A, [1.0], "b")])
def test_two_sample_needs_two_values_each(test, a, b, name):
    with pytest.raises(ValueError, match=f"{name} needs at least 2 value"):
        test(a, b)


@pytest.mark.parametrize("test", [welch_t, cohens_d])
@pytest.mark.parametrize(
    ("a", "b", "verdict"), [([180, 180], [180, 180, 180], "the same"), ([1, 1], [2, 2], "different")]
)
def test_two_samples_that_do_not_vary_are_refused_with_what_they_hold(test, a, b, verdict):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said in the error, not in a warning beside a nan
        with pytest.raises(NoSpread, match=f"every value of a is {a[0]} and every value of b is {b[0]}.*{verdict}"):
            test(a, b)


def test_one_sample_that_does_not_vary_is_enough():
    assert welch_t([180, 180, 180], [170, 175, 180]).statistic > 0 and cohens_d([180, 180], [170, 180]) > 0


# proportion_table


def test_proportion_table():
    df = pd.DataFrame(
        {
            "condition": ["talk", "silent", "talk", "talk", "silent"],
            "solved": [True, False, True, False, True],
        }
    )
    table = proportion_table(df, "condition", "solved")
    assert list(table.columns) == [
        "condition",
        "n",
        "successes",
        "rate",
        "wilson_low",
        "wilson_high",
    ]
    assert table["condition"].tolist() == ["talk", "silent"]
    assert table["n"].tolist() == [3, 2]
    assert table["successes"].tolist() == [2, 1]
    assert table["rate"].tolist() == pytest.approx([2 / 3, 1 / 2])
    talk = wilson_interval(2, 3)
    assert (table.loc[0, "wilson_low"], table.loc[0, "wilson_high"]) == (talk.low, talk.high)


def test_proportion_table_several_group_columns_and_0_1_successes():
    df = pd.DataFrame({"n_agents": [2, 2, 4], "talk": [True, True, False], "ok": [1, 0, 1]})
    table = proportion_table(df, ["n_agents", "talk"], "ok")
    assert table[["n_agents", "talk", "n", "successes"]].values.tolist() == [
        [2, True, 2, 1],
        [4, False, 1, 1],
    ]


@pytest.mark.parametrize(
    ("df", "message"),
    [
        (pd.DataFrame({"g": [], "ok": []}), "no rows"),
        (pd.DataFrame({"g": [1], "won": [True]}), r"no column\(s\) \['ok'\]"),
        (pd.DataFrame({"g": [1, 1], "ok": [1, 2]}), "'ok' must hold only booleans or 0/1"),
        (pd.DataFrame({"g": [1, 1], "ok": [True, None]}), "'ok' must hold only booleans or 0/1"),
    ],
)
def test_proportion_table_bad_input(df, message):
    with pytest.raises(ValueError, match=message):
        proportion_table(df, "g", "ok")


def test_mean_interval_is_the_student_t_interval_and_a_point_for_constant_data():
    from coordkit.stats import mean_interval

    interval = mean_interval([1.0, 2.0, 3.0, 4.0])
    half_width = 3.1824463 * (1.2909944 / 2)  # t(0.975, 3) · s/√n
    assert interval.low == pytest.approx(2.5 - half_width) and interval.high == pytest.approx(2.5 + half_width)
    assert mean_interval([0.5, 0.5]) == Interval(0.5, 0.5)


@given(
    st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=40),
    st.sampled_from([0.5, 0.9, 0.95, 0.99]),
)
def test_mean_interval_is_scipy_stats_t_interval_to_the_last_bit(values, confidence):
    from scipy import stats as scipy_stats

    from coordkit.stats import mean_interval

    sample = np.asarray(values)
    assume(np.ptp(sample) > 1e-100)  # scipy's t gives NaN for a spread near 1e-206; the kit a true interval
    low, high = scipy_stats.t.interval(confidence, sample.size - 1, loc=sample.mean(), scale=scipy_stats.sem(sample))
    assert mean_interval(values, confidence) == Interval(float(low), float(high))


def test_the_families_measures_import_without_scipy_stats():
    """A second or more of every kernel's start (issue 48): only the functions that need it import it."""
    code = (
        "import sys, coordkit.stats, coordkit.replication.estimates, coordkit.rep.movies.experiments\n"
        "coordkit.stats.mean_interval([1.0, 2.0, 4.0])\n"
        "print('scipy.stats' in sys.modules)"
    )
    imported = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert imported.strip() == "False"


def test_one_value_has_no_interval_and_no_value_is_an_error():
    from coordkit.stats import mean_interval

    one = mean_interval([3.0])
    assert math.isnan(one.low) and math.isnan(one.high)
    with pytest.raises(ValueError, match="at least 1 value"):
        mean_interval([])


def test_ratio_interval_brackets_the_ratio_of_means_narrows_with_more_games_and_is_reproducible():
    rng = np.random.default_rng(1)
    cheap, dear = rng.normal(50, 5, 40), rng.normal(100, 10, 40)
    wide = ratio_interval(cheap[:5], dear[:5])
    narrow = ratio_interval(cheap, dear)
    assert narrow.low < cheap.mean() / dear.mean() < narrow.high
    assert 0.4 < narrow.low and narrow.high < 0.6  # the true ratio is 0.5
    assert narrow.high - narrow.low < wide.high - wide.low
    assert ratio_interval(cheap, dear) == narrow  # a fixed seed: the same interval every time
    one_game = ratio_interval([50.0], dear)
    assert math.isnan(one_game.low) and math.isnan(one_game.high)
    with pytest.raises(ValueError, match="denominator needs at least 1"):
        ratio_interval(cheap, [])
