"""Charts of the pressure-field experiments and of one trial's grid, built on :mod:`coordkit.viz`."""

import altair as alt
import numpy as np
import pandas as pd

from coordkit import stats, viz
from coordkit.papers import numbers
from coordkit.pressure.model import PressureField
from coordkit.pressure.pressure import CONFLICT_WEIGHT, DUPLICATE_WEIGHT, cell_pressures
from coordkit.pressure.puzzles import EMPTY
from coordkit.views import state_view

SOURCES = alt.Scale(domain=["kit", "paper"], range=["circle", "diamond"])  # kit filled, paper hollow
RATE = ("rate", "wilson_low", "wilson_high")
SOLVED = "#a1d99b"  # a solved square's cells
TRIAL_PX = 360  # a trial's pressure curve, and the most that its final square's title takes beside it


def _readable(name: str) -> str:
    """A strategy as the reader sees it: "pressure-field", not "pressure_field"."""
    return name.replace("_", "-")


def paper_rates(figure_id: str, conditions: list[str]) -> pd.DataFrame:
    """The paper's solve rate and Wilson interval (as fractions) for each of ``conditions`` it reports in
    ``figure_id`` (data/papers/)."""
    paper = numbers(figure_id)
    rows = [
        {"condition": c, **{k: paper.value(m, c) / 100 for k, m in zip(RATE, ("rate", "ci_low", "ci_high"))}}
        for c in conditions
        if paper.has("rate", c)
    ]
    return pd.DataFrame(rows, columns=["condition", *RATE])


def _points(table: pd.DataFrame, x: alt.X, color: str, title: str) -> alt.LayerChart:
    """Solve rates as points with their Wilson intervals, side by side per ``series``, coloured by ``color``: the
    kit's filled circles, the paper's hollow diamonds (the ``source`` column says which)."""
    base = alt.Chart().encode(x=x, xOffset=alt.XOffset("series:N"), color=alt.Color(f"{color}:N", title=None))
    y = alt.Y("rate:Q", title="solve rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    interval = base.mark_rule(strokeWidth=2).encode(
        y=alt.Y("wilson_low:Q", title="solve rate"), y2=alt.Y2("wilson_high")
    )
    tooltip = [alt.Tooltip("series:N"), alt.Tooltip("rate:Q", format=".1%"), alt.Tooltip("interval:N")]
    kit = base.mark_point(filled=True, size=70).encode(
        y=y, shape=alt.Shape("source:N", scale=SOURCES, title=None), tooltip=tooltip
    )
    paper = base.mark_point(filled=False, size=90, strokeWidth=2).encode(
        y=y, shape=alt.Shape("source:N", scale=SOURCES, title=None), tooltip=tooltip
    )
    return viz.layer(
        interval,
        kit.transform_filter("datum.source == 'kit'"),
        paper.transform_filter("datum.source == 'paper'"),
        data=_with_intervals(table),
        width=520,
        height=240,
        title=title,
    )


def _with_intervals(table: pd.DataFrame) -> pd.DataFrame:
    return table.assign(
        interval=[f"{100 * low:.0f}%–{100 * high:.0f}%" for low, high in zip(table["wilson_low"], table["wilson_high"])]
    )


def rates(frame: pd.DataFrame, paper: str | None = None) -> alt.LayerChart:
    """Solve rate per strategy with Wilson 95% intervals (split by escalation when the frame has both), beside the
    paper's rates of the figure ``paper`` (hollow diamonds) when given."""
    split = "escalation" in frame and frame["escalation"].nunique() > 1
    table = stats.proportion_table(frame, ["strategy", "escalation"] if split else "strategy", "solved")
    table["series"] = [f"kit, escalation {'on' if on else 'off'}" for on in table["escalation"]] if split else "kit"
    table["source"] = "kit"
    if paper:
        published = paper_rates(paper, list(pd.unique(table["strategy"])))
        published = published.rename(columns={"condition": "strategy"}).assign(source="paper")
        published["series"] = "paper, escalation on" if split else "paper"
        table = pd.concat([table, published], ignore_index=True)
    table["strategy"] = table["strategy"].map(_readable)
    x = alt.X("strategy:N", title=None, sort=list(pd.unique(table["strategy"])), axis=alt.Axis(labelAngle=0))
    title = "Solve rate (Wilson 95% interval)" + (": kit ● and paper ◇" if paper else "")
    return _points(table, x, "series", title)


