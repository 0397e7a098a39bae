"""Agora's charts: the weather demo's cumulative cost (§5.2), Figure 5a/5b (§5.3), D.3's cost breakdown beside the
paper's, Figure 4's workflow as a graph of the protocols that connect agents, and the state view of a network as
it stands (:func:`network_now`)."""

import json
import math
from dataclasses import dataclass
from functools import cache, lru_cache

import altair as alt
import networkx as nx
import pandas as pd

from coordkit import viz
from coordkit.agora.costs import ACTIVITIES
from coordkit.agora.model import ARM_NAMES, AgoraModel, AgoraNetwork, WeatherDemo
from coordkit.agora.tasks import load_catalogue
from coordkit.papers import numbers
from coordkit.views import state_view

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
    return viz.layer(line, data=mean, width=420, height=240, title=title)  # a panel redraws it at each change


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
        spec=viz.layer(line, width=330, height=220),
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
    return viz.layer(edge, node, label, width=560, height=360, title=title)


def _columns(dependencies: nx.DiGraph, servers: set[str]) -> dict[str, tuple[float, float]]:
    """Node positions: the users at column 0, a server one column right of the right-most server that asks it."""
    column = hop_columns(dependencies)
    shown = sorted(servers)
    position = {"users": (0.0, 0.0)}
    for level in sorted({column[s] for s in shown}):
        members = [s for s in shown if column[s] == level]
        for rank, server in enumerate(members):
            position[server] = (float(level), (len(members) - 1) / 2 - rank)
    return position


def hop_columns(dependencies: nx.DiGraph) -> dict[str, int]:
    """Each server's column: 1 for a server only users ask, one right of the right-most server that asks it else."""
    column = {}
    for server in nx.topological_sort(dependencies):
        askers = [column[asker] for asker in dependencies.predecessors(server)]
        column[server] = 1 + max(askers, default=0)
    return column


# --- the state view: the network as it stands ---------------------------------------------------------------------

SO_FAR = "a protocol in use (so far)"
NATURAL_LANGUAGE, ROUTINE, FOUND, NEGOTIATED, LOST = (
    "this query: natural language",
    "this query: a protocol it had",
    "this query: a protocol it found",
    "this query: a new negotiation",
    "this query: lost",
)
EXCHANGES = alt.Scale(
    domain=[SO_FAR, NATURAL_LANGUAGE, ROUTINE, FOUND, NEGOTIATED, LOST],
    range=["#c8c8c8", "#e45756", "#4c78a8", "#54a24b", "#f58518", "#b279a2"],
)
LINE_WIDTHS = {SO_FAR: 1.0, NATURAL_LANGUAGE: 4.0, ROUTINE: 4.0, FOUND: 4.0, NEGOTIATED: 4.0, LOST: 4.0}  # px
NETWORK_WIDTH = 820
USERS_X, SERVER_X = 0.0, (0.42, 0.68, 0.94)  # where the users stand, and each column of servers
X_DOMAIN, Y_DOMAIN = [-0.11, 1.03], [-0.03, 1.09]  # room for the labels (left of the users, over the servers)
FEW = 10  # a run with this few users draws them as big as the servers; with this few servers too, on a shorter view
DOTS = {"user": "#777777", "server": viz.NEUTRAL}  # an agent's colour, by kind
SERVER_DOT, ASKER_DOT = 150, 60  # px²: a server's dot, and what the user who sent the latest query's adds
ASKER = viz.NEUTRAL  # the ring around that user
TEXT_SIZES = {"label": 11, "heading": 13}  # px: an agent's name, a column's heading
NAME_ROOM = 14  # px of height a user's name needs; with less, the names would touch, and only the asker's is shown


