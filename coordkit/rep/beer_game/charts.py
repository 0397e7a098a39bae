"""Beer Game charts: orders, inventory and costs by stage, the paper's Figure 1 beside the kit's, and the chain at one
round (the notebook's round stepper)."""

import textwrap

import altair as alt
import numpy as np
import pandas as pd

from coordkit import stats, viz
from coordkit.papers import numbers
from coordkit.rep.beer_game import metrics
from coordkit.rep.beer_game.model import PROTOCOL_NAMES

SOURCES = ["paper (LLM)", "kit (rules)"]  # Figure 1(C), in this order


def by_stage(rounds: pd.DataFrame, value: str = "order", title: str | alt.TitleParams | None = None) -> alt.Chart:
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
    a2a = by_stage(rounds[rounds["protocol"] == "a2a"], title=viz.title("(A) A2A: orders by stage", 300))
    rep = by_stage(
        rounds[rounds["protocol"] == "rep_textual"], title=viz.title("(B) REP textual: orders by stage", 300)
    )
    side_by_side = alt.hconcat(a2a.properties(width=300), rep.properties(width=300)).resolve_scale(y="shared")
    ratios = cost_ratios(metrics.per_game(rounds))
    return alt.vconcat(side_by_side, ratios).resolve_scale(color="independent")


GAME_VIEW_ROWS = {"order": "orders (dashed: customer demand)", "inventory": "inventory", "backlog": "backlog"}
DEMAND = "customer demand"


def game_view(rounds: pd.DataFrame) -> alt.Chart:
    """One game at a glance (the notebook panel's chart): orders with customer demand dashed, inventory and backlog,
    one row each, one line per stage. One faceted chart over one table, because a panel rebuilds it on every change:
    built and written as a spec in 17 ms, where three layered charts one above the other took 66 ms."""
    bullwhip = metrics.bullwhip_ratio(rounds)
    amplification = (
        "no bullwhip ratio (demand never varies)" if np.isnan(bullwhip) else f"bullwhip ratio {bullwhip:.1f}"
    )
    headline = f"Total cost ${metrics.total_cost(rounds):,.0f} · {amplification}"
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
    header = alt.Header(  # above each row: as wide as the chart
        title=None, labelOrient="top", labelAnchor="start", labelAngle=0, labelFontWeight="bold", labelLimit=viz.WIDTH
    )
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


# --- the chain at one round: stages, pipelines and messages (the notebook's round stepper) -----------------------

CHAIN_WIDTH = 940  # px: within the notebook column
LANE_CAP, PX_PER_CASE = 30, 2.0  # a pipeline bar grows 2 px a case, up to 30 cases (its label gives the number)
ORDERS_Y, BOX_TOP, BOX_BOTTOM, BEER_Y = 86, 96, 186, 196  # the orders lane's baseline, the boxes, the beer lane's
MESSAGES_TOP, LINE, NAME_COLUMN = 282, 15, 110
ORDER_COLOUR, BEER_COLOUR, END_COLOUR = "#6b6b6b", "#c8901a", "#9a9a9a"
LANES = [
    "Upper lane: orders in the mail, travelling up the chain (right). Lower lane: beer on the road, travelling down",
    "(left). A bar per round's worth, the next to arrive nearest its destination. Boxes: the books after the round.",
]


def chain_table(rounds: pd.DataFrame, t: int) -> pd.DataFrame:
    """The drawing of :func:`chain_at` as a table, one row per mark, in pixels (x, y, and x2, y2 for boxes and bars):
    ``kind`` is box, name, books (a stage's), end, end name (the customers' and the brewery's), lane and lane head
    (a pipeline's arrow), order bar, beer bar and bar label (with their ``cases``), stage label, message."""
    stages = rounds[rounds["round"] == t].sort_values("position")
    if stages.empty:
        raise ValueError(f"round {t} is not in the frame (rounds {rounds['round'].min()} to {rounds['round'].max()})")
    column = CHAIN_WIDTH / (len(stages) + 2)  # customers, the stages, the brewery
    centre = [(i + 0.5) * column for i in range(len(stages) + 2)]
    half, rows = 0.28 * column, []

    def box(i: int, name: str, books: str, **stage) -> None:
        kind, name_kind = ("box", "name") if stage else ("end", "end name")
        rows.append(_mark(kind, centre[i] - half, BOX_TOP, centre[i] + half, BOX_BOTTOM, **stage))
        rows.append(_mark(name_kind, centre[i], BOX_TOP + 8, text=name, **stage))
        rows.append(_mark("books", centre[i], BOX_TOP + 26, text=books, **stage))

    demand, delivered = stages["customer_demand"].iloc[0], stages["shipped"].iloc[0]
    box(0, "customers", f"want {demand:.0f}\ngot {delivered:.0f}")
    box(len(stages) + 1, "brewery", "brews what\nthe factory\norders")
    for i, row in enumerate(stages.itertuples(index=False), start=1):
        books = f"demand {row.demand:.0f}\nstock {row.inventory:.0f}\nowes {row.backlog:.0f}\norders {row.order:.0f}"
        box(i, row.stage, books, stage=row.stage, position=row.position)
        gap = (centre[i] + half, centre[i + 1] - half)  # between this stage and its supplier
        rows += _lane("order bar", gap, row.orders_in_mail[::-1], ORDERS_Y, -1)  # the next to arrive at the right
        rows += _lane("beer bar", gap, row.goods_on_road, BEER_Y, +1)  # the next to arrive at the left
    rows += _messages(rounds, stages)
    return pd.DataFrame(rows)


def _mark(kind: str, x: float, y: float, x2: float | None = None, y2: float | None = None, **fields) -> dict:
    return {"kind": kind, "x": x, "y": y, "x2": x2, "y2": y2, **fields}


