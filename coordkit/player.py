"""`ModelPlayer`: one run of a model played step by step on screen, as NetLogo's Go button plays a model.

A player is a panel (:class:`~coordkit.ui.ExperimentPanel`) whose run is a model at step 0 and whose chart is the
model's state view (:mod:`coordkit.views`). Beside the controls of the model's declared parameters (the same as its
``model_panel``'s) and a seed, it has ▶ Play / ⏸ Pause, Step, Reset and a speed: Play calls ``model.step()`` and
redraws the view in place, so many times a second, until Pause or the model's end::

    model_player(BeerGame, ["protocol", "stages"])  # as the last expression of a cell, shows itself

Changing a control, or Reset, makes the model anew at step 0. Play runs in the kernel's event loop, between the
messages of the page, so that Pause is heard between two steps; without an event loop (a script, a test) ``step``
and ``run_to_end`` play it. Pause holds whatever the kernel's latency: once it is handled no step starts, however
soon the next was due (a step already running finishes and is drawn), and the clock names the step it took hold at,
"paused at round 5" (its ``data-paused-at``), which the page must go on showing. Shown in a notebook, a player keeps
the view of the step it shows as its static view, as every panel does, so that a saved notebook shows the last frame.
"""

import asyncio
import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as widgets

from coordkit import views
from coordkit.model import Model
from coordkit.policy_registry import policy_parameters
from coordkit.ui import ExperimentPanel, SliderControl, _running_loop, controls

SPEEDS = (1, 20)  # frames a second the speed control offers
DEFAULT_SPEED = 5


