"""`ModelPlayer`: one run of a model played step by step on screen, as NetLogo's Go button plays a model.

A player is the parts of a panel (:mod:`coordkit.panel`) with a :class:`~coordkit.panel.stepper.Stepper` as its
runner: the controls of the model's declared parameters (the same as its ``model_panel``'s) and a seed, ▶ Play /
⏸ Pause, Step, Reset and a speed, a status line, and the model's state view (:mod:`coordkit.views`) in the chart
area, redrawn in place at every step until Pause or the model's end::

    model_player(BeerGame, ["protocol", "stages"])  # as the last expression of a cell, shows itself

Changing a control, or Reset, makes the model anew at step 0; the Stepper's docstring says how Play and Pause run in
the kernel. Shown in a notebook, a player keeps the view of the step it shows as its snapshot, as every panel
does, so that a saved notebook shows the last frame.
"""

import asyncio
from collections.abc import Sequence
from typing import Any

from coordkit import views
from coordkit.model import Model
from coordkit.panel import Panel
from coordkit.panel.chart_area import ChartArea
from coordkit.panel.controls import Controls
from coordkit.panel.run_once import RunOnce
from coordkit.panel.status import StatusLine
from coordkit.panel.stepper import DEFAULT_SPEED, SPEEDS, Stepper
from coordkit.policy_registry import policy_parameters
from coordkit.ui import SliderControl, controls

__all__ = ["SPEEDS", "ModelPlayer", "model_player"]


class ModelPlayer(Panel):
    """Controls for ``model``'s parameters ``names`` and a seed; ▶ Play, Step, Reset and a speed; the model's state
    view, redrawn at every step.

    ``view`` is the model's declared state view unless given; ``fixed``, ``start``, ``seeds`` and ``overrides`` are
    as for :func:`~coordkit.ui.model_panel`. ``fps`` is the speed it starts at (frames a second). Its buttons,
    ``step``, ``play``, ``pause`` and the rest are its Stepper's (``stepper``)."""

    def __init__(
        self,
        model: type[Model],
        names: Sequence[str],
        *,
        view: views.StateView | None = None,
        fixed: dict[str, Any] | None = None,
        start: dict[str, Any] | None = None,
        seeds: tuple[int, int] = (0, 19),
        title: str | None = None,
        fps: int = DEFAULT_SPEED,
        **overrides: dict,
    ) -> None:
        fixed = dict(fixed or {})
        start = dict(start or {})
        seed = SliderControl("seed", *seeds, default=start.pop("seed", seeds[0]), **overrides.pop("seed", {}))

        def new_model(seed: int, **values: Any) -> Model:
            """A new model at step 0."""
            return model(**fixed, **values, rng=seed)

        inputs = Controls([*controls(model, names, start=start, **overrides), seed])
        status = StatusLine()
        chart_area = ChartArea(view or views.view_of(model))
        self.stepper = Stepper(RunOnce(new_model, inputs, chart_area, status), fps)
        super().__init__(inputs, status, chart_area, self.stepper.runner, self.stepper.buttons, title)
        self.widget.add_class("coordkit-player")
        self.play_button, self.step_button = self.stepper.play_button, self.stepper.step_button
        self.reset_button, self.speed, self.clock = self.stepper.reset_button, self.stepper.speed, self.stepper.clock
        self.stepper.follow()
        self.refresh()

    @property
    def model(self) -> Model | None:
        """The model on screen (None if the last reset failed)."""
        return self.stepper.model

    @property
    def playing(self) -> asyncio.Task | None:
        """Play's task while it plays, else None."""
        return self.stepper.playing

    @property
    def paused_at(self) -> int | None:
        """The step at which Pause took hold, until the model moves or is made anew."""
        return self.stepper.paused_at

    @property
    def step_possible(self) -> bool:
        """Whether the model on screen has a next step."""
        return self.stepper.step_possible

    def refresh(self) -> None:
        """Pause, and make the model anew at step 0 with the current settings (as Reset does)."""
        self.stepper.reset()

    def step(self) -> bool:
        """One step, redrawn; whether the model runs on after it (:meth:`Stepper.step`)."""
        return self.stepper.step()

    def run_to_end(self) -> Model | None:
        """Step until the model's end (or a failed step), redrawing each step; the model."""
        return self.stepper.run_to_end()

    def play(self) -> None:
        """Step at the speed set until Pause or the model's end, in the kernel's event loop (a notebook's)."""
        self.stepper.play()

    def pause(self) -> None:
        """Stop playing; no step starts from now on (:meth:`Stepper.pause`)."""
        self.stepper.pause()


def model_player(
    model: type[Model], names: Sequence[str] | None = None, *, policy: Any = None, **options: Any
) -> ModelPlayer:
    """A player for ``model`` with controls for its parameters ``names`` (see :class:`ModelPlayer`); without
    ``names``, its policy parameters (and its protocol, if it has one).

    ``policy`` (a student's rule: a function, a Policy or a registered name) starts the model's policy dropdown at
    it, by its name, beside the built-in rules: the dropdown of the first side of a pair (``policy_a``), of the whole
    population (``policy``)."""
    names = list(names) if names is not None else _policy_controls(model)
    if policy is not None:
        seat = _seat(model)
        names += [] if seat in names else [seat]
        options["start"] = {**(options.get("start") or {}), seat: policy}
    return ModelPlayer(model, names, **options)


def _policy_controls(model: type[Model]) -> list[str]:
    protocol = ["protocol"] if "protocol" in model.parameters.names else []
    return [*protocol, *(param.name for param in policy_parameters(model))]


def _seat(model: type[Model]) -> str:
    """The policy parameter a student's rule takes in ``model``: its contest's first seat, or its one policy."""
    contest = getattr(model, "contest", None)
    if contest is not None:
        return contest.parameter
    chosen = policy_parameters(model)
    if len(chosen) != 1:
        raise TypeError(f"model_player: {model.__name__} has no one policy parameter to start at policy=")
    return chosen[0].name
