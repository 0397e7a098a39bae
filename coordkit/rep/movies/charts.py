"""Movie-scheduling charts: the paper's Figure 3 redrawn beside its numbers, and one run at a glance."""

import functools

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd
import scipy.sparse as sp

from coordkit import viz
from coordkit.papers import numbers
from coordkit.rep.movies.model import PROTOCOL_NAMES, READING_NAMES, MovieScheduling
from coordkit.rep.movies.policies import PRICE, TIME
from coordkit.rep.movies.preferences import EVENING, PRICE_RANGE
from coordkit.views import state_view

REGIME_NAMES = {"complete": "fully connected", "sparse_30": "30% sparse", "sparse_60": "60% sparse"}
MAX_EDGES_DRAWN = 4000  # Altair's row limit stays on: a denser network is drawn with every k-th edge
STAR = (  # a five-pointed star as a Vega symbol path (the unit square around the origin)
    "M0,-1L0.2245,-0.309L0.9511,-0.309L0.3633,0.118L0.5878,0.809L0,0.382"
    "L-0.5878,0.809L-0.3633,0.118L-0.9511,-0.309L-0.2245,-0.309Z"
)
VOTES = alt.Scale(domain=["joins", "declines"], range=["#4c78a8", "#e45756"])
PANEL = 250  # the round view's three panels, side by side in the notebook's column


CONSENSUS = "consensus (%)"


def _threshold_rule(percent: float) -> alt.Chart:
    rule = alt.Chart(pd.DataFrame({CONSENSUS: [percent]})).mark_rule(strokeDash=[4, 3], color="#888888")
    return rule.encode(y=alt.Y(f"{CONSENSUS}:Q"))


