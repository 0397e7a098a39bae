"""Charts of the delay paper's figures, built on :mod:`coordkit.viz`."""

import json
import math

import altair as alt
import numpy as np
import pandas as pd

from coordkit import viz
from coordkit.delay import metrics
from coordkit.delay.agents import Player
from coordkit.delay.fast import Trials
from coordkit.delay.game import UNKNOWN, C, outcome
from coordkit.delay.model import DelayedDilemma
from coordkit.views import state_view

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
        viz.layer(band, line, data=data)
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
    return [viz.layer(bars, errors, data=summary, width=480, height=200, title=title), raster(rows)]


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


# --- the state view: one trial as it stands -----------------------------------------------------------------------

LANES = ("A's choices", "A's, as B sees them", "outcome on the server", "B's, as A sees them", "B's choices")
ACTION_NAMES = {C: "C cooperate", "D": "D defect", UNKNOWN: "? not arrived yet"}
STATES = {**ACTION_NAMES, **OUTCOME_NAMES}  # an action and an outcome share their colour where they mean the same
ACTION_COLOURS = {C: OUTCOME_COLOURS["CC"], "D": OUTCOME_COLOURS["DD"], UNKNOWN: OUTCOME_COLOURS[UNKNOWN]}
STATE_COLOURS = alt.Scale(domain=list(STATES), range=[(ACTION_COLOURS | OUTCOME_COLOURS)[state] for state in STATES])
SENT = ["arrived", "in flight"]
IN_FLIGHT = [6, 4]  # the dashes of what is in flight
LANE_PX, TRIAL_PX = 36, 600  # a lane's height, and the time axis's width


@state_view(DelayedDilemma)
def trial_now(game: DelayedDilemma) -> alt.LayerChart:
    """One trial as it stands (§3.1, Fig. 2b): both players' choices tick by tick, what of them is in effect on the
    server, which is what the other player sees, and the outcome the payoffs are earned on, in lanes over the
    trial's whole time axis. Each change of action is an arrow from when it was sent to when it reaches the server,
    dashed while it is in flight, as are the latest choices, which have not arrived yet.

    One table of records for all the marks, and the scales, axes and legends declared once, on the mark that
    introduces them (the others share them): each copy costs the player milliseconds a frame."""
    end_s = game.timing.total_ticks * game.tick_s
    a, b = game.players
    records = [*_lanes(game), *_sent(game, a, 0, 1), *_sent(game, b, 4, 3), _now(game)]
    x = alt.X(
        "x0:Q",
        title="time on the server clock (s)",
        scale=alt.Scale(domain=[0, end_s], nice=False, zero=False),
        axis=alt.Axis(tickCount=10, labelFlush=False),
    )
    y = alt.Y(
        "y0:Q",
        title=None,
        scale=alt.Scale(domain=[-0.6, len(LANES) - 0.4], reverse=True, nice=False, zero=False),
        axis=alt.Axis(values=list(range(len(LANES))), labelExpr=f"{json.dumps(LANES)}[datum.value]", grid=False),
    )
    colour = alt.Color("state:N", title="action, or outcome (A, B)", scale=STATE_COLOURS, legend=_STATE_LEGEND)
    sent = alt.StrokeDash(
        "status:N",
        title="each change of action, from sent to on the server",
        scale=alt.Scale(domain=SENT, range=[[1, 0], IN_FLIGHT]),
        legend=alt.Legend(symbolType="stroke", symbolSize=400, symbolStrokeWidth=2, symbolStrokeColor=viz.NEUTRAL),
    )
    span = alt.Chart().encode(x=alt.X("x0:Q"), x2=alt.X2("x1:Q"), y=alt.Y("y0:Q"), y2=alt.Y2("y1:Q"))
    state = alt.Color("state:N")
    return viz.layer(
        span.mark_rect().encode(x=x, y=y, color=colour).transform_filter("datum.kind == 'cell'"),
        span.mark_rule(strokeWidth=2).encode(color=state, strokeDash=sent).transform_filter("datum.kind == 'arrow'"),
        alt.Chart()
        .mark_point(shape="triangle-up", size=60, filled=True, opacity=1, angle=alt.ExprRef("datum.angle"))
        .encode(x=alt.X("x1:Q"), y=alt.Y("y1:Q"), color=state)
        .transform_filter("datum.kind == 'arrow'"),
        # the frame round the choices in flight, dashed as their arrows are, and the line of now (a frame 0 s wide)
        span.mark_rect(
            fill="transparent", stroke=viz.NEUTRAL, strokeWidth=1.5, strokeDash=alt.ExprRef("datum.dash")
        ).transform_filter("datum.kind == 'frame'"),
        data=alt.InlineData(values=records),
        width=TRIAL_PX,
        height=LANE_PX * len(LANES),
        title=_trial_title(game),
    )


