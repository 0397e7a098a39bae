"""The measures the ledger's rows were fixed or added with (issue 46) measure what their claims are about, and can
fail: differences rather than ratios over a stock that can die out, a settling contrast that says when the game is
too short to tell, each of Fig. 4's trials counted once, negotiation against the other activities."""

import math

import numpy as np
import pandas as pd
import pytest

from coordkit.agora import measures as agora_measures
from coordkit.agora.costs import ACTIVITIES
from coordkit.delay import measures as delay_measures
from coordkit.delay.experiments import figure4
from coordkit.pressure import measures as pressure_measures
from coordkit.rep.beer_game import measures as beer_measures
from coordkit.rep.fishbanks import measures as fish_measures
from coordkit.replication import estimates
from coordkit.replication.verdicts import CONTRADICTED, HOLDS, INCONCLUSIVE, Band, decide


def per_game_of(column: str, values: dict[str, list[float]]):
    """A stand-in for a family's ``metrics.per_game``: ``column`` per game, the protocol's games from ``values``."""

    def per_game(frame: pd.DataFrame, *args) -> pd.DataFrame:
        protocols = frame["protocol"].unique()
        return pd.DataFrame(
            [{"protocol": p, "seed": seed, column: v} for p in protocols for seed, v in enumerate(values[p])]
        )

    return per_game


BOTH = pd.DataFrame({"protocol": ["a2a", "rep_textual"], "round": [20, 20]})


def test_a_settling_contrast_where_no_game_settles_is_open_both_ways(monkeypatch):
    never = {"a2a": [np.nan] * 5, "rep_textual": [np.nan] * 5}
    monkeypatch.setattr(beer_measures.metrics, "per_game", per_game_of("rounds_to_stabilise", never))
    gap = beer_measures.settling_gap(BOTH)
    assert (gap.value, gap.low, gap.high) == (0, -math.inf, math.inf) and "longer game" in gap.label
    assert decide("greater", gap, 0, Band(4.33, 9.75)).verdict == INCONCLUSIVE


@pytest.mark.parametrize(
    ("a2a", "rep", "expected"),
    [([12, 13, 11, 12, 14], [3, 4, 3, 4, 3], HOLDS), ([3, 4, 3, 4, 3], [12, 13, 11, 12, 14], CONTRADICTED)],
)
def test_a_settling_contrast_where_games_settle_can_hold_or_fail(monkeypatch, a2a, rep, expected):
    settled = {"a2a": a2a, "rep_textual": rep}
    monkeypatch.setattr(beer_measures.metrics, "per_game", per_game_of("rounds_to_stabilise", settled))
    assert decide("greater", beer_measures.settling_gap(BOTH), 0, Band(4.33, 9.75)).verdict == expected


def test_a_game_that_never_settles_is_counted_and_said(monkeypatch):
    some = {"a2a": [np.nan, 14, np.nan, 15, 13], "rep_textual": [3, 4, 3, 4, 3]}
    monkeypatch.setattr(beer_measures.metrics, "per_game", per_game_of("rounds_to_stabilise", some))
    gap = beer_measures.settling_gap(BOTH)
    assert "2 of 10 games never settle, each counted as 17 rounds" in gap.label
    assert gap.value == pytest.approx(np.mean([17, 14, 17, 15, 13]) - 3.4)


def test_the_fishery_gain_is_a_difference_that_an_extinct_stock_cannot_blow_up(monkeypatch):
    fish = {"a2a": [0.0, 0.5, 0.0, 1.0, 0.0], "rep_textual": [1200, 1250, 1180, 1300, 1210]}
    monkeypatch.setattr(fish_measures.metrics, "per_game", per_game_of("final_population", fish))
    gain = fish_measures.final_population_gain(BOTH)
    assert gain.unit == "fish" and gain.value == pytest.approx(1228 - 0.3)
    assert decide("greater", gain, 0, Band(185, 416)).verdict == "stronger than the paper"
    fewer = {"a2a": [1200, 1250, 1180, 1300, 1210], "rep_textual": [900, 950, 980, 920, 940]}
    monkeypatch.setattr(fish_measures.metrics, "per_game", per_game_of("final_population", fewer))
    assert decide("greater", fish_measures.final_population_gain(BOTH), 0, Band(185, 416)).verdict == CONTRADICTED


