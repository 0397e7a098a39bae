"""`ChartArea`: where a panel shows what its run gave, and the snapshot of it that a saved notebook keeps.

It turns a result into what is shown (its ``chart`` function), one slot per item: a
:class:`~coordkit.live_chart.LiveChart` for an Altair chart, which redraws in the page from the new spec, an
``Output`` for anything else (a table). After a failure it shows nothing, and its snapshot says what failed. Its
:class:`~coordkit.snapshot.LiveMark` hides the snapshot wherever the live widgets are drawn.
"""

import html
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import altair as alt
import ipywidgets as widgets
import vl_convert
from altair.utils.schemapi import debug_mode
from IPython import get_ipython
from IPython.core.formatters import DisplayFormatter

from coordkit.live_chart import LiveChart, spec_of
from coordkit.snapshot import LiveMark, PanelSnapshot


class ChartArea:
    """The slots (``box``), the snapshot (``snapshot``) and its mark (``mark``, the panel's last widget).

    ``chart(result)`` gives what is shown: one item or a list; without ``chart``, the result itself."""

    def __init__(self, chart: Callable[[Any], Any] | None = None) -> None:
        self.chart = chart
        self.box = widgets.VBox()
        self.box.add_class("coordkit-panel-chart")
        self.mark = LiveMark(key=self.box.model_id)
        self.snapshot = PanelSnapshot(self.box.model_id, self.mark)

    def show(self, result: Any, settings: dict[str, str]) -> None:
        """Show what ``chart(result)`` gives, and make it the snapshot at ``settings`` (the controls' text). Raises
        whatever the chart raises."""
        # Altair validates every mark as it is made, unless told not to: 2-8 ms a chart; a new slot's whole spec is
        # validated in `_fill` instead
        with debug_mode(False):
            shown = self.chart(result) if self.chart else result
            self._fill(shown if isinstance(shown, (list, tuple)) else [shown], settings)

    def clear(self, settings: dict[str, str], error: Exception) -> None:
        """After a failed run: an empty chart area, and a snapshot that names the settings and what failed."""
        self.box.children = ()
        failed = f"<p><b>The run at these settings failed:</b> {html.escape(summary(error))}. No chart is shown.</p>"
        self.snapshot.set(settings, [failed])

    def snapshot_html(self) -> str:
        """The snapshot as HTML, with any chart the page has not sent yet drawn here ("" before anything is
        shown)."""
        saved = self.snapshot
        if saved.complete or not saved.parts:
            return saved.html()
        slots = zip(saved.parts, self.box.children, strict=True)
        drawn = PanelSnapshot(saved.key)
        drawn.set(saved.values, [part or vl_convert.vegalite_to_svg(slot.spec) for part, slot in slots])
        return drawn.html()

    def _fill(self, items: Sequence[Any], settings: dict[str, str]) -> None:
        """Show each item in its slot: an Altair chart in a LiveChart, which redraws in the page from the new spec
        (validated, and drawn once in the kernel as a static snapshot, only when the slot is new), anything else
        in an Output. The slots are made again only when the kinds of items change. The snapshot gets the
        settings and each slot's static part (a chart's comes from the page once drawn)."""
        kinds = [LiveChart if isinstance(item, alt.TopLevelMixin) else widgets.Output for item in items]
        slots = self.box.children  # (`type(slot)` would not do: a widget's class is a subclass made per widget)
        new = len(kinds) != len(slots) or not all(map(isinstance, slots, kinds))
        shown = [
            spec_of(item, validate=new) if kind is LiveChart else _display_data(item)
            for item, kind in zip(items, kinds, strict=True)
        ]
        if new:
            slots = [kind() for kind in kinds]
            for slot, content in zip(slots, shown, strict=True):
                if isinstance(slot, LiveChart):
                    slot.snapshot = vl_convert.vegalite_to_svg(content)
            self.box.children = slots
        for slot, content in zip(self.box.children, shown, strict=True):
            if isinstance(slot, LiveChart):
                slot.show(content)
                if new:
                    slot.observe(self._on_snapshot, names="snapshot_serial")
            else:
                slot.outputs = (content,)
        parts = [
            slot.current_snapshot() if isinstance(slot, LiveChart) else _static(content["data"])
            for slot, content in zip(self.box.children, shown, strict=True)
        ]
        self.snapshot.set(settings, parts)

    def _on_snapshot(self, change: dict) -> None:
        """A chart's picture came from the page: a part of the snapshot, if it shows the latest spec."""
        slot = change["owner"]
        if slot in self.box.children and slot.current_snapshot() is not None:
            self.snapshot.fill(self.box.children.index(slot), slot.snapshot)


def summary(error: Exception) -> str:
    """``ValueError: first line of the message``, at most 200 characters."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}"[:200] if lines else type(error).__name__


def _static(data: dict) -> str:
    """One output as HTML that needs no kernel and no script: inline SVG, a PNG as a data URI, or HTML (a table)."""
    if "image/svg+xml" in data:
        return str(data["image/svg+xml"])
    if "image/png" in data:
        return f'<img src="data:image/png;base64,{data["image/png"]}" alt="chart">'
    return str(data.get("text/html", ""))


def _display_data(obj: Any) -> dict:
    """The notebook output showing `obj`, ready for an Output widget's `outputs`.

    Setting `outputs` directly also works from timer callbacks, where ``with output: display(...)`` loses
    the output (the browser only captures messages of a request it is still tracking). Rendering errors
    are raised here rather than printed, so that the status line can report them.
    """
    bundle = obj._repr_mimebundle_(include=None, exclude=None) if hasattr(obj, "_repr_mimebundle_") else None
    if bundle is None:
        data, metadata = _formatter().format(obj)
    else:
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
    return {"output_type": "display_data", "data": data, "metadata": metadata}


def _formatter() -> DisplayFormatter:
    """IPython's formatter (with whatever the notebook registered), or a plain one outside IPython."""
    shell = get_ipython()
    return shell.display_formatter if shell is not None else _plain_formatter()


@cache
def _plain_formatter() -> DisplayFormatter:
    return DisplayFormatter()
