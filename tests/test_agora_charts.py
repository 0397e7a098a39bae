"""Notebook 06's charts and panels at the ends of their controls: every slider position is a value the model accepts,
and Figure 5 stays under Altair's 5,000-row limit (and light in a saved notebook) at any number of queries. And the
adoption floor that §6's cost explanation measures."""

import pandas as pd
import pytest

from coordkit.agora import charts
from coordkit.agora.experiments import adoption_floor, floor_costs, play_both
from coordkit.agora.model import AgoraNetwork, WeatherDemo
from coordkit.agora.panels import network_controls, network_view, play_network, weather_controls, weather_panel
from coordkit.live_chart import LiveChart
from coordkit.ui import ExperimentPanel, Slider

ROWS = 4 * charts.POINTS  # Figure 5: two arms, two measures, at most POINTS queries a curve


@pytest.fixture(scope="module")
def short_run() -> pd.DataFrame:
    return play_both(AgoraNetwork, 0, users=10, queries=120).assign(seed=0)


def curves(moving: pd.DataFrame) -> pd.core.groupby.DataFrameGroupBy:
    return moving.groupby(["measure", "arm"])["query"]


def test_figure5_draws_a_long_run_at_evenly_spaced_queries_ending_at_the_last(short_run):
    every = charts.moving(short_run, points=120)
    thinned = charts.moving(short_run, points=40)
    assert curves(every).size().eq(120).all() and curves(thinned).size().eq(40).all()
    for _, queries in curves(thinned):
        assert queries.max() == 120 and set(queries.diff().dropna()) == {3}
    kept = every.merge(thinned[["measure", "arm", "query"]])  # thinning leaves out points, never moves one
    assert (
        kept.sort_values(list(kept.columns[:3]))
        .reset_index(drop=True)
        .equals(thinned.sort_values(list(thinned.columns[:3])).reset_index(drop=True))
    )


def test_sampled_keeps_every_query_of_a_short_run_and_at_most_points_of_a_long_one():
    assert charts.sampled(pd.Series(range(1, 101)), 250) == list(range(1, 101))
    long = charts.sampled(pd.Series(range(1, 2001)), 250)
    assert len(long) == 250 and long[-1] == 2000 and long[:2] == [8, 16]
    assert len(charts.sampled(pd.Series(range(1, 2002)), 250)) == 223  # 2,001 queries: every 9th


@pytest.mark.parametrize(
    "controls, model",
    [(network_controls(), AgoraNetwork), (weather_controls(), WeatherDemo)],
    ids=["network", "weather"],
)
def test_every_slider_position_is_a_value_the_model_accepts(controls, model):
    """Each end of each slider passes its parameter's own check (a relation between two controls, such as checking
    before negotiating, is explained in the status line when a position breaks it)."""
    for slider in (control for control in controls if isinstance(control, Slider) and control.name != "seed"):
        declared = model.parameters[slider.name]
        for end in (slider.low, slider.high):
            declared.check(end)  # raises a ParameterError naming the value and the range


def rows_shown(panel: ExperimentPanel) -> list[int]:
    """How many data rows each chart of the panel holds, as its spec was sent to the page."""
    return [
        sum(len(rows) for rows in slot.spec["datasets"].values())
        for slot in panel.output.children
        if isinstance(slot, LiveChart)
    ]


def at_their_maxima(panel: ExperimentPanel) -> None:
    """Every slider of ``panel`` at its maximum (negotiate after first: a user checks before negotiating), then run."""
    sliders = sorted(
        (p for p in panel.params.values() if isinstance(p, Slider)), key=lambda p: p.name != "negotiate_after"
    )
    for slider in sliders:
        panel.controls[slider.name].value = slider.high
    panel.refresh()


def test_the_network_panel_draws_its_charts_at_every_slider_maximum():
    """2,000 queries (and 200 users, thresholds of 100, ...) at once: the run that failed with Altair's MaxRowsError
    (8,000 rows > 5,000) before Figure 5 was thinned. About ten seconds."""
    panel = ExperimentPanel(play_network, network_controls(), chart=network_view, on_demand=True, run_on_start=False)
    at_their_maxima(panel)
    assert panel.values["queries"] == 2000 and panel.last_error is None, panel.status.value
    assert rows_shown(panel) == [ROWS, 8]  # Figure 5, and D.3's eight bars
    assert isinstance(panel.output.children[-1].outputs[0], dict)  # the totals table


def test_the_weather_panel_draws_its_chart_at_every_slider_maximum():
    panel = weather_panel()
    at_their_maxima(panel)
    assert panel.values["queries"] == 30 and panel.last_error is None, panel.status.value
    assert rows_shown(panel) == [2 * 31]  # both arms, queries 0 to 30


def queries(protocol: str, costs: list[float]) -> pd.DataFrame:
    """One seed's arm: the start, then user u1's four queries of a task to s and u2's one, each with its cost."""
    users = ["", "u1", "u2", "u1", "u1", "u1"]
    return pd.DataFrame(
        {
            "seed": 0,
            "protocol": protocol,
            "query": range(6),
            "user": users,
            "server": ["" if not user else "s" for user in users],
            "task": ["" if not user else "t" for user in users],
            "cost": [0.0, *costs],
        }
    )


def test_the_adoption_floor_is_each_pairs_first_queries_and_bounds_the_cost_ratio():
    frame = pd.concat([queries("agora", [2, 2, 2, 1, 0]), queries("natural_language", [2, 2, 2, 2, 2])])
    assert adoption_floor(frame, 3).tolist() == [False, True, True, True, True, False] * 2  # u1's 4th is above
    assert adoption_floor(frame, 1).tolist() == [False, True, True, False, False, False] * 2
    found = floor_costs(frame, 3)
    assert found["user–server–task pairs"] == 2 and found["queries below the floor (%)"] == 80.0
    assert found["their cost to Agora (USD)"] == 7 and found["Agora's cost (USD)"] == 7
    assert found["cost ratio at most"] == round(10 / 7, 2) and found["cost ratio"] == round(10 / 7, 2)
    assert floor_costs(frame, 1)["cost ratio at most"] == 2.5  # the two first queries cost 4 of natural language's 10
