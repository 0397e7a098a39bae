"""`LiveChart`: the spec it gets from a chart, and the Vega it sends to the page."""

import json
import math

import altair as alt
import numpy as np
import pandas as pd
import pytest

from coordkit import viz
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


def _layered_charts() -> dict[str, alt.TopLevelMixin]:
    """Charts of layers as the kit draws them (made anew at each call)."""
    from coordkit.delay import charts, panels
    from coordkit.delay.model import DelayedDilemma

    game = DelayedDilemma(delay_a=3.0, policy_b="tit_for_tat", rng=1)
    for _ in range(12):
        game.step()
    frame = pd.DataFrame({"x": ["a", "b"], "y": [1.0, 2.0], "low": [0.5, 1.5], "high": [1.5, 2.5], "m": ["u", "v"]})
    shared = alt.Chart(frame).encode(x=alt.X("x:N"))
    selection = alt.selection_point(fields=["x"])
    played = panels.play(2.0, 4.0, 60.0, "simplified", 0.9, 0.1, 1.0, -1.0, 1.0, 50)
    return {
        "state view": charts.trial_now(game),
        "explore bars": charts.explore(*played)[0],
        "error bars": viz.bars(frame, "x", "y", low="low", high="high"),
        "paper vs kit": viz.paper_vs_kit(frame, "m", "y", source="x"),
        "data and size on the marks": viz.layer(
            shared.mark_bar(width=8).encode(y=alt.Y("y:Q")).properties(width=200),
            shared.mark_tick().encode(y=alt.Y("high:Q")).properties(width=200),
        ),
        "a selection": viz.layer(shared.mark_bar().encode(y=alt.Y("y:Q")).add_params(selection), shared.mark_rule()),
        "faceted marks": viz.layer(
            shared.mark_bar().encode(y=alt.Y("y:Q"), row=alt.Row("m:N")),
            shared.mark_tick().encode(y=alt.Y("low:Q"), row=alt.Row("m:N")),
        ),
    }


def test_layers_made_without_altairs_copies_give_altairs_spec_key_for_key(monkeypatch):
    made = _layered_charts()
    assert isinstance(made["state view"], viz.Layers) and isinstance(made["paper vs kit"].spec, viz.Layers)
    ours = {name: json.dumps(spec_of(chart, validate=True)) for name, chart in made.items()}
    monkeypatch.setattr(viz, "layer", alt.layer)
    monkeypatch.setattr(viz, "Layers", alt.LayerChart)
    altairs = {name: json.dumps(spec_of(chart, validate=True)) for name, chart in _layered_charts().items()}
    assert ours == altairs


def test_an_altair_without_the_helpers_layers_borrows_makes_layers_its_own_way(monkeypatch):
    """Layers uses three of Altair's private helpers; an Altair that renames one still draws every chart."""
    frame = pd.DataFrame({"x": ["a", "b"], "y": [1.0, 2.0]})
    marks = alt.Chart(frame).mark_bar().encode(x="x:N", y="y:Q"), alt.Chart(frame).mark_rule().encode(y="y:Q")
    assert isinstance(viz.layer(*marks), viz.Layers)
    monkeypatch.setattr(viz, "_ALTAIR_HELPERS", (*viz._ALTAIR_HELPERS, "_a_helper_renamed_since"))
    layered = viz.layer(*marks)
    assert not isinstance(layered, viz.Layers) and spec_of(layered, validate=True) == spec_of(alt.layer(*marks))