def figure3_sparsity(rounds: pd.DataFrame, threshold: float = 0.7) -> alt.HConcatChart:
    """Fig. 3 (left): mean consensus over rounds per regime, one panel per protocol. ★ marks the first round the
    mean reaches ``threshold``; ◇ the paper's convergence rounds (REP) and — the paper's A2A maximum."""
    mean = rounds.groupby(["protocol", "regime", "round"], as_index=False)["consensus"].mean()
    mean[CONSENSUS] = 100 * mean["consensus"]
    mean["regime"] = mean["regime"].map(REGIME_NAMES)
    paper = numbers("rep-movies-fig3-sparsity")
    colour = alt.Color("regime", scale=alt.Scale(domain=list(REGIME_NAMES.values())), title="network")
    panels = []
    for protocol in [p for p in PROTOCOL_NAMES if p in set(mean["protocol"])]:
        data = mean[mean["protocol"] == protocol]
        base = alt.Chart(data).encode(
            x=alt.X("round:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y(f"{CONSENSUS}:Q", scale=alt.Scale(domain=[0, 100])),
            color=colour,
        )
        layers = [_threshold_rule(100 * threshold), base.mark_line(), _stars(data, threshold, colour)]
        if protocol == "a2a":
            layers.append(_paper_maximum(paper.value("max_consensus", "a2a")))
        else:
            layers.append(_paper_rounds(paper, 100 * threshold, colour))
        panels.append(viz.layer(*layers, title=viz.title(PROTOCOL_NAMES[protocol], 210), width=210, height=240))
    title = alt.TitleParams(
        "Consensus over rounds, 20 agents (mean over seeds)",
        subtitle=f"★ the kit reaches {threshold:.0%}; ◇ the paper's convergence rounds; dashes: the paper's A2A best",
    )
    return viz.hconcat(*panels, title=title).resolve_scale(color="shared")


def _stars(data: pd.DataFrame, threshold: float, colour: alt.Color) -> alt.Chart:
    reached = data[data["consensus"] >= threshold].groupby("regime", as_index=False).first()
    return (
        alt.Chart(reached)
        .mark_point(shape=STAR, size=220, filled=True)
        .encode(
            x=alt.X("round:Q"),
            y=alt.Y(f"{CONSENSUS}:Q"),
            color=colour,
            tooltip=[alt.Tooltip("regime"), alt.Tooltip("round")],
        )
    )


def _paper_rounds(paper, percent: float, colour: alt.Color) -> alt.Chart:
    rows = [
        {"regime": name, "round": paper.value("convergence_round", f"rep {regime}"), CONSENSUS: percent}
        for regime, name in REGIME_NAMES.items()
    ]
    return (
        alt.Chart(pd.DataFrame(rows))
        .mark_point(shape="diamond", size=120, filled=False, strokeWidth=2)
        .encode(
            x=alt.X("round:Q"),
            y=alt.Y(f"{CONSENSUS}:Q"),
            color=colour,
            tooltip=[alt.Tooltip("regime"), alt.Tooltip("round")],
        )
    )


def _paper_maximum(percent: float) -> alt.Chart:
    data = pd.DataFrame({CONSENSUS: [percent], "label": [f"paper's A2A maximum, {percent:g}%"]})
    rule = alt.Chart(data).mark_rule(strokeDash=[8, 4], color="black").encode(y=alt.Y(f"{CONSENSUS}:Q"))
    return rule + rule.mark_text(align="left", dx=4, dy=-6, x=0).encode(text=alt.Text("label"))


def readings(rounds: pd.DataFrame) -> alt.VConcatChart:
    """REP numerical under each reading (columns): the mean consensus (top) and the agents' mean spread around
    the group's proposal (bottom: of their own proposals, or of their thresholds) over rounds, a line per regime."""
    rep = rounds[rounds["protocol"] == "rep_numerical"]
    mean = rep.groupby(["reading", "regime", "round"], as_index=False)[["consensus", "spread"]].mean()
    mean[CONSENSUS] = 100 * mean["consensus"]
    mean["regime"] = mean["regime"].map(REGIME_NAMES)
    colour = alt.Color("regime", scale=alt.Scale(domain=list(REGIME_NAMES.values())), title="network")
    x = alt.X("round:Q", axis=alt.Axis(tickMinStep=1))
    consensus = alt.Y(f"{CONSENSUS}:Q", scale=alt.Scale(domain=[0, 100]))
    spread = alt.Y("spread:Q", title="spread of own θ")
    width = 220  # three readings side by side fit the notebook's column
    rows = [
        viz.hconcat(
            *(
                alt.Chart(mean[mean["reading"] == reading], width=width, height=170, title=heading(reading))
                .mark_line()
                .encode(x=x, y=y, color=colour)
                for reading in READING_NAMES
            )
        ).resolve_scale(y="shared")  # the same axis in every reading: Table 2's spread is 0 on it
        for y, heading in (
            (consensus, lambda reading: viz.title(READING_NAMES[reading], width)),
            (spread, lambda reading: ""),
        )
    ]
    title = alt.TitleParams(
        "REP numerical, 20 agents, under each reading of the paper",
        subtitle="mean over seeds; under Table 2 every agent adopts the median, so the network cannot matter",
    )
    return viz.vconcat(*rows, title=title).resolve_scale(color="shared")


def figure3_scaling(runs: pd.DataFrame) -> alt.LayerChart:
    """Fig. 3 (right): rounds to converge against the population (log scale) — the median of the runs that
    converge and each run faint — shaded where a protocol fails to converge in most runs (DNF), beside the
    paper's range for REP (grey)."""
    runs = runs.assign(protocol=runs["protocol"].map(PROTOCOL_NAMES))
    sizes = np.sort(runs["population"].unique())
    share = runs.groupby(["protocol", "population"], as_index=False)["converged"].mean()
    failing = share[share["converged"] < 0.5]
    dnf = failing.assign(**_bands(sizes, failing["population"]))
    converged = runs[runs["converged"]]
    median = converged.groupby(["protocol", "population"], as_index=False)["convergence_round"].median()
    median = share.merge(median, how="left").sort_values(["protocol", "population"])
    median["stretch"] = (median["converged"] < 0.5).groupby(median["protocol"]).cumsum()  # a DNF breaks a line
    median = median[median["converged"] >= 0.5]
    paper = numbers("rep-movies-fig3-scaling")
    low, high = (float(bound) for bound in str(paper.value("rounds_to_converge", "rep")).split("-"))
    band = pd.DataFrame({"low": [low], "high": [high], "label": [f"paper, REP: {low:g}-{high:g} rounds"]})

    scale = alt.Scale(type="log", domain=[float(sizes[0]), float(sizes[-1])], nice=False)
    x = alt.X("population:Q", scale=scale, title="agents")
    y = alt.Y("convergence_round:Q", title="rounds to reach 70% consensus", scale=alt.Scale(domainMin=0))
    protocols = [name for name in PROTOCOL_NAMES.values() if name in set(runs["protocol"])]
    colour = alt.Color("protocol", scale=alt.Scale(domain=protocols), legend=alt.Legend(symbolOpacity=1))
    layers = [
        alt.Chart(band).mark_rect(color="#bbbbbb", opacity=0.25).encode(y=alt.Y("low:Q"), y2=alt.Y2("high:Q")),
        alt.Chart(band)
        .mark_text(align="left", baseline="top", dx=4, dy=4, x=0)
        .encode(y=alt.Y("high:Q"), text=alt.Text("label")),
        alt.Chart(dnf)
        .mark_rect(opacity=0.18)
        .encode(
            x=alt.X("low:Q", scale=scale),
            x2=alt.X2("high:Q"),
            color=colour,
            tooltip=[alt.Tooltip("protocol"), alt.Tooltip("population")],
        ),
        alt.Chart(converged).mark_circle(opacity=0.35, size=30).encode(x=x, y=y, color=colour),
        alt.Chart(median)
        .mark_line(point=True)
        .encode(
            x=x,
            y=y,
            color=colour,
            detail=alt.Detail("stretch:N"),
            tooltip=[alt.Tooltip("protocol"), alt.Tooltip("population"), alt.Tooltip("convergence_round")],
        ),
    ]
    subtitle = (
        f"paper: A2A {paper.text('rounds_to_converge', 'a2a')} up to 20 agents, "
        f"{paper.text('rounds_to_converge', 'a2a beyond 20 agents')} beyond. "
        "Lines: median of the runs that converge; shaded: most runs never converge (DNF)."
    )
    title = alt.TitleParams("Rounds to converge as the population grows", subtitle=subtitle)
    return viz.layer(*layers, title=title).properties(width=560, height=280)


def _bands(sizes: np.ndarray, dnf_sizes: pd.Series) -> dict:
    """A shaded band around each DNF population, out to the geometric midpoints with its neighbours."""
    edges = np.sqrt(sizes[1:] * sizes[:-1])
    low = dict(zip(sizes, np.concatenate([[sizes[0]], edges])))
    high = dict(zip(sizes, np.concatenate([edges, [sizes[-1]]])))
    return {"low": dnf_sizes.map(low).to_numpy(), "high": dnf_sizes.map(high).to_numpy()}


def round_view(model: MovieScheduling) -> alt.HConcatChart:
    """One run at a glance (the notebook panel's chart): the network, each agent coloured by whether it would
    join the final proposal; the map of the agents' own proposals around the group's; the consensus over rounds."""
    graph = model.space.G
    layout = nx.spring_layout(graph, seed=0) if len(graph) <= 300 else nx.circular_layout(graph)
    nodes = pd.DataFrame(
        {
            "agent": list(layout),
            "x": [float(xy[0]) for xy in layout.values()],
            "y": [float(xy[1]) for xy in layout.values()],
            "vote": ["joins" if goer.votes else "declines" for goer in model.goers],
            "ideal price ($)": np.round(model.preferences.price, 2),
            "ideal start (h)": np.round(model.preferences.time, 2),
        }
    )
    drawn = model.edges[:: max(1, -(-len(model.edges) // MAX_EDGES_DRAWN))]
    edges = pd.DataFrame(
        {
            "x": nodes["x"].to_numpy()[drawn[:, 0]],
            "y": nodes["y"].to_numpy()[drawn[:, 0]],
            "x2": nodes["x"].to_numpy()[drawn[:, 1]],
            "y2": nodes["y"].to_numpy()[drawn[:, 1]],
        }
    )
    bare = {"axis": None, "scale": alt.Scale(padding=6)}  # no dot past the edge: the chart keeps its size
    lines = (
        alt.Chart(edges)
        .mark_rule(opacity=0.15, color="#888888")
        .encode(x=alt.X("x:Q", **bare), y=alt.Y("y:Q", **bare), x2=alt.X2("x2:Q"), y2=alt.Y2("y2:Q"))
    )
    dots = (
        alt.Chart(nodes)
        .mark_circle(size=50, opacity=0.9)
        .encode(
            x=alt.X("x:Q", **bare),
            y=alt.Y("y:Q", **bare),
            color=alt.Color("vote", scale=VOTES, title="at the final proposal"),
            tooltip=[
                alt.Tooltip("agent"),
                alt.Tooltip("vote"),
                alt.Tooltip("ideal price ($)"),
                alt.Tooltip("ideal start (h)"),
            ],
        )
    )
    title = [f"{model.population} agents, {len(model.edges)} edges"]
    if len(drawn) < len(model.edges):
        title.append(f"every {len(model.edges) // len(drawn)}th edge drawn")
    network = viz.layer(lines, dots, width=PANEL, height=PANEL, title=viz.title(title, PANEL))
    independent_colours = alt.Resolve(scale=alt.ScaleResolveMap(color="independent"))
    return viz.hconcat(
        network, proposals_map(model), consensus_over_rounds(model, width=PANEL), resolve=independent_colours
    )


def proposals_map(model: MovieScheduling) -> alt.LayerChart:
    """Price × start time after the last round: each agent's own proposal θ_i (coloured by its vote on the
    group's proposal), its ideal (grey) and the group's proposal (★). Under the Table 2 reading every agent holds
    the group's proposal; under the §7 reading the proposals stay apart, the more so the sparser the network."""
    agents = pd.DataFrame(
        {
            "price ($)": [goer.proposal[PRICE] for goer in model.goers],
            "start (h)": [goer.proposal[TIME] for goer in model.goers],
            "vote": ["joins" if goer.votes else "declines" for goer in model.goers],
            "ideal price ($)": model.preferences.price,
            "ideal start (h)": model.preferences.time,
        }
    )
    prices, times = alt.Scale(domain=list(PRICE_RANGE)), alt.Scale(domain=list(EVENING))
    x = alt.X("price ($):Q", scale=prices, title="price ($)")
    y = alt.Y("start (h):Q", scale=times, title="start (h)")
    ideals = (
        alt.Chart(agents)
        .mark_point(size=18, color="#aaaaaa", opacity=0.6)
        .encode(x=alt.X("ideal price ($):Q", scale=prices), y=alt.Y("ideal start (h):Q", scale=times))
    )
    own = (
        alt.Chart(agents)
        .mark_circle(size=45, opacity=0.75)
        .encode(
            x=x,
            y=y,
            color=alt.Color("vote", scale=VOTES, legend=None),
            tooltip=[alt.Tooltip(column) for column in agents.columns[:3]],
        )
    )
    group = pd.DataFrame({"price ($)": [model.group_price], "start (h)": [model.group_time]})
    star = alt.Chart(group).mark_point(shape=STAR, size=260, filled=True, color="black").encode(x=x, y=y)
    lines = [f"agents' own {_own(model)}", f"★ the group's, spread {model.spread:.2f}"]
    return viz.layer(ideals, own, star, width=PANEL, height=PANEL, title=viz.title(lines, PANEL))


def consensus_over_rounds(model: MovieScheduling, width: int = 420) -> alt.LayerChart:
    """The share of agents who would join each round's group proposal, with the threshold and ★ at convergence."""
    frame = model.frame().assign(**{CONSENSUS: lambda f: 100 * f["consensus"]})
    summary = model.summary()
    reached = summary["convergence_round"]
    verdict = f"converged at round {reached:.0f}" if summary["converged"] else "never converged"
    lines = [  # short lines, none wider than the chart
        f"{PROTOCOL_NAMES[model.protocol]}: {summary['final_consensus']:.0%} join",
        verdict,
        f"${model.group_price:.2f} at {model.group_time:.2f} h",
    ]
    line = (
        viz.lines(frame, "round", CONSENSUS, title=viz.title(lines, width))
        .mark_line(color=viz.NEUTRAL, point=alt.OverlayMarkDef(color=viz.NEUTRAL))  # not the "joins" blue
        .encode(y=alt.Y(CONSENSUS, scale=alt.Scale(domain=[0, 100])))
    )
    layers = [_threshold_rule(100 * model.convergence_threshold), line]
    if summary["converged"]:
        star = frame[frame["round"] == reached]
        layers.append(
            alt.Chart(star)
            .mark_point(shape=STAR, size=260, filled=True, color="black")
            .encode(x=alt.X("round:Q"), y=alt.Y(f"{CONSENSUS}:Q"))
        )
    return viz.layer(*layers, width=width, height=320)


# --- the state view: the network and the proposals as they stand -----------------------------------------------

# what a round's message said: its sender's stage-1 decision, taken at its own proposal θ_i, or under the thresholds
# reading at the group's proposal of the round before (ThresholdParticipation)
SAID = {
    "own proposal": ("said: joins at own proposal", "said: declines at own proposal"),
    "thresholds": ("said: accepts last proposal", "said: declines last proposal"),  # the group's, last round
}


@functools.cache
def network_marks(reading: str) -> alt.Scale:
    """What the network draws under ``reading``, each in its colour: an agent by its vote on the group's proposal
    (VOTES' colours); a message, on its sender's half of a link, by what it said, or that it went unread."""
    said = SAID["thresholds" if reading == "thresholds" else "own proposal"]
    return alt.Scale(
        domain=[
            "agent joins the group's proposal",
            "agent declines it",
            *said,
            "not read (A2A's attention)",
            "nothing said yet",
        ],
        range=[*VOTES.range, "#9ecae9", "#ff9d98", "#eeca3b", "#dddddd"],
    )


NIGHT = 330  # px: the network's square and the map's
DIGITS = 3  # decimals a position keeps: a fraction of a pixel, and half the spec of all of them
SEATS = alt.Scale(domain=[-1.08, 1.08], nice=False)  # the ring, of radius 1, with room for the dots
# what the map draws, each in its colour and shape: the agents' own proposals by their vote (VOTES' colours), their
# ideals, and the group's proposal now and before
MAP_POINTS = ["joins", "declines", "ideal", "the group's, now", "the group's, before"]
MAP_COLOURS = [*VOTES.range, "#bbbbbb", "black", "black"]
MAP_SHAPES = ["circle", "circle", "circle", STAR, "circle"]


def _own(model: MovieScheduling) -> str:
    """What the agents' θ_i are: their own proposals, or under the thresholds reading their thresholds."""
    return "thresholds" if model.reading == "thresholds" else "proposals"


def _map_title(model: MovieScheduling) -> list[str]:
    return [f"own {_own(model)}, ideals in grey", "★ the group's proposal, • before"]


@state_view(MovieScheduling)
def movie_night_now(model: MovieScheduling) -> alt.HConcatChart:
    """The round as it stands (the state view, REP §7): the network, agents on a ring in the small world's
    order, each coloured by whether it would join the group's proposal, and each link split in two halves, each
    coloured by the message its end's agent sent along it this round; beside it, the price × start-time map of the
    agents' own proposals, their ideals, and the group's proposal (★) with the ones before it."""
    return viz.hconcat(
        _network_now(model),
        _proposals_now(model),
        title=viz.title(_night_headline(model), viz.TITLE_LIMIT),
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="independent")),
    )


def _night_headline(model: MovieScheduling) -> str:
    """The round, the protocol, and who would join the group's proposal."""
    hours, minutes = divmod(round(model.group_time * 60), 60)
    return (
        f"round {model.steps} of {model.rounds} · {PROTOCOL_NAMES[model.protocol]} · {model.participants} of "
        f"{model.population} would join the group's proposal, ${model.group_price:.2f} at {hours:02d}:{minutes:02d} "
        f"({model.convergence_threshold:.0%} needed)"
    )


def _network_now(model: MovieScheduling) -> alt.Chart:
    """The agents on their ring and this round's messages on the links, in one mark: every half link is a rule
    from its sender to the link's middle, every agent a rule too short to see whose round caps make it a dot (two
    marks would need a layer, which costs the view as much again to build)."""
    messages, agents = _message_rules(model), _agent_rules(model)
    network = "a small world" if model.network == "small_world" else "complete"
    title = [
        f"{model.population} agents, {len(model.edges)} links",
        f"{network}, {model.sparsity:.0%} of links removed",
    ]
    legend = alt.Legend(title=["agents, and messages on", "the sender's half of a link"], symbolType="stroke")
    return (
        alt.Chart(
            pd.concat([messages, agents], ignore_index=True), width=NIGHT, height=NIGHT, title=viz.title(title, NIGHT)
        )
        .mark_rule(strokeCap="round")
        .encode(
            x=alt.X("x:Q", scale=SEATS, axis=None),
            y=alt.Y("y:Q", scale=SEATS, axis=None),
            x2=alt.X2("x2:Q"),
            y2=alt.Y2("y2:Q"),
            color=alt.Color("what:N", scale=network_marks(model.reading), legend=legend),
            strokeWidth=alt.StrokeWidth("width:Q", scale=None),
            tooltip=[alt.Tooltip("agent:Q"), alt.Tooltip("what:N"), alt.Tooltip("message:N")],
        )
    )


@functools.lru_cache(maxsize=8)
def ring(population: int) -> tuple[np.ndarray, np.ndarray]:
    """Where each agent sits: on a circle of radius 1, clockwise from the top, in the order of the small world's
    ring (a fixed layout: the same for every round of a run, and for every run of that many agents)."""
    angle = np.pi / 2 - 2 * np.pi * np.arange(population) / population
    return np.cos(angle).round(DIGITS), np.sin(angle).round(DIGITS)


def _agent_rules(model: MovieScheduling) -> pd.DataFrame:
    """Each agent as a dot on the ring, coloured by its vote on the group's proposal, with the message it sent."""
    x, y = ring(model.population)
    joins = np.array([goer.votes for goer in model.goers])
    return pd.DataFrame(
        {
            "x": x,
            "y": y,
            "x2": x,
            "y2": y + 10.0**-DIGITS,  # a rule needs a length for its caps to be drawn
            "what": np.where(joins, *network_marks(model.reading).domain[:2]),
            "width": _dot(model.population),
            "agent": np.arange(model.population),
            "message": [goer.message for goer in model.goers],
        }
    )


def _message_rules(model: MovieScheduling) -> pd.DataFrame:
    """Each message of this round as the half of its link at its sender's end, coloured by what it said."""
    x, y = ring(model.population)
    senders = np.concatenate([model.edges[:, 0], model.edges[:, 1]])
    receivers = np.concatenate([model.edges[:, 1], model.edges[:, 0]])
    return pd.DataFrame(
        {
            "x": x[senders],
            "y": y[senders],
            "x2": (x[senders] + x[receivers]) / 2,
            "y2": (y[senders] + y[receivers]) / 2,
            "what": message_kinds(model, senders, receivers),
            "width": _line_width(model.population),
            "agent": senders,
            "message": "",
        }
    )


def message_kinds(model: MovieScheduling, senders: np.ndarray, receivers: np.ndarray) -> np.ndarray:
    """What this round's message from ``senders[k]`` to ``receivers[k]`` said, as :func:`network_marks` names it:
    its sender's stage-1 decision (§7: would it join at its own proposal; under the thresholds reading, does it
    accept the group's last proposal), or that its receiver did not read it (A2A under the §7 and thresholds
    readings weighs at most ``attention`` messages); no message before round 1."""
    kinds = network_marks(model.reading).domain
    if model.steps == 0:
        return np.full(len(senders), kinds[5])
    joins = np.array([goer.joins for goer in model.goers])
    said = np.where(joins[senders], kinds[2], kinds[3])
    if model.attended is None:
        return said
    weighed = sp.csr_array(
        (model.attended, model.adjacency.indices, model.adjacency.indptr), shape=model.adjacency.shape
    )
    return np.where(weighed[receivers, senders], said, kinds[4])


def _proposals_now(model: MovieScheduling) -> alt.Chart:
    """Price × start time, in one mark: the agents' ideals (grey), their own proposals θ_i (coloured by their vote
    on the group's), and the group's proposal (★) with its earlier positions (black dots)."""
    ideals = pd.DataFrame({"price": model.preferences.price, "time": model.preferences.time, "what": "ideal"})
    own = pd.DataFrame(
        {
            "price": [goer.proposal[PRICE] for goer in model.goers],
            "time": [goer.proposal[TIME] for goer in model.goers],
            "what": ["joins" if goer.votes else "declines" for goer in model.goers],
        }
    )
    points = pd.concat([ideals, own, _group_so_far(model)], ignore_index=True).round(DIGITS)  # in this order: ★ on top
    dot = _dot(model.population) ** 2
    points["area"] = points["what"].map(dict(zip(MAP_POINTS, [0.6 * dot, 0.6 * dot, dot / 3, 300, 30])))
    hours = list(range(int(EVENING[0]), int(EVENING[1]) + 1))
    return (
        alt.Chart(points, width=NIGHT, height=NIGHT, title=viz.title(_map_title(model), NIGHT))
        .mark_point(filled=True, opacity=0.85)
        .encode(
            x=alt.X("price:Q", scale=alt.Scale(domain=list(PRICE_RANGE), nice=False), title="ticket price ($)"),
            y=alt.Y(
                "time:Q",
                scale=alt.Scale(domain=list(EVENING), nice=False),
                title="start",
                axis=alt.Axis(values=hours, labelExpr="datum.value + ':00'"),
            ),
            color=alt.Color("what:N", scale=alt.Scale(domain=MAP_POINTS, range=MAP_COLOURS), legend=None),
            shape=alt.Shape("what:N", scale=alt.Scale(domain=MAP_POINTS, range=MAP_SHAPES), legend=None),
            size=alt.Size("area:Q", scale=None),
        )
    )


def _group_so_far(model: MovieScheduling) -> pd.DataFrame:
    """The group's proposal of every round so far, the last one now."""
    rounds = model.datacollector.model_vars
    what = [MAP_POINTS[4]] * (len(rounds["price"]) - 1) + [MAP_POINTS[3]]
    return pd.DataFrame({"price": rounds["price"], "time": rounds["time"], "what": what})


def _dot(population: int) -> float:
    """An agent's dot, its diameter in pixels: most of its share of the ring, from 4 to 13 px."""
    ring_length = np.pi * NIGHT / SEATS.domain[1]
    return float(np.clip(0.8 * ring_length / population, 4, 13))


def _line_width(population: int) -> float:
    """A half link's width, in pixels: thinner as the links crowd."""
    return float(np.clip(50 / population, 0.8, 3.0))
