"""Agora's charts: the weather demo's cumulative cost (§5.2), Figure 5a/5b (§5.3), D.3's cost breakdown beside the
paper's, and Figure 4's workflow as a graph of the protocols that connect agents."""

import math

import altair as alt
import networkx as nx
import pandas as pd

from coordkit.agora.costs import ACTIVITIES
from coordkit.agora.model import ARM_NAMES
from coordkit.agora.tasks import load_catalogue
from coordkit.papers import numbers

WINDOW = 100  # Figure 5: a moving window of 100 queries
POINTS = 250  # Figure 5: at most this many queries a curve, so that the chart stays light at any length
ARM_COLOURS = alt.Scale(domain=list(ARM_NAMES.values()), range=["#4c78a8", "#e45756"])
ACTIVITY_NAMES = {
    "natural_language": "natural language",
    "negotiation": "negotiation",
    "checks": "suitability checks",
    "implementation": "implementation",
}
MEASURES = ("cost per query (USD)", "LLM calls per query")


def _arm(frame: pd.DataFrame) -> pd.Series:
    return frame["protocol"].map(ARM_NAMES)


def weather(frame: pd.DataFrame) -> alt.LayerChart:
    """§5.2: cumulative cost over Alice's queries, both arms (mean over seeds); costs are estimates without an LLM."""
    mean = frame.groupby(["protocol", "query"], as_index=False)["cumulative_cost"].mean()
    mean["arm"] = _arm(mean)
    line = (
        alt.Chart()
        .mark_line(point=True)
        .encode(
            x=alt.X("query:Q", title="Alice's query", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("cumulative_cost:Q", title="cumulative cost (USD)"),
            color=alt.Color("arm:N", scale=ARM_COLOURS, title=None),
            tooltip=[alt.Tooltip("arm:N"), alt.Tooltip("query:Q"), alt.Tooltip("cumulative_cost:Q", format=".4f")],
        )
    )
    paper = numbers("agora-weather")
    subtitle = (
        f"the paper: {paper.value('negotiation_implementation_cost'):.3f} USD to negotiate and implement, "
        f"{paper.value('natural_language_exchange_cost'):.3f} USD a natural-language exchange"
    )
    title = alt.TitleParams("Alice and Bob: what the forecasts cost", subtitle=subtitle)
    return alt.layer(line, data=mean, width=420, height=240, title=title)


def moving(frame: pd.DataFrame, window: int = WINDOW, points: int = POINTS) -> pd.DataFrame:
    """Figure 5's curves: per arm and query, the mean over seeds of each seed's moving average over ``window``; a
    run longer than ``points`` queries is drawn at every k-th query only, ending at its last (:func:`sampled`)."""
    played = frame[frame["query"] > 0].sort_values(["protocol", "seed", "query"])
    columns = {"cost": MEASURES[0], "llm_turns": MEASURES[1]}
    rolled = played.groupby(["protocol", "seed"])[list(columns)].transform(
        lambda values: values.rolling(window, min_periods=1).mean()
    )
    rolled[["protocol", "query"]] = played[["protocol", "query"]]
    mean = rolled.groupby(["protocol", "query"], as_index=False)[list(columns)].mean()
    mean = mean[mean["query"].isin(sampled(mean["query"], points))]
    long = mean.rename(columns=columns).melt(["protocol", "query"], var_name="measure", value_name="value")
    long["arm"] = _arm(long)
    return long[["measure", "arm", "query", "value"]]


def sampled(queries: pd.Series, points: int = POINTS) -> list[int]:
    """At most ``points`` of ``queries``, evenly spaced and ending at the last: all of them when there are no more.
    A moving average over 100 queries barely moves from one query to the next, so a curve drawn at every k-th query
    looks the same, and a chart of 2,000 queries holds 1,000 rows, not the 8,000 past Altair's limit of 5,000."""
    distinct = sorted(queries.unique())
    step = max(1, math.ceil(len(distinct) / points))  # the smallest step that keeps at most `points`
    return distinct[::-1][::step][::-1]


def figure5(frame: pd.DataFrame, window: int = WINDOW) -> alt.FacetChart:
    """Figure 5a (cost per query) and 5b (LLM calls per query), moving averages over ``window`` queries."""
    line = (
        alt.Chart()
        .mark_line()
        .encode(
            x=alt.X("query:Q", title="query"),
            y=alt.Y("value:Q", title=None),
            color=alt.Color("arm:N", scale=ARM_COLOURS, title=None),
            tooltip=[alt.Tooltip("arm:N"), alt.Tooltip("query:Q"), alt.Tooltip("value:Q", format=".4g")],
        )
    )
    title = alt.TitleParams(
        "Figure 5: cost and LLM calls per query as protocols spread",
        subtitle=f"moving averages over {window} queries, mean over seeds",
    )
    return alt.FacetChart(
        data=moving(frame, window),
        spec=alt.layer(line, width=330, height=220),
        facet=alt.Facet("measure:N", title=None, sort=list(MEASURES)),
        columns=2,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(y="independent")),
        title=title,
    )


