"""The papers' published numbers, one schema for every paper (``data/papers/*.csv``, see data/README.md).

Each row is one number (or, where a paper prints none, one claim in words) that a registered figure reproduces:

    figure, metric, condition, value, unit, source, note

``figure`` is the figure's id (``coordkit list``), ``condition`` the protocol, strategy or scenario it belongs to
(empty when there is one), ``value`` the number as printed ("3-4" and "<1e-13" stay text), ``source`` the paper
and section, ``note`` what else the paper says about it. The kit's code holds no published number: comparisons and
charts read them here.
"""

from dataclasses import dataclass
from functools import cache, cached_property

import pandas as pd

from coordkit.paths import DATA

COLUMNS = ("figure", "metric", "condition", "value", "unit", "source", "note")
CLAIMS = "claims.csv"


@cache
def published() -> pd.DataFrame:
    """Every published number of every paper, as text (``value`` is parsed by :meth:`Numbers.value`)."""
    frames = []
    for path in sorted((DATA / "papers").glob("*.csv")):
        if path.name == CLAIMS:
            continue  # the claims and their tests (coordkit.replication.claims), not numbers
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        if tuple(frame.columns) != COLUMNS:
            raise ValueError(f"{path.name} has columns {list(frame.columns)}; every paper file has {list(COLUMNS)}")
        frames.append(frame.assign(file=path.name))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class Numbers:
    """One figure's published numbers."""

    figure: str
    rows: pd.DataFrame

    @cached_property
    def _first_rows(self) -> dict[tuple[str, str], dict[str, str]]:
        """Each (metric, condition)'s first row: a model reads a price or a threshold as it is made, and a dict
        finds it in microseconds where a filter of the frame takes milliseconds."""
        first: dict[tuple[str, str], dict[str, str]] = {}
        for row in self.rows.to_dict("records"):
            first.setdefault((row["metric"], row["condition"]), row)
        return first

    def _row(self, metric: str, condition: str) -> dict[str, str]:
        row = self._first_rows.get((metric, condition))
        if row is None:
            raise KeyError(f"the paper gives no {metric!r} for {condition!r} in {self.figure} (data/papers/)")
        return row

    def has(self, metric: str, condition: str = "") -> bool:
        return (metric, condition) in self._first_rows

    def value(self, metric: str, condition: str = "") -> float | str:
        """The number (a float), or the text when the paper prints a range, a bound or words."""
        text = self._row(metric, condition)["value"]
        try:
            return float(text)
        except ValueError:
            return text

    def text(self, metric: str, condition: str = "") -> str:
        """The value as the paper states it, with its unit: "$7,300", "41.8%", "3-4 rounds", "20 s"."""
        value, unit = self.value(metric, condition), self._row(metric, condition)["unit"]
        if isinstance(value, float):
            value = f"{value:,.0f}" if unit == "$" and value.is_integer() else f"{value:g}"
        if unit == "$":
            return f"${value}"
        return f"{value}{unit}" if unit == "%" else f"{value} {unit}".strip()

    def conditions(self, metric: str) -> list[str]:
        """The conditions the paper gives ``metric`` for, in file order."""
        return self.rows.loc[self.rows["metric"] == metric, "condition"].tolist()


@cache
def numbers(figure: str) -> Numbers:
    """The published numbers of ``figure`` (none for a figure beyond the papers); one object a figure, made once."""
    rows = published()
    return Numbers(figure, rows[rows["figure"] == figure].reset_index(drop=True))
