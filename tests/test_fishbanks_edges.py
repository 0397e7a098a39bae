"""Fishbanks at the edge of its declared ranges (issue 29): a catch per boat so small that the REP company's hold,
its quota over a boat's catch, overflows to infinity."""

import pytest

from coordkit.rep.fishbanks.ecology import Fishery
from coordkit.rep.fishbanks.model import Fishbanks
from coordkit.rep.fishbanks.policies import CONFIDENCE, HEALTH, QUOTA, STRESS, FleetObservation, REPFleet, REPSituation

TINY_CATCH = Fishery(catch_per_boat=1e-310)  # legal: the declaration's range is (0, 1000]


def tiny_catch_view(max_boats: int = 10) -> FleetObservation:
    return FleetObservation(
        company="A",
        profile="deep-sea industrial",
        season=2,
        seasons=8,
        companies=4,
        max_boats=max_boats,
        fishery=TINY_CATCH,
        risk_tolerance=0.2,
        sustainability=0.5,
        boats=4,
        catch_per_boat=0.0,
        profit_per_boat=-250.0,
        density_estimate=1.0,
        industry_catch=0.0,
        neighbour_boats=(("B", 6), ("C", 5)),
    )


@pytest.mark.parametrize("confidence", [0.0, 0.5, 1.0])
def test_an_unbounded_hold_is_the_most_boats_and_zero_trust_ignores_it(confidence):
    theta = {QUOTA: 145.5, HEALTH: 1.0, CONFIDENCE: confidence, STRESS: 0.5}
    situation = REPSituation(tiny_catch_view(), theta)
    assert REPFleet().share(situation.observation, theta) == float("inf")
    boats, sensitivity = REPFleet().decide(situation)
    competitive = REPFleet().rule.boats(situation.observation)
    assert boats == (competitive if confidence == 0 else 10)
    assert sensitivity.values["hold"] == sensitivity.values["others_at_most"] == 10


@pytest.mark.parametrize("protocol", ["a2a", "rep_numerical", "rep_textual"])
def test_a_game_with_a_subnormal_catch_per_boat_plays_out(protocol):
    summary = Fishbanks(protocol=protocol, catch_per_boat=5e-324, seasons=3, rng=0).run().summary()
    assert summary["profit_margin"] == float("-inf") and summary["total_profit"] < 0
