"""The parts a panel is built from, each with one job, and :class:`Panel`, which lays them out.

- :class:`~coordkit.panel.controls.Controls`: the widgets of the declared parameters, their values, greying out,
  and change notices (at once, or once a burst has settled);
- :class:`~coordkit.panel.status.StatusLine`: what the last run did, and a progress bar;
- :class:`~coordkit.panel.chart_area.ChartArea`: what the run gave (live charts, tables) and its snapshot;
- a runner: :class:`~coordkit.panel.run_once.RunOnce` runs the experiment at each change (or at its Run button),
  :class:`~coordkit.panel.stepper.Stepper` plays a model step by step (Play, Pause, Step, Reset, a speed, a clock).

:class:`coordkit.ui.ExperimentPanel` is controls, a status line, a chart area and a RunOnce;
:class:`coordkit.player.ModelPlayer` is the same with a Stepper over a RunOnce that makes the model at step 0.
"""

from collections.abc import Sequence
from html import escape
from typing import Any

import ipywidgets as widgets
from IPython.display import display

from coordkit.panel.chart_area import ChartArea
from coordkit.panel.controls import Controls
from coordkit.panel.run_once import RunOnce
from coordkit.panel.status import StatusLine
from coordkit.snapshot import WIDGET_NOTE


class Panel:
    """The parts in one box (``widget``, class ``coordkit-panel``): a heading if ``title``, the controls, the runner's
    ``buttons``, the status line, the chart area and its mark. As the last expression of a cell, it shows itself
    and its snapshot; it does nothing else itself, and names the parts' widgets that notebooks and tests use."""

    def __init__(
        self,
        controls: Controls,
        status: StatusLine,
        chart_area: ChartArea,
        runner: RunOnce,
        buttons: Sequence[widgets.Widget],
        title: str | None = None,
    ) -> None:
        self.inputs, self.status_line, self.chart_area, self.runner = controls, status, chart_area, runner
        heading = [widgets.HTML(f"<b>{escape(title)}</b>")] if title else []
        parts = [controls.box, *buttons, status.box, chart_area.box, chart_area.mark]
        self.widget = widgets.VBox([*heading, *parts])
        self.widget.add_class("coordkit-panel")  # for the browser tests, and for anyone styling a panel
        self.params, self.controls = controls.params, controls.widgets
        self.status, self.progress = status.text, status.progress
        self.output, self.snapshot = chart_area.box, chart_area.snapshot
        self.run_button = runner.run_button

    @property
    def values(self) -> dict[str, Any]:
        """The current value of every control, by parameter name."""
        return self.inputs.values

    @property
    def settings(self) -> dict[str, str]:
        """Every control's label and value as the panel shows them ("protocol" → "A2A", "noise" → "0.50")."""
        return self.inputs.settings

    @property
    def result(self) -> Any:
        """What the latest run (or step) gave; None if it failed."""
        return self.runner.result

    @property
    def last_error(self) -> Exception | None:
        """What the latest run (or step), or its chart, raised; None if all went well."""
        return self.runner.last_error

    def snapshot_html(self) -> str:
        """The snapshot of the latest run as HTML (see :meth:`ChartArea.snapshot_html`)."""
        return self.chart_area.snapshot_html()

    def _ipython_display_(self) -> None:
        """Two outputs: the live widget, then its snapshot (:mod:`coordkit.snapshot`)."""
        bundle = self.widget._repr_mimebundle_()
        display({**bundle, "text/plain": WIDGET_NOTE}, raw=True)
        self.snapshot.show()
