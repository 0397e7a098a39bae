"""Charts for the notebooks: one Altair theme, offline renderers, and a few shared chart builders.

Call :func:`setup` once at the top of a notebook. Everything renders without a network connection.

Altair's 5,000-row limit stays on: aggregate in pandas first (one row per point, bar or cell), which keeps
charts fast and notebooks small.

Chart builders give ``encode`` channel objects (``alt.X("round:Q")``, ``alt.Tooltip("step")``), not strings: Altair
turns a string into a channel by rehashing its whole schema, ~10 ms each (vega/altair#3547), and panels rebuild
their charts on every change.
"""

import html
import json
import threading
import uuid
from functools import cache
from pathlib import Path

import altair as alt
import pandas as pd
import vl_convert

from coordkit import chart_checks
from coordkit.compound import hconcat, layer, vconcat  # noqa: F401 (charts make their compounds through viz)

THEME = "coordkit"
RENDERERS = ("svg", "png", "html-inline")
NEUTRAL = "#333333"  # a line outside any colour legend: dark grey, which no categorical scheme of the kit's has
SAVE_FORMATS = (".svg", ".png")
WIDTH = 520
HEIGHT = 240
COLUMN = 968  # px: the notebook's column at a 1400-px window (the browser tests'); every chart fits in it
PADDING = 5  # px around a chart (Vega's default)
# Chart text is laid out and drawn in the first of these fonts that is there: both by the page for a live chart; for a
# static SVG, laid out by vl-convert, then drawn by the page. Most machines have Arial, or Liberation Sans, which Linux
# browsers take for it; vl-convert does not, and lays out in DejaVu Sans, a little wider, so that the page's text
# only falls short of its room. Where DejaVu Sans is the only one, both use it.
FONT = "Arial, DejaVu Sans, sans-serif"
# Every text has a limit, past which Vega cuts it with "…" (the browser tests fail on a cut): generous enough for
# the kit's labels in DejaVu Sans, and what bounds a chart's width whatever the fonts.
LABEL_LIMIT = 240  # px: an axis's or a facet header's labels
LEGEND_LIMIT = 200  # px: a legend's labels; legends sit below the chart, one above the other, each in two columns
LEGEND_COLUMNS = 2
TITLE_LIMIT = COLUMN - 2 * PADDING - 4  # and a few pixels that Vega rounds up


@alt.theme.register(THEME, enable=False)
def coordkit_theme() -> alt.theme.ThemeConfig:
    """A clean theme: colour-blind-safe palettes, left-aligned titles, light grid, readable font sizes, and widths
    bounded whatever the fonts: limits on every text, legends below the chart."""
    return {
        "config": {
            "font": FONT,
            "padding": PADDING,
            "view": {
                "continuousWidth": WIDTH,
                "continuousHeight": HEIGHT,
                "discreteWidth": WIDTH,
                "discreteHeight": HEIGHT,
                "stroke": None,
            },
            "title": {"anchor": "start", "fontSize": 15, "fontWeight": 600, "offset": 10, "limit": TITLE_LIMIT},
            "axis": {
                "labelFontSize": 12,
                "labelLimit": LABEL_LIMIT,
                "titleFontSize": 13,
                "titleFontWeight": "normal",
                "gridColor": "#e6e6e6",
                "domainColor": "#888888",
                "tickColor": "#888888",
            },
            "axisXDiscrete": {"labelAngle": 0},
            "legend": {
                "orient": "bottom",
                "columns": LEGEND_COLUMNS,
                "labelFontSize": 12,
                "labelLimit": LEGEND_LIMIT,
                "titleFontSize": 13,
                "titleFontWeight": "normal",
                "titleLimit": LEGEND_COLUMNS * LEGEND_LIMIT,
                # several legends below a chart stack rather than line up (an expression: Vega-Lite's schema
                # takes the layout no other way)
                "layout": {"expr": "{bottom: {anchor: 'start', direction: 'vertical', margin: 8}}"},
            },
            "header": {
                "labelFontSize": 13,
                "labelLimit": LABEL_LIMIT,
                "labelPadding": 16,  # room for bar labels
                "titleFontSize": 13,
                "titleLimit": LABEL_LIMIT,
            },
            "range": {
                "category": {"scheme": "tableau10"},
                "heatmap": {"scheme": "viridis"},
                "ramp": {"scheme": "viridis"},
            },
            "line": {"strokeWidth": 2},
        }
    }


