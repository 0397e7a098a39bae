"""What a chart must not hide (CONTRIBUTING.md, step 5): a mark drawn in a fixed colour that a colour legend of the same
chart gives one of its entries, so that a reader takes it for that entry (the fish stock in the first company's blue).

The kit's notebook renderer and its live charts run :func:`colour_collisions` on every Vega-Lite spec they draw and
warn (:class:`ChartWarning`); the browser tests fail on such a warning. A mark that stands for a legend entry should
encode the legend's field, so that the scale, not a copied hex code, gives it the entry's colour.
"""

import warnings
from collections.abc import Iterator

# Vega's categorical schemes that the kit's charts use (vega-scale's `schemes`), and the theme's default one
SCHEMES = {
    "tableau10": "4c78a8f58518e4575672b7b254a24beeca3bb279a2ff9da69d755dbab0ac",
    "tableau20": "4c78a89ecae9f58518ffbf7954a24b88d27ab79a20f2cf5b43989483bcb6e45756ff9d9879706ebab0acd67195fcbfd2"
    "b279a2d6a5c99e765fd8b5a5",
}
DEFAULT_SCHEME = "tableau10"
DEFAULT_COLOUR = "#4c78a8"  # Vega-Lite's colour of a mark given none (the first of tableau10)
BLACK_BY_DEFAULT = ("rule", "text", "tick")
VIEWS = ("layer", "hconcat", "vconcat", "concat")
COLOUR_CHANNELS = ("color", "fill", "stroke")


class ChartWarning(UserWarning):
    """A chart hides what it shows (see :mod:`coordkit.chart_checks`)."""


def warn_about(spec: dict) -> None:
    """Warn (:class:`ChartWarning`) once for each colour collision in ``spec``."""
    for problem in colour_collisions(spec):
        warnings.warn(problem, ChartWarning, stacklevel=3)


def colour_collisions(spec: dict) -> list[str]:
    """The fixed colours of ``spec``'s marks that a colour legend of the same chart also gives an entry, each as
    "a line mark is drawn in #4c78a8, the colour of company = 'A' in the legend of company"."""
    datasets = spec.get("datasets", {})
    legend_colours: dict[str, str] = {}
    fixed: list[tuple[str, str]] = []
    for mark, encoding, data in _marks(spec, {}, spec.get("data")):
        field_channels = [channel for channel in COLOUR_CHANNELS if "field" in encoding.get(channel, {})]
        for channel in field_channels:
            legend_colours.update(_legend(encoding[channel], _rows(data, datasets)))
        if not field_channels:
            fixed += [(mark.get("type", "?"), colour) for colour in _fixed_colours(mark, encoding)]
    return [
        f"a {kind} mark is drawn in {colour}, the colour of {legend_colours[colour]}"
        for kind, colour in dict.fromkeys(fixed)
        if colour in legend_colours
    ]


def _marks(node: dict, encoding: dict, data) -> Iterator[tuple[dict, dict, object]]:
    """Each mark of the view tree under ``node``, with the encoding and data it inherits."""
    encoding = {**encoding, **node.get("encoding", {})}
    data = node.get("data", data)
    if "mark" in node:
        mark = node["mark"] if isinstance(node["mark"], dict) else {"type": node["mark"]}
        yield mark, encoding, data
    for key in VIEWS:
        for child in node.get(key, []):
            yield from _marks(child, encoding, data)
    if isinstance(node.get("spec"), dict):  # a facet's or a repeat's inner view
        yield from _marks(node["spec"], encoding, data)


def _rows(data, datasets: dict) -> list[dict]:
    if not isinstance(data, dict):
        return []
    return data.get("values") or datasets.get(data.get("name", ""), [])


def _legend(channel: dict, rows: list[dict]) -> dict[str, str]:
    """The colours a nominal colour encoding gives its entries: colour → "field = 'entry' in the legend of field"."""
    if channel.get("type", "nominal") not in ("nominal", "ordinal"):
        return {}
    scale = channel.get("scale") or {}
    palette = scale.get("range") if isinstance(scale.get("range"), list) else _scheme(scale.get("scheme"))
    if not palette:
        return {}
    field = channel["field"]
    domain = scale.get("domain") or list(dict.fromkeys(row.get(field) for row in rows if field in row))
    name = channel.get("title") or field
    return {
        palette[i % len(palette)].lower(): f"{name} = {entry!r} in the legend of {name}"
        for i, entry in enumerate(domain)
    }


def _scheme(name) -> list[str]:
    name = name.get("name") if isinstance(name, dict) else name
    packed = SCHEMES.get(name or DEFAULT_SCHEME, "")
    return [f"#{packed[i : i + 6]}" for i in range(0, len(packed), 6)]


def _fixed_colours(mark: dict, encoding: dict) -> list[str]:
    """The colours a mark is drawn in without a legend: its own properties, its point overlay's, an encoding's fixed
    value, or (given none) Vega-Lite's default."""
    found = [mark.get(key) for key in COLOUR_CHANNELS]
    if isinstance(mark.get("point"), dict):
        found += [mark["point"].get(key) for key in COLOUR_CHANNELS]
    found += [encoding.get(channel, {}).get("value") for channel in COLOUR_CHANNELS]
    given = [colour.lower() for colour in found if isinstance(colour, str) and colour.startswith("#")]
    if given or any(colour is not None for colour in found) or mark.get("type") in BLACK_BY_DEFAULT:
        return given
    return [DEFAULT_COLOUR]