def test_a_fishery_gain_in_points_is_a_difference_of_shares(monkeypatch):
    index = {"a2a": [0.1, 0.2, 0.1, 0.2, 0.1], "rep_textual": [0.4, 0.5, 0.4, 0.5, 0.4]}
    monkeypatch.setattr(fish_measures.metrics, "per_game", per_game_of("final_sustainability_index", index))
    gain = fish_measures.gain_in_points("final_sustainability_index")(BOTH)
    assert gain.unit == "points" and gain.value == pytest.approx(30.0)


def agora_costs(shares: dict[str, list[float]]) -> pd.DataFrame:
    """Agora's played queries with the given shares of cost per activity, one query a seed."""
    seeds = range(len(next(iter(shares.values()))))
    rows = [
        {"protocol": "agora", "seed": s, "query": 1, **{f"cost_{a}": shares[a][s] for a in ACTIVITIES}} for s in seeds
    ]
    frame = pd.DataFrame(rows)
    return frame.assign(cost=frame[[f"cost_{a}" for a in ACTIVITIES]].sum(axis=1))


def test_negotiation_is_measured_against_the_smallest_other_activity():
    papers = agora_costs({"natural_language": [54, 53, 55], "negotiation": [6, 7, 5], "checks": [22, 22, 23],
                          "implementation": [18, 18, 17]})  # fmt: skip
    gap = agora_measures.negotiation_below_the_rest(papers)
    assert gap.label.startswith("negotiation − implementation") and gap.value == pytest.approx(-11.67, abs=0.01)
    assert decide("less", gap, 0, Band(-16.5, -7.33)).verdict == HOLDS
    kits = agora_costs({"natural_language": [65, 66, 64], "negotiation": [11, 10, 12], "checks": [5, 5, 6],
                        "implementation": [19, 19, 18]})  # fmt: skip
    gap = agora_measures.negotiation_below_the_rest(kits)
    assert gap.label.startswith("negotiation − checks") and decide("less", gap, 0, None).verdict == CONTRADICTED


def test_the_pressure_rates_read_their_strategies_and_configurations():
    frame = pd.DataFrame(
        {
            "strategy": ["pressure_field"] * 4 + ["conversation"] * 2,
            "decay": [True, True, False, False, True, True],
            "solved": [True, False, False, False, True, True],
        }
    )
    assert pressure_measures.solved_with_decay(frame).value == 50.0
    gap = pressure_measures.pressure_field_minus_conversation(frame)
    assert gap.value == pytest.approx(25.0 - 100.0) and gap.label == "pressure_field − conversation"


def test_the_papers_own_counts_leave_conversation_worst_undecided():
    """pf-conversation-worst's note: Table 2's 5 of 58 against random's 21 of 180, through the row's test."""
    paper = estimates.rate_difference(5, 58, 21, 180)
    assert (round(paper.value, 2), round(paper.low, 1), round(paper.high, 2)) == (-3.05, -10.4, 7.71)
    assert decide("less", paper, 0, Band(-4.65, -2.07)).verdict == INCONCLUSIVE


def test_each_of_fig4s_trials_is_counted_once():
    frame = figure4(seeds=20)
    outcomes = [c for c in frame.columns if c not in ("p", "alpha", "delay", "trial")]
    for delay in (0, 5, 10, 15, 20):
        low, high = (frame[(frame["alpha"] == a) & (frame["delay"] == delay)][outcomes] for a in (0.1, 0.2))
        assert low.reset_index(drop=True).equals(high.reset_index(drop=True)) == (delay != 5), delay
    kept = delay_measures.distinct_trials(frame).groupby("delay").size()
    assert kept.to_dict() == {0: 40, 5: 80, 10: 40, 15: 40, 20: 40}  # 2 p × 20 trials, and × 2 α at 5 s
    curve = delay_measures.by_delay("mutual_cooperation")(frame)
    assert [e.n for e in curve.estimates] == [40, 80, 40, 40, 40]


def test_recovery_is_measured_from_the_trough_so_that_it_can_fail():
    frame = figure4(seeds=20)
    recovered = delay_measures.cooperation_recovered(frame)
    assert recovered.label == "20 s − 10 s, the trough" and recovered.value > 0
    flat = frame.assign(mutual_cooperation=np.where(frame["delay"] == 0, 1.0, 0.3))  # no recovery at all
    assert decide("greater", delay_measures.cooperation_recovered(flat), 0, None).verdict == CONTRADICTED
