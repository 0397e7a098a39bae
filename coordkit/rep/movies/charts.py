"""Movie-scheduling charts: the paper's Figure 3 redrawn beside its numbers, and one run at a glance."""

import altair as alt
import networkx as nx
import numpy as np
import pandas as pd

from coordkit import viz
from coordkit.papers import numbers
from coordkit.rep.movies.model import PROTOCOL_NAMES, READING_NAMES, MovieScheduling
from coordkit.rep.movies.policies import PRICE, TIME
from coordkit.rep.movies.preferences import EVENING, PRICE_RANGE

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
        panels.append(alt.layer(*layers, title=viz.title(PROTOCOL_NAMES[protocol], 210), width=210, height=240))
    title = alt.TitleParams(
        "Consensus over rounds, 20 agents (mean over seeds)",
        subtitle=f"★ the kit reaches {threshold:.0%}; ◇ the paper's convergence rounds; dashes: the paper's A2A best",
    )
    return alt.hconcat(*panels, title=title).resolve_scale(color="shared")


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
    the group's proposal (bottom) over rounds, a line per regime."""
    rep = rounds[rounds["protocol"] == "rep_numerical"]
    mean = rep.groupby(["reading", "regime", "round"], as_index=False)[["consensus", "spread"]].mean()
    mean[CONSENSUS] = 100 * mean["consensus"]
    mean["regime"] = mean["regime"].map(REGIME_NAMES)
    colour = alt.Color("regime", scale=alt.Scale(domain=list(REGIME_NAMES.values())), title="network")
    x = alt.X("round:Q", axis=alt.Axis(tickMinStep=1))
    consensus = alt.Y(f"{CONSENSUS}:Q", scale=alt.Scale(domain=[0, 100]))
    spread = alt.Y("spread:Q", title="spread of own proposals")
    rows = [
        alt.hconcat(
            *(
                alt.Chart(mean[mean["reading"] == reading], width=300, height=170, title=heading(reading))
                .mark_line()
                .encode(x=x, y=y, color=colour)
                for reading in READING_NAMES
            )
        ).resolve_scale(y="shared")  # the same axis in both readings: Table 2's spread is 0 on it
        for y, heading in (
            (consensus, lambda reading: viz.title(READING_NAMES[reading], 300)),
            (spread, lambda reading: ""),
        )
    ]
    title = alt.TitleParams(
        "REP numerical, 20 agents: one median for everyone (Table 2) or own proposals (§7)",
        subtitle="mean over seeds; under Table 2 every agent adopts the median, so the network cannot matter",
    )
    return alt.vconcat(*rows, title=title).resolve_scale(color="shared")


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
    return alt.layer(*layers, title=title).properties(width=560, height=280)


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
    network = alt.layer(lines, dots, width=PANEL, height=PANEL, title=viz.title(title, PANEL))
    independent_colours = alt.Resolve(scale=alt.ScaleResolveMap(color="independent"))
    return alt.hconcat(
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
        .encode(x=x, y=y, color=alt.Color("vote", scale=VOTES, legend=None), tooltip=list(agents.columns[:3]))
    )
    group = pd.DataFrame({"price ($)": [model.group_price], "start (h)": [model.group_time]})
    star = alt.Chart(group).mark_point(shape=STAR, size=260, filled=True, color="black").encode(x=x, y=y)
    lines = ["agents' own proposals", f"★ the group's, spread {model.spread:.2f}"]
    return alt.layer(ideals, own, star, width=PANEL, height=PANEL, title=viz.title(lines, PANEL))


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
    return alt.layer(*layers, width=width, height=320)
