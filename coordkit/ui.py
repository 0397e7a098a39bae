"""`ExperimentPanel`: controls on top, a status line, and a chart that follows the controls.

Declare the parameters, give a function that runs the experiment and (optionally) one that charts the result::

    panel = ExperimentPanel(
        run=simulate,  # simulate(n_agents=..., noise=..., strategy=...) -> DataFrame
        params=[
            SliderControl("n_agents", 2, 50, default=10),
            SliderControl("noise", 0.0, 1.0, step=0.05),
            DropdownControl("strategy", ["greedy", "fair"]),
        ],
        chart=lambda df: viz.lines(df, "step", "welfare", color="strategy"),
    )
    panel  # as the last expression of a cell, shows itself

A control that only some settings use says so: ``SliderControl("memory", 1, 10, active_when=lambda v: v["strategy"] ==
"fair")`` is greyed out, with a tooltip, whenever the other controls make it irrelevant.

Shown in a notebook, a panel keeps a static view of its chart at the settings its controls hold, for readers
without a kernel (:mod:`coordkit.snapshot`).

A model's declared parameters give the controls directly (:func:`controls`), and :func:`model_panel` builds the
whole panel for a model: controls, a seed slider, and the model played out with the chosen values::

    model_panel(BeerGame, ["protocol", "stages", "step_size"], chart=show, step_size={"label": "shock size"})
"""

import asyncio
import html
import inspect
import math
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

import altair as alt
import ipywidgets as widgets
import vl_convert
from altair.utils.schemapi import debug_mode
from IPython import get_ipython
from IPython.core.formatters import DisplayFormatter
from IPython.display import display

from coordkit import parameters
from coordkit.live_chart import LiveChart, spec_of
from coordkit.model import Model
from coordkit.policy_registry import registered_policies
from coordkit.snapshot import WIDGET_NOTE, LiveMark, PanelSnapshot

CONTROL_STYLE = {"description_width": "initial"}
GREY, RED = "#666666", "#b00020"
INACTIVE_TOOLTIP = "no effect with the current settings"

Condition = Callable[[dict[str, Any]], bool]
"""Whether a control matters, given every control's current value by name (``lambda v: v["protocol"] != "a2a"``).
A control that does not is greyed out, so that nothing in a panel is silently dead."""


@dataclass(frozen=True)
class SliderControl:
    """A number from `low` to `high`; whole numbers only if `low`, `high`, `step` and `default` are ints."""

    name: str
    low: int | float
    high: int | float
    step: int | float = 1
    default: int | float | None = None  # None: `low`
    label: str | None = None  # None: the name, with spaces for underscores
    active_when: Condition | None = None  # None: always active

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not self.low < self.high:
            raise ValueError(f"SliderControl {self.name!r}: low ({self.low}) must be below high ({self.high})")
        if not self.step > 0:
            raise ValueError(f"SliderControl {self.name!r}: step must be positive, got {self.step}")
        if not self.low <= self.start <= self.high:
            raise ValueError(f"SliderControl {self.name!r}: default {self.default} is not in [{self.low}, {self.high}]")

    @property
    def start(self) -> int | float:
        """The value the slider starts at."""
        return self.low if self.default is None else self.default

    @property
    def is_int(self) -> bool:
        """Whether the slider moves in whole numbers."""
        numbers_given = (self.low, self.high, self.step, self.start)
        return all(isinstance(number, numbers.Integral) for number in numbers_given)

    def widget(self) -> widgets.IntSlider | widgets.FloatSlider:
        """A new slider that reports its value when released, not while dragged."""
        common = {
            "description": _describe(self.name, self.label),
            "continuous_update": False,
            "style": CONTROL_STYLE,
        }
        if self.is_int:
            return widgets.IntSlider(
                value=int(self.start), min=int(self.low), max=int(self.high), step=int(self.step), **common
            )
        return widgets.FloatSlider(
            value=self.start,
            min=self.low,
            max=self.high,
            step=self.step,
            readout_format=f".{_decimals(self.step)}f",
            **common,
        )

    def read(self, widget: widgets.IntSlider | widgets.FloatSlider) -> int | float:
        """The value the slider shows."""
        return widget.value

    def text(self, widget: widgets.IntSlider | widgets.FloatSlider) -> str:
        """The value as the slider's readout writes it."""
        return str(widget.value) if self.is_int else f"{widget.value:.{_decimals(self.step)}f}"


