"""`LiveChart`: the spec it gets from a chart, and the Vega it sends to the page."""

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
