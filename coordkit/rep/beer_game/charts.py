"""Beer Game charts: orders, inventory and costs by stage, the paper's Figure 1 beside the kit's, and the chain at one
round, the model's state view (:func:`chain`, which notebook 01's player redraws at every round)."""

import textwrap
from functools import cache

import altair as alt
import numpy as np
import pandas as pd

from coordkit import stats, viz
from coordkit.papers import numbers
from coordkit.rep.beer_game import metrics
from coordkit.rep.beer_game.agents import Stage
from coordkit.rep.beer_game.model import PROTOCOL_NAMES, BeerGame
from coordkit.rep.beer_game.policies import ADJUSTMENT, TARGET
from coordkit.views import state_view

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
    even = alt.Chart().mark_rule(strokeDash=[4, 3], color="#888888").encode(x=alt.XDatum(1.0))
    title = "(C) REP textual's total cost as a share of A2A's and of REP numerical's"
    return viz.layer(even, whiskers, points, data=table, width=560, height=140, title=title)


def figure1(rounds: pd.DataFrame) -> alt.VConcatChart:
    """The paper's Figure 1, redrawn: (A) orders under A2A, (B) under REP, (C) cost ratios beside the paper's."""
    a2a = by_stage(rounds[rounds["protocol"] == "a2a"], title=viz.title("(A) A2A: orders by stage", 300))
    rep = by_stage(
        rounds[rounds["protocol"] == "rep_textual"], title=viz.title("(B) REP textual: orders by stage", 300)
    )
    side_by_side = viz.hconcat(a2a.properties(width=300), rep.properties(width=300)).resolve_scale(y="shared")
    ratios = cost_ratios(metrics.per_game(rounds))
    return viz.vconcat(side_by_side, ratios).resolve_scale(color="independent")


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


# --- the chain at one round: stages, pipelines and messages (the state view, notebook 01 §2) -----------------------

CHAIN_WIDTH = 940  # px: within the notebook column
PX_PER_CASE = 2.0  # a pipeline bar, a box's stock and its backlog grow 2 px a case, up to their room
LANE_CAP = 30  # cases: a pipeline bar's room
ORDERS_Y, BOX_TOP, BOX_BOTTOM, BEER_Y = 86, 96, 186, 196  # the orders lane's baseline, the boxes, the beer lane's
MESSAGES_TOP, LINE, NAME_COLUMN = 282, 15, 110
MESSAGE_LINES = {True: 3, False: 2}  # a REP stage's room (its name and θ take 3 lines), another's: longer is cut
NO_MESSAGE = "(no message yet: the stages send their first in round 1)"
ORDER_COLOUR, BEER_COLOUR = "#6b6b6b", "#c8901a"
STOCK_COLOUR, BACKLOG_COLOUR = "#f3dca6", "#f5c2bd"  # a box's fill: pale beer from the bottom, pale red from the top
END_FILL, END_TEXT = "#eeeeee", "#666666"  # the customers' and the brewery's boxes and names: outside the chain
LANE_COLOUR, HEAD_COLOUR = "#bbbbbb", "#999999"  # a pipeline's line and its arrowhead
FILLED = ["end", "stock", "backlog", "lane", "order bar", "beer bar"]  # areas in their row's `fill` (a lane: 1 px high)
CENTRED = ["end name", "books", "lane head", "bar label"]  # words centred on their x, in their row's `fill` and `size`
COLUMNS = ["kind", "x", "y", "x2", "y2", "text", "size", "stage", "cases", "fill"]
LANES = [
    "Upper lane: orders in the mail, travelling up the chain (right). Lower lane: beer on the road, travelling down",
    "(left). A bar per round's worth, the next to arrive nearest its destination. Boxes: the books after the round,",
    "filled with the stage's stock (beer colour, from the bottom) and what it owes (red, from the top), 2 px a case.",
]