@state_view(AgoraNetwork)
@state_view(WeatherDemo)
def network_now(model: AgoraModel) -> alt.LayerChart:
    """The network as it stands (the state view, §5.3 and Figure 4): every agent at a fixed place, the users on
    the left and the servers in columns by how many hops they sit from the users; a grey line between an agent and
    a server it asks in a protocol (negotiated or found, §4.2), so that the protocols spread as the run goes; and
    the latest query's exchanges on top, each coloured by how it went."""
    layout = network_layout(*_agents(model))
    in_use = _protocols_in_use(model)
    rows = [
        *_dots(model, layout),
        *map(dict, layout.labels),
        *_user_names(model, layout),
        *_lines(in_use, layout),
        *_lines(_latest_hops(model), layout),
    ]
    # the rows as they are rather than a DataFrame, which Altair would write out and read back: a frame is drawn sooner
    return viz.layer(
        *_network_marks(),
        data={"values": rows},
        width=NETWORK_WIDTH,
        height=layout.height,
        title=alt.TitleParams(_network_headline(model, len(in_use)), subtitle=_latest_query(model)),
    )


@cache
def _network_marks() -> tuple[alt.Chart, ...]:
    """The view's four marks, over the rows of one table told apart by their ``part``: lines (``how`` the pair
    talked gives the colour, ``line_px`` the width), agents' dots (``dot``, ``fill``, ``ring``), labels over them
    (``text_px``) and users' names left of them. Made once: they are the same at every step of every run."""
    x = alt.X("x:Q", scale=alt.Scale(domain=X_DOMAIN, nice=False, zero=False), axis=None)
    y = alt.Y("y:Q", scale=alt.Scale(domain=Y_DOMAIN, nice=False, zero=False), axis=None)
    at = {"x": alt.X("x:Q"), "y": alt.Y("y:Q")}  # on the first mark's scales

    def part(name: str) -> alt.Chart:
        return alt.Chart().transform_filter(alt.FieldEqualPredicate(field="part", equal=name))

    lines = part("line").mark_line()
    lines = lines.encode(
        x=x,
        y=y,
        detail=alt.Detail("edge:N"),
        order=alt.Order("end:Q"),
        color=alt.Color("how:N", scale=EXCHANGES, title=None),
        strokeWidth=alt.StrokeWidth("line_px:Q", scale=None),
        tooltip=[alt.Tooltip("edge:N"), alt.Tooltip("tasks:N"), alt.Tooltip("how:N")],
    )
    dots = part("agent").mark_circle(opacity=1, strokeWidth=2)
    dots = dots.encode(
        size=alt.Size("dot:Q", scale=None),
        fill=alt.Fill("fill:N", scale=None),
        stroke=alt.Stroke("ring:N", scale=None),
        tooltip=[alt.Tooltip("agent:N"), alt.Tooltip("llm:N", title="LLM")],
        **at,
    )
    labels = part("label").mark_text(baseline="bottom", dy=-6)
    labels = labels.encode(text=alt.Text("label:N"), size=alt.Size("text_px:Q", scale=None), **at)
    names = part("user_name").mark_text(align="right", baseline="middle", dx=-12, fontSize=TEXT_SIZES["label"])
    names = names.encode(text=alt.Text("label:N"), **at)
    return lines, dots, labels, names


@dataclass(frozen=True)
class Layout:
    """Where the agents of a run stand (``place``: agent → x, y, and ``kind``: user or server), the ``labels``'
    rows of the view's table (the servers' names, each column's heading), the users' ``names``' rows (none when
    they would not fit), the area of a user's dot and the view's height."""

    place: dict[str, tuple[float, float]]
    kind: dict[str, str]
    llm: dict[str, str]
    labels: tuple[dict, ...]
    names: tuple[dict, ...]
    user_dot: int
    height: int


def _agents(model: AgoraModel) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The run's users and servers, each as (name, LLM)."""
    users = tuple((user.name, user.llm_model) for user in model.user_agents)
    return users, tuple((server.name, server.llm_model) for server in model.server_agents.values())


