"""`RunOnce`: the runner of a panel that runs its experiment once per setting, and shows what it gave.

It runs at each change of the controls (once a burst has settled), or, ``on_demand``, when its Run button is pressed:
a run that takes seconds should not start at each click. A run that raises, or whose chart raises, clears the chart
area and says what failed in the status line, so that nothing of the previous run passes for the new one.
"""

import inspect
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from coordkit.panel.chart_area import ChartArea, summary
from coordkit.panel.controls import Controls
from coordkit.panel.status import GREY, RED, StatusLine


class RunOnce:
    """Runs ``run(**controls.values)`` and shows the result in ``chart_area``; ``result`` is what it gave (None if it
    failed) and ``last_error`` what either raised (None if all went well). If ``run`` takes a ``progress`` argument
    (:func:`takes_progress`), it gets a ``progress(fraction)`` callable that drives the status line's bar.
    ``buttons`` are the widgets it adds to the panel: its Run button, if ``on_demand``."""

    def __init__(
        self,
        run: Callable[..., Any],
        controls: Controls,
        chart_area: ChartArea,
        status: StatusLine,
        on_demand: bool = False,
    ) -> None:
        self.controls, self.chart_area, self.status = controls, chart_area, status
        self.on_demand = on_demand
        self.result: Any = None
        self.last_error: Exception | None = None
        self._run = run
        self._extra = {"progress": status.show_progress} if takes_progress(run) else {}
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.run_button.add_class("coordkit-panel-run")
        self.run_button.on_click(lambda _: self.run())
        self.buttons = [self.run_button] if on_demand else []

    def follow(self) -> None:
        """Run at each change of the controls, or, ``on_demand``, only say that the settings changed."""
        if self.on_demand:
            self.controls.on_change(lambda: self.status.say("settings changed: press Run to play them"))
        else:
            self.controls.on_change(self.run, debounced=True)

    def run(self) -> None:
        """Run now with the current values, and show the result."""
        with self.controls.running():
            self.status.say("running…")
            self.result = None
            try:
                self.present(lambda: self._run(**self.controls.values, **self._extra))
            finally:
                self.status.hide_progress()

    def present(self, produce: Callable[[], Any]) -> bool:
        """Set ``result`` to what ``produce()`` returns and show it; whatever either raises goes to the status line,
        with the chart area cleared. Whether it went well."""
        started = time.perf_counter()
        settings = self.controls.settings
        try:
            self.result = produce()
            self.chart_area.show(self.result, settings)
        except Exception as error:  # whatever the experiment or the chart raises belongs in the status line
            self.last_error = error
            cleared = " (the previous run's charts were cleared)" if self.chart_area.box.children else ""
            self.chart_area.clear(settings, error)
            self.status.say(f"error: {summary(error)}{cleared}", RED)
            return False
        self.last_error = None
        self.status.say(f"done in {_duration(time.perf_counter() - started)}", GREY)
        return True


def takes_progress(run: Callable[..., Any]) -> bool:
    """Whether ``run`` takes a ``progress`` argument."""
    return "progress" in inspect.signature(run).parameters


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"