def chain_table(rounds: pd.DataFrame, t: int) -> pd.DataFrame:
    """The drawing of :func:`chain_at` as a table, one row per mark, in pixels (x, y, and x2, y2 for boxes and bars):
    ``kind`` is box, stock and backlog (its fills), name, books (a stage's), end, end name (the customers' and the
    brewery's), lane and lane head (a pipeline's arrow), order bar, beer bar and bar label (with their ``cases``),
    stage label, message."""
    stages = rounds[rounds["round"] == t].sort_values("position")
    if stages.empty:
        raise ValueError(f"round {t} is not in the frame (rounds {rounds['round'].min()} to {rounds['round'].max()})")
    books = stages.to_dict("records")
    return _drawing(books, books[0]["customer_demand"], books[0]["shipped"])


def state_table(game: BeerGame) -> pd.DataFrame:
    """The drawing of :func:`chain` as a table (the rows of :func:`chain_table`), read from the model as it stands:
    the same as ``chain_table(game.frame(), game.steps)``, without building the frame."""
    return _drawing([_books(stage) for stage in game.chain], game.customer_demand, game.delivered)


def _books(stage: Stage) -> dict:
    """A stage's books now, under the names of the model's frame."""
    theta = stage.client.theta
    return {
        "stage": stage.name,
        "demand": stage.incoming_order,
        "inventory": stage.inventory,
        "backlog": stage.backlog,
        "order": stage.order,
        "orders_in_mail": stage.model.orders_in_mail(stage),
        "goods_on_road": tuple(stage.inbound_goods),
        "target_inventory": theta.get(TARGET, np.nan),
        "order_adjustment": theta.get(ADJUSTMENT, np.nan),
        "message": stage.message,
    }


def _drawing(stages: list[dict], demand: float, delivered: float) -> pd.DataFrame:
    """The chain's marks: the customers, each stage's box and books with the pipelines to its supplier, the brewery,
    and the stages' messages."""
    column = CHAIN_WIDTH / (len(stages) + 2)  # customers, the stages, the brewery
    centre = [(i + 0.5) * column for i in range(len(stages) + 2)]
    half, rows = 0.28 * column, []
    name_size, books_size = (12, 11) if column >= 120 else (10, 9)  # px: up to 5 stages; books fit their box

    def box(i: int, name: str, books: str, **stage) -> None:
        kind, name_kind, fill = ("box", "name", None) if stage else ("end", "end name", END_FILL)
        rows.append(_mark(kind, centre[i] - half, BOX_TOP, centre[i] + half, BOX_BOTTOM, fill=fill, **stage))
        name_fill = None if stage else END_TEXT
        rows.append(_mark(name_kind, centre[i], BOX_TOP + 8, text=name, size=name_size, fill=name_fill, **stage))
        rows.append(_mark("books", centre[i], BOX_TOP + 26, text=books, size=books_size, fill="black"))

    box(0, "customers", f"want {demand:.0f}\ngot {delivered:.0f}")
    box(len(stages) + 1, "brewery", "brews what\nthe factory\norders")
    for i, books in enumerate(stages, start=1):
        left, right = centre[i] - half, centre[i] + half
        rows += _fills(left, right, books["inventory"], books["backlog"])
        text = "demand {demand:.0f}\nstock {inventory:.0f}\nowes {backlog:.0f}\norders {order:.0f}".format(**books)
        box(i, books["stage"], text, stage=books["stage"])
        gap = (right, centre[i + 1] - half)  # between this stage and its supplier
        rows += _lane("order bar", gap, books["orders_in_mail"][::-1], ORDERS_Y, -1)  # the next to arrive at the right
        rows += _lane("beer bar", gap, books["goods_on_road"], BEER_Y, +1)  # the next to arrive at the left
    rows += _messages(stages)
    return pd.DataFrame(rows, columns=COLUMNS)


def _mark(kind: str, x: float, y: float, x2: float | None = None, y2: float | None = None, **fields) -> dict:
    return {"kind": kind, "x": x, "y": y, "x2": x2, "y2": y2, **fields}