def setup(renderer: str = "svg") -> None:
    """Enable the coordkit theme and an offline renderer; safe to call more than once.

    - ``"svg"`` (default): static, deterministic SVG made by vl-convert.
    - ``"png"``: static PNG made by vl-convert, at double resolution for sharp display.
    - ``"html-inline"``: interactive (tooltips, zoom) with the Vega JavaScript embedded in every chart
      (about 0.9 MB each, no CDN); needs a trusted notebook.

    Altair's 5,000-row limit is kept on purpose: aggregate in pandas before charting. Every chart drawn is checked
    for marks in a legend's colour that are not in the legend (:mod:`coordkit.chart_checks`, a warning).
    """
    if renderer not in RENDERERS:
        raise ValueError(f"unknown renderer {renderer!r}; choose one of {', '.join(RENDERERS)}")
    alt.theme.enable(THEME)
    if renderer == "svg":
        alt.renderers.enable("svg")
    elif renderer == "png":
        alt.renderers.enable("png", ppi=144)
    else:
        alt.renderers.register("coordkit-html-inline", _inline_html_renderer)
        alt.renderers.enable("coordkit-html-inline")
    alt.renderers.register(f"coordkit-checked-{renderer}", _checked(alt.renderers.get()))  # (its options bound)
    alt.renderers.enable(f"coordkit-checked-{renderer}")
    start_vl_convert()


@cache
def start_vl_convert() -> None:
    """Start vl-convert's JavaScript engine in the background, once: the first chart a kernel draws (as SVG, PNG, or
    a panel's first snapshot) waits 2–3 s for it to start. vl-convert lets go of the GIL while it works, so the
    cells before the first chart run beside it, on another core."""
    chart = {"mark": "point", "data": {"values": [{}]}}
    warm_up = threading.Thread(
        target=vl_convert.vegalite_to_svg, args=(chart, _vl_version()), name="coordkit-vl-convert", daemon=True
    )
    warm_up.start()


def _vl_version() -> str:
    """The Vega-Lite version of Altair's schema, as vl-convert names it (v6_1)."""
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return f"v{major}_{minor}"


def _checked(render):
    """``render``, after a check of the chart's colours (chart_checks.warn_about)."""

    def checked(spec: dict, **metadata):
        chart_checks.warn_about(spec)
        return render(spec, **metadata)

    return checked


