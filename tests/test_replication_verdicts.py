"""The ledger's decision rules (coordkit.replication.verdicts): each rule, fed estimates on each side of each of its
boundaries, gives the verdict that side calls for, and the verdict changes where the boundary lies."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coordkit.replication.estimates import Curve, Estimate
from coordkit.replication.verdicts import (
    CONTRADICTED,
    DIRECTION_ONLY,
    HOLDS,
    INCONCLUSIVE,
    NEEDS_LLM,
    STRONGER,
    Band,
    decide,
    runs_to_decide,
    runs_to_separate,
)

NAN = math.nan
finite = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False)


def e(value, low=None, high=None, unit="", n=5):
    """An estimate of ``value`` with the interval low–high (a point when neither is given) over ``n`` runs."""
    return Estimate(value, value if low is None else low, value if high is None else high, n, unit)


def curve(*points):
    """A curve through (x, value, low, high) points."""
    return Curve("x", tuple((x, e(v, lo, hi)) for x, v, lo, hi in points), "s")


# --- direction: holds, contradicted, inconclusive ----------------------------------------------------------------


@given(low=finite, reference=finite)
def test_greater_holds_when_the_interval_clears_the_reference_and_is_contradicted_when_it_lies_below(low, reference):
    verdict = decide("greater", e(low + 1, low, low + 2), reference, None).verdict
    if low > reference:
        assert verdict == HOLDS
    elif low + 2 <= reference:
        assert verdict == CONTRADICTED
    else:
        assert verdict == INCONCLUSIVE


@given(high=finite, reference=finite)
def test_less_mirrors_greater(high, reference):
    verdict = decide("less", e(high - 1, high - 2, high), reference, None).verdict
    if high < reference:
        assert verdict == HOLDS
    elif high - 2 >= reference:
        assert verdict == CONTRADICTED
    else:
        assert verdict == INCONCLUSIVE


def test_touching_the_reference_is_neither_clearing_it_nor_the_opposite():
    assert decide("greater", e(45, 0, 90), 0, None).verdict == INCONCLUSIVE
    assert decide("greater", e(-5, -10, 0), 0, None).verdict == CONTRADICTED  # the interval lies at or below 0
    assert decide("greater", e(0), 0, None).verdict == CONTRADICTED  # a count equal to the reference is not above it


@pytest.mark.parametrize(
    ("value", "expected"),
    [(45.0, HOLDS), (27.9, HOLDS), (62.7, HOLDS), (27.8, DIRECTION_ONLY), (62.8, STRONGER), (80.0, STRONGER)],
)
def test_a_band_splits_a_direction_into_short_of_it_in_it_and_beyond_it(value, expected):
    decision = decide("greater", e(value, 5, 90, "%"), 0, Band(27.9, 62.7))
    assert decision.verdict == expected
    if expected == DIRECTION_ONLY:
        assert "falls short of the band 27.9% to 62.7%" in decision.reason
    if expected == STRONGER:
        assert "lies beyond the band 27.9% to 62.7%" in decision.reason


def test_beyond_the_band_on_the_side_of_a_less_claim_is_below_it():
    band = Band(-3.75, -1.67)
    assert decide("less", e(-22.4, -30, -15, "%"), 0, band).verdict == STRONGER  # A2A loses far more than the paper's
    assert decide("less", e(-1, -1.5, -0.5, "%"), 0, band).verdict == DIRECTION_ONLY
    assert decide("less", e(-2.5, -3, -2, "%"), 0, band).verdict == HOLDS


def test_an_interval_that_reaches_the_reference_is_inconclusive_whatever_the_band():
    assert decide("greater", e(45, -1, 90), 0, Band(27.9, 62.7)).verdict == INCONCLUSIVE


def test_one_run_shows_no_direction():
    decision = decide("greater", Estimate(5, NAN, NAN, 1), 0, None)
    assert decision.verdict == INCONCLUSIVE and "one run" in decision.reason


def test_on_a_curve_every_point_must_clear_and_the_first_that_fails_is_named():
    rising = curve((0, 3, 2, 4), (5, 4, 3, 5))
    assert decide("greater", rising, 1, None).verdict == HOLDS
    assert decide("greater", rising, 2.5, None).verdict == INCONCLUSIVE
    assert "at 0 s" in decide("greater", rising, 2.5, None).reason
    assert decide("greater", rising, 4.5, None).verdict == CONTRADICTED  # at 0 s the interval lies below 4.5


# --- how many runs would decide ---------------------------------------------------------------------------------


def test_an_inconclusive_verdict_says_how_many_runs_would_decide_it():
    # half-width 7.3 against a distance of 3.3 from 0: 330 × (7.3 / 3.3)² ≈ 1,615 runs
    decision = decide("greater", e(3.3, -4.0, 10.6, "points", n=330), 0, None)
    assert decision.verdict == INCONCLUSIVE
    assert "about 1,615 runs would decide it (330 now)" in decision.reason


def test_runs_to_decide_follow_the_interval_narrowing_as_one_over_the_root_of_the_runs():
    assert runs_to_decide(e(1, -1, 3, n=10), 0) == 40  # half-width 2 on 0's side, distance 1: 10 × 2² runs
    assert runs_to_decide(e(1, -1, 3, n=10), 2) == 40  # towards 2, the upper half-width (2) against 1
    assert runs_to_decide(e(1, 0.5, 3, n=10), 0) == 11  # already clear: at least one run more than now
    assert runs_to_decide(e(0, -1, 1, n=10), 0) is None  # the value on the reference: no number of runs decides it
    assert runs_to_separate(e(1, 0, 2, n=8), e(2, 1, 3, n=10)) == 32  # half-widths 1 + 1 against a gap of 1: 8 × 2²
    assert runs_to_separate(e(1, 0, 2), e(1, 0.5, 1.5)) is None


def test_a_value_on_or_all_but_on_the_reference_says_more_runs_alone_may_not_decide_it():
    decision = decide("greater", e(0, -1, 1), 0, None)
    assert decision.verdict == INCONCLUSIVE and "more runs alone may not decide it" in decision.reason
    # 0.01% with an interval of ±26%: some 34 million runs, more than FAR times the 5 made
    assert "more runs alone may not" in decide("less", e(0.0102, -26.4, 26.4, "%"), 0, None).reason
    assert "about 500 runs" in decide("greater", e(1, -9, 11, n=5), 0, None).reason  # 100 × 5: just within reach


# --- thresholds, bands, equivalence -----------------------------------------------------------------------------


@given(high=finite, reference=finite)
def test_at_most_is_met_by_the_whole_interval_and_contradicted_by_the_whole_interval(high, reference):
    verdict = decide("at_most", e(high - 1, high - 2, high), reference, None).verdict
    if high <= reference:
        assert verdict == HOLDS
    elif high - 2 > reference:
        assert verdict == CONTRADICTED
    else:
        assert verdict == INCONCLUSIVE


@given(low=finite, reference=finite)
def test_at_least_mirrors_at_most(low, reference):
    verdict = decide("at_least", e(low + 1, low, low + 2), reference, None).verdict
    if low >= reference:
        assert verdict == HOLDS
    elif low + 2 < reference:
        assert verdict == CONTRADICTED
    else:
        assert verdict == INCONCLUSIVE


def test_a_threshold_reads_the_value_of_one_run_or_a_count():
    assert decide("at_most", Estimate(0, NAN, NAN, 1), 0, None).verdict == HOLDS
    assert decide("at_most", Estimate(1, NAN, NAN, 1), 0, None).verdict == CONTRADICTED
    decision = decide("at_most", e(17, unit="rounds"), 4, None)  # every game the same
    assert decision.verdict == CONTRADICTED and decision.reason == "the value is 17 rounds, not at most 4 rounds"


@pytest.mark.parametrize(("value", "expected"), [(9, HOLDS), (3, HOLDS), (2.9, STRONGER), (2.2, STRONGER)])
def test_a_threshold_met_far_beyond_its_band_is_stronger(value, expected):
    # REP converging within 9 rounds at every scale; the paper saw 3 to 9: converging sooner is stronger
    assert decide("at_most", e(value, value - 0.5, min(value + 0.5, 9)), 9, Band(3, 9)).verdict == expected
    assert decide("at_most", e(6, 5, 7), 9, Band(3, 5)).verdict == DIRECTION_ONLY


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [
        (6, 1, 11, HOLDS),  # the value decides while it lies in the band
        (3, 3, 3, HOLDS),
        (9, 9, 9, HOLDS),
        (2.9, 2.5, 3.3, INCONCLUSIVE),  # outside, but the interval reaches in
        (9.1, 8.9, 9.5, INCONCLUSIVE),
        (2.9, 2.5, 2.95, CONTRADICTED),  # outside, and so is the whole interval
        (9.1, 9.05, 9.5, CONTRADICTED),
        (2.9, 2.9, 2.9, CONTRADICTED),  # a count outside
    ],
)
def test_within_reads_the_value_and_outside_the_band_the_interval(value, low, high, expected):
    assert decide("within", e(value, low, high), None, Band(3, 9)).verdict == expected


def test_within_on_one_run_reads_its_value():
    assert decide("within", Estimate(5.01, NAN, NAN, 1), None, Band(1.43, 3.23)).verdict == CONTRADICTED
    assert decide("within", Estimate(2.0, NAN, NAN, 1), None, Band(1.43, 3.23)).verdict == HOLDS


@pytest.mark.parametrize(
    ("value", "low", "high", "expected"),
    [
        (0, -9, 9, HOLDS),
        (0, -10, 10, HOLDS),
        (0, -11, 9, INCONCLUSIVE),
        (3.3, -4, 12, INCONCLUSIVE),
        (11, 9, 13, INCONCLUSIVE),  # the value outside, the interval reaching in
        (12, 10.5, 13, CONTRADICTED),
        (-12, -13, -10.5, CONTRADICTED),
    ],
)
def test_equivalence_needs_the_whole_interval_inside_the_margin_and_is_contradicted_wholly_outside(
    value, low, high, expected
):
    assert decide("equivalent", e(value, low, high, "points"), None, Band(-10, 10)).verdict == expected


def test_an_undecided_equivalence_counts_the_runs_for_the_farther_edge():
    # the value 3.3 inside ±10; the interval -4.0 to 10.6 crosses 10 only: 330 × (7.3 / 6.7)² ≈ 392 runs
    decision = decide("equivalent", e(3.3, -4.0, 10.6, "points", n=330), None, Band(-10, 10))
    assert decision.verdict == INCONCLUSIVE and "about 392 runs" in decision.reason
    assert decide("equivalent", Estimate(0, NAN, NAN, 1), None, Band(-10, 10)).verdict == INCONCLUSIVE


# --- shapes -----------------------------------------------------------------------------------------------------


def test_a_u_holds_when_an_inner_point_lies_below_both_ends_beyond_the_intervals():
    u = curve((0, 100, 99, 101), (5, 26.5, 25.5, 27.5), (10, 24, 23, 25), (20, 42, 41, 43))
    assert decide("u_shape", u, None, None).verdict == HOLDS
    assert decide("u_shape", u, None, Band(10, 15)).verdict == HOLDS  # 10 s is the lowest; 5 s's interval lies apart
    assert decide("u_shape", u, None, Band(15, 20)).verdict == DIRECTION_ONLY  # the dip is at 10 s, not 15–20
    assert decide("inverted_u", u, None, None).verdict == CONTRADICTED  # every inner point lies below an end


def test_where_a_u_bottoms_out_is_undecided_while_points_in_and_out_of_the_band_overlap():
    # 10 s and 15 s tie within their intervals: the dip may lie in 5–10 or not
    u = curve((0, 100, 99, 101), (10, 22.4, 21.5, 23.3), (15, 22.0, 21.1, 22.9), (20, 40, 39, 41))
    decision = decide("u_shape", u, None, Band(5, 10))
    assert (
        decision.verdict == INCONCLUSIVE and "undecided" in decision.reason and "runs would decide" in decision.reason
    )
    assert decide("u_shape", u, None, Band(5, 15)).verdict == HOLDS
    assert decide("u_shape", u, None, Band(16, 20)).verdict == DIRECTION_ONLY


def test_a_dip_whose_interval_reaches_an_end_is_inconclusive_and_a_rise_contradicts_a_u():
    shallow = curve((0, 50, 45, 55), (5, 44, 40, 48), (10, 52, 47, 57))
    decision = decide("u_shape", shallow, None, None)
    assert decision.verdict == INCONCLUSIVE and "overlap" in decision.reason
    rising = curve((0, 10, 9, 11), (5, 20, 19, 21), (10, 30, 29, 31))
    assert decide("u_shape", rising, None, None).verdict == CONTRADICTED  # 5 s lies above 0 s's interval
    flat_topped = curve((0, 10, 9, 11), (5, 12, 10.5, 13.5), (10, 30, 29, 31))
    assert decide("u_shape", flat_topped, None, None).verdict == INCONCLUSIVE  # 5 s may still lie at 0 s's level


def test_an_inverted_u_mirrors_the_u():
    hump = curve((0, 0, 0, 1), (10, 46, 45, 47), (20, 43, 42, 44))
    assert decide("inverted_u", hump, None, Band(5, 10)).verdict == HOLDS
    assert decide("inverted_u", hump, None, Band(15, 20)).verdict == DIRECTION_ONLY
    lower_end = curve((0, 0, 0, 1), (10, 46, 45, 47), (20, 46.5, 44, 48))
    assert decide("inverted_u", lower_end, None, None).verdict == INCONCLUSIVE


@pytest.mark.parametrize(
    ("last", "expected"),
    [((6.1, 5.1, 7.1), HOLDS), ((5.9, 4.9, 6.9), INCONCLUSIVE), ((2, 1, 2.9), CONTRADICTED), ((3, 2, 3), INCONCLUSIVE)],
)
def test_a_rise_needs_the_last_interval_above_the_first_and_a_fall_contradicts_it(last, expected):
    rising = curve((0, 4, 3, 5), (1, 6, 5, 7), (2, *last))
    assert decide("increasing", rising, None, None).verdict == expected


def test_a_rise_of_the_wrong_size_holds_in_direction_only_or_is_stronger():
    rising = curve((0, 4, 3, 5), (1, 6, 5, 7), (2, 9, 8, 10))  # a rise of 5
    assert decide("increasing", rising, None, Band(3.33, 7.5)).verdict == HOLDS
    assert decide("increasing", rising, None, Band(6, 8)).verdict == DIRECTION_ONLY
    assert decide("increasing", rising, None, Band(1, 4)).verdict == STRONGER


def test_a_fall_mirrors_a_rise():
    falling = curve((0, 3.7, 3, 4.4), (1, 1.1, 0.9, 1.3), (2, 0.8, 0.6, 1.0))
    assert decide("decreasing", falling, None, None).verdict == HOLDS
    assert decide("decreasing", falling, None, Band(-10, -5)).verdict == DIRECTION_ONLY  # a fall of 2.9, not 5–10
    assert decide("decreasing", falling, None, Band(-2, -1)).verdict == STRONGER
    assert decide("increasing", falling, None, None).verdict == CONTRADICTED


@pytest.mark.parametrize(("second_low", "expected"), [(40, HOLDS), (41, HOLDS), (41.1, CONTRADICTED)])
def test_flat_holds_while_every_interval_shares_a_value(second_low, expected):
    points = curve((2, 30, 20, 41), (4, second_low + 5, second_low, second_low + 10), (8, 35, 25, 45))
    assert decide("flat", points, None, None).verdict == expected


def test_a_shape_of_single_runs_is_inconclusive():
    single = Curve("x", tuple((x, Estimate(x, NAN, NAN, 1)) for x in (0, 1, 2)), "s")
    for test in ("u_shape", "inverted_u", "increasing", "decreasing", "flat"):
        assert decide(test, single, None, None).verdict == INCONCLUSIVE


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
