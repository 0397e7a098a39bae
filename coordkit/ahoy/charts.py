"""Ahoy charts: messages per scenario (the figure), an enactment's message log as a sequence diagram, and an
enactment as it stands, the state view that notebook 05's player redraws at every step (of an ``AhoyEnactment``, and
of Kiko's ``EnactmentModel``, the BSPL library's model without charts of its own)."""

from collections import Counter
from functools import cache

import altair as alt
import pandas as pd

from coordkit import viz
from coordkit.ahoy.model import AHOY, PROTOCOL_NAMES, AhoyEnactment
from coordkit.bspl.kiko import Enactment, EnactmentModel
from coordkit.views import state_view


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
AXIS_LINE_PX = 14  # a line of an axis's 12-px labels
LIFELINE = "#bbb"


def sequence_diagram(log: pd.DataFrame, title: str = "") -> alt.LayerChart:
    """A message log (``model.messages()``) as a sequence diagram: one lifeline per agent, one arrow per message,
    time going down; messages sent in the same step are spread apart, each step tall enough for its busiest one
    to keep every label clear of the arrow above it. Arrows are coloured by enactment (its protocol and key value,
    in the order the enactments start), so that each can be followed through an interleaving (§5.2, §5.4)."""
    agents = list(dict.fromkeys([*log["sender"], *log["recipient"]]))
    rows = placed(log.to_dict("records"), agents)
    started: dict[str, float] = {}
    for row in rows:
        row["started"] = started.setdefault(row["enactment"], row["y"])
    x = lanes_axis(agents, right=len(agents) - 0.5)
    # the lifelines run from step 0 to a step past the last message, and so set the time axis from the data
    # (a panel's new enactment then changes only the data, and the chart on screen is updated in place)
    steps = max(row["y"] for row in rows) + 1
    lifelines = pd.DataFrame({"x": range(len(agents)), "start": 0.0, "end": steps})
    lanes = (
        alt.Chart(lifelines)
        .mark_rule(color=LIFELINE, strokeDash=[4, 3])
        .encode(x=x, y=alt.Y("start:Q"), y2=alt.Y2("end:Q"))
    )
    enactment = alt.Color(
        "enactment:N",
        sort=alt.EncodingSortField("started", op="min"),
        legend=alt.Legend(orient="bottom", title="enactment", columns=3, labelLimit=220),
    )
    lines, heads, labels = arrows(enactment)
    lines = lines.encode(tooltip=[alt.Tooltip("step:Q"), alt.Tooltip("enactment:N"), alt.Tooltip("instance:N")])
    size = {"width": lane_px(log["message"]) * len(agents), "height": round(step_px(rows) * steps) + 40}
    return viz.layer(lanes, lines, heads, labels, data=pd.DataFrame(rows), title=title, **size)


def placed(messages: list[dict], agents: list[str]) -> list[dict]:
    """The messages of a log (its rows, as ``Enactment.log`` holds them) placed on the diagram: ``y`` the step,
    the step's messages spread apart within it; ``x`` the sender's lane, ``x2`` the recipient's, ``mid`` the
    label's place, ``head`` and ``arrow`` the arrowhead's place and shape; ``key`` the enactment's key values
    and ``enactment`` its protocol and key values. In Python rather than pandas: a player places them anew at every
    step, and a dozen pandas operations on a few rows take several milliseconds."""
    lane = {agent: i for i, agent in enumerate(agents)}
    per_step = Counter(message["step"] for message in messages)
    before: Counter = Counter()  # the step's messages placed so far
    rows = []
    for message in messages:
        step, x, x2 = message["step"], lane[message["sender"]], lane[message["recipient"]]
        direction = (x2 > x) - (x2 < x)  # 1 to the right, -1 to the left
        rows.append(
            {
                **message,
                "y": step + before[step] / (per_step[step] + 1),
                "x": x,
                "x2": x2,
                "mid": (x + x2) / 2,
                "head": x2 - 0.06 * direction,
                "arrow": "triangle-right" if direction > 0 else "triangle-left",
                "key": message["enactment"],
                "enactment": f"{message['protocol']} {message['enactment']}",
            }
        )
        before[step] += 1
    return rows