def ablation(frame: pd.DataFrame) -> alt.Chart:
    """Final pressure per decay × inhibition × examples configuration (mean ± SD)."""
    labels = frame.assign(
        config=[
            f"D={'TF'[not d]} I={'TF'[not i]} E={'TF'[not e]}"
            for d, i, e in zip(frame["decay"], frame["inhibition"], frame["examples"])
        ]
    )
    table = labels.groupby("config", sort=False)["final_pressure"].agg(["mean", "std"]).reset_index()
    table["low"], table["high"] = table["mean"] - table["std"], table["mean"] + table["std"]
    table = table.rename(columns={"mean": "final pressure"})
    chart = viz.bars(table, "config", "final pressure", low="low", high="high", title="Final pressure (mean ± SD)")
    # one switch a line under each bar ("D=T", "I=F", "E=T"): on one line, neighbouring labels run together
    return chart.properties(width=560).configure_axisXDiscrete(labelExpr="split(datum.label, ' ')", title=None)


def scaling(frame: pd.DataFrame, paper: str | None = None) -> alt.LayerChart:
    """Solve rate against the agent count, per strategy, with Wilson intervals, beside the paper's rates of the
    figure ``paper`` (hollow diamonds) when given."""
    table = stats.proportion_table(frame, ["strategy", "agent_count"], "solved").assign(source="kit")
    if paper:
        conditions = {f"{s}, {a} agents": (s, a) for s, a in zip(table["strategy"], table["agent_count"])}
        published = paper_rates(paper, list(conditions)).assign(source="paper")
        published["strategy"], published["agent_count"] = zip(*published["condition"].map(conditions))
        table = pd.concat([table, published.drop(columns="condition")], ignore_index=True)
    table["strategy"] = table["strategy"].map(_readable)
    table["series"] = table["strategy"] + ", " + table["source"]
    x = alt.X("agent_count:O", title="agents", axis=alt.Axis(labelAngle=0))
    title = "Solve rate by number of agents" + (": kit ● and paper ◇" if paper else "")
    return _points(table, x, "strategy", title)


def grid(
    cells: np.ndarray,
    pressures: np.ndarray,
    givens: np.ndarray,
    title: str | alt.TitleParams = "",
    pressure_max: float | None = None,
) -> alt.LayerChart:
    """The square: each cell shows its value (blank when empty), coloured by its row's pressure, or all green once
    solved (no pressure left); givens in bold. ``pressure_max`` fixes the top of the colour scale (so that a
    sequence of ticks is coloured alike)."""
    n = len(cells)
    rows, columns = np.indices(cells.shape)
    data = pd.DataFrame(
        {
            "row": rows.ravel(),
            "column": columns.ravel(),
            "value": ["" if v == EMPTY else str(v) for v in cells.ravel()],
            "row pressure": np.repeat(pressures, n),
            "given": givens.ravel(),
            "solved": not pressures.any(),
        }
    )
    base = alt.Chart().encode(x=alt.X("column:O", axis=None), y=alt.Y("row:O", axis=alt.Axis(title="row")))
    squares = base.mark_rect(stroke="white").encode(
        color=alt.Color(
            "row pressure:Q",
            scale=alt.Scale(scheme="orangered", domain=[0, pressure_max])
            if pressure_max
            else alt.Scale(scheme="orangered", domainMin=0),
        ),
        tooltip=[alt.Tooltip("row:O"), alt.Tooltip("column:O"), alt.Tooltip("value:N"), alt.Tooltip("row pressure:Q")],
    )
    solved = base.mark_rect(stroke="white", color=SOLVED).transform_filter("datum.solved")
    givens_text = (
        base.mark_text(fontSize=16, fontWeight="bold").encode(text=alt.Text("value:N")).transform_filter("datum.given")
    )
    placed_text = base.mark_text(fontSize=16).encode(text=alt.Text("value:N")).transform_filter("!datum.given")
    # the frame given to the layer, not to each mark: Altair would lift it there, hashing each mark by the
    # frame's printed form first (~3 ms a mark)
    return viz.layer(squares, solved, givens_text, placed_text, data=data, width=36 * n, height=36 * n, title=title)


# a cell's share of pressure (cell_pressures): none (white), a hole (1), a clash (10), two clashes (below 20)
CELL_PRESSURE = alt.Scale(
    domain=[0, 1, CONFLICT_WEIGHT, DUPLICATE_WEIGHT + CONFLICT_WEIGHT],
    range=["#ffffff", "#fdd49e", "#ef6548", "#7f0000"],
    interpolate="lab",
)
SIDE = 12  # cells' widths beside the square: row numbers and who works on a row, then each row's state
GREY, TRACK, FAINT, GRID = "#999999", "#bbbbbb", "#666666", "#d9d9d9"
KEY = (
    "bold: given by the puzzle · plain: placed by the actors · framed: the row worked on and the cell patched this tick"
)