_STATE_LEGEND = alt.Legend(labelExpr=f"{json.dumps(STATES)}[datum.label]", columns=4, symbolType="square")


def _lanes(game: DelayedDilemma) -> list[dict]:
    """The five lanes as runs of one state each, tick t spanning (t − 1)·Δt to t·Δt on the server clock: each
    player's choices (when it made them) and its actions in effect (the choices of its delay earlier), and the
    outcome of the two in effect."""
    a, b = game.players
    ticks = range(1, game.steps + 1)
    in_effect = [[player.effective(t) for t in ticks] for player in (a, b)]
    lanes = [a.choices, in_effect[0], [outcome(*pair) for pair in zip(*in_effect)], in_effect[1], b.choices]
    return [
        {"kind": "cell", "x0": start * game.tick_s, "x1": stop * game.tick_s, "state": state}
        | {"y0": lane - 0.3, "y1": lane + 0.3}
        for lane, states in enumerate(lanes)
        for start, stop, state in _runs(states)
    ]


def _runs(states: list[str]) -> list[tuple[int, int, str]]:
    """(start, stop, state) of each run of equal states: tick start + 1 to tick stop."""
    runs, start = [], 0
    for tick in range(1, len(states) + 1):
        if tick == len(states) or states[tick] != states[start]:
            runs.append((start, tick, states[start]))
            start = tick
    return runs


def _sent(game: DelayedDilemma, player: Player, lane: int, seen: int) -> list[dict]:
    """``player``'s changes of action as arrows from its lane of choices, when sent, to its lane in effect, when
    they arrive ``delay`` later; and a frame round its choices still in flight."""
    tick_s, delay, now = game.tick_s, player.delay_ticks, game.steps
    down = 1 if seen > lane else -1  # the arrow runs down the chart, or up it
    dx, dy = delay * tick_s * TRIAL_PX / (game.timing.total_ticks * tick_s), down * (abs(seen - lane) - 0.6) * LANE_PX
    angle = math.degrees(math.atan2(dx, -dy))  # the arrowhead (a triangle pointing up) turned along the arrow
    previous = [UNKNOWN, *player.choices]
    arrows = [
        {"kind": "arrow", "x0": (t - 1) * tick_s, "x1": (t - 1 + delay) * tick_s, "state": choice, "angle": angle}
        | {"y0": lane + 0.3 * down, "y1": seen - 0.3 * down, "status": SENT[t + delay > now]}
        for t, choice in enumerate(player.choices, start=1)
        if choice != previous[t - 1]
    ]
    flying = {"kind": "frame", "x0": max(0, now - delay) * tick_s, "x1": now * tick_s, "dash": IN_FLIGHT}
    return [*arrows, flying | {"y0": lane - 0.38, "y1": lane + 0.38}] if delay and now else arrows


def _now(game: DelayedDilemma) -> dict:
    """The server clock at the end of the tick on screen."""
    return {"kind": "frame", "x0": game.steps * game.tick_s, "x1": game.steps * game.tick_s, "dash": [1, 0]} | {
        "y0": -0.6,
        "y1": len(LANES) - 0.4,
    }


def _trial_title(game: DelayedDilemma) -> list[str]:
    """The tick and both scores; then what each player sees of the other beside what the other last chose."""
    a, b = game.players
    head = f"tick {game.steps} of {game.timing.total_ticks} · points: A {a.payoff:g}, B {b.payoff:g}"
    if game.steps == 0:
        return [head, "nothing chosen yet: press Step or Play"]
    return [head, _sight(game, a, b), _sight(game, b, a)]


def _sight(game: DelayedDilemma, viewer: Player, other: Player) -> str:
    """What ``viewer`` sees of ``other`` now (``other``'s choice of its delay ago), and what ``other`` last chose."""
    seen, latest = other.effective(game.steps), other.last_choice
    if other.delay_ticks == 0:
        return f"{viewer.name} sees {other.name}'s latest choice at once: {latest}"
    age = f"{other.delay_ticks * game.tick_s:g} s"
    if seen == UNKNOWN:
        return f"{viewer.name} sees nothing of {other.name} yet: its first choice takes {age} to arrive"
    return f"{viewer.name} sees {other.name}: {seen}, chosen {age} ago · {other.name}'s latest choice: {latest}"
