"""Beer Game charts: orders, inventory and costs by stage, and the paper's Figure 1 beside the kit's."""

import altair as alt
import pandas as pd

from coordkit import stats, viz
from coordkit.papers import numbers
from coordkit.rep.beer_game import metrics
from coordkit.rep.beer_game.model import PROTOCOL_NAMES

SOURCES = ["paper (LLM)", "kit (rules)"]  # Figure 1(C), in this order


def by_stage(rounds: pd.DataFrame, value: str = "order", title: str | None = None) -> alt.Chart:
    """One line per stage over rounds (mean over seeds if there are several), with customer demand dashed."""
    mean = rounds.groupby(["round", "position", "stage"], as_index=False)[[value, "customer_demand"]].mean()
    stages = viz.lines(mean, "round", value, color="stage", title=title, y_title=value.replace("_", " "))
    stages = stages.encode(color=alt.Color("stage", sort=list(mean.sort_values("position")["stage"].unique())))
    if value != "order":
        return stages
    demand = mean.drop_duplicates("round").assign(series="customer demand")
    dashed = (
        alt.Chart(demand)
        .mark_line(strokeDash=[4, 3], color="black")
        .encode(x=alt.X("round"), y=alt.Y("customer_demand"))
    )
    return stages + dashed


def costs(games: pd.DataFrame) -> alt.Chart:
    """Total cost per protocol: mean over games with ± sd error bars (``games`` from ``per_game``)."""
    table = games.groupby("protocol", sort=False)["total_cost"].agg(["mean", "std"]).reset_index()
    table["protocol"] = table["protocol"].map(PROTOCOL_NAMES)
    table["low"], table["high"] = table["mean"] - table["std"], table["mean"] + table["std"]
    return viz.bars(table, "protocol", "mean", title="Total cost (mean ± sd)", low="low", high="high")


def cost_ratios(games: pd.DataFrame) -> alt.LayerChart:
    """Fig. 1(C) as ratios, the paper's beside the kit's: REP textual's total cost as a share of A2A's and of REP
    numerical's (kit: ratio of mean costs with a 95% bootstrap interval over games). Ratios, not dollars: the
    paper's cost accounting and initial state are not published in enough detail to compare costs."""
    cost = {protocol: group["total_cost"] for protocol, group in games.groupby("protocol")}
    paper = numbers("rep-beer-fig1")
    rows = []
    for baseline in ("a2a", "rep_numerical"):
        label = f"{PROTOCOL_NAMES['rep_textual']} / {PROTOCOL_NAMES[baseline]}"
        published = paper.value("total_cost", "rep_textual") / paper.value("total_cost", baseline)
        interval = stats.ratio_interval(cost["rep_textual"], cost[baseline])
        kit = cost["rep_textual"].mean() / cost[baseline].mean()
        rows.append({"ratio": label, "source": "paper (LLM)", "cost ratio": published})
        rows.append(
            {"ratio": label, "source": "kit (rules)", "cost ratio": kit, "low": interval.low, "high": interval.high}
        )
    table = pd.DataFrame(rows)
    y = alt.Y("ratio:N", title=None, sort=list(table["ratio"].unique()))
    offset = alt.YOffset("source:N", sort=SOURCES)
    colour = alt.Color("source:N", sort=SOURCES, title=None)
    x = alt.X("cost ratio:Q", scale=alt.Scale(domain=[0, 1.2]), title="total cost ratio (1: no saving)")
    tooltip = [alt.Tooltip("ratio:N"), alt.Tooltip("source:N"), alt.Tooltip("cost ratio:Q", format=".3f")]
    points = (
        alt.Chart().mark_point(filled=True, size=90).encode(x=x, y=y, yOffset=offset, color=colour, tooltip=tooltip)
    )
    whiskers = alt.Chart().mark_rule().encode(x=alt.X("low:Q"), x2=alt.X2("high:Q"), y=y, yOffset=offset, color=colour)
    even = alt.Chart().mark_rule(strokeDash=[4, 3], color="#888888").encode(x=alt.datum(1.0))
    title = "(C) REP textual's total cost as a share of A2A's and of REP numerical's"
    return alt.layer(even, whiskers, points, data=table, width=560, height=140, title=title)


def figure1(rounds: pd.DataFrame) -> alt.VConcatChart:
    """The paper's Figure 1, redrawn: (A) orders under A2A, (B) under REP, (C) cost ratios beside the paper's."""
    a2a = by_stage(rounds[rounds["protocol"] == "a2a"], title="(A) A2A: orders by stage")
    rep = by_stage(rounds[rounds["protocol"] == "rep_textual"], title="(B) REP textual: orders by stage")
    side_by_side = alt.hconcat(a2a.properties(width=300), rep.properties(width=300)).resolve_scale(y="shared")
    ratios = cost_ratios(metrics.per_game(rounds))
    return alt.vconcat(side_by_side, ratios).resolve_scale(color="independent")


GAME_VIEW_ROWS = {"order": "orders (dashed: customer demand)", "inventory": "inventory", "backlog": "backlog"}
DEMAND = "customer demand"


def game_view(rounds: pd.DataFrame) -> alt.Chart:
    """One game at a glance (the notebook panel's chart): orders with customer demand dashed, inventory and backlog,
    one row each, one line per stage. One faceted chart over one table, because a panel rebuilds it on every change:
    built and written as a spec in 17 ms, where three layered charts one above the other took 66 ms."""
    headline = f"Total cost ${metrics.total_cost(rounds):,.0f} · bullwhip ratio {metrics.bullwhip_ratio(rounds):.1f}"
    keys = ["round", "position", "stage"]
    mean = rounds.groupby(keys, as_index=False)[[*GAME_VIEW_ROWS, "customer_demand"]].mean()
    by_measure = mean.melt(id_vars=keys, value_vars=list(GAME_VIEW_ROWS), var_name="measure", value_name="cases")
    demand = mean.drop_duplicates("round")
    demand = pd.DataFrame(
        {
            "round": demand["round"],
            "position": mean["position"].max() + 1,  # listed after the stages
            "stage": DEMAND,
            "measure": "order",
            "cases": demand["customer_demand"],
        }
    )
    table = pd.concat([by_measure, demand], ignore_index=True)
    table["dashed"] = table["stage"] == DEMAND
    table["measure"] = table["measure"].map(GAME_VIEW_ROWS)
    header = alt.Header(title=None, labelOrient="top", labelAnchor="start", labelAngle=0, labelFontWeight="bold")
    encoding = alt.FacetedEncoding(
        x=alt.X("round:Q", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("cases:Q"),
        color=alt.Color("stage:N", sort=alt.EncodingSortField("position")),
        strokeDash=alt.StrokeDash("dashed:N", legend=None),
        row=alt.Row("measure:N", sort=list(GAME_VIEW_ROWS.values()), header=header),
        tooltip=[alt.Tooltip("round:Q"), alt.Tooltip("stage:N"), alt.Tooltip("cases:Q")],
    )
    return alt.Chart(
        table,
        mark=alt.MarkDef(type="line", point=True),
        encoding=encoding,
        height=150,
        title=headline,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(y="independent")),
    )