def _fills(left: float, right: float, stock: float, backlog: float) -> list[dict]:
    """A box's stock, filled from its bottom, and its backlog, from its top (as high as the box at most)."""
    room = (BOX_BOTTOM - BOX_TOP) / PX_PER_CASE
    stock_top = BOX_BOTTOM - min(stock, room) * PX_PER_CASE
    backlog_bottom = BOX_TOP + min(backlog, room) * PX_PER_CASE
    return [
        _mark("stock", left, stock_top, right, BOX_BOTTOM, cases=stock, fill=STOCK_COLOUR),
        _mark("backlog", left, BOX_TOP, right, backlog_bottom, cases=backlog, fill=BACKLOG_COLOUR),
    ]


def _lane(kind: str, gap: tuple[float, float], contents: tuple[float, ...], baseline: float, sign: int) -> list[dict]:
    """One pipeline between two boxes: an arrow along it, a bar per slot growing away from the boxes, and each
    slot's cases as a label."""
    width = (gap[1] - gap[0]) / max(len(contents), 1)
    head = gap[1] if kind == "order bar" else gap[0]  # orders go up the chain, beer comes down
    colour = ORDER_COLOUR if kind == "order bar" else BEER_COLOUR
    rows = [
        _mark("lane", gap[0], baseline, gap[1], baseline + 1, fill=LANE_COLOUR),
        _mark("lane head", head, baseline - 6, text="▶" if kind == "order bar" else "◀", size=10, fill=HEAD_COLOUR),
    ]
    for k, cases in enumerate(contents):
        left = gap[0] + k * width
        tip = baseline + sign * min(cases, LANE_CAP) * PX_PER_CASE
        rows.append(_mark(kind, left + 0.2 * width, baseline, left + 0.8 * width, tip, cases=cases, fill=colour))
        label_top = tip + (-14 if sign < 0 else 2)
        label = f"{cases:.0f}"
        rows.append(_mark("bar label", left + 0.5 * width, label_top, text=label, size=10, cases=cases, fill="black"))
    return rows


def _messages(stages: list[dict]) -> list[dict]:
    """Each stage's message of the round, wrapped in the room its protocol's messages take (:data:`MESSAGE_LINES`),
    so that the drawing keeps its height from round to round; a longer message (an LLM's) is cut with "…". REP
    stages show their coordination variables under their name."""
    width = int((CHAIN_WIDTH - NAME_COLUMN) / 5.9)  # characters a line at 11 px
    rows, y = [], MESSAGES_TOP
    for books in stages:
        label = [books["stage"]]
        if not np.isnan(books["target_inventory"]):
            label += [f"target {books['target_inventory']:.1f}", f"adjustment {books['order_adjustment']:.2f}"]
        for k, line in enumerate(label):
            rows.append(_mark("stage label", 0, y + k * LINE, text=line, stage=books["stage"]))
        for k, line in enumerate(_cut(books["message"] or NO_MESSAGE, width, _room(books))):
            rows.append(_mark("message", NAME_COLUMN, y + k * LINE, text=line))
        y += (_room(books) + 0.6) * LINE
    return rows


def _room(books: dict) -> int:
    """The lines a stage's message may take: a REP stage's (with θ) or another's."""
    return MESSAGE_LINES[not np.isnan(books["target_inventory"])]


def _cut(message: str, width: int, lines: int) -> list[str]:
    """``message`` wrapped at ``width`` characters, in at most ``lines`` lines, the last ending in "…" if cut."""
    wrapped = textwrap.wrap(message, width)
    if len(wrapped) <= lines:
        return wrapped
    return [*wrapped[: lines - 1], wrapped[lines - 1][: width - 1] + "…"]


def _height(stages: int, rep: bool) -> float:
    """The drawing's height: the chain, and every stage's room for its message."""
    return MESSAGES_TOP + stages * (MESSAGE_LINES[rep] + 0.6) * LINE


