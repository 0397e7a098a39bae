"""Charts of the delay paper's figures, built on :mod:`coordkit.viz`."""

import altair as alt
import numpy as np
import pandas as pd

from coordkit import viz
from coordkit.delay import metrics

# the paper's Fig. 3 colours: green CC, red DD, orange (D, C), yellow (C, D); grey before both actions arrive
OUTCOME_COLOURS = {"CC": "#2ca02c", "DD": "#d62728", "DC": "#ff7f0e", "CD": "#f2c40f", "?": "#dddddd"}
OUTCOME_LABELS = {  # Fig. 4's panels
    "mutual_cooperation": "mutual cooperation (CC)",
    "mutual_defection": "mutual defection (DD)",
    "exploitation": "exploitation (CD or DC)",
}


def u_curves(summary: pd.DataFrame) -> alt.FacetChart:
    """Mean share of each outcome over the delay, one line per (p, α), with 95% intervals (Fig. 4); a point of one
    trial has no interval (NaN bounds) and no error bar."""
    data = summary.assign(
        players=lambda d: "p=" + d["p"].astype(str) + ", α=" + d["alpha"].astype(str),
        measure=summary["measure"].map(OUTCOME_LABELS).fillna(summary["measure"]),
    )
    base = alt.Chart().encode(x=alt.X("delay:Q", title="delay (s)"), color=alt.Color("players:N", title=None))
    line = base.mark_line(point=True).encode(
        y=alt.Y("mean:Q", title="share of the last 20 s", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("players:N"), alt.Tooltip("delay:Q"), alt.Tooltip("mean:Q", format=".3f")],
    )
    band = (
        base.mark_errorbar()
        .encode(y=alt.Y("low:Q", title="share of the last 20 s"), y2=alt.Y2("high:Q"))
        .transform_filter("isValid(datum.low) && isValid(datum.high)")
    )
    return (
        alt.layer(band, line, data=data)
        .properties(width=200, height=180)
        .facet(column=alt.Column("measure:N", title=None, sort=[OUTCOME_LABELS[o] for o in metrics.OUTCOMES]))
    )


def figure4(frame: pd.DataFrame) -> alt.FacetChart:
    """Fig. 4 from its trials (:func:`~coordkit.delay.experiments.figure4`): the U-curves of the means over trials."""
    return u_curves(metrics.summarise(frame, ["p", "alpha", "delay"]))


def raster(frame: pd.DataFrame) -> alt.Chart:
    """Trial × second, coloured by outcome, one panel per delay (Fig. 3 d–f); the last 20 s, whose shares the
    metrics measure (:data:`~coordkit.delay.metrics.LAST_S`), at full strength, the seconds before them faded."""
    colours = alt.Scale(domain=list(OUTCOME_COLOURS), range=list(OUTCOME_COLOURS.values()))
    cells = frame[["delay", "trial", "second", "outcome"]]
    last = cells["second"] > cells.groupby("delay")["second"].transform("max") - metrics.LAST_S
    windows = [f"before the last {metrics.LAST_S:g} s", f"the last {metrics.LAST_S:g} s (measured)"]
    cells = cells.assign(window=np.where(last, windows[1], windows[0]))
    faded = alt.Scale(domain=windows, range=[0.35, 1.0])
    return (
        alt.Chart(cells)
        .mark_rect()
        .encode(
            x=alt.X("second:O", title="second", axis=alt.Axis(values=list(range(0, 200, 10)))),
            y=alt.Y("trial:O"),
            color=alt.Color("outcome:N", scale=colours, title="A, B"),
            opacity=alt.Opacity("window:N", scale=faded, title="seconds"),
            tooltip=[alt.Tooltip("delay:Q"), alt.Tooltip("trial:O"), alt.Tooltip("second:O"), alt.Tooltip("outcome:N")],
        )
        .properties(width=420, height=120)
        .facet(row=alt.Row("delay:O", title="delay (s)"))
    )


def asymmetry(frame: pd.DataFrame) -> alt.Chart:
    """Mean payoff of the fast player A and the slow player B as B's delay grows."""
    means = frame.groupby("delay_b")[["payoff_a", "payoff_b"]].mean().reset_index()
    long = means.melt("delay_b", var_name="player", value_name="payoff")
    long["player"] = long["player"].map({"payoff_a": "A (fast)", "payoff_b": "B (slow)"})
    return viz.lines(
        long,
        "delay_b",
        "payoff",
        color="player",
        title="A fast player against a slower opponent",
        x_title="B's delay (s)",
        y_title="mean payoff per trial",
    )
