"""`LiveChart`: an Altair chart that stays live in the page and redraws from each new spec the kernel sends.

Re-rendering a panel's chart to SVG in the kernel (vl-convert) took 50–220 ms per change; the notebooks' panels
write their Vega-Lite specs in 3–22 ms, and a spec is on screen 3–29 ms after the kernel sends it when the view
updates in place, 35–50 ms when it is drawn anew (benchmarks/bench_panels.py). See live_chart.js for when a view
updates in place.
"""

import json
from pathlib import Path

import altair as alt
import anywidget
import pandas as pd
import traitlets
from altair.utils.data import limit_rows
from altair.vegalite.data import default_data_transformer

from coordkit import chart_checks, viz

RECORDS = "coordkit-records"


class LiveChart(anywidget.AnyWidget):
    """A Vega-Lite view in the page; set `spec` (a Vega-Lite dict, as ``chart.to_dict()`` gives) to redraw it.

    The page gets Vega from the kernel, once, as vl-convert's offline bundle: nothing comes from a CDN.
    `snapshot` (static HTML, such as an SVG) shows until Vega is there, and stays where no kernel answers:
    in a saved notebook reopened. Each spec has a `serial`; once the page has drawn one and the reader has paused, it
    sends the chart back as SVG, its `snapshot`, with that `snapshot_serial` (for the panel's snapshot,
    coordkit.snapshot), in a message rather than a synced change, which ipywidgets would echo back to the page.
    """

    _esm = Path(__file__).with_name("live_chart.js")
    spec = traitlets.Dict().tag(sync=True)
    serial = traitlets.Int(0).tag(sync=True)
    snapshot = traitlets.Unicode("").tag(sync=True)
    snapshot_serial = traitlets.Int(0).tag(sync=True)

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.on_msg(self._answer)

    def show(self, spec: dict) -> None:
        """Draw `spec` in the page (a spec equal to the one shown changes nothing). The first spec's snapshot, drawn
        in the kernel, is its own."""
        if spec == self.spec:
            return
        with self.hold_sync():
            self.spec = spec
            self.serial += 1
            if self.serial == 1 and self.snapshot:
                self.snapshot_serial = 1

    def current_snapshot(self) -> str | None:
        """The snapshot, if it shows the spec on screen; None while the page has not sent it."""
        return self.snapshot if self.snapshot_serial == self.serial else None

    def _answer(self, _widget, content: dict, _buffers) -> None:
        if content.get("type") == "need-vega":
            self.send({"type": "vega-bundle", "code": viz.vega_bundle()})
        elif content.get("type") == "snapshot":  # the page has it already: set here without sending it back
            self.set_state({"snapshot": content["svg"], "snapshot_serial": content["serial"]})


def spec_of(chart: alt.TopLevelMixin, *, validate: bool = False) -> dict:
    """`chart`'s Vega-Lite spec, for a LiveChart. Its data are written by pandas' JSON writer rather than Altair's
    column-by-column sanitising, which makes a panel's spec 10-15 ms sooner; floats keep 15 significant digits."""
    with alt.data_transformers.enable(RECORDS):
        spec = chart.to_dict(validate=validate)
    chart_checks.warn_about(spec)
    return spec


def _records(data):
    """Altair's default data transformer, with ``DataFrame.to_json`` for pandas frames."""
    if not isinstance(data, pd.DataFrame):
        return default_data_transformer(data)
    limit_rows(data)  # Altair's 5,000-row check, as by default
    return {"values": json.loads(data.to_json(orient="records", double_precision=15, date_format="iso"))}


alt.data_transformers.register(RECORDS, _records)