def lanes_axis(lanes: list, right: float, header: tuple[float, str] | None = None) -> alt.X:
    """The x channel: lane i at x = i, named on top by ``lanes[i]`` (a text, or a list of lines of the same length
    for every lane); the scale runs from half a lane left of the first lane to ``right``. A ``header`` (x, text)
    names what stands right of the lanes."""
    lines = len(lanes[0]) if lanes and isinstance(lanes[0], list) else 1
    values, label = list(range(len(lanes))), f"{lanes}[datum.value]"
    if header is not None:
        values.append(header[0])
        text = header[1] if lines == 1 else [header[1]] + [""] * (lines - 1)
        label = f"datum.value < {len(lanes) - 0.5} ? {label} : {text!r}"
    # Vega writes a label's later lines below its first, towards the axis: the padding lifts them above it
    padding = 2 + AXIS_LINE_PX * (lines - 1)
    return alt.X(
        "x:Q",
        title=None,
        scale=alt.Scale(domain=[-0.5, right], nice=False),
        axis=alt.Axis(values=values, orient="top", grid=False, ticks=False, labelPadding=padding, labelExpr=label),
    )


def arrows(colour: alt.Color) -> tuple[alt.Chart, alt.Chart, alt.Chart]:
    """A message's arrow from its sender's lane to its recipient's, its head, and its name above it, from the
    layer's data (:func:`placed`); the lifelines' layer gives the x scale and axis (:func:`lanes_axis`)."""
    base = alt.Chart()
    y = alt.Y("y:Q", title="step", scale=alt.Scale(reverse=True, nice=False), axis=alt.Axis(tickMinStep=1))
    lines = base.mark_rule().encode(
        x=alt.X("x:Q"), x2=alt.X2("x2:Q"), y=y, color=colour, strokeWidth=alt.StrokeWidthValue(2)
    )
    heads = base.mark_point(filled=True, size=60, opacity=1).encode(
        x=alt.X("head:Q"), y=alt.Y("y:Q"), shape=alt.Shape("arrow:N", scale=None), color=colour
    )
    labels = base.mark_text(dy=-6, fontSize=10).encode(x=alt.X("mid:Q"), y=alt.Y("y:Q"), text=alt.Text("message:N"))
    return lines, heads, labels


def step_px(rows: list[dict]) -> float:
    """A step's height: the arrows of the busiest step 1 / (busiest + 1) of a step apart, each label clear of the
    arrow above it."""
    busiest = max(Counter(row["step"] for row in rows).values(), default=0)
    return MESSAGE_GAP_PX * (busiest + 1) if busiest > 1 else ONE_MESSAGE_STEP_PX


def lane_px(messages) -> int:
    """The room between two lifelines: enough for the longest message name."""
    return max(LANE_PX, LABEL_CHAR_PX * max(map(len, messages), default=0) + 16)


# --- the state view: an enactment as it stands, which its player redraws at every step (coordkit/views.py) --------

ENACTMENT_PX = 170  # the column right of the lifelines that names each message's enactment
KEY_INDENT_PX = 8  # the indent of its key values
HEADER_HALF_PX = 30  # half its header's width
SLOTS = [str(i) for i in range(10)]  # an enactment's colour: its place in the order they start, modulo 10
EVENT = "event"  # an external event's arrow (§5.4), drawn in viz.NEUTRAL
STATUSES = ["sent this step", "on its way", "received"]
DASHES = [[5, 3], [5, 3], [1, 0]]  # a message on its way is dashed, a received one solid
WIDTHS = [4, 2, 2]  # and this step's are thick
NOW = "#fff2b3"  # the band of the current step


