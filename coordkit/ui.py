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

Shown in a notebook, a panel keeps a snapshot of its chart at the settings its controls hold, for readers
without a kernel (:mod:`coordkit.snapshot`). A panel is assembled from the parts in :mod:`coordkit.panel`
(controls, a status line, a chart area and a runner); a player (:mod:`coordkit.player`) is another assembly of them.

A model's declared parameters give the controls directly (:func:`controls`), and :func:`model_panel` builds the
whole panel for a model: controls, a seed slider, and the model played out with the chosen values::

    model_panel(BeerGame, ["protocol", "stages", "step_size"], chart=show, step_size={"label": "shock size"})
"""

import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import ipywidgets as widgets

from coordkit import parameters
from coordkit.model import Model
from coordkit.panel import Panel
from coordkit.panel.chart_area import ChartArea
from coordkit.panel.controls import Controls
from coordkit.panel.run_once import RunOnce, takes_progress
from coordkit.panel.status import StatusLine
from coordkit.policy_registry import registered_policies

CONTROL_STYLE = {"description_width": "initial"}

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


class ExperimentPanel(Panel):
    """Controls, a status line and a chart area; every change of a control runs the experiment again
    (:class:`~coordkit.panel.run_once.RunOnce`).

    A change runs the experiment at once; inside Jupyter, the rest of a burst of changes runs it once more, with
    the latest values, once no change has come for `debounce` seconds (:class:`~coordkit.panel.controls.Controls`).
    ``chart(result)`` gives what is shown: Altair charts are drawn in the page, anything else (a table) is shown as
    a notebook output (:class:`~coordkit.panel.chart_area.ChartArea`). A run (or a chart) that raises clears the
    chart area and its snapshot, and the status line says what failed; ``result`` is then None if the run itself
    failed, and ``last_error`` holds the error. If `run` takes a ``progress`` argument, it gets a
    ``progress(fraction)`` callable that drives a progress bar.

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
        controls = Controls(params, debounce)
        status = StatusLine(progress_bar=takes_progress(run))
        chart_area = ChartArea(chart)
        runner = RunOnce(run, controls, chart_area, status, on_demand=on_demand)
        super().__init__(controls, status, chart_area, runner, runner.buttons, title)
        runner.follow()
        if run_on_start:
            self.refresh()

    def refresh(self) -> None:
        """Run the experiment now with the current values, and show the result."""
        self.runner.run()


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
