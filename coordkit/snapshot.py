"""What a saved notebook keeps of a panel for readers without a kernel: a snapshot of its charts at the settings
its controls hold.

A *snapshot* is a saved static rendering: a chart's is the SVG the page drew (``LiveChart.snapshot``), a panel's is
the HTML made of its charts' snapshots that this module keeps.

A panel is shown as two outputs. The first is the live widget. The second, its *snapshot*, is plain HTML that
survives JupyterLab's sanitiser (a notebook from someone else is untrusted): a line naming every control's value,
and each chart as an SVG image (a data URI; a table as HTML). In the live page the panel's :class:`LiveMark` hides
the snapshot, so it is not seen twice; a reader without the widget (``jupyter nbconvert --to html`` offline,
GitHub, nbviewer, JupyterLab without a kernel) sees it instead.

The snapshot follows the controls. Each time the panel's charts change, the page draws them and, once the reader
has paused (a second), sends each chart's SVG (``view.toSVG()``, what the reader saw) back to its
:class:`~coordkit.live_chart.LiveChart`; once every chart of the latest run has come back, the snapshot is replaced in
place (``update_display``), so that the notebook saved next holds it. Nothing is drawn in the kernel for this after
the first snapshot: a panel stays as quick as its run.

``update_display`` reaches only outputs that arrived in this page: JupyterLab maps a display id to its output as the
display comes, and a display id is not saved. After a browser reload, or a notebook closed and reopened while its
kernel runs, no output is found for it. So the panel's :class:`LiveMark` carries the snapshot too (``bundle``), and
wherever the mark's model lives in a notebook's page (its widgets re-made from the kernel after a reload), the page
writes it into the notebook's model, over the output whose HTML is this panel's: the same bundle, so that the
write changes nothing where ``update_display`` got there first.
"""

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import anywidget
import traitlets
from IPython.display import display, update_display

WIDGET_NOTE = "An interactive panel: run the notebook to use its controls (a snapshot of it follows)."
STATIC_CLASS = "coordkit-static-view"  # and "coordkit-static-<key>": classes are what a sanitiser keeps (the DOM's
# names, kept as saved pages and the browser tests know them)


class LiveMark(anywidget.AnyWidget):
    """An invisible part of a live panel: wherever the panel's widgets are drawn (a kernel's page, or a notebook
    reopened with its widget state), it hides the panel's snapshot, which the widgets already show; and its page
    writes the latest snapshot, ``bundle``, into the notebook it is in (see the module's docstring)."""

    _esm = Path(__file__).with_name("live_mark.js")
    key = traitlets.Unicode("").tag(sync=True)
    bundle = traitlets.Dict().tag(sync=True)


class PanelSnapshot:
    """The snapshot of one panel: a caption, then one part (HTML) per slot of the panel's output.

    ``show`` displays it once, under the panel; ``set`` gives the caption and the parts of a new run (None for a
    chart whose picture the page is still to send), ``fill`` a part that arrived. The snapshot shown is replaced when
    no part of the latest run is missing, and only then: it never mixes two runs. Its ``mark``, if it has one, is
    given each snapshot shown."""

    def __init__(self, key: str, mark: LiveMark | None = None) -> None:
        self.key = key
        self.mark = mark
        self.display_id = f"coordkit-static-{key}"
        self.values: dict[str, str] = {}
        self.parts: list[str | None] = []
        self.shown = False

    @property
    def complete(self) -> bool:
        """Whether every part of the latest run is there."""
        return bool(self.parts) and all(part is not None for part in self.parts)

    def set(self, values: dict[str, str], parts: Sequence[str | None]) -> None:
        """A new run: the controls' values as shown (label → text) and its parts."""
        self.values, self.parts = dict(values), list(parts)
        self._publish()

    def fill(self, index: int, part: str) -> None:
        """Part ``index`` of the latest run arrived."""
        self.parts[index] = part
        self._publish()

    def html(self) -> str:
        """The snapshot as HTML that needs no kernel and no script ("" before the first complete run)."""
        if not self.complete:
            return ""
        settings = " · ".join(
            f'<span class="coordkit-setting"><span class="coordkit-setting-label">{html.escape(label)}</span>: '
            f'<b class="coordkit-setting-value">{html.escape(text)}</b></span>'
            for label, text in self.values.items()
        )
        caption = f"<p><i>A snapshot of the panel (run the notebook to use its controls) at</i> {settings}</p>"
        parts = "".join(_as_image(part) for part in self.parts)
        return f'<div class="{STATIC_CLASS} coordkit-static-{html.escape(self.key)}">{caption}{parts}</div>'

    def bundle(self) -> dict[str, str]:
        """The snapshot as a display bundle: its HTML, and a plain-text line for text-only readers."""
        page = self.html()
        return {"text/html": page, "text/plain": "(a snapshot of the panel)" if page else ""}

    def show(self) -> None:
        """Display the snapshot, as an output that later runs replace."""
        bundle = self.bundle()
        display(bundle, raw=True, display_id=self.display_id)
        self.shown = True
        self._mark(bundle)

    def _publish(self) -> None:
        if self.shown and self.complete:
            bundle = self.bundle()
            update_display(bundle, raw=True, display_id=self.display_id)
            self._mark(bundle)  # after the update: a page that had it finds the same bundle and writes nothing

    def _mark(self, bundle: dict[str, str]) -> None:
        if self.mark is not None:
            self.mark.bundle = bundle


def _as_image(part: str) -> str:
    """An SVG as an <img> with a data URI (JupyterLab's sanitiser drops an inline <svg>, keeps an image); any other
    part as it is."""
    if not part.startswith("<svg"):
        return part
    encoded = base64.b64encode(part.encode("utf-8")).decode("ascii")
    return f'<div><img src="data:image/svg+xml;base64,{encoded}" alt="the panel\'s chart"></div>'