@lru_cache(maxsize=8)
def network_layout(users: tuple[tuple[str, str], ...], servers: tuple[tuple[str, str], ...]) -> Layout:
    """Where each agent stands, from the run's agents (name, LLM) alone, so that it stays put through the run: the
    users top to bottom in a column on the left, each named left of its dot when the names fit (:func:`names_fit`),
    the servers right of them (:func:`server_places`); a heading over each column. A run with few users draws them
    as big as the servers; with few servers too (the weather demo), on a shorter view."""
    place = {name: (USERS_X, _spread(rank, len(users))) for rank, (name, _) in enumerate(users)}
    place |= server_places(load_catalogue().graph().subgraph([name for name, _ in servers]))
    kind = {**{name: "user" for name, _ in users}, **{name: "server" for name, _ in servers}}
    server_names = [(*place[name], name.replace("_", " "), TEXT_SIZES["label"]) for name, _ in servers]
    top = Y_DOMAIN[1] - 0.03
    headings = [
        (USERS_X, top, _count(len(users), "user"), TEXT_SIZES["heading"]),
        (SERVER_X[0], top, _count(len(servers), "server"), TEXT_SIZES["heading"]),
    ]
    labels = tuple(
        {"part": "label", "x": x, "y": y, "label": text, "text_px": size}
        for x, y, text, size in server_names + headings
    )
    few = len(users) <= FEW
    height = 200 if few and len(servers) <= FEW else 440
    names = tuple(_user_name(name, place) for name, _ in users) if names_fit(len(users), height) else ()
    return Layout(place, kind, dict(users + servers), labels, names, user_dot=SERVER_DOT if few else 22, height=height)


def names_fit(users: int, height: int) -> bool:
    """Whether ``users`` names, one a user down the view's ``height`` (px), leave each the room it needs."""
    return height / (Y_DOMAIN[1] - Y_DOMAIN[0]) / users >= NAME_ROOM


def _user_names(model: AgoraModel, layout: Layout) -> list[dict]:
    """Every user's name, if they fit; else only the name of the user who sent the latest query (none before it)."""
    if layout.names:
        return list(map(dict, layout.names))
    asker = model.latest["user"]
    return [_user_name(asker, layout.place)] if asker else []


def _user_name(user: str, place: dict[str, tuple[float, float]]) -> dict:
    """A row of the view's table: ``user``'s name, left of its dot."""
    x, y = place[user]
    return {"part": "user_name", "x": x, "y": y, "label": user}