class ModelPlayer(ExperimentPanel):
    """Controls for ``model``'s parameters ``names`` and a seed; ▶ Play, Step, Reset and a speed; the model's state
    view, redrawn at every step.

    ``view`` is the model's declared state view unless given; ``fixed``, ``start``, ``seeds`` and ``overrides`` are
    as for :func:`~coordkit.ui.model_panel`. ``fps`` is the speed it starts at (frames a second)."""

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
        if not (isinstance(fps, int) and SPEEDS[0] <= fps <= SPEEDS[1]):
            low, high = SPEEDS
            raise ValueError(f"fps={fps!r}: a player plays from {low} to {high} frames a second, a whole number")
        self.model_class = model
        self.fixed = dict(fixed or {})
        self.playing: asyncio.Task | None = None
        self.paused_at: int | None = None  # the step at which Pause took hold, until the model moves or is made anew
        start = dict(start or {})
        seed = SliderControl("seed", *seeds, default=start.pop("seed", seeds[0]), **overrides.pop("seed", {}))
        params = [*controls(model, names, start=start, **overrides), seed]
        super().__init__(self._new_model, params, chart=view or views.view_of(model), title=title, run_on_start=False)

        button = widgets.Layout(width="7em")
        self.play_button = widgets.Button(description="Play", icon="play", button_style="success", layout=button)
        self.step_button = widgets.Button(description="Step", icon="step-forward", layout=button)
        self.reset_button = widgets.Button(description="Reset", icon="undo", layout=button)
        self.speed = widgets.IntSlider(
            value=fps,
            min=SPEEDS[0],
            max=SPEEDS[1],
            description="frames a second",
            continuous_update=False,
            style={"description_width": "initial"},
            layout=widgets.Layout(width="22em"),
        )
        self.clock = widgets.HTML()
        self.play_button.on_click(lambda _: self.pause() if self.playing else self.play())
        self.step_button.on_click(lambda _: self._step_by_hand())
        self.reset_button.on_click(lambda _: self.refresh())
        bar = widgets.HBox([self.play_button, self.step_button, self.reset_button, self.speed, self.clock])
        parts = {
            "": self.widget,
            "-bar": bar,
            "-play": self.play_button,
            "-step": self.step_button,
            "-reset": self.reset_button,
            "-speed": self.speed,
            "-clock": self.clock,
        }
        for suffix, part in parts.items():
            part.add_class(f"coordkit-player{suffix}")
        children = list(self.widget.children)
        children.insert(children.index(self.controls_box) + 1, bar)
        self.widget.children = children
        self.refresh()

    @property
    def model(self) -> Model | None:
        """The model on screen (None if the last reset failed)."""
        return self.result

    def refresh(self) -> None:
        """Pause, and make the model anew at step 0 with the current settings (a change of a control, Reset)."""
        self.pause()
        old = self.model
        if old is not None and hasattr(old, "close"):  # it holds processes or sockets (Agora's)
            old.close()
        self.paused_at = None
        super().refresh()
        self._show_clock()

    def step(self) -> bool:
        """One step of the model, and its view redrawn; whether the model runs on after it (False at its end, after
        a failed step, or when there is no model)."""
        model = self.model
        if model is None or not model.running or self.last_error is not None:
            return False
        self.paused_at = None
        went_well = self._present(lambda: _stepped(model))
        self._show_clock()
        return went_well and model.running

    def run_to_end(self) -> Model | None:
        """Step until the model's end (or a failed step), redrawing each step; the model."""
        while self.step():
            pass
        return self.model

    def play(self) -> None:
        """Step at the speed set until Pause or the model's end, in the kernel's event loop (a notebook's)."""
        if self.playing or not self.step_possible:
            return
        loop = _running_loop()
        if loop is None:
            raise RuntimeError("play() needs a running event loop (a notebook kernel's): use step() or run_to_end()")
        self.paused_at = None
        self.playing = loop.create_task(self._play())
        self._show_clock()

    def pause(self) -> None:
        """Stop playing: from now on no step starts, even one already due (the play's task is cancelled at its wait,
        and checks before each step that it is still the one playing). A step running when Pause comes (from within
        it, as a nested event loop may bring it) finishes and is drawn; ``paused_at`` is the step shown then."""
        if self.playing:
            self.playing.cancel()
            self.playing = None
            self.paused_at = self.model.steps if self.model is not None else None  # a running step's own number
        self._show_clock()

    @property
    def step_possible(self) -> bool:
        """Whether the model on screen has a next step."""
        return self.model is not None and self.model.running and self.last_error is None

    async def _play(self) -> None:
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        try:
            while self.playing is me:  # not once Pause (or a new model) has taken the play from it
                started = loop.time()
                if not self.step():
                    break
                await self._wait(max(0.0, 1 / self.speed.value - (loop.time() - started)))
        finally:
            if self.playing is me:  # it ended by itself: at the model's end or a failed step
                self.playing = None
                self._show_clock()

    async def _wait(self, seconds: float) -> None:
        """The wait from one step to the next (the tests replace it to order Pause and the steps)."""
        await asyncio.sleep(seconds)

    def _on_change(self, change: dict) -> None:
        """A changed control pauses at once, even when the model is made anew only after a burst of changes."""
        self.pause()
        super()._on_change(change)

    def _step_by_hand(self) -> None:
        self.pause()
        self.step()

    def _new_model(self, seed: int, **values: Any) -> Model:
        """A new model at step 0."""
        return self.model_class(**self.fixed, **values, rng=seed)

    def _show_clock(self) -> None:
        """The step on screen and what Play would do, and which buttons can do anything."""
        if not hasattr(self, "clock"):
            return
        model = self.model
        can_step = self.step_possible
        self.play_button.description, self.play_button.icon = ("Pause", "pause") if self.playing else ("Play", "play")
        self.play_button.disabled = not (can_step or self.playing)
        self.step_button.disabled = not can_step
        paused = ""
        if model is None:
            text = "no model: see the status line"
        elif self.last_error is not None:
            text = f"stopped at {_step_name(model)} {model.steps} by an error: Reset to play again"
        elif not model.running:
            text = f"the run ended at {_step_name(model)} {model.steps}: Reset to play it again"
        elif self.playing:
            text = f"{_step_name(model)} {model.steps}: playing"
        elif self.paused_at is not None:
            text, paused = f"paused at {_step_name(model)} {self.paused_at}", f' data-paused-at="{self.paused_at}"'
        else:
            text = f"{_step_name(model)} {model.steps}"
        self.clock.value = f"<span{paused}>{html.escape(text)}</span>"


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


def _stepped(model: Model) -> Model:
    model.step()
    return model


_STEP_NAMES: dict[type[Model], str] = {}


def _step_name(model: Model) -> str:
    """What the model calls a step, as its frame's first column names it ("round", "season", "tick")."""
    kind = type(model)
    if kind not in _STEP_NAMES:
        _STEP_NAMES[kind] = str(model.frame().columns[0])
    return _STEP_NAMES[kind]
