"""`Controls`: the widgets of a panel's declared parameters, one per control (:class:`~coordkit.ui.SliderControl`,
``DropdownControl`` or ``CheckboxControl``).

It reads their values (``values``) and their text as shown (``settings``), greys out each control whose
``active_when`` says that it has no effect, and tells its listeners of a change: at once, or, for a listener that
runs something (a run, a reset), once a burst of changes has settled.
"""

import asyncio
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets

if TYPE_CHECKING:
    from coordkit.ui import Control

INACTIVE_TOOLTIP = "no effect with the current settings"
SLIDER_TRACK, DROPDOWN_BOX = "24em", "16em"


class Controls:
    """One widget per parameter (``widgets``, by name), aligned in a box (``box``), in the parameters' order.

    A change reaches the listeners given to ``on_change``. One that is ``debounced`` hears it at once, unless it
    comes less than ``debounce`` seconds after the last run (key repeats, typed values; sliders report once, on
    release): then it hears it once no other change has come for ``debounce`` seconds, so that a burst causes one
    more run, with the latest values. Without a running event loop (scripts, tests) or with ``debounce=0``, it hears
    every change at once. A run counts as one when it runs within :meth:`running`."""

    def __init__(self, params: Sequence["Control"], debounce: float = 0.05) -> None:
        names = [param.name for param in params]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate parameter names: {', '.join(duplicates)}")
        self.params = {param.name: param for param in params}
        self.widgets = {param.name: param.widget() for param in params}
        self.debounce = debounce
        _align(self.widgets.values())
        self.box = widgets.VBox(list(self.widgets.values()))
        self.box.add_class("coordkit-panel-controls")
        self._at_once: list[Callable[[], None]] = []
        self._settled: list[Callable[[], None]] = []
        self._pending: asyncio.TimerHandle | None = None
        self._last_run = -math.inf
        for control in self.widgets.values():
            control.observe(self._changed, names="value")
        self.grey_out_inactive()

    @property
    def values(self) -> dict[str, Any]:
        """The current value of every control, by parameter name."""
        return {name: self.params[name].read(control) for name, control in self.widgets.items()}

    @property
    def settings(self) -> dict[str, str]:
        """Every control's label and value as shown ("protocol" → "A2A", "noise" → "0.50")."""
        return {control.description: self.params[name].text(control) for name, control in self.widgets.items()}

    def on_change(self, listener: Callable[[], None], *, debounced: bool = False) -> None:
        """Call ``listener()`` after each change of a control, or, if ``debounced``, once a burst has settled."""
        (self._settled if debounced else self._at_once).append(listener)

    @contextmanager
    def running(self) -> Iterator[None]:
        """A run at the current values: a change waiting for its burst to settle is dropped (the run plays it), and
        the controls are greyed out as the values say; the quiet spell starts when the run ends."""
        self._cancel_pending()
        self.grey_out_inactive()
        try:
            yield
        finally:
            self._last_run = time.monotonic()

    def grey_out_inactive(self) -> None:
        """Disable each control whose `active_when` says it has no effect with the current values."""
        values = self.values
        for name, param in self.params.items():
            if param.active_when is not None:
                control = self.widgets[name]
                control.disabled = not param.active_when(values)
                control.tooltip = INACTIVE_TOOLTIP if control.disabled else None

    def _changed(self, _change: dict) -> None:
        self.grey_out_inactive()
        for listener in self._at_once:
            listener()
        if not self._settled:
            return
        loop = running_loop()
        quiet = self._pending is None and time.monotonic() - self._last_run >= self.debounce
        if self.debounce <= 0 or loop is None or quiet:
            self._settle()
            return
        self._cancel_pending()
        self._pending = loop.call_later(self.debounce, self._settle)

    def _settle(self) -> None:
        self._pending = None
        for listener in self._settled:
            listener()

    def _cancel_pending(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running this code (a notebook kernel's), or None (a script, a test)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _align(controls: Iterable[widgets.Widget]) -> None:
    """One description width for a panel's sliders and dropdowns, the longest label's, so that every track
    starts at the same x and (sliders) has the same length."""
    labelled = [c for c in controls if isinstance(c, widgets.IntSlider | widgets.FloatSlider | widgets.Dropdown)]
    if not labelled:
        return
    width = f"{max(len(c.description) for c in labelled) + 1}ch"
    for control in labelled:
        control.style.description_width = width
        box = DROPDOWN_BOX if isinstance(control, widgets.Dropdown) else SLIDER_TRACK
        control.layout.width = f"calc({width} + {box})"