@state_view(AhoyEnactment)
def ahoy_enactment_now(model: AhoyEnactment) -> alt.LayerChart:
    """The Ahoy agent's enactment so far (§5), drawn by :func:`enactment_now`, with §5.4's external event, once it
    has come, as an arrow into the Ahoy agent's lifeline; titled with the protocols, the step, whether every role
    has terminated (§3.1), the messages sent (by the Ahoy agent too) and those the adapter refused."""
    if model.running:
        state = "not done yet"
    else:
        state = "done: every role has terminated" if model.finished() else "stopped before every role terminated"
    by_ahoy = sum(entry["sender"] == AHOY for entry in model.log)
    title = [
        f"{PROTOCOL_NAMES[model.protocols]} · step {model.steps} of at most {model.max_steps} · {state}",
        f"messages sent: {len(model.log)} ({by_ahoy} by {AHOY}) · on their way: {len(model.in_transit)} · "
        f"refused by the adapter: {model.violations}",
    ]
    came = model.event_step is not None and model.steps >= model.event_step
    return enactment_now(model, title, events={AHOY: model.event_step} if came else {})


@state_view(EnactmentModel)
def kiko_enactment_now(model: EnactmentModel) -> alt.LayerChart:
    """A Kiko system's enactment so far (Ahoy §2.2), drawn by :func:`enactment_now`; titled with the protocols,
    the step, whether the run is over, the messages sent and those the adapters refused."""
    if model.running:
        state = "under way"
    else:
        state = "stopped at its step limit" if model.steps >= model.max_steps else "over: nobody has more to say"
    title = [
        f"{' + '.join(model.in_play)} · step {model.steps} of at most {model.max_steps} · {state}",
        f"messages sent: {len(model.log)} · on their way: {len(model.in_transit)} · "
        f"refused by the adapters: {model.violations}",
    ]
    return enactment_now(model, title)


def enactment_now(model: Enactment, title: list[str], events: dict[str, int] | None = None) -> alt.LayerChart:
    """An enactment at its current step, in :func:`sequence_diagram`'s idiom: every agent's lifeline from step 0,
    in the order of the roles it plays, so that nothing moves sideways as the run goes on; the messages sent so far,
    dashed while on their way (a message arrives 1 to ``max_delay`` steps after it is sent), thick if sent in this
    step, whose band is shaded; each message's enactment named by its key values in a column on the right, in the
    enactment's colour; and ``events`` ({agent: step}) as arrows from the edge into the agent's lifeline."""
    agents = lifeline_order(model)
    lane = lane_px(m.name for p in model.in_play.values() for m in p.messages)
    right = len(agents) - 0.5 + ENACTMENT_PX / lane  # the enactments' column is right of the lanes
    key_x = len(agents) - 0.5 + KEY_INDENT_PX / lane  # where its key values start
    travelling = {(str(delivery.instance), delivery.recipient) for delivery in model.in_transit}
    slots: dict[str, str] = {}
    rows = placed(model.log, agents)
    for row in rows:
        on_its_way = (row["instance"], row["recipient"]) in travelling
        row["status"] = STATUSES[0] if row["step"] == model.steps else STATUSES[1] if on_its_way else STATUSES[2]
        row["slot"] = slots.setdefault(row["enactment"], SLOTS[len(slots) % len(SLOTS)])
        row.update(kind="message", key_x=key_x)
    step = step_px(rows)
    top = -(MESSAGE_GAP_PX - 2) / step  # room above step 0's first arrow for its label
    rows += [event_arrow(agents.index(agent), at) for agent, at in (events or {}).items()]
    rows += [{"kind": "lifeline", "x": i, "y": top, "y2": model.steps + 1.0} for i in range(len(agents))]
    rows.append({"kind": "now", "x": -0.5, "x2": right, "y": model.steps + top, "y2": model.steps + 1 + top})
    labels = tuple(agent_label(model, agent) for agent in agents)
    layers = state_layers(labels, right, key_x + HEADER_HALF_PX / lane)
    size = {"width": round(lane * (right + 0.5)), "height": round(step * (model.steps + 1 - top))}
    return viz.layer(*layers, data=pd.DataFrame(rows), title=title, **size)


