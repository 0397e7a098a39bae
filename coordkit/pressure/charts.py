"""Charts of the pressure-field experiments and of one trial's grid, built on :mod:`coordkit.viz`."""

import altair as alt
import numpy as np
import pandas as pd

from coordkit import stats, viz
from coordkit.pressure.puzzles import EMPTY


def rates(frame: pd.DataFrame) -> alt.Chart:
    """Solve rate per strategy with Wilson 95% intervals (split by escalation when the frame has both)."""
    split = "escalation" if "escalation" in frame and frame["escalation"].nunique() > 1 else None
    table = stats.proportion_table(frame, ["strategy", split] if split else "strategy", "solved")
    if split:
        table[split] = table[split].map({True: "escalation on", False: "escalation off"})
    return viz.bars(
        table,
        "strategy",
        "rate",
        color=split,
        low="wilson_low",
        high="wilson_high",
        title="Solve rate (Wilson 95% interval)",
    )


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


def scaling(frame: pd.DataFrame) -> alt.LayerChart:
    """Solve rate against the agent count, per strategy, with Wilson intervals."""
    table = stats.proportion_table(frame, ["strategy", "agent_count"], "solved")
    base = alt.Chart(table).encode(x=alt.X("agent_count:O", title="agents"), color=alt.Color("strategy:N"))
    line = base.mark_line(point=True).encode(y=alt.Y("rate:Q", title="solve rate", scale=alt.Scale(domain=[0, 1])))
    band = base.mark_errorbar().encode(y=alt.Y("wilson_low:Q", title="solve rate"), y2=alt.Y2("wilson_high:Q"))
    return (band + line).properties(title="Solve rate by number of agents", width=320, height=220)


def grid(
    cells: np.ndarray, pressures: np.ndarray, givens: np.ndarray, title: str = "", pressure_max: float | None = None
) -> alt.LayerChart:
    """The square: each cell shows its value (blank when empty), coloured by its row's pressure; givens in bold.
    ``pressure_max`` fixes the top of the colour scale (so that a sequence of ticks is coloured alike)."""
    n = len(cells)
    rows, columns = np.indices(cells.shape)
    data = pd.DataFrame(
        {
            "row": rows.ravel(),
            "column": columns.ravel(),
            "value": ["" if v == EMPTY else str(v) for v in cells.ravel()],
            "row pressure": np.repeat(pressures, n),
            "given": givens.ravel(),
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
    givens_text = (
        base.mark_text(fontSize=16, fontWeight="bold").encode(text=alt.Text("value:N")).transform_filter("datum.given")
    )
    placed_text = base.mark_text(fontSize=16).encode(text=alt.Text("value:N")).transform_filter("!datum.given")
    # the frame given to the layer, not to each mark: Altair would lift it there, hashing each mark by the
    # frame's printed form first (~3 ms a mark)
    return alt.layer(squares, givens_text, placed_text, data=data, width=36 * n, height=36 * n, title=title)