@cache
def _layers(stage_names: tuple[str, ...]) -> tuple[alt.Chart, ...]:
    """The drawing's marks, one layer per style, for a chain of these stages (they depend on nothing else: a player
    makes them once, and each round is new data for them). Channels name their field and type, which Altair would
    otherwise parse from a shorthand at every round."""
    quantity, name = "quantitative", "nominal"
    place = {
        "x": alt.X(field="x", type=quantity, scale=None, axis=None),
        "y": alt.Y(field="y", type=quantity, scale=None, axis=None),
    }
    span = {**place, "x2": alt.X2(field="x2"), "y2": alt.Y2(field="y2")}
    words = {**place, "text": alt.Text(field="text", type=name)}
    stage_scale = alt.Scale(domain=list(stage_names))  # the kit's stage colours, as in `by_stage`
    colour = alt.Color(field="stage", type=name, scale=stage_scale, legend=None)
    stroke = alt.Stroke(field="stage", type=name, scale=stage_scale, legend=None)
    fill = alt.Fill(field="fill", type=name, scale=None)
    size = alt.Size(field="size", type=quantity, scale=None)

    def layer(kinds: str | list[str], mark: alt.MarkDef, **encoding) -> alt.Chart:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        only = alt.FilterTransform(alt.FieldOneOfPredicate(field="kind", oneOf=kinds))
        return alt.Chart(mark=mark, encoding=alt.FacetedEncoding(**encoding), transform=[only])

    def text(**mark) -> alt.MarkDef:
        return alt.MarkDef(type="text", baseline="top", lineBreak="\n", **mark)

    return (
        layer(FILLED, alt.MarkDef(type="rect"), **span, fill=fill),
        layer("box", alt.MarkDef(type="rect", filled=False, strokeWidth=2), **span, stroke=stroke),
        layer("name", text(fontWeight="bold"), **words, color=colour, size=size),
        layer(CENTRED, text(lineHeight=14), **words, fill=fill, size=size),
        # the messages' lines are wrapped by characters, and never run past the chart's edge, whatever the font
        layer(
            "stage label", text(align="left", fontSize=11, fontWeight="bold", limit=NAME_COLUMN), **words, color=colour
        ),
        layer("message", text(align="left", fontSize=11, color="#333333", limit=CHAIN_WIDTH - NAME_COLUMN), **words),
    )


def _chain_chart(table: pd.DataFrame, stage_names: tuple[str, ...], rep: bool, heading: str) -> alt.LayerChart:
    """The drawing of ``table`` (:func:`chain_table`'s rows) at the height of its chain, titled ``heading``."""
    height = _height(len(stage_names), rep)
    title = alt.Title(heading, subtitle=LANES)
    return viz.layer(*_layers(stage_names), data=table, width=CHAIN_WIDTH, height=height, title=title)


def chain_at(rounds: pd.DataFrame, t: int, title: str | None = None) -> alt.LayerChart:
    """One game's chain at the end of round ``t`` (a frame of :meth:`BeerGame.frame`), drawn as :func:`chain` draws
    a game as it stands."""
    table = chain_table(rounds, t)
    stages = rounds[rounds["round"] == t].sort_values("position")
    demand = stages["customer_demand"].iloc[0]
    heading = title or f"round {t} of {rounds['round'].max()} · customers want {demand:.0f} cases"
    rep = bool(stages["target_inventory"].notna().any())
    return _chain_chart(table, tuple(stages["stage"]), rep, heading)


@state_view(BeerGame)
def chain(game: BeerGame) -> alt.LayerChart:
    """The chain as it stands after ``game.steps`` rounds (REP §5): each stage's demand (the order it received), its
    books and the order it placed, its stock and backlog filling its box, the orders in the mail and the beer on the
    road between stages, and the messages the stages sent this round (REP: their sensitivities, and their
    coordination variables θ under their names). Drawn in pixels (no scales to recompute) at a height fixed by the
    chain's length and protocol, so that a player redraws it in place."""
    heading = (
        f"round {game.steps} of {game.rounds} · {PROTOCOL_NAMES[game.protocol]} · "
        f"customers want {game.customer_demand:.0f} cases"
    )
    rep = game.protocol in ("rep_numerical", "rep_textual")
    return _chain_chart(state_table(game), tuple(stage.name for stage in game.chain), rep, heading)
