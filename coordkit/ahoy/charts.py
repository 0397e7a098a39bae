"""Ahoy charts: messages per scenario (the figure), and an enactment's message log as a sequence diagram."""

import altair as alt
import pandas as pd

from coordkit import viz


def messages_per_scenario(scenarios: pd.DataFrame) -> alt.Chart:
    """Messages per scenario (mean over seeds): in all, and sent by the Ahoy agent."""
    means = scenarios.groupby("scenario", sort=False)[["messages", "ahoy_messages"]].mean().reset_index()
    tidy = means.rename(columns={"messages": "all agents", "ahoy_messages": "the Ahoy agent"}).melt(
        "scenario", var_name="sent by", value_name="messages"
    )
    bars = viz.bars(tidy, x="scenario", y="messages", color="sent by", title="Ahoy §5: messages per scenario")
    return bars.encode(x=alt.X("scenario", sort=list(means["scenario"]), axis=alt.Axis(labelAngle=-30)))


MESSAGE_GAP_PX = 16  # between two arrows of one step: a 10-px label sits 6 px above its arrow
ONE_MESSAGE_STEP_PX = 24  # a step's height when no step has two messages
LANE_PX = 120  # between two lifelines, at least
LABEL_CHAR_PX = 6  # a 10-px label's width per character, rounded up


def sequence_diagram(log: pd.DataFrame, title: str = "") -> alt.LayerChart:
    """A message log (``model.messages()``) as a sequence diagram: one lifeline per agent, one arrow per message,
    time going down; messages sent in the same step are spread apart, each step tall enough for its busiest one
    to keep every label clear of the arrow above it. Arrows are coloured by enactment (its protocol and key value,
    in the order the enactments start), so that each can be followed through an interleaving (§5.2, §5.4)."""
    agents = list(dict.fromkeys([*log["sender"], *log["recipient"]]))
    column = {agent: i for i, agent in enumerate(agents)}
    per_step = log.groupby("step")["step"].transform("size")
    rows = log.assign(
        y=log["step"] + log.groupby("step").cumcount() / (per_step + 1),
        x=log["sender"].map(column),
        x2=log["recipient"].map(column),
    )
    rows = rows.assign(
        enactment=rows["protocol"] + " " + rows["enactment"],
        started=rows.groupby(["protocol", "enactment"])["y"].transform("min"),
        mid=(rows["x"] + rows["x2"]) / 2,
        head=rows["x2"] - 0.06 * (rows["x2"] - rows["x"]).clip(-1, 1),
        arrow=(rows["x2"] > rows["x"]).map({True: "triangle-right", False: "triangle-left"}),
    )
    x = alt.X(
        "x:Q",
        title=None,
        scale=alt.Scale(domain=[-0.5, len(agents) - 0.5]),
        axis=alt.Axis(values=list(range(len(agents))), orient="top", grid=False, labelExpr=f"{agents}[datum.value]"),
    )
    y = alt.Y("y:Q", title="step", scale=alt.Scale(reverse=True, nice=False), axis=alt.Axis(tickMinStep=1))
    # the lifelines run from step 0 to a step past the last message, and so set the time axis from the data
    # (a panel's new enactment then changes only the data, and the chart on screen is updated in place)
    lifelines = pd.DataFrame({"x": range(len(agents)), "start": 0.0, "end": rows["y"].max() + 1})
    lanes = (
        alt.Chart(lifelines)
        .mark_rule(color="#bbb", strokeDash=[4, 3])
        .encode(x=x, y=alt.Y("start:Q"), y2=alt.Y2("end:Q"))
    )
    base = alt.Chart()  # the arrows, heads and labels share the layer's data
    enactment = alt.Color(
        "enactment:N",
        sort=alt.EncodingSortField("started", op="min"),
        legend=alt.Legend(orient="bottom", title="enactment", columns=3, labelLimit=220),
    )
    lines = base.mark_rule(strokeWidth=2).encode(
        x=x,
        x2=alt.X2("x2:Q"),
        y=y,
        color=enactment,
        tooltip=[alt.Tooltip("step:Q"), alt.Tooltip("enactment:N"), alt.Tooltip("instance:N")],
    )
    heads = base.mark_point(filled=True, size=60, opacity=1).encode(
        x=alt.X("head:Q"), y=alt.Y("y:Q"), shape=alt.Shape("arrow:N", scale=None), color=enactment
    )
    labels = base.mark_text(dy=-6, fontSize=10).encode(x=alt.X("mid:Q"), y=alt.Y("y:Q"), text=alt.Text("message:N"))
    steps = rows["y"].max() + 1  # the time axis runs from step 0 to one past the last message
    busiest = per_step.max()  # its arrows are 1 / (busiest + 1) of a step apart
    step_px = MESSAGE_GAP_PX * (busiest + 1) if busiest > 1 else ONE_MESSAGE_STEP_PX
    lane_px = max(LANE_PX, LABEL_CHAR_PX * int(log["message"].str.len().max()) + 16)  # the longest label fits
    size = {"width": lane_px * len(agents), "height": round(step_px * steps) + 40}
    return alt.layer(lanes, lines, heads, labels, data=rows, title=title, **size)