@cache
def state_layers(labels: tuple[tuple[str, str], ...], right: float, header: float) -> tuple[alt.Chart, ...]:
    """The state view's marks, for lanes named ``labels`` and the enactments' column up to ``right`` (headed at
    ``header``), each layer drawing the rows of its kinds: the band of this step ("now"), the lifelines, then the
    arrows ("message", "event") and the messages' key values. They depend on nothing else, so a player makes them once
    and each step is new data for them (each layer as a plain spec: :func:`plain`)."""

    def of(*kinds: str) -> list[alt.FilterTransform]:
        return [alt.FilterTransform(alt.FieldOneOfPredicate(field="kind", oneOf=list(kinds)))]

    x = lanes_axis([list(label) for label in labels], right, (header, "enactment"))
    y, y2 = alt.Y("y:Q"), alt.Y2("y2:Q")
    band = alt.Chart(transform=of("now")).mark_rect(color=NOW).encode(x=alt.X("x:Q"), x2=alt.X2("x2:Q"), y=y, y2=y2)
    lanes = alt.Chart(transform=of("lifeline")).mark_rule(color=LIFELINE, strokeDash=[4, 3]).encode(x=x, y=y, y2=y2)
    colour = alt.condition(
        alt.FieldEqualPredicate(field="kind", equal="event"),
        alt.value(viz.NEUTRAL),
        alt.Color("slot:N", scale=alt.Scale(domain=SLOTS, scheme="tableau10"), legend=None),
    )
    lines, heads, texts = (layer.properties(transform=of("message", "event")) for layer in arrows(colour))
    legend = alt.Legend(title="message", orient="bottom", columns=3, symbolSize=400)
    lines = lines.encode(
        strokeDash=alt.StrokeDash("status:N", scale=alt.Scale(domain=STATUSES, range=DASHES), legend=legend),
        strokeWidth=alt.StrokeWidth(
            "status:N", scale=alt.Scale(type="ordinal", domain=STATUSES, range=WIDTHS), legend=legend
        ),
        tooltip=[alt.Tooltip("step:Q"), alt.Tooltip("instance:N")],
    )
    keys = (
        alt.Chart(transform=of("message"))
        .mark_text(align="left", fontSize=10, limit=ENACTMENT_PX - KEY_INDENT_PX)
        .encode(x=alt.X("key_x:Q"), y=alt.Y("y:Q"), text=alt.Text("key:N"), color=colour)
    )
    return tuple(plain(layer) for layer in (band, lanes, lines, heads, texts, keys))


def plain(layer: alt.Chart) -> alt.Chart:
    """``layer`` made anew from its own Vega-Lite spec: the same layer, whose parts are dicts rather than Altair's
    schema objects. Altair deep-copies every layer four times a frame (twice for each layer chart it makes, in
    ``alt.layer`` and in ``to_dict``), and copies dicts at a fraction of the cost: half the frame's time."""
    spec = layer.to_dict(validate=False, context={"top_level": False})
    del spec["data"]  # none of its own: the layer chart's
    return alt.Chart(**{**spec, "encoding": alt.FacetedEncoding(**spec["encoding"])})


def event_arrow(lane: int, step: int) -> dict:
    """An external event's arrow at ``step``: from the diagram's edge, half a lane left, into ``lane``'s lifeline."""
    return {
        "kind": "event",
        "step": step,
        "y": step,
        "x": lane - 0.5,
        "x2": lane,
        "mid": lane - 0.25,
        "head": lane - 0.03,
        "arrow": "triangle-right",
        "message": EVENT,
        "status": STATUSES[2],
    }


def lifeline_order(model: Enactment) -> list[str]:
    """The agents in the order of the roles they play, protocol by protocol (Purchase: Buyer, Seller, Shipper)."""
    return list(dict.fromkeys(model.cast[p.name][role] for p in model.in_play.values() for role in p.roles))


def agent_label(model: Enactment, agent: str) -> tuple[str, str]:
    """An agent's name, and below it the roles it plays unless its name is its role's (("ahoy", "Buyer"),
    ("seller", ""))."""
    roles = [role for cast in model.cast.values() for role, name in cast.items() if name == agent]
    return (agent, "" if [agent.lower()] == [role.lower() for role in roles] else ", ".join(roles))