def cost_shares(frame: pd.DataFrame) -> alt.Chart:
    """D.3: Agora's cost by activity, the kit's shares beside the paper's (percent)."""
    agora = frame[(frame["protocol"] == "agora") & (frame["query"] > 0)]
    spent = pd.Series({a: agora[f"cost_{a}"].sum() for a in ACTIVITIES})
    paper = numbers("agora-network")
    kit = 100 * spent / spent.sum()
    printed = {a: paper.value("cost_share", "suitability_checks" if a == "checks" else a) for a in ACTIVITIES}
    rows = [
        {"activity": ACTIVITY_NAMES[a], "source": source, "share": share}
        for a in ACTIVITIES
        for source, share in (("the kit", float(kit[a])), ("the paper (D.3)", float(printed[a])))
    ]
    return (
        alt.Chart(pd.DataFrame(rows), width=420, height=200, title="Where Agora's money goes (D.3)")
        .mark_bar()
        .encode(
            y=alt.Y("activity:N", sort=list(ACTIVITY_NAMES.values()), title=None),
            yOffset=alt.YOffset("source:N"),
            x=alt.X("share:Q", title="share of the cost (%)"),
            color=alt.Color("source:N", scale=alt.Scale(range=["#4c78a8", "#bbbbbb"]), title=None),
            tooltip=[alt.Tooltip("activity:N"), alt.Tooltip("source:N"), alt.Tooltip("share:Q", format=".0f")],
        )
    )


def workflow_graph(edges: pd.DataFrame) -> alt.LayerChart:
    """Figure 4: the users (one node) and the servers, in columns by how many hops from the users they sit (a
    server another one depends on stands right of it), joined where a protocol carried queries (width: how many).
    Red edges are the multi-hop part: a server asking another in a protocol."""
    users = edges["sender"].str.startswith("user") | (edges["sender"] == "alice")
    grouped = edges.assign(sender=edges["sender"].where(~users, "users"))
    grouped = grouped.groupby(["sender", "receiver"], as_index=False).agg(
        uses=("uses", "sum"), tasks=("task", lambda tasks: ", ".join(sorted(set(tasks))))
    )
    agents = set(grouped["receiver"]) | set(grouped["sender"]) - {"users"}
    position = _columns(load_catalogue().graph(), agents)
    nodes = pd.DataFrame([{"agent": n.replace("_", " "), "x": x, "y": y} for n, (x, y) in position.items()])
    grouped["hop"] = grouped["sender"].map(lambda s: "user → server" if s == "users" else "server → server")
    ends = [
        grouped.assign(
            end=end, x=grouped[column].map(lambda n: position[n][0]), y=grouped[column].map(lambda n: position[n][1])
        )
        for end, column in ((0, "sender"), (1, "receiver"))
    ]
    lines = pd.concat(ends, ignore_index=True)
    lines["edge"] = lines["sender"] + " → " + lines["receiver"]
    hidden = {"axis": None}
    edge = (
        alt.Chart(lines)
        .mark_line(opacity=0.7)
        .encode(
            x=alt.X("x:Q", **hidden),
            y=alt.Y("y:Q", **hidden),
            detail=alt.Detail("edge:N"),
            order=alt.Order("end:Q"),
            strokeWidth=alt.StrokeWidth("uses:Q", scale=alt.Scale(range=[1, 8]), title="queries in a protocol"),
            color=alt.Color(
                "hop:N",
                scale=alt.Scale(domain=["user → server", "server → server"], range=["#9ecae9", "#e45756"]),
                title=None,
            ),
            tooltip=[alt.Tooltip("edge:N"), alt.Tooltip("tasks:N"), alt.Tooltip("uses:Q")],
        )
    )
    node = (
        alt.Chart(nodes)
        .mark_circle(size=200, color="#4c78a8", opacity=1)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), tooltip=[alt.Tooltip("agent:N")])
    )
    label = (
        alt.Chart(nodes)
        .mark_text(dx=12, align="left", fontSize=11)
        .encode(x=alt.X("x:Q"), y=alt.Y("y:Q"), text=alt.Text("agent:N"))
    )
    title = alt.TitleParams(
        "Figure 4: the workflow that emerged",
        subtitle="agents joined by the protocols they used; red: a server asking another",
    )
    return alt.layer(edge, node, label, width=560, height=360, title=title)


def _columns(dependencies: nx.DiGraph, servers: set[str]) -> dict[str, tuple[float, float]]:
    """Node positions: the users at column 0, a server one column right of the right-most server that asks it."""
    column = {}
    for server in nx.topological_sort(dependencies):
        askers = [column[asker] for asker in dependencies.predecessors(server)]
        column[server] = 1 + max(askers, default=0)
    shown = sorted(servers)
    position = {"users": (0.0, 0.0)}
    for level in sorted({column[s] for s in shown}):
        members = [s for s in shown if column[s] == level]
        for rank, server in enumerate(members):
            position[server] = (float(level), (len(members) - 1) / 2 - rank)
    return position
