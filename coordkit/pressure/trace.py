"""A played trial, tick by tick, as a table a reader can follow (notebook 03, §2–3)."""

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from coordkit.pressure.model import PressureField


def trace(model: "PressureField") -> pd.DataFrame:
    """One row per tick of a played trial: the focus rows; the patch applied, as "(row,column) = value" with ✓ if
    it agrees with the puzzle's one completion (which the actors never see) and ✗ if not; the focus rows' pressure
    before → after; the total pressure after the tick; and the rows inhibited at its end ("-" for none)."""
    rows = model.rows_frame().set_index(["tick", "row"])
    lines = []
    for tick in range(1, model.steps + 1):
        before, after = model.history[tick - 1], model.history[tick]
        now = rows.loc[tick]
        focus = now.index[now["focus"]].tolist()
        patch = " ".join(
            f"({r},{c}) = {after[r, c]} {'✓' if after[r, c] == model.puzzle.solution[r, c] else '✗'}"
            for r, c in np.argwhere(before != after)
        )
        row_pressure = " ".join(f"{rows.loc[(tick - 1, r), 'pressure']} → {now.loc[r, 'pressure']}" for r in focus)
        lines.append(
            {
                "tick": tick,
                "focus": " ".join(map(str, focus)) or "-",
                "patch": patch or "-",
                "row P": row_pressure or "-",
                "total P": int(now["pressure"].sum()),
                "inhibited": " ".join(map(str, now.index[now["inhibited"]])) or "-",
            }
        )
    return pd.DataFrame(lines)
