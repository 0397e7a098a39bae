"""The ledger's decision rules (coordkit.replication.verdicts): each rule, fed estimates on both sides of its
threshold, gives the verdict that side calls for, and the verdict flips where the threshold lies."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordkit.replication.estimates import Curve, Estimate
from coordkit.replication.verdicts import (
    DIRECTION_ONLY,
    HOLDS,
    NEEDS_LLM,
    NOT_REPRODUCED,
    Band,
    decide,
)

NAN = math.nan
finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


def e(value, low=None, high=None, unit=""):
    """An estimate of ``value`` with the interval low–high (a point when neither is given)."""
    return Estimate(value, value if low is None else low, value if high is None else high, 5, unit)


def curve(*points):
    """A curve through (x, value, low, high) points."""
    return Curve("x", tuple((x, e(v, lo, hi)) for x, v, lo, hi in points), "s")


# --- direction, and size ----------------------------------------------------------------------------------------


@given(low=finite, reference=finite)
def test_greater_holds_exactly_when_the_interval_clears_the_reference(low, reference):
    estimate = e(low + 1, low, low + 2)
    verdict = decide("greater", estimate, reference, None).verdict
    assert verdict == (HOLDS if low > reference else NOT_REPRODUCED)


@given(high=finite, reference=finite)
def test_less_holds_exactly_when_the_interval_lies_below_the_reference(high, reference):
    estimate = e(high - 1, high - 2, high)
    verdict = decide("less", estimate, reference, None).verdict
    assert verdict == (HOLDS if high < reference else NOT_REPRODUCED)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(45.0, HOLDS), (27.9, HOLDS), (62.7, HOLDS), (27.8, DIRECTION_ONLY), (80.0, DIRECTION_ONLY)],
)
def test_a_band_turns_a_direction_into_a_size(value, expected):
    decision = decide("greater", e(value, 5, 90, "%"), 0, Band(27.9, 62.7))
    assert decision.verdict == expected
    if expected == DIRECTION_ONLY:
        assert "outside the band 27.9% to 62.7%" in decision.reason


def test_an_interval_that_reaches_the_reference_is_not_a_direction_whatever_the_band():
    assert decide("greater", e(45, -1, 90), 0, Band(27.9, 62.7)).verdict == NOT_REPRODUCED
    assert decide("greater", e(45, 0, 90), 0, None).verdict == NOT_REPRODUCED  # touching is not clearing


def test_one_run_shows_no_direction():
    decision = decide("greater", Estimate(5, NAN, NAN, 1), 0, None)
    assert decision.verdict == NOT_REPRODUCED and "one run" in decision.reason


def test_on_a_curve_every_point_must_clear_and_the_first_that_fails_is_named():
    rising = curve((0, 3, 2, 4), (5, 4, 3, 5))
    assert decide("greater", rising, 1, None).verdict == HOLDS
    assert decide("greater", rising, 2.5, None).verdict == NOT_REPRODUCED
    assert "at 0 s" in decide("greater", rising, 2.5, None).reason


# --- thresholds, bands, equivalence -----------------------------------------------------------------------------


@given(high=finite, reference=finite)
def test_at_most_holds_exactly_when_the_whole_interval_is_at_or_below(high, reference):
    verdict = decide("at_most", e(high - 1, high - 2, high), reference, None).verdict
    assert verdict == (HOLDS if high <= reference else NOT_REPRODUCED)


@given(low=finite, reference=finite)
def test_at_least_holds_exactly_when_the_whole_interval_is_at_or_above(low, reference):
    verdict = decide("at_least", e(low + 1, low, low + 2), reference, None).verdict
    assert verdict == (HOLDS if low >= reference else NOT_REPRODUCED)


def test_a_threshold_reads_the_value_of_one_run():
    assert decide("at_most", Estimate(0, NAN, NAN, 1), 0, None).verdict == HOLDS
    assert decide("at_most", Estimate(1, NAN, NAN, 1), 0, None).verdict == NOT_REPRODUCED


@pytest.mark.parametrize(
    ("value", "expected"), [(3, HOLDS), (9, HOLDS), (6, HOLDS), (2.9, NOT_REPRODUCED), (9.1, NOT_REPRODUCED)]
)
def test_within_reads_the_value_against_the_band(value, expected):
    assert decide("within", e(value, value - 5, value + 5), None, Band(3, 9)).verdict == expected


@pytest.mark.parametrize(
    ("low", "high", "expected"), [(-9, 9, HOLDS), (-10, 10, HOLDS), (-11, 9, NOT_REPRODUCED), (-4, 12, NOT_REPRODUCED)]
)
def test_equivalence_needs_the_whole_interval_inside_the_margin(low, high, expected):
    assert decide("equivalent", e(0, low, high, "points"), None, Band(-10, 10)).verdict == expected


# --- shapes -----------------------------------------------------------------------------------------------------


def test_a_u_holds_when_an_inner_point_lies_below_both_ends_beyond_the_intervals():
    u = curve((0, 100, 99, 101), (5, 26, 25, 27), (10, 24, 23, 25), (20, 42, 41, 43))
    assert decide("u_shape", u, None, Band(5, 10)).verdict == HOLDS
    assert decide("u_shape", u, None, Band(15, 20)).verdict == DIRECTION_ONLY  # the dip is at 10 s, not 15–20
    assert decide("inverted_u", u, None, None).verdict == NOT_REPRODUCED


def test_a_dip_whose_interval_reaches_an_end_is_not_a_u():
    shallow = curve((0, 50, 45, 55), (5, 44, 40, 48), (10, 52, 47, 57))
    decision = decide("u_shape", shallow, None, None)
    assert decision.verdict == NOT_REPRODUCED and "overlap" in decision.reason


def test_an_inverted_u_mirrors_the_u():
    hump = curve((0, 0, 0, 1), (10, 46, 45, 47), (20, 43, 42, 44))
    assert decide("inverted_u", hump, None, Band(5, 10)).verdict == HOLDS
    assert decide("inverted_u", hump, None, Band(15, 20)).verdict == DIRECTION_ONLY
    lower_end = curve((0, 0, 0, 1), (10, 46, 45, 47), (20, 46.5, 44, 48))
    assert decide("inverted_u", lower_end, None, None).verdict == NOT_REPRODUCED


@pytest.mark.parametrize(("last_low", "expected"), [(5.1, HOLDS), (4.9, NOT_REPRODUCED)])
def test_a_rise_needs_the_last_interval_above_the_first(last_low, expected):
    rising = curve((0, 4, 3, 5), (1, 6, 5, 7), (2, last_low + 1, last_low, last_low + 2))
    assert decide("increasing", rising, None, None).verdict == expected
    assert decide("decreasing", rising, None, None).verdict == NOT_REPRODUCED


def test_a_rise_of_the_wrong_size_holds_in_direction_only():
    rising = curve((0, 4, 3, 5), (1, 6, 5, 7), (2, 9, 8, 10))  # a rise of 5
    assert decide("increasing", rising, None, Band(3.33, 7.5)).verdict == HOLDS
    assert decide("increasing", rising, None, Band(6, 8)).verdict == DIRECTION_ONLY


def test_a_fall_mirrors_a_rise():
    falling = curve((0, 3.7, 3, 4.4), (1, 1.1, 0.9, 1.3), (2, 0.8, 0.6, 1.0))
    assert decide("decreasing", falling, None, None).verdict == HOLDS
    assert decide("increasing", falling, None, None).verdict == NOT_REPRODUCED


@pytest.mark.parametrize(("second_low", "expected"), [(40, HOLDS), (41, HOLDS), (41.1, NOT_REPRODUCED)])
def test_flat_holds_while_every_interval_shares_a_value(second_low, expected):
    points = curve((2, 30, 20, 41), (4, second_low + 5, second_low, second_low + 10), (8, 35, 25, 45))
    assert decide("flat", points, None, None).verdict == expected


def test_a_shape_needs_a_curve_and_a_u_three_points():
    with pytest.raises(TypeError, match="needs a curve"):
        decide("u_shape", e(1), None, None)
    with pytest.raises(ValueError, match="three points"):
        decide("u_shape", curve((0, 1, 0, 2), (1, 1, 0, 2)), None, None)


# --- the rest ---------------------------------------------------------------------------------------------------


def test_a_claim_about_llms_needs_llm_agents_and_measures_nothing():
    assert decide("llm", None, None, None).verdict == NEEDS_LLM


def test_an_unknown_test_is_refused():
    with pytest.raises(ValueError, match="is not one of"):
        decide("bigger", e(1), 0, None)


@pytest.mark.parametrize(
    ("text", "band"),
    [("30..55", Band(30, 55)), ("..35", Band(-math.inf, 35)), ("70..", Band(70, math.inf)), ("", None)],
)
def test_bands_are_read_from_their_text(text, band):
    assert Band.parse(text) == band


@pytest.mark.parametrize(("text", "message"), [("30-55", "LOW..HIGH"), ("55..30", "backwards")])
def test_a_malformed_band_says_how_to_write_one(text, message):
    with pytest.raises(ValueError, match=message):
        Band.parse(text)