def _lane(kind: str, gap: tuple[float, float], contents: tuple[float, ...], baseline: float, sign: int) -> list[dict]:
    """One pipeline between two boxes: an arrow along it, a bar per slot growing away from the boxes, and each
    slot's cases as a label."""
    width = (gap[1] - gap[0]) / max(len(contents), 1)
    head = gap[1] if kind == "order bar" else gap[0]  # orders go up the chain, beer comes down
    rows = [
        _mark("lane", gap[0], baseline, gap[1], baseline),
        _mark("lane head", head, baseline, text="triangle-right" if kind == "order bar" else "triangle-left"),
    ]
    for k, cases in enumerate(contents):
        left = gap[0] + k * width
        tip = baseline + sign * min(cases, LANE_CAP) * PX_PER_CASE
        rows.append(_mark(kind, left + 0.2 * width, baseline, left + 0.8 * width, tip, cases=cases))
        label_y = tip + (-4 if sign < 0 else 12)
        rows.append(_mark("bar label", left + 0.5 * width, label_y, text=f"{cases:.0f}", cases=cases))
    return rows


def _messages(rounds: pd.DataFrame, stages: pd.DataFrame) -> list[dict]:
    """Each stage's message of the round, wrapped; every stage keeps room for its longest message of the game, so
    that the drawing keeps its height from round to round. REP stages show their coordination variables under their
    name."""
    width = int((CHAIN_WIDTH - NAME_COLUMN) / 5.9)  # characters a line at 11 px
    longest = rounds.loc[rounds["message"].str.len().groupby(rounds["position"]).idxmax(), ["position", "message"]]
    room = {position: len(textwrap.wrap(message, width)) for position, message in longest.itertuples(index=False)}
    rows, y = [], MESSAGES_TOP
    for row in stages.itertuples(index=False):
        label = [row.stage]
        if not np.isnan(row.target_inventory):
            label += [f"target {row.target_inventory:.1f}", f"adjustment {row.order_adjustment:.2f}"]
        for k, line in enumerate(label):
            rows.append(_mark("stage label", 0, y + k * LINE, text=line, stage=row.stage, position=row.position))
        lines = textwrap.wrap(row.message, width)
        for k, line in enumerate(lines):
            rows.append(_mark("message", NAME_COLUMN, y + k * LINE, text=line))
        y += (max(room[row.position], len(lines), len(label)) + 0.6) * LINE
    return rows


def chain_at(rounds: pd.DataFrame, t: int, title: str | None = None) -> alt.LayerChart:
    """One game's chain at the end of round ``t`` (a frame of :meth:`BeerGame.frame`): each stage's demand (the order
    it received), its books and the order it placed, the orders in the mail and the beer on the road between stages,
    and the messages the stages sent (REP: their sensitivities and coordination variables). Drawn in pixels (no
    scales to recompute), so that a round stepper redraws it in place."""
    table = chain_table(rounds, t)
    demand = rounds.loc[rounds["round"] == t, "customer_demand"].iloc[0]
    heading = title or f"Round {t} of {rounds['round'].max()}: customers want {demand:.0f} cases"
    place = {"x": alt.X("x:Q", scale=None, axis=None), "y": alt.Y("y:Q", scale=None, axis=None)}
    span = {**place, "x2": alt.X2("x2:Q"), "y2": alt.Y2("y2:Q")}
    words = {**place, "text": alt.Text("text:N")}
    colour = alt.Color("stage:N", sort=alt.EncodingSortField("position"), legend=None)
    stroke = alt.Stroke("stage:N", sort=alt.EncodingSortField("position"), legend=None)
    shape = alt.Shape("text:N", scale=None)

    def layer(kind: str, mark: alt.MarkDef, **encoding) -> alt.Chart:
        only = alt.FilterTransform(alt.FieldEqualPredicate(field="kind", equal=kind))
        return alt.Chart(mark=mark, encoding=alt.FacetedEncoding(**encoding), transform=[only])

    names = 12 if CHAIN_WIDTH / (rounds["position"].max() + 3) >= 120 else 10  # px: a stage's name fits its box

    def text(**mark) -> alt.MarkDef:
        return alt.MarkDef(type="text", baseline="top", lineBreak="\n", **mark)

    layers = [
        layer("box", alt.MarkDef(type="rect", fill="white", strokeWidth=2), **span, stroke=stroke),
        layer("end", alt.MarkDef(type="rect", fill="#f4f4f4", stroke=END_COLOUR, strokeDash=[4, 3]), **span),
        layer("lane", alt.MarkDef(type="rule", color="#bbbbbb"), **span),
        layer("lane head", alt.MarkDef(type="point", filled=True, size=40, color="#999999"), **place, shape=shape),
        layer("order bar", alt.MarkDef(type="rect", color=ORDER_COLOUR), **span),
        layer("beer bar", alt.MarkDef(type="rect", color=BEER_COLOUR), **span),
        layer("name", text(fontSize=names, fontWeight="bold"), **words, color=colour),
        layer("end name", text(fontSize=names, fontWeight="bold", color="#666666"), **words),
        layer("books", text(fontSize=11, lineHeight=14), **words),
        layer("bar label", alt.MarkDef(type="text", fontSize=10), **words),
        # the messages' lines are wrapped by characters, and never run past the chart's edge, whatever the font
        layer(
            "stage label", text(align="left", fontSize=11, fontWeight="bold", limit=NAME_COLUMN), **words, color=colour
        ),
        layer("message", text(align="left", fontSize=11, color="#333333", limit=CHAIN_WIDTH - NAME_COLUMN), **words),
    ]
    height = float(table["y"].max()) + LINE
    return alt.layer(*layers, data=table, width=CHAIN_WIDTH, height=height, title=alt.Title(heading, subtitle=LANES))