def save(chart: alt.typing.ChartType, path: str | Path) -> Path:
    """Write `chart` to a .svg or .png file (offline, via vl-convert), creating parent folders."""
    path = Path(path)
    if path.suffix.lower() not in SAVE_FORMATS:
        raise ValueError(f"cannot save {path.name!r}: use one of {', '.join(SAVE_FORMATS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    chart.save(path, format=path.suffix.lower()[1:])
    return path


def title(text: str | list[str], width: float) -> alt.TitleParams:
    """A title (a list: one line each) kept within ``width`` pixels, past which Vega cuts it with "…": for a chart
    beside others, whose title the theme's limit (the column's width) does not keep within its share of the row."""
    return alt.TitleParams(text, limit=width)


def lines(
    df: pd.DataFrame,
    x: str,
    y: str,
    color: str | None = None,
    title: str | list[str] | alt.TitleParams | None = None,  # a list: one line each
    y_title: str | None = None,
    x_title: str | None = None,
) -> alt.Chart:
    """Lines with points, one line per `color` value; axis types follow the columns' dtypes."""
    encoding = {
        "x": alt.X(x, title=_or_default(x_title), axis=_axis_for(df[x])),
        "y": alt.Y(y, title=_or_default(y_title), axis=_axis_for(df[y])),
        "tooltip": _tooltip(x, y, color),
    }
    if color:
        encoding["color"] = alt.Color(color)
    return alt.Chart(df, title=_or_default(title)).mark_line(point=True).encode(**encoding)


def bars(
    df: pd.DataFrame,
    x: str,
    y: str,
    color: str | None = None,
    title: str | None = None,
    low: str | None = None,
    high: str | None = None,
) -> alt.Chart | alt.LayerChart:
    """Bars per `x` category, side by side per `color` value; error bars span the `low` to `high` columns."""
    if (low is None) != (high is None):
        raise ValueError("error bars need both `low` and `high` columns")
    side_by_side = {"xOffset": alt.XOffset(color)} if color else {}
    coloured = {"color": alt.Color(color)} if color else {}
    tooltip = _tooltip(x, color, y, low, high)
    base = alt.Chart(title=_or_default(title)).encode(x=alt.X(x), **side_by_side)
    chart = base.mark_bar().encode(y=alt.Y(y), tooltip=tooltip, **coloured)
    if low is None:
        return chart.properties(data=df)
    errors = base.mark_errorbar(ticks=True, color="#333333").encode(y=alt.Y(low, title=y), y2=alt.Y2(high))
    # the frame given to the layer, not to each mark: Altair would lift it there, hashing each mark by the
    # frame's printed form first (~3 ms a mark)
    return layer(chart, errors, data=df)


def paper_vs_kit(
    df: pd.DataFrame,
    metric: str,
    value: str,
    source: str = "source",
    title: str | None = None,
) -> alt.FacetChart:
    """One small panel per metric, a labelled bar per source ("paper", "kit", ...), each on its own scale."""
    sources = list(pd.unique(df[source]))
    base = alt.Chart().encode(
        x=alt.X(source, sort=sources, title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y(value),
    )
    bar = base.mark_bar().encode(color=alt.Color(source, sort=sources, legend=None))
    label = base.mark_text(dy=-6, fontSize=12).encode(text=alt.Text(value, format=",.4~r"))
    panel = alt.Facet(metric, title=None, sort=list(pd.unique(df[metric])))
    return (
        layer(bar, label, data=df)
        .properties(width=140, height=180)
        .facet(facet=panel, columns=3, title=_or_default(title))
        .resolve_scale(y="independent")
    )


def heatmap(df: pd.DataFrame, x: str, y: str, value: str, title: str | None = None) -> alt.Chart:
    """Cells at (`x`, `y`) coloured by `value`: viridis for numbers, the category palette otherwise."""
    return (
        alt.Chart(df, title=_or_default(title))
        .mark_rect()
        .encode(
            x=alt.X(x, type="ordinal"),
            y=alt.Y(y, type="ordinal"),
            color=alt.Color(value),
            tooltip=_tooltip(x, y, value),
        )
    )


def _tooltip(*columns: str | None) -> list[alt.Tooltip]:
    """Tooltip channels as objects: Altair parses plain strings through its JSON schema, ~40× slower."""
    return [alt.Tooltip(column) for column in columns if column]


def _or_default(value: str | None) -> alt.typing.Optional[str]:
    """`value`, or Altair's "not set" marker so that Vega-Lite picks its default."""
    return alt.Undefined if value is None else value


def _axis_for(column: pd.Series) -> alt.Axis:
    """An axis with whole-number ticks for integer columns (rounds, counts), Vega-Lite's choice otherwise."""
    return alt.Axis(tickMinStep=1) if pd.api.types.is_integer_dtype(column) else alt.Axis()


def _inline_html_renderer(spec: dict, **metadata) -> dict[str, str]:
    """HTML that embeds the chart with an inline copy of Vega.

    Altair's own inline template declares globals (`const spec`, ...), so a second chart on the same page
    fails; here the bundle runs once per page inside a function and each chart embeds into its own div.
    """
    spec_json = json.dumps(spec).replace("</", "<\\/")
    options = json.dumps({"mode": "vega-lite", "actions": {"export": True, "source": False, "editor": False}})
    div = f"coordkit-chart-{uuid.uuid4().hex}"
    return {
        "text/html": f"""<div id="{div}"></div>
<script type="text/javascript">
if (!window.vegaEmbed) {{ (function () {{ {vega_bundle()} }})(); }}
(function () {{
  let el = document.currentScript && document.currentScript.previousElementSibling;
  if (!el || el.id !== "{div}") {{ el = document.getElementById("{div}"); }}
  window.vegaEmbed(el, {spec_json}, {options}).catch(console.error);
}})();
</script>"""
    }


@cache
def vega_bundle() -> str:
    """vega, vega-lite and vega-embed as one script, from vl-convert (no network)."""
    return vl_convert.javascript_bundle(vl_version=_vl_version())


TABLE_CSS = (
    "border-collapse:collapse;table-layout:auto;max-width:100%;font-size:12.5px;line-height:1.35;"
    "font-variant-numeric:tabular-nums"
)


class Table:
    """A frame shown as an HTML table that fits a notebook column (long cells wrap between words), and as its
    plain text (``to_string``, no index) where there is no HTML: a comparison table to read, not to scroll."""

    def __init__(self, frame: pd.DataFrame, *, index: bool = False):
        self.frame = frame
        self.index = index

    def __repr__(self) -> str:
        return self.frame.to_string(index=self.index)

    def _repr_html_(self) -> str:
        cell = "padding:2px 10px;text-align:left;vertical-align:top"  # and text wraps between words
        head = "".join(f'<th style="{cell};border-bottom:1px solid #999">{_text(c)}</th>' for c in self._columns())
        rows = "".join(
            "<tr>" + "".join(f'<td style="{cell}">{_text(value)}</td>' for value in row) + "</tr>"
            for row in self._rows()
        )
        # the classes keep MathJax (2 and 3) from drawing the text between two dollar amounts as math
        return (
            f'<table class="tex2jax_ignore mathjax_ignore" style="{TABLE_CSS}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>"
        )

    def _columns(self) -> list:
        names = [str(c) for c in self.frame.columns]
        return [self.frame.index.name or "", *names] if self.index else names

    def _rows(self):
        for label, row in zip(self.frame.index, self.frame.itertuples(index=False, name=None), strict=True):
            yield (label, *row) if self.index else row


def table(frame: pd.DataFrame, *, index: bool = False) -> Table:
    """``frame`` as a readable table: HTML in a notebook, its ``to_string`` elsewhere (see :class:`Table`)."""
    return Table(frame, index=index)


def _text(value) -> str:
    return html.escape("" if value is None else str(value))