@dataclass(frozen=True)
class DropdownControl:
    """One of a few `options`: plain values, or (label, value) pairs to show friendlier names."""

    name: str
    options: Sequence[Any]
    default: Any = None  # None: the first option's value
    label: str | None = None
    active_when: Condition | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not self.options:
            raise ValueError(f"DropdownControl {self.name!r} has no options")
        object.__setattr__(self, "options", tuple(self.options))
        if self.default is not None and self.default not in self.values:
            raise ValueError(
                f"DropdownControl {self.name!r}: default {self.default!r} is not among {list(self.values)}"
            )

    @property
    def pairs(self) -> tuple[tuple[str, Any], ...]:
        """The options as (label, value) pairs."""
        if all(_is_labelled(option) for option in self.options):
            return self.options
        return tuple((str(option), option) for option in self.options)

    @property
    def values(self) -> tuple[Any, ...]:
        """The values `run` can receive."""
        return tuple(value for _, value in self.pairs)

    @property
    def start(self) -> Any:
        """The value the dropdown starts at."""
        return self.values[0] if self.default is None else self.default

    def widget(self) -> widgets.Dropdown:
        """A new dropdown. Its options carry their positions, not their values: a dropdown whose value is None
        shows no selection at all, so an option meaning None ("no consensus") would look blank."""
        options = [(label, index) for index, (label, _) in enumerate(self.pairs)]
        start = self.values.index(self.start)
        return widgets.Dropdown(
            options=options, value=start, description=_describe(self.name, self.label), style=CONTROL_STYLE
        )

    def read(self, widget: widgets.Dropdown) -> Any:
        """The value of the option the dropdown shows."""
        return self.values[widget.value]

    def text(self, widget: widgets.Dropdown) -> str:
        """The label of the option the dropdown shows."""
        return self.pairs[widget.value][0]


@dataclass(frozen=True)
class CheckboxControl:
    """On or off."""

    name: str
    default: bool = False
    label: str | None = None
    active_when: Condition | None = None

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not isinstance(self.default, bool):
            raise ValueError(f"CheckboxControl {self.name!r}: default must be True or False, got {self.default!r}")

    def widget(self) -> widgets.Checkbox:
        """A new checkbox."""
        description = _describe(self.name, self.label)
        return widgets.Checkbox(value=self.default, description=description, indent=False, style=CONTROL_STYLE)

    def read(self, widget: widgets.Checkbox) -> bool:
        """Whether the box is ticked."""
        return widget.value

    def text(self, widget: widgets.Checkbox) -> str:
        """ "on" or "off"."""
        return "on" if widget.value else "off"


Control = SliderControl | DropdownControl | CheckboxControl


