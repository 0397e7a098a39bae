"""`Stepper`: the runner of a player, which plays one run of a model step by step, as NetLogo's Go button does.

Its bar has ▶ Play / ⏸ Pause, Step, Reset, a speed and a clock. A :class:`~coordkit.panel.run_once.RunOnce` makes
the model at step 0 (at a change of the controls, or Reset); Play calls ``model.step()`` and redraws the chart area,
so many times a second, until Pause or the model's end. Play runs in the kernel's event loop, between the messages of
the page, so that Pause is heard between two steps; without an event loop (a script, a test) ``step`` and
``run_to_end`` play it. Pause holds whatever the kernel's latency: once it is handled no step starts, however soon the
next was due (a step already running finishes and is drawn), and the clock names the step it took hold at, "paused at
round 5" (its ``data-paused-at``), which the page must go on showing.
"""

import asyncio
import html

import ipywidgets as widgets

from coordkit.model import Model
from coordkit.panel.controls import running_loop
from coordkit.panel.run_once import RunOnce

SPEEDS = (1, 20)  # frames a second the speed control offers
DEFAULT_SPEED = 5


class Stepper:
    """Play, Pause, Step and Reset over the model that ``reset`` (a RunOnce) makes, at ``fps`` frames a second to
    start with. ``buttons`` are the widgets it adds to the panel: its bar."""

    def __init__(self, reset: RunOnce, fps: int = DEFAULT_SPEED) -> None:
        if not (isinstance(fps, int) and SPEEDS[0] <= fps <= SPEEDS[1]):
            low, high = SPEEDS
            raise ValueError(f"fps={fps!r}: a player plays from {low} to {high} frames a second, a whole number")
        self.runner = reset
        self.playing: asyncio.Task | None = None
        self.paused_at: int | None = None  # the step at which Pause took hold, until the model moves or is made anew
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
        self.reset_button.on_click(lambda _: self.reset())
        bar = widgets.HBox([self.play_button, self.step_button, self.reset_button, self.speed, self.clock])
        parts = {
            "-bar": bar,
            "-play": self.play_button,
            "-step": self.step_button,
            "-reset": self.reset_button,
            "-speed": self.speed,
            "-clock": self.clock,
        }
        for suffix, part in parts.items():
            part.add_class(f"coordkit-player{suffix}")
        self.buttons = [bar]

    @property
    def model(self) -> Model | None:
        """The model on screen (None if the last reset failed)."""
        return self.runner.result

    @property
    def step_possible(self) -> bool:
        """Whether the model on screen has a next step."""
        return self.model is not None and self.model.running and self.runner.last_error is None

    def follow(self) -> None:
        """Pause at each change of the controls, at once, and make the model anew once a burst has settled."""
        self.runner.controls.on_change(self.pause)
        self.runner.controls.on_change(self.reset, debounced=True)

    def reset(self) -> None:
        """Pause, and make the model anew at step 0 with the current settings (a change of a control, Reset)."""
        self.pause()
        old = self.model
        if old is not None and hasattr(old, "close"):  # it holds processes or sockets (Agora's)
            old.close()
        self.paused_at = None
        self.runner.run()
        self._show_clock()

    def step(self) -> bool:
        """One step of the model, and its view redrawn; whether the model runs on after it (False at its end, after
        a failed step, or when there is no model)."""
        model = self.model
        if not self.step_possible:
            return False
        self.paused_at = None
        went_well = self.runner.present(lambda: _stepped(model))
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
        loop = running_loop()
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

    async def wait(self, seconds: float) -> None:
        """The wait from one step to the next (the tests replace it to order Pause and the steps)."""
        await asyncio.sleep(seconds)

    async def _play(self) -> None:
        loop = asyncio.get_running_loop()
        me = asyncio.current_task()
        try:
            while self.playing is me:  # not once Pause (or a new model) has taken the play from it
                started = loop.time()
                if not self.step():
                    break
                await self.wait(max(0.0, 1 / self.speed.value - (loop.time() - started)))
        finally:
            if self.playing is me:  # it ended by itself: at the model's end or a failed step
                self.playing = None
                self._show_clock()

    def _step_by_hand(self) -> None:
        self.pause()
        self.step()

    def _show_clock(self) -> None:
        """The step on screen and what Play would do, and which buttons can do anything."""
        model = self.model
        can_step = self.step_possible
        self.play_button.description, self.play_button.icon = ("Pause", "pause") if self.playing else ("Play", "play")
        self.play_button.disabled = not (can_step or self.playing)
        self.step_button.disabled = not can_step
        paused = ""
        if model is None:
            text = "no model: see the status line"
        elif self.runner.last_error is not None:
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
