"""Charts of the delay paper's figures, built on :mod:`coordkit.viz`."""

import json

import altair as alt
import numpy as np
import pandas as pd

from coordkit import viz
from coordkit.delay import metrics
from coordkit.delay.fast import Trials

# the paper's Fig. 3 colours: green CC, red DD, orange (D, C), yellow (C, D); grey before both actions arrive
OUTCOME_COLOURS = {"CC": "#2ca02c", "DD": "#d62728", "DC": "#ff7f0e", "CD": "#f2c40f", "?": "#dddddd"}
OUTCOME_NAMES = {"CC": "CC both cooperate", "CD": "CD A exploited", "DC": "DC B exploited", "DD": "DD both defect"}
_NAMED = f"{json.dumps(OUTCOME_NAMES | {'?': '? not arrived yet'})}[datum.label]"  # a legend's labels, in words
EXPLORE_SHARES = {  # the explore panel's bars: each share of metrics.shares, as the raster's letters
    "mutual_cooperation": "CC",
    "a_exploited": "CD",
    "b_exploited": "DC",
    "mutual_defection": "DD",
}
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


def raster(frame: pd.DataFrame) -> alt.FacetChart:
    """Trial × second, coloured by outcome, one panel per delay (Fig. 3 d–f); the last 20 s, whose shares the
    metrics measure (:data:`~coordkit.delay.metrics.LAST_S`), at full strength, the seconds before them faded.

    Seconds are a quantitative axis, each cell one second wide, so that the axis labels stay apart whatever the
    trial's length (60 to 300 s in notebook 04's panel)."""
    colours = alt.Scale(domain=list(OUTCOME_COLOURS), range=list(OUTCOME_COLOURS.values()))
    cells = frame[["delay", "trial", "second", "outcome"]]
    last = cells["second"] > cells.groupby("delay")["second"].transform("max") - metrics.LAST_S
    windows = [f"before the last {metrics.LAST_S:g} s", f"the last {metrics.LAST_S:g} s (measured)"]
    cells = cells.assign(window=np.where(last, windows[1], windows[0]))
    faded = alt.Scale(domain=windows, range=[0.35, 1.0])
    return (
        alt.Chart(cells, width=480, height=120)
        .mark_rect()
        .transform_calculate(end="datum.second + 1")
        .encode(
            x=alt.X("second:Q", title="second", scale=alt.Scale(zero=True, nice=False), axis=alt.Axis(grid=False)),
            x2=alt.X2("end:Q"),
            y=alt.Y("trial:O"),
            color=alt.Color("outcome:N", scale=colours, title="outcome (A, B)", legend=alt.Legend(labelExpr=_NAMED)),
            opacity=alt.Opacity("window:N", scale=faded, title="seconds"),
            tooltip=[alt.Tooltip("delay:N"), alt.Tooltip("trial:O"), alt.Tooltip("second:Q"), alt.Tooltip("outcome:N")],
        )
        .facet(row=alt.Row("delay:O", title="delay (s)"))
    )


def explore(played: Trials, p: float, alpha: float) -> list[alt.TopLevelMixin]:
    """Notebook 04's explore panel: the mean share of the last 20 s in each outcome over ``played``'s trials, with
    95% t-intervals, titled with the setting and the mean payoff a second; then the rasters of the first ten
    trials. The bars keep the paper's colours and a fixed 0–1 axis, so that one setting compares with the next."""
    shares = metrics.shares(played.effective, played.timing).join(metrics.payoff_totals(played.effective))
    summary = metrics.summarise(shares.assign(group="all"), ["group"], measures=list(EXPLORE_SHARES))
    summary["outcome"] = summary["measure"].map(EXPLORE_SHARES).map(OUTCOME_NAMES)
    timing = played.timing
    per_second = shares[["payoff_a", "payoff_b"]].mean() / timing.duration_s
    title = [
        f"{len(shares)} trials of {timing.duration_s:g} s, delays A {timing.delay_a:g} s / B {timing.delay_b:g} s,"
        f" p = {p:.2f}, α = {alpha:.3f}",
        f"mean payoff a second: A {per_second['payoff_a']:.2f}, B {per_second['payoff_b']:.2f}"
        f" (3 if both always cooperate)",
    ]
    letters = EXPLORE_SHARES.values()
    colours = alt.Scale(domain=[OUTCOME_NAMES[o] for o in letters], range=[OUTCOME_COLOURS[o] for o in letters])
    base = alt.Chart().encode(x=alt.X("outcome:N", title=None, sort=None, axis=alt.Axis(labelAngle=0)))
    bars = base.mark_bar().encode(
        y=alt.Y("mean:Q", title=f"share of the last {metrics.LAST_S:g} s", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("outcome:N", scale=colours, legend=None),
        tooltip=[
            alt.Tooltip("outcome:N"),
            alt.Tooltip("mean:Q", format=".3f"),
            alt.Tooltip("low:Q", format=".3f"),
            alt.Tooltip("high:Q", format=".3f"),
        ],
    )
    errors = (
        base.mark_errorbar(ticks=True, color="#333333")
        .encode(y=alt.Y("low:Q", title=f"share of the last {metrics.LAST_S:g} s"), y2=alt.Y2("high:Q"))
        .transform_filter("isValid(datum.low) && isValid(datum.high)")
    )
    label = f"A {timing.delay_a:g} s, B {timing.delay_b:g} s"
    rows = metrics.raster_rows(played.effective, label, first=10)
    return [alt.layer(bars, errors, data=summary, width=480, height=200, title=title), raster(rows)]


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
