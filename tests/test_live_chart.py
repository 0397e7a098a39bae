"""`LiveChart`: the spec it gets from a chart, and the Vega it sends to the page."""

import json
import math

import altair as alt
import numpy as np
import pandas as pd
import pytest

from coordkit import compound, viz
from coordkit.live_chart import LiveChart, spec_of


def test_a_spec_carries_the_frame_as_json_values():
    frame = pd.DataFrame({"x": np.arange(3), "y": [0.5, math.nan, 1 / 3], "who": pd.Categorical(["a", "b", "a"])})
    spec = spec_of(alt.Chart(frame).mark_line().encode(x=alt.X("x:Q"), y=alt.Y("y:Q")))
    (values,) = spec["datasets"].values()
    assert values == [
        {"x": 0, "y": 0.5, "who": "a"},
        {"x": 1, "y": None, "who": "b"},
        {"x": 2, "y": 0.333333333333333, "who": "a"},
    ]
    assert spec == spec_of(alt.Chart(frame).mark_line().encode(x=alt.X("x:Q"), y=alt.Y("y:Q")))  # deterministic


def test_a_spec_keeps_altairs_row_limit_and_other_kinds_of_data():
    with pytest.raises(alt.MaxRowsError):
        spec_of(alt.Chart(pd.DataFrame({"x": range(5001)})).mark_point())
    assert spec_of(alt.Chart("data.csv").mark_point())["data"] == {"url": "data.csv"}


def test_a_live_chart_sends_vega_to_the_page_that_asks_for_it():
    chart, sent = LiveChart(), []
    chart.send = sent.append
    chart._answer(chart, {"type": "something else"}, [])
    assert sent == []
    chart._answer(chart, {"type": "need-vega"}, [])
    assert sent == [{"type": "vega-bundle", "code": viz.vega_bundle()}]
    assert "window.vegaEmbed=" in sent[0]["code"]


def _compound_charts() -> dict[str, alt.TopLevelMixin]:
    """Charts of layers and of charts side by side, as the kit draws them (made anew at each call)."""
    from coordkit.delay import charts, panels
    from coordkit.delay.model import DelayedDilemma
    from coordkit.pressure import charts as pressure_charts
    from coordkit.pressure.model import PressureField
    from coordkit.rep.fishbanks import charts as fishery_charts
    from coordkit.rep.fishbanks.model import Fishbanks
    from coordkit.rep.movies import charts as movie_charts
    from coordkit.rep.movies.model import MovieScheduling

    game = DelayedDilemma(delay_a=3.0, policy_b="tit_for_tat", rng=1)
    for _ in range(12):
        game.step()
    movies, fishery = MovieScheduling(rng=2).run(), Fishbanks(rng=2).run()
    frame = pd.DataFrame({"x": ["a", "b"], "y": [1.0, 2.0], "low": [0.5, 1.5], "high": [1.5, 2.5], "m": ["u", "v"]})
    shared = alt.Chart(frame).encode(x=alt.X("x:N"))
    bar, tick = shared.mark_bar().encode(y=alt.Y("y:Q")), shared.mark_tick().encode(y=alt.Y("high:Q"))
    selection = alt.selection_point(fields=["x"])
    played = panels.play(2.0, 4.0, 60.0, "simplified", 0.9, 0.1, 1.0, -1.0, 1.0, 50)
    return {
        "state view": charts.trial_now(game),
        "explore bars": charts.explore(*played)[0],
        "error bars": viz.bars(frame, "x", "y", low="low", high="high"),
        "paper vs kit": viz.paper_vs_kit(frame, "m", "y", source="x"),
        "data and size on the marks": viz.layer(bar.properties(width=200), tick.properties(width=200)),
        "a selection": viz.layer(bar.add_params(selection), shared.mark_rule()),
        "faceted marks": viz.layer(bar.encode(row=alt.Row("m:N")), tick.encode(row=alt.Row("m:N"))),
        "movie panel": movie_charts.round_view(movies),
        "movie night": movie_charts.movie_night_now(movies),
        "fishery panel": fishery_charts.season_view(fishery),
        "fishery now": fishery_charts.fishery_now(fishery),
        "pressure panel": pressure_charts.trial(PressureField(rng=2).run())[0],
        "one frame side by side": viz.hconcat(bar, tick, title="lifted"),
        "a selection side by side": viz.vconcat(viz.hconcat(bar.add_params(selection), tick), tick),
        "a named layer side by side": viz.hconcat(viz.layer(bar.properties(name="bars"), tick), tick),
        "a facet side by side": viz.hconcat(viz.paper_vs_kit(frame, "m", "y", source="x"), tick),
    }


def test_compounds_made_without_altairs_copies_give_altairs_spec_key_for_key(monkeypatch):
    made = _compound_charts()
    kinds = {name: type(chart) for name, chart in made.items()}
    assert kinds["state view"] is compound.Layers and isinstance(made["paper vs kit"].spec, compound.Layers)
    assert kinds["movie panel"] is kinds["fishery now"] is kinds["pressure panel"] is compound.Row
    assert kinds["fishery panel"] is compound.Column
    ours = {name: json.dumps(spec_of(chart, validate=True)) for name, chart in made.items()}
    for name, altairs_class in [("Layers", alt.LayerChart), ("Row", alt.HConcatChart), ("Column", alt.VConcatChart)]:
        monkeypatch.setattr(compound, name, altairs_class)
    altairs = {name: json.dumps(spec_of(chart, validate=True)) for name, chart in _compound_charts().items()}
    assert ours == altairs


def test_an_altair_without_the_helpers_compounds_borrow_makes_them_its_own_way(monkeypatch):
    """The compounds use four of Altair's private helpers; an Altair that renames one still draws every chart."""
    frame = pd.DataFrame({"x": ["a", "b"], "y": [1.0, 2.0]})
    marks = alt.Chart(frame).mark_bar().encode(x="x:N", y="y:Q"), alt.Chart(frame).mark_rule().encode(y="y:Q")
    assert isinstance(viz.layer(*marks), compound.Layers) and isinstance(viz.hconcat(*marks), compound.Row)
    monkeypatch.setattr(compound, "_ALTAIR_HELPERS", (*compound._ALTAIR_HELPERS, "_a_helper_renamed_since"))
    for ours, altairs in [(viz.layer, alt.layer), (viz.hconcat, alt.hconcat), (viz.vconcat, alt.vconcat)]:
        made = ours(*marks)
        assert type(made) is type(altairs(*marks)) and spec_of(made, validate=True) == spec_of(altairs(*marks))