@state_view(PressureField)
def field_now(model: PressureField) -> alt.LayerChart:
    """The square as it stands (§6.1.1): each cell coloured by its share of its row's pressure, on one scale for
    every tick, givens in bold; the rows the actors worked on this tick framed and labelled, the cell patched
    framed thickly; beside each row its pressure Pᵢ, its fitness fᵢ (eq. 4–5) and why it may not be activated
    (§4.3).

    Three marks over one table of records: the cells, the other boxes and the texts, each box and text carrying
    its own style (a mark for each kind of box or text, or a DataFrame, would cost the player milliseconds a frame).
    Positions are in cells: column c spans x from c to c + 1, row r spans y from r to r + 1."""
    n = model.n
    cell = min(36, 900 // (n + SIDE))  # px a cell: the chart stays within the notebook's column
    records = [*_squares(model), *_boxes(model), *_texts(model, cell)]
    scale = {"nice": False, "zero": False}
    x, y = alt.X("x0:Q", axis=None), alt.Y("y0:Q", axis=None)
    box = alt.Chart().encode(x=x, x2=alt.X2("x1:Q"), y=y, y2=alt.Y2("y1:Q"))
    grid = box.encode(  # the scales, shared by all three marks
        x=alt.X("x0:Q", axis=None, scale=alt.Scale(domain=[-4, n + SIDE - 4], **scale)),
        y=alt.Y("y0:Q", axis=None, scale=alt.Scale(domain=[-1, n + 1], reverse=True, **scale)),
    )
    pressure = alt.Color(
        "pressure:Q",
        title=[
            "each cell's share of its row's pressure Pᵢ",
            "a hole 1, a clash 10 (a row's copies of a value share it)",
        ],
        scale=CELL_PRESSURE,
        legend=alt.Legend(values=[0, 5, 10, 15, 20], gradientLength=300),
    )
    tooltip = [alt.Tooltip("text:N", title="value"), alt.Tooltip("pressure:Q", title="share of Pᵢ", format=".1f")]
    styled = {key: alt.ExprRef(f"datum.{key}") for key in ("fill", "stroke", "strokeWidth")}
    lettering = {key: alt.ExprRef(f"datum.{key}") for key in ("fontSize", "fontWeight", "align", "fill")}
    return viz.layer(
        grid.mark_rect(stroke=GRID).encode(color=pressure, tooltip=tooltip).transform_filter("datum.kind == 'cell'"),
        box.mark_rect(**styled).transform_filter("datum.kind == 'box'"),
        alt.Chart()
        .mark_text(**lettering)
        .encode(x=x, y=y, text=alt.Text("text:N"))
        .transform_filter("datum.kind == 'text'"),
        data=alt.InlineData(values=records),
        width=cell * (n + SIDE),
        height=cell * (n + 2),
        title=_field_title(model),
    )


def _squares(model: PressureField) -> list[dict]:
    """The grid's cells, with their share of pressure (:func:`~coordkit.pressure.pressure.cell_pressures`)."""
    shares = cell_pressures(model.grid, model.counting)
    return [
        {"kind": "cell", "x0": c, "x1": c + 1, "y0": r, "y1": r + 1, "pressure": float(shares[r, c])}
        | {"text": "" if value == EMPTY else str(value)}
        for (r, c), value in np.ndenumerate(model.grid)
    ]


def _boxes(model: PressureField) -> list[dict]:
    """A frame round each row the actors worked on this tick and a thick one round each cell patched; each row's
    fitness as a bar in a track from 0 to 1."""
    n, left = model.n, model.n + 1.6
    frame = {"kind": "box", "fill": "transparent", "stroke": viz.NEUTRAL}
    boxes = [frame | {"x0": 0, "x1": n, "y0": row, "y1": row + 1, "strokeWidth": 2} for row in model.focus_rows]
    boxes += [
        frame | {"x0": p.column, "x1": p.column + 1, "y0": p.row, "y1": p.row + 1, "strokeWidth": 4}
        for p in model.applied
    ]
    for row, region in enumerate(model.regions):
        bar = {"kind": "box", "x0": left, "y0": row + 0.3, "y1": row + 0.7, "strokeWidth": 1}
        boxes.append(bar | {"x1": left + 2, "fill": "transparent", "stroke": TRACK})
        boxes.append(bar | {"x1": left + 2 * region.fitness, "fill": GREY, "stroke": "transparent"})
    return boxes


def _texts(model: PressureField, cell: int) -> list[dict]:
    """The values (givens in bold), column and row numbers, who works on which row, each row's Pᵢ, fitness and
    state under their headers, and a key."""
    n = model.n
    texts = [
        _text(c + 0.5, r + 0.5, value, size=round(cell * 0.45), bold=not model.editable[r, c])
        for (r, c), value in np.ndenumerate(model.grid)
        if value != EMPTY
    ]
    texts += [_text(c + 0.5, -0.5, c, ink=FAINT) for c in range(n)]
    texts += [_text(n + 0.8, -0.5, "Pᵢ", ink=FAINT), _text(n + 1.6, -0.5, "fitness fᵢ", align="left")]
    texts += [_text(n + 5, -0.5, "state", align="left"), _text(-4, n + 0.6, KEY, align="left", ink=FAINT)]
    workers = _workers(model)
    for row, region in enumerate(model.regions):
        y = row + 0.5
        texts += [_text(-0.4, y, row, ink=FAINT), _text(n + 0.8, y, model.pressures[row])]
        texts += [_text(n + 3.8, y, f"{region.fitness:.2f}", align="left")]
        texts += [_text(n + 5, y, _state(model, row), align="left")]
        if row in model.focus_rows:
            texts.append(_text(-0.9, y, f"{workers} ▶", align="right", bold=True))
    return texts


def _text(x: float, y: float, text, *, size=12, bold=False, align="center", ink="black") -> dict:
    """A text of the square's view at (x, y), in cells, with its own style."""
    style = {"fontSize": size, "fontWeight": "bold" if bold else "normal", "align": align, "fill": ink}
    return {"kind": "text", "x0": x, "y0": y, "text": str(text)} | style


def _workers(model: PressureField) -> str:
    """Who proposes for an activated row: the actors, or the conversation's three roles."""
    if model.roles is not None:
        return "3 roles"
    return f"{len(model.actors)} actor{'s' * (len(model.actors) != 1)}"


def _state(model: PressureField, row: int) -> str:
    """Why a row under pressure may not be activated: "inhibited" until its inhibition ends, "settled" once
    confident, "nothing to change" when none of its editable cells is empty or in conflict; else blank."""
    region = model.regions[row]
    if model.inhibition and region.inhibited_until > model.steps:
        return "inhibited"
    if region.confidence >= model.settle_confidence:
        return "settled"
    return "nothing to change" if model.pressures[row] and not model.actionable[row] else ""


def _field_title(model: PressureField) -> list[str]:
    """The tick and the total pressure; then what the tick did."""
    head = f"tick {model.steps} of {model.max_ticks} · total pressure {int(model.pressures.sum())}"
    head += " · solved" if model.solved else (f" · model {model.model_tier}" if model.escalation else "")
    if model.steps == 0:
        return [head, "the puzzle, before any tick: press Step or Play"]
    if not model.focus_rows:
        return [
            head,
            "no row activated: every row under pressure is inhibited, settled or has nothing to change",
        ]
    rows = ", ".join(map(str, model.focus_rows))
    patches = ", ".join(f"({p.row},{p.column}) = {p.value}" for p in model.applied) or "none"
    return [head, f"{_workers(model)} on row {rows}; patch applied: {patches}"]


def trial(model: PressureField) -> list[alt.TopLevelMixin]:
    """A played trial (notebook 03's explore panel): its total pressure over the ticks beside its final square, and
    below them each row's fitness tick by tick."""
    outcome = f"solved in {model.steps} ticks" if model.solved else f"unsolved after {model.steps} ticks"
    curve = viz.lines(model.frame(), "tick", "pressure", title=f"{_readable(model.strategy)} ({model.mode}): {outcome}")
    final = viz.title(f"final square, P = {model.pressures.sum()}", TRIAL_PX)  # beside the curve: kept to its share
    square = grid(model.grid, model.pressures, ~model.editable, title=final)
    return [viz.hconcat(curve.properties(width=TRIAL_PX), square), fitness(model.rows_frame())]


def fitness(rows: pd.DataFrame) -> alt.Chart:
    """Each row's fitness f_i over the ticks of a trial (:meth:`PressureField.rows_frame`): a patch raises it,
    decay (eq. 4) fades it; pale where a row has none (every strategy but pressure-field keeps none)."""
    return (
        alt.Chart(
            rows,
            width=520,
            height=alt.Step(14),
            title="Fitness of each row, tick by tick (a patch raises it, decay fades it)",
        )
        .transform_calculate(end="datum.tick + 1")
        .mark_rect()
        .encode(
            x=alt.X("tick:Q", title="tick"),
            x2=alt.X2("end:Q"),
            y=alt.Y("row:O", title="row"),
            color=alt.Color("fitness:Q", title="fitness f", scale=alt.Scale(scheme="blues", domain=[0, 1])),
            tooltip=[alt.Tooltip("tick:Q"), alt.Tooltip("row:O"), alt.Tooltip("fitness:Q", format=".2f")],
        )
    )


def fit(evaluations: pd.DataFrame, target_rate: float) -> alt.LayerChart:
    """The calibration's evaluations: pressure-field's solve rate on Table 2's design at each ``failure`` tried
    (with Wilson intervals; the tooltip numbers them in the order played), and the paper's rate as a horizontal line."""
    table = evaluations.assign(step=range(1, len(evaluations) + 1), target=target_rate)
    x = alt.X("failure:Q", title="chance that a proposal is unusable (failure)", scale=alt.Scale(domain=[0, 1]))
    y = alt.Y("rate:Q", title="pressure-field's solve rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    base = alt.Chart().encode(x=x)
    interval = base.mark_rule(strokeWidth=2, color="#4c78a8").encode(
        y=alt.Y("wilson_low:Q", title="pressure-field's solve rate"), y2=alt.Y2("wilson_high")
    )
    points = base.mark_point(filled=True, size=50, color="#4c78a8").encode(
        y=y,
        tooltip=[alt.Tooltip("step:O"), alt.Tooltip("failure:Q", format=".4f"), alt.Tooltip("rate:Q", format=".1%")],
    )
    goal = alt.Chart().mark_rule(strokeDash=[4, 3], color="#e45756").encode(y=alt.Y("mean(target):Q"))
    return viz.layer(
        interval,
        points,
        goal,
        data=table,
        width=520,
        height=240,
        title=f"The fit: bisection on failure towards the paper's {target_rate:.1%} (dashed line)",
    )


def predictions(table: pd.DataFrame) -> alt.FacetChart:
    """The calibrated kit's solve rates beside the paper's, one line per published rate, grouped by table: points
    with Wilson 95% intervals, the kit's filled, the paper's hollow; the fitted rate is marked as such."""
    long = pd.concat(
        [
            pd.DataFrame(
                {
                    "table": table["table"],
                    "condition": [
                        f"{_readable(c)}{' (fitted)' if role == 'fitted' else ''}"
                        for c, role in zip(table["condition"], table["role"])
                    ],
                    "source": source,
                    "series": source,
                    "rate": table[f"{source}_rate"],
                    "wilson_low": table[f"{source}_low"],
                    "wilson_high": table[f"{source}_high"],
                    "verdict": table["verdict"],
                }
            )
            for source in ("kit", "paper")
        ],
        ignore_index=True,
    )
    y = alt.Y("condition:N", title=None, sort=None)
    base = alt.Chart().encode(y=y, yOffset=alt.YOffset("source:N"), color=alt.Color("source:N", title=None))
    x = alt.X("rate:Q", title="solve rate", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    tooltip = [alt.Tooltip("condition:N"), alt.Tooltip("source:N"), alt.Tooltip("rate:Q", format=".1%")]
    tooltip += [alt.Tooltip("interval:N"), alt.Tooltip("verdict:N")]
    interval = base.mark_rule(strokeWidth=2).encode(
        x=alt.X("wilson_low:Q", title="solve rate"), x2=alt.X2("wilson_high")
    )
    shape = alt.Shape("source:N", scale=SOURCES, title=None)
    kit = base.mark_point(filled=True, size=50).encode(x=x, shape=shape, tooltip=tooltip)
    paper = base.mark_point(filled=False, size=60, strokeWidth=2).encode(x=x, shape=shape, tooltip=tooltip)
    layered = viz.layer(
        interval,
        kit.transform_filter("datum.source == 'kit'"),
        paper.transform_filter("datum.source == 'paper'"),
        data=_with_intervals(long),
        width=420,
        height=alt.Step(9),
    )
    return layered.facet(
        row=alt.Row("table:N", title=None, sort=list(pd.unique(long["table"])), header=alt.Header(labelAngle=0)),
        title="The calibrated kit (●) against the paper (◇): solve rates with Wilson 95% intervals",
    ).resolve_scale(y="independent")