class ExperimentPanel:
    """Controls, a status line and a chart area; every change of a control runs the experiment again.

    A change runs the experiment at once. Inside Jupyter, a change that comes less than `debounce` seconds
    after the last run (key repeats, typed values; sliders report once, on release) waits until no other
    change has come for `debounce` seconds, so that a burst causes one more run, with the latest values.
    Without a running event loop (scripts, tests) or with ``debounce=0``, every change runs at once.

    Altair charts are drawn in the page by a :class:`~coordkit.live_chart.LiveChart`, which gets only the new
    spec; anything else (a table) is shown as a notebook output. A run (or a chart) that raises clears the chart
    area and its static view, so that nothing of the previous run passes for the new one, and the status line says
    what failed and that the charts were cleared; ``result`` is then None if the run itself failed, and
    ``last_error`` holds the error. If `run` takes a ``progress`` argument, it gets a ``progress(fraction)`` callable
    that drives a progress bar.

    A panel whose run takes seconds (longer than the 150 ms a live panel may take, CONTRIBUTING.md) is
    ``on_demand``: it has a Run button, and a change of a control only says that the settings changed until the
    button is pressed.
    """

    def __init__(
        self,
        run: Callable[..., Any],
        params: Sequence[Control],
        chart: Callable[[Any], Any] | None = None,
        debounce: float = 0.05,
        title: str | None = None,
        run_on_start: bool = True,
        on_demand: bool = False,
    ) -> None:
        names = [param.name for param in params]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"duplicate parameter names: {', '.join(duplicates)}")
        self._run = run
        self._chart = chart
        self._takes_progress = "progress" in inspect.signature(run).parameters
        self._pending: asyncio.TimerHandle | None = None
        self._last_run = -math.inf
        self.debounce = debounce
        self.on_demand = on_demand
        self.result: Any = None
        self.last_error: Exception | None = None

        self.params = {param.name: param for param in params}
        self.controls = {param.name: param.widget() for param in params}
        _align(self.controls.values())
        self.status = widgets.HTML()
        self.progress = widgets.FloatProgress(min=0.0, max=1.0, layout=widgets.Layout(visibility="hidden"))
        self.output = widgets.VBox()  # one slot per item shown: a LiveChart for a chart, an Output for anything else
        heading = [widgets.HTML(f"<b>{html.escape(title)}</b>")] if title else []
        status_line = widgets.HBox([self.status, self.progress] if self._takes_progress else [self.status])
        controls = self.controls_box = widgets.VBox(list(self.controls.values()))
        self.run_button = widgets.Button(description="Run", button_style="primary", icon="play")
        self.run_button.on_click(lambda _: self.refresh())
        buttons = [self.run_button] if on_demand else []
        self.widget = widgets.VBox([*heading, controls, *buttons, status_line, self.output])
        self.static_view = PanelSnapshot(self.widget.model_id)
        self.widget.children = (*self.widget.children, LiveMark(key=self.static_view.key))
        parts = {
            "": self.widget,
            "-controls": controls,
            "-run": self.run_button,
            "-status": self.status,
            "-chart": self.output,
        }
        for suffix, part in parts.items():
            part.add_class(f"coordkit-panel{suffix}")  # for the browser tests, and for anyone styling a panel

        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self._grey_out_inactive()
        if run_on_start:
            self.refresh()

    @property
    def values(self) -> dict[str, Any]:
        """The current value of every control, by parameter name."""
        return {name: self.params[name].read(control) for name, control in self.controls.items()}

    @property
    def settings(self) -> dict[str, str]:
        """Every control's label and value as the panel shows them ("protocol" → "A2A", "noise" → "0.50")."""
        return {control.description: self.params[name].text(control) for name, control in self.controls.items()}

    def refresh(self) -> None:
        """Run the experiment now with the current values, and show the result."""
        self._cancel_pending()
        self._grey_out_inactive()
        self._set_status("running…", GREY)
        extra = {"progress": self._show_progress} if self._takes_progress else {}
        self.result = None
        try:
            self._present(lambda: self._run(**self.values, **extra))
        finally:
            self.progress.layout.visibility = "hidden"
            self._last_run = time.monotonic()

    def _present(self, produce: Callable[[], Any]) -> bool:
        """Set ``result`` to what ``produce()`` returns and show its chart; whatever either raises goes to the status
        line, with the charts cleared. Whether it went well."""
        started = time.perf_counter()
        settings = self.settings
        try:
            self.result = produce()
            # Altair validates every mark as it is made, unless told not to: 2-8 ms a chart; a new slot's whole
            # spec is validated in `_show` instead
            with debug_mode(False):
                shown = self._chart(self.result) if self._chart else self.result
                self._show(shown if isinstance(shown, (list, tuple)) else [shown], settings)
        except Exception as error:  # whatever the experiment or the chart raises belongs in the status line
            self.last_error = error
            cleared = " (the previous run's charts were cleared)" if self.output.children else ""
            self._clear(settings, error)
            self._set_status(f"error: {_summary(error)}{cleared}", RED)
            return False
        self.last_error = None
        self._set_status(f"done in {_duration(time.perf_counter() - started)}", GREY)
        return True

    def _grey_out_inactive(self) -> None:
        """Disable each control whose `active_when` says it has no effect with the current values."""
        values = self.values
        for name, param in self.params.items():
            if param.active_when is not None:
                control = self.controls[name]
                control.disabled = not param.active_when(values)
                control.tooltip = INACTIVE_TOOLTIP if control.disabled else None

    def _show(self, items: Sequence[Any], settings: dict[str, str]) -> None:
        """Show each item in its slot: an Altair chart in a LiveChart, which redraws in the page from the new spec
        (validated, and drawn once in the kernel as a static snapshot, only when the slot is new), anything else
        in an Output. The slots are made again only when the kinds of items change. The static view gets the
        run's settings and each slot's static part (a chart's comes from the page once drawn)."""
        kinds = [LiveChart if isinstance(item, alt.TopLevelMixin) else widgets.Output for item in items]
        slots = self.output.children  # (`type(slot)` would not do: a widget's class is a subclass made per widget)
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
            self.output.children = slots
        for slot, content in zip(self.output.children, shown, strict=True):
            if isinstance(slot, LiveChart):
                slot.show(content)
                if new:
                    slot.observe(self._on_snapshot, names="snapshot_serial")
            else:
                slot.outputs = (content,)
        parts = [
            slot.current_snapshot() if isinstance(slot, LiveChart) else _static(content["data"])
            for slot, content in zip(self.output.children, shown, strict=True)
        ]
        self.static_view.set(settings, parts)

    def _clear(self, settings: dict[str, str], error: Exception) -> None:
        """After a failed run: an empty chart area, and a static view that names the settings and what failed."""
        self.output.children = ()
        failed = f"<p><b>The run at these settings failed:</b> {html.escape(_summary(error))}. No chart is shown.</p>"
        self.static_view.set(settings, [failed])

    def _on_snapshot(self, change: dict) -> None:
        """A chart's picture came from the page: a part of the static view, if it shows the latest spec."""
        slot = change["owner"]
        if slot in self.output.children and slot.current_snapshot() is not None:
            self.static_view.fill(self.output.children.index(slot), slot.snapshot)

    def _on_change(self, change: dict) -> None:
        """Run now; inside an event loop, a change that comes less than `debounce` seconds after the last run
        (the rest of a burst) waits until `debounce` seconds pass without another change."""
        if self.on_demand:
            self._grey_out_inactive()
            self._set_status("settings changed: press Run to play them", GREY)
            return
        loop = _running_loop()
        quiet = self._pending is None and time.monotonic() - self._last_run >= self.debounce
        if self.debounce <= 0 or loop is None or quiet:
            self.refresh()
            return
        self._cancel_pending()
        self._pending = loop.call_later(self.debounce, self.refresh)

    def _cancel_pending(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _show_progress(self, fraction: float) -> None:
        self.progress.layout.visibility = "visible"
        self.progress.value = round(min(max(fraction, 0.0), 1.0), 2)  # rounded: at most ~100 updates to send

    def _set_status(self, text: str, color: str) -> None:
        self.status.value = f'<span style="color:{color}">{html.escape(text)}</span>'

    def _ipython_display_(self) -> None:
        """Two outputs: the live widget, then its static view (:mod:`coordkit.snapshot`)."""
        bundle = self.widget._repr_mimebundle_()
        display({**bundle, "text/plain": WIDGET_NOTE}, raw=True)
        self.static_view.show()

    def snapshot_html(self) -> str:
        """The static view of the latest run as HTML, with any chart the page has not sent yet drawn here ("" before
        a run has shown anything)."""
        view = self.static_view
        if view.complete or not view.parts:
            return view.html()
        slots = zip(view.parts, self.output.children, strict=True)
        drawn = PanelSnapshot(view.key)
        drawn.set(view.values, [part or vl_convert.vegalite_to_svg(slot.spec) for part, slot in slots])
        return drawn.html()


def control(param: parameters.Param, start: Any = None, model: type | None = None, **options: Any) -> Control:
    """The control for a declared parameter: a slider for a number, a dropdown for a choice, a checkbox for a
    flag. It starts at the declared default, or at ``start`` (checked against the declaration): a value a notebook
    chose where its readers see it, which a panel function only passes on. ``options`` override the declaration's
    label, span (``low``, ``high``) and ``step``, set an ``active_when`` condition or, for a choice, the ``options``
    shown; ``default`` only where the declared default is None, which no control can show. A policy's dropdown
    offers the policies registered for ``model`` too, and a policy object ``start`` gives it, by its name."""
    if "default" in options and param.default is not None:
        raise parameters.ParameterError(
            f"a control for {param.name} starts at its declared default {param.default!r}; to start it at "
            f"{options['default']!r}, let the notebook pass start={{{param.name!r}: {options['default']!r}}}, "
            "so that its readers see the change"
        )
    default = param.default if start is None else param.check(start, model)
    settings = {"label": param.label(), "default": default, **options}
    match param:
        case parameters.Integer() | parameters.Real():
            low, high = param.slider or (param.low, param.high)
            step = param.step if isinstance(param, parameters.Real) else 1
            if isinstance(param, parameters.Real):  # an open end is a value the model refuses: one step inside it
                low, high = (
                    low + step * (param.low_open and low == param.low),
                    high - step * (param.high_open and high == param.high),
                )
            settings = {"low": low, "high": high, "step": step, **settings}
            return SliderControl(
                param.name, settings.pop("low"), settings.pop("high"), settings.pop("step"), **settings
            )
        case parameters.PolicyChoice():
            registered = registered_policies(model)
            own = [None] if param.optional else []  # the agents' own rule, by its label, unless options are given
            shown = [*settings.pop("options", [*own, *param.options]), *registered]
            shown += [default] if default is not None and default not in shown else []
            pairs = [(_policy_label(param, registered, value), value) for value in shown]
            return DropdownControl(param.name, pairs, **settings)
        case parameters.Choice():
            shown = settings.pop("options", param.options)
            return DropdownControl(param.name, [(param.label_of(value), value) for value in shown], **settings)
        case parameters.Flag():
            return CheckboxControl(param.name, **settings)
    raise parameters.ParameterError(f"{param.name} takes {param.allowed()}: a panel has no control for it")


def controls(
    model: type[Model] | parameters.Parameters,
    names: Sequence[str],
    *,
    start: dict[str, Any] | None = None,
    **overrides: dict,
) -> list[Control]:
    """Controls for the parameters ``names`` of a model, in that order, each at its declared default or at
    ``start[name]`` (see :func:`control`); ``overrides[name]`` is passed to :func:`control` (``stages={"high":
    6}``, ``consensus={"active_when": lambda v: v["protocol"] != "a2a"}``)."""
    declared = model if isinstance(model, parameters.Parameters) else model.parameters
    start = dict(start or {})
    for given, what in ((overrides, "overrides"), (start, "start values")):
        stray = sorted(set(given) - set(names))
        if stray:
            raise parameters.ParameterError(f"{what} for {stray}, which are not among the controls {list(names)}")
    owner = None if isinstance(model, parameters.Parameters) else model
    return [control(declared[name], start.get(name), owner, **overrides.get(name, {})) for name in names]


def model_panel(
    model: type[Model],
    names: Sequence[str],
    *,
    chart: Callable[[Model], Any],
    fixed: dict[str, Any] | None = None,
    start: dict[str, Any] | None = None,
    seeds: tuple[int, int] = (0, 19),
    title: str | None = None,
    **overrides: dict,
) -> ExperimentPanel:
    """A panel that plays ``model`` with the chosen parameters (``fixed`` ones too) and a seed slider, and shows
    ``chart(model)``. Controls start at the declared defaults, or at ``start`` (see :func:`controls`).
    ``overrides`` may set the seed slider's ``label`` or ``active_when`` too (``seed={...}``), and ``start`` the seed it
    starts at (``start={"seed": 7}``)."""
    fixed = dict(fixed or {})
    start = dict(start or {})

    def play(seed: int, **values: Any) -> Model:
        return model(**fixed, **values, rng=seed).run()

    seed = SliderControl("seed", *seeds, default=start.pop("seed", seeds[0]), **overrides.pop("seed", {}))
    return ExperimentPanel(play, [*controls(model, names, start=start, **overrides), seed], chart=chart, title=title)


def _policy_label(param: parameters.PolicyChoice, registered: dict, value: Any) -> str:
    """How a policy's dropdown names ``value``: a registered name by its label, anything else as the parameter does."""
    return registered[value].label if isinstance(value, str) and value in registered else param.label_of(value)


def _check_name(name: str) -> None:
    if not name.isidentifier():
        raise ValueError(f"parameter name {name!r} is not a valid Python identifier")


def _is_labelled(option: Any) -> bool:
    """Whether a DropdownControl option is a (label, value) pair, not a plain value such as (3, 3)."""
    return isinstance(option, tuple) and len(option) == 2 and isinstance(option[0], str)


def _describe(name: str, label: str | None) -> str:
    return label if label is not None else name.replace("_", " ")


def _decimals(step: float) -> int:
    """How many decimals a slider with this step must show (0.05 -> 2)."""
    return max(0, -Decimal(str(step)).normalize().as_tuple().exponent)


SLIDER_TRACK, DROPDOWN_BOX = "24em", "16em"


def _align(controls) -> None:
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


def _static(data: dict) -> str:
    """One output as HTML that needs no kernel and no script: inline SVG, a PNG as a data URI, or HTML (a table)."""
    if "image/svg+xml" in data:
        return str(data["image/svg+xml"])
    if "image/png" in data:
        return f'<img src="data:image/png;base64,{data["image/png"]}" alt="chart">'
    return str(data.get("text/html", ""))


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


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


def _summary(error: Exception) -> str:
    """``ValueError: first line of the message``, at most 200 characters."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}"[:200] if lines else type(error).__name__


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"