def server_places(dependencies: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Where each server stands: in its column of :func:`hop_columns` (Figure 4); the servers only users ask spread
    top to bottom, those of one workflow (a weakly connected part of the dependencies) together, in the order of
    the graph's nodes; a server that servers ask at the mean height of those that ask it, so that a workflow's
    lines run across the view rather than up and down it."""
    column = hop_columns(dependencies)
    order = {name: rank for rank, name in enumerate(dependencies)}
    workflow = {
        name: min(order[member] for member in part)
        for part in nx.weakly_connected_components(dependencies)
        for name in part
    }
    first = sorted((name for name in dependencies if column[name] == 1), key=lambda name: (workflow[name], order[name]))
    place = {name: (SERVER_X[0], _spread(rank, len(first))) for rank, name in enumerate(first)}
    for name in nx.topological_sort(dependencies):
        if column[name] > 1:
            heights = [place[asker][1] for asker in dependencies.predecessors(name)]
            place[name] = (SERVER_X[column[name] - 1], sum(heights) / len(heights))
    return place


def _spread(rank: int, count: int) -> float:
    """The height of the ``rank``-th of ``count`` agents in a column spread top to bottom over [0, 1]."""
    return 1 - (rank + 0.5) / count


def _dots(model: AgoraModel, layout: Layout) -> list[dict]:
    """Each agent's dot; the user who sent the latest query (none before the first) bigger, in a ring."""
    asker = model.latest["user"]
    return [
        {
            "part": "agent",
            "x": x,
            "y": y,
            "agent": name,
            "llm": layout.llm[name],
            "dot": (layout.user_dot if layout.kind[name] == "user" else SERVER_DOT)
            + (ASKER_DOT if name == asker else 0),
            "fill": DOTS[layout.kind[name]],
            "ring": ASKER if name == asker else None,
        }
        for name, (x, y) in layout.place.items()
    ]


def _protocols_in_use(model: AgoraModel) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """Each (agent, server) pair where the agent has adopted a protocol for a task it asks the server (a user's, or
    a server's towards a server it depends on), with those tasks."""
    pairs: dict[tuple[str, str], list[str]] = {}
    for agent in (*model.user_agents, *model.server_agents.values()):
        for (server, task), relation in agent.relations.items():
            if relation.document is not None:
                pairs.setdefault((agent.name, server), []).append(task)
    return {pair: (SO_FAR, sorted(tasks)) for pair, tasks in pairs.items()}


def _latest_hops(model: AgoraModel) -> dict[tuple[str, str], tuple[str, list[str]]]:
    """The latest query's hops, from the transcript: each (sender, receiver) pair that exchanged messages, with how
    the pair talked (:func:`_how_it_went`); the user's hop is lost if the query was."""
    talks: dict[tuple[str, str], list[str]] = {}
    for exchange in model.latest_exchanges():
        talks.setdefault((exchange.sender, exchange.receiver), []).append(_kind_of(model, exchange))
    latest = model.latest
    first = (latest["user"], latest["server"])
    hops = {pair: (_how_it_went(kinds), []) for pair, kinds in talks.items()}
    if latest["mode"] == "lost":
        hops[first] = (LOST, [])
    if first in hops:
        hops[first] = (hops[first][0], [latest["task"]])
    return hops


def _kind_of(model: AgoraModel, exchange) -> str:
    """What one message was: a look at ``/.wellknown``, natural language, a negotiation's turn, or a protocol's."""
    if exchange.path != "/":
        return "look"
    hash = json.loads(exchange.request)["protocolHash"]
    if hash is None:
        return "natural language"
    return "negotiation" if hash == model.negotiation_document.hash else "protocol"


def _how_it_went(kinds: list[str]) -> str:
    """How a pair talked in one query, from its messages in order: it negotiated; else it found a protocol (its last
    look was followed by a message in a protocol, or came after a natural-language answer that asked it to
    negotiate and led to none, D.1); else it stayed in (or fell back to) natural language; else it used a protocol
    it had; else, having only looked, it was lost."""
    if "negotiation" in kinds:
        return NEGOTIATED
    if "look" in kinds:
        last = len(kinds) - 1 - kinds[::-1].index("look")
        if "protocol" in kinds[last:] or "natural language" in kinds[:last]:
            return FOUND
    if "natural language" in kinds:
        return NATURAL_LANGUAGE
    return ROUTINE if "protocol" in kinds else LOST


def _lines(pairs: dict[tuple[str, str], tuple[str, list[str]]], layout: Layout) -> list[dict]:
    """Two rows (its ends) per pair: the sender's place and the receiver's, how the pair talked and its tasks."""
    return [
        {
            "part": "line",
            "x": layout.place[agent][0],
            "y": layout.place[agent][1],
            "edge": f"{sender} → {receiver}",
            "end": end,
            "how": how,
            "tasks": ", ".join(tasks),
            "line_px": LINE_WIDTHS[how],
        }
        for (sender, receiver), (how, tasks) in pairs.items()
        for end, agent in enumerate((sender, receiver))
    ]


def _network_headline(model: AgoraModel, pairs: int) -> str:
    """The step and the running counts: the protocols negotiated (the documents in the databases), the pairs of
    agents that use one, and the cost so far."""
    use = "uses" if pairs == 1 else "use"
    return (
        f"query {model.steps:,} of {len(model.plan):,} · {_count(model.latest['protocols'], 'protocol')} negotiated · "
        f"{_count(pairs, 'pair')} of agents {use} one · {model.costs.ledger.spent_usd:.2f} USD so far"
    )


def _latest_query(model: AgoraModel) -> list[str]:
    """Two lines: who asked whom for what in the latest query and how it went; the share of the queries so far that
    routines answered (and, with no LLM, that the costs are estimates)."""
    latest = model.latest
    estimated = " · costs estimated: rule-based stand-ins, no LLM" if model.llm is None else ""
    if not latest["user"]:
        return ["before the first query: press Step or Play (one step is one query)", estimated.removeprefix(" · ")]
    how = {"protocol": "through routines", "natural_language": "in natural language", "lost": "lost"}[latest["mode"]]
    negotiated = f" ({_count(latest['negotiated'], 'negotiation')} on the way)" if latest["negotiated"] else ""
    server = latest["server"].replace("_", " ")
    share = model.modes["protocol"] / model.steps
    return [
        f"query {latest['query']:,}: {latest['user']} asked {server} for {latest['task']}, {how}{negotiated}",
        f"routines have answered {share:.0%} of the queries so far{estimated}",
    ]


def _count(number: int, thing: str) -> str:
    return f"{number:,} {thing}{'' if number == 1 else 's'}"
