"""Layered and concatenated charts made without Altair's copies, for the charts panels and players redraw often.

Altair's ``LayerChart``, ``HConcatChart`` and ``VConcatChart`` deep-copy every part as they are made, to merge the
parts' parameters (selections), and ``to_dict`` makes each compound again, so every level of a chart of charts copies
the whole tree below it: 40% of a player's frame; the movie panel's three views took 52 ms to make and write as a
spec, 16 ms without the copies (and without the strings its tooltips were given). Parts that hold no parameters and
no view names have nothing to merge; here they are kept as given, and the rest is Altair's own (the data, and a
layer's size, lifted to the compound). The spec is the same, key for key (tests/test_live_chart.py). Parts with
parameters, names or facets are made Altair's way.
"""

import sys

import altair as alt

_ALTAIR = sys.modules[alt.LayerChart.__module__]  # Altair's api module (vegalite/v5 or v6), for its helpers
_ALTAIR_HELPERS = (  # private to Altair
    "_check_if_valid_subspec",
    "_check_if_can_be_layered",
    "_combine_subchart_data",
    "_remove_layer_props",
)
FACET_CHANNELS = ("row", "column", "facet")


class Layers(alt.LayerChart):
    """``alt.LayerChart``, made without copies when its layers are plain marks (:func:`layer`)."""

    def __init__(self, data=alt.Undefined, layer=(), **kwargs):
        if not all(isinstance(mark, alt.Chart) and _plain(mark) for mark in layer):
            super().__init__(data=data, layer=layer, **kwargs)
            return
        for mark in layer:
            _ALTAIR._check_if_can_be_layered(mark)
        alt.TopLevelLayerSpec.__init__(self, data=data, layer=list(layer), **kwargs)
        self.data, self.layer = _ALTAIR._combine_subchart_data(self.data, self.layer)
        lifted, self.layer = _ALTAIR._remove_layer_props(self, self.layer, ("height", "width", "view"))
        for prop, value in lifted.items():
            self[prop] = value


class _Concatenation:
    """How :class:`Row` and :class:`Column` are made: Altair's way, unless every part is plain
    (:func:`_plain_part`); then the parts are kept as given and only the data they share is lifted, as Altair does."""

    # (underscored: a chart's public attributes are its Vega-Lite properties)
    _key: str  # the spec's list of parts: "hconcat" or "vconcat"
    _spec: type  # the Vega-Lite spec class, made without Altair's combining
    _altair: type  # Altair's chart class, named in its own errors

    def __init__(self, data=alt.Undefined, **kwargs):
        parts = list(kwargs.pop(self._key, ()))
        if not all(map(_plain_part, parts)):
            super().__init__(data=data, **{self._key: parts}, **kwargs)
            return
        for part in parts:
            _ALTAIR._check_if_valid_subspec(part, self._altair.__name__)
        self._spec.__init__(self, data=data, **{self._key: parts}, **kwargs)
        self.data, self[self._key] = _ALTAIR._combine_subchart_data(self.data, parts)


class Row(_Concatenation, alt.HConcatChart):
    """``alt.HConcatChart``, made without copies when its parts are plain (:func:`hconcat`)."""

    _key, _spec, _altair = "hconcat", alt.TopLevelHConcatSpec, alt.HConcatChart


class Column(_Concatenation, alt.VConcatChart):
    """``alt.VConcatChart``, made without copies when its parts are plain (:func:`vconcat`)."""

    _key, _spec, _altair = "vconcat", alt.TopLevelVConcatSpec, alt.VConcatChart


def layer(*marks: alt.Chart, **kwargs) -> alt.LayerChart:
    """``alt.layer(*marks, **kwargs)``, made as :class:`Layers`; marks that share a row or column encoding go to
    Altair's own ``alt.layer``, which facets them."""
    if any(map(_faceted, marks)) or not _helpers_found():
        return alt.layer(*marks, **kwargs)  # (an Altair without the helpers borrowed here: its own way)
    return Layers(layer=list(marks), **kwargs)


def hconcat(*charts: alt.TopLevelMixin, **kwargs) -> alt.HConcatChart:
    """``alt.hconcat(*charts, **kwargs)``, made as :class:`Row`."""
    return Row(hconcat=list(charts), **kwargs) if _helpers_found() else alt.hconcat(*charts, **kwargs)


def vconcat(*charts: alt.TopLevelMixin, **kwargs) -> alt.VConcatChart:
    """``alt.vconcat(*charts, **kwargs)``, made as :class:`Column`."""
    return Column(vconcat=list(charts), **kwargs) if _helpers_found() else alt.vconcat(*charts, **kwargs)


def _helpers_found() -> bool:
    return all(hasattr(_ALTAIR, name) for name in _ALTAIR_HELPERS)


def _plain(chart: alt.TopLevelMixin) -> bool:
    """Whether ``chart`` holds no parameters and no view name: nothing Altair's compounds would merge or rename."""
    return chart._get("params") is alt.Undefined and chart._get("name") is alt.Undefined


def _plain_part(part) -> bool:
    """Whether ``part`` of a concatenation is plain: a mark, layers or a concatenation, and so are its layers
    (Altair renames a concatenated layer's named marks by their place)."""
    kinds = (alt.Chart, alt.LayerChart, alt.HConcatChart, alt.VConcatChart)
    if not isinstance(part, kinds) or not _plain(part):
        return False
    return not isinstance(part, alt.LayerChart) or all(map(_plain, part.layer))


def _faceted(mark: alt.TopLevelMixin) -> bool:
    """Whether ``mark`` has a row, column or facet channel."""
    encoding = mark._get("encoding")
    return encoding is not alt.Undefined and any(encoding._get(c) is not alt.Undefined for c in FACET_CHANNELS)
