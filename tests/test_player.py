"""`ModelPlayer` without a kernel: Step, Reset, the end of a run, a failed step, and Play and Pause in an event loop.

The mechanics are tested on the Beer Game with a one-point view that shows the round (so that a frame is cheap and
its content known); the last test plays every model's own state view."""

import asyncio
import base64
import re

import altair as alt
import pandas as pd
import pytest

from coordkit import views
from coordkit.live_chart import LiveChart
from coordkit.model import models
from coordkit.player import ModelPlayer, model_player
from coordkit.rep.beer_game.model import BeerGame
from coordkit.snapshot import LiveMark
from coordkit.ui import ExperimentPanel


def round_view(game: BeerGame) -> alt.Chart:
    """The round as one point, and in the title."""
    at = pd.DataFrame({"round": [game.steps]})
    return alt.Chart(at, title=f"round {game.steps}").mark_point().encode(alt.X("round:Q"))


def player(**options) -> ModelPlayer:
    return ModelPlayer(BeerGame, ["protocol", "stages"], view=round_view, **options)


def shown_round(played: ModelPlayer) -> int:
    (chart,) = played.output.children
    assert isinstance(chart, LiveChart)
    (values,) = chart.spec["datasets"].values()
    return values[0]["round"]


def test_a_player_starts_at_step_zero_and_steps_one_step_at_a_time():
    played = player()
    assert played.model.steps == 0 and shown_round(played) == 0
    assert played.clock.value == "<span>round 0</span>"
    assert "done in" in played.status.value
    assert played.step() is True
    assert played.model.steps == 1 and shown_round(played) == 1
    assert "round 1" in played.clock.value and "done in" in played.status.value
    played.step_button.click()
    assert played.model.steps == 2 and shown_round(played) == 2


def test_a_player_stops_cleanly_at_the_models_end():
    played = player(fixed={"rounds": 6})
    assert played.run_to_end() is played.model
    assert played.model.steps == 6 and not played.model.running and shown_round(played) == 6
    assert "the run ended at round 6" in played.clock.value
    assert played.play_button.disabled and played.step_button.disabled
    assert played.step() is False and played.model.steps == 6


def test_reset_and_a_changed_control_make_the_model_anew_and_play_it_as_a_run_does():
    played = player(start={"stages": 3})
    for _ in range(4):
        played.step()
    played.reset_button.click()
    assert played.model.steps == 0 and shown_round(played) == 0 and not played.play_button.disabled
    played.controls["stages"].value = 5
    played.controls["seed"].value = 7
    assert played.model.steps == 0 and played.model.stages == 5
    played.run_to_end()
    expected = BeerGame(protocol=BeerGame.parameters["protocol"].default, stages=5, rng=7).run().frame()
    pd.testing.assert_frame_equal(played.model.frame(), expected)


def test_a_player_starts_at_the_seed_a_notebook_gives():
    played = player(start={"seed": 7, "stages": 3})
    assert played.values["seed"] == 7 and played.values["stages"] == 3
    assert played.model.frame().equals(BeerGame(stages=3, rng=7).frame())


def test_a_player_closes_a_model_it_replaces():
    played = player()
    closed = []
    played.model.close = lambda: closed.append(True)
    played.reset_button.click()
    assert closed == [True]


def test_a_failed_step_stops_the_player_and_says_what_failed():
    played = player()
    played.step()

    def broken() -> None:
        raise ValueError("the books do not balance")

    played.model.step = broken
    assert played.step() is False
    assert "error: ValueError: the books do not balance" in played.status.value
    assert "stopped at round 1 by an error" in played.clock.value
    assert not played.output.children and played.play_button.disabled and played.step_button.disabled
    played.reset_button.click()
    assert played.last_error is None and played.model.steps == 0 and played.output.children


def test_a_player_is_a_panels_parts_with_its_bar_after_the_controls_not_a_subclass_of_a_panel():
    played = player(title="Beer Game")
    heading, controls, bar, status_line, output, mark = played.widget.children
    assert "Beer Game" in heading.value and list(controls.children) == list(played.controls.values())
    buttons = [played.play_button, played.step_button, played.reset_button, played.speed, played.clock]
    assert list(bar.children) == buttons and status_line.children == (played.status,) and output is played.output
    assert isinstance(mark, LiveMark) and mark.key == played.snapshot.key
    assert not isinstance(played, ExperimentPanel)


@pytest.mark.parametrize("fps", [0, 21, 2.5])
def test_a_player_refuses_a_speed_it_cannot_play(fps):
    with pytest.raises(ValueError, match=f"fps={fps!r}: a player plays from 1 to 20 frames a second"):
        player(fps=fps)


def test_play_needs_an_event_loop():
    with pytest.raises(RuntimeError, match="needs a running event loop"):
        player().play()


class Gates:
    """The player's waits between steps, each a future the test resolves: Play's steps and Pause in an order the test
    sets, with no clock and no timing."""

    def __init__(self, played: ModelPlayer) -> None:
        self.waiting: asyncio.Queue[asyncio.Future] = asyncio.Queue()
        played.stepper.wait = self._wait

    async def _wait(self, _seconds: float) -> None:
        gate = asyncio.get_running_loop().create_future()
        self.waiting.put_nowait(gate)
        await gate

    async def after_step(self, played: ModelPlayer, step: int) -> asyncio.Future:
        """Let Play go on until it waits after ``step``; that wait's gate, unresolved."""
        while True:
            gate = await self.waiting.get()
            if played.model.steps == step:
                return gate
            gate.set_result(None)


async def ended(task: asyncio.Task) -> None:
    """Wait until Play's task is over (cancelled by Pause or ended by itself)."""
    await asyncio.wait([task])


def assert_paused_at(played: ModelPlayer, step: int) -> None:
    assert played.model.steps == step and shown_round(played) == step, (played.model.steps, shown_round(played))
    assert played.paused_at == step and played.playing is None and played.play_button.description == "Play"
    assert played.clock.value == f'<span data-paused-at="{step}">paused at round {step}</span>'


def test_pause_between_two_steps_holds_at_the_step_shown():
    async def scenario() -> None:
        played = player()
        gates = Gates(played)
        played.play_button.click()
        task = played.playing
        assert task and played.play_button.description == "Pause" and "playing" in played.clock.value
        gate = await gates.after_step(played, 3)
        played.play_button.click()  # Pause
        await ended(task)
        assert gate.cancelled() and gates.waiting.empty()
        assert_paused_at(played, 3)

    asyncio.run(scenario())


def test_pause_holds_when_the_next_step_is_already_due():
    """The wait is over and Play's next step scheduled in the event loop, not yet started, when Pause is handled (as
    on a loaded machine, where the kernel hears Pause late): that step never starts."""

    async def scenario() -> None:
        played = player()
        gates = Gates(played)
        played.play()
        task = played.playing
        gate = await gates.after_step(played, 2)
        gate.set_result(None)  # the step after is due: its task wakes at the loop's next turn ...
        played.pause()  # ... but Pause comes first
        assert not task.done()
        await ended(task)
        assert task.cancelled() and gates.waiting.empty()
        assert_paused_at(played, 2)

    asyncio.run(scenario())


def test_pause_during_a_step_lets_that_step_finish_and_be_drawn_and_starts_none_after():
    """Pause handled while a step is under way (here while its frame is made; in a kernel, a step that turns the event
    loop, as an LLM round may): the step finishes, its frame is drawn, and the clock names it."""

    async def scenario() -> None:
        def view_hearing_pause(game: BeerGame) -> alt.Chart:
            if game.steps == 4:
                played.pause()
            return round_view(game)

        played = ModelPlayer(BeerGame, ["protocol", "stages"], view=view_hearing_pause)
        played.stepper.wait = lambda _seconds: asyncio.sleep(0)  # no wait between steps
        played.play()
        task = played.playing
        await ended(task)
        assert task.cancelled()
        assert_paused_at(played, 4)

    asyncio.run(scenario())


def test_pause_and_play_again_at_once_play_one_step_at_a_time():
    """The old play's due step is dropped; the new play steps from where Pause held."""

    async def scenario() -> None:
        played = player()
        gates = Gates(played)
        played.play()
        first = played.playing
        (await gates.after_step(played, 1)).set_result(None)
        played.pause()
        played.play()
        second = played.playing
        assert first is not second and played.paused_at is None
        gate = await gates.after_step(played, 2)
        assert first.cancelled() and gates.waiting.empty() and "round 2: playing" in played.clock.value
        played.pause()
        await ended(second)
        assert gate.cancelled()
        assert_paused_at(played, 2)

    asyncio.run(scenario())


def test_step_and_reset_after_pause_leave_the_paused_clock():
    async def scenario() -> None:
        played = player()
        gates = Gates(played)
        played.play()
        await gates.after_step(played, 1)
        played.pause()
        played.step_button.click()
        assert played.paused_at is None and played.clock.value == "<span>round 2</span>"
        played.play()
        await gates.after_step(played, 3)
        played.reset_button.click()
        assert played.playing is None and played.paused_at is None and played.clock.value == "<span>round 0</span>"

    asyncio.run(scenario())


def test_play_plays_to_the_models_end_and_stops_there():
    async def scenario() -> None:
        played = player(fps=20)
        played.stepper.wait = lambda _seconds: asyncio.sleep(0)
        played.play()
        await played.playing
        assert not played.model.running and played.model.steps == played.model.rounds and played.playing is None
        assert "the run ended" in played.clock.value and played.play_button.description == "Play"
        assert played.play_button.disabled and played.paused_at is None

    asyncio.run(scenario())


def test_a_changed_control_while_playing_stops_the_play():
    async def scenario() -> None:
        played = player()
        gates = Gates(played)
        played.play()
        task = played.playing
        gate = await gates.after_step(played, 2)
        played.controls["stages"].value = 6  # (a change soon after the last run is made after a pause: a burst's)
        assert played.playing is None
        await ended(task)
        assert gate.cancelled() and gates.waiting.empty()
        while played.inputs._pending is not None:  # the new model, made after the burst's pause
            await asyncio.sleep(0.01)
        assert played.model.steps == 0 and played.model.stages == 6 and played.paused_at is None
        assert played.clock.value == "<span>round 0</span>"

    asyncio.run(scenario())


def test_the_snapshot_shows_the_step_on_screen():
    played = player()
    for _ in range(3):
        played.step()
    pictures = re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', played.snapshot_html())
    assert [">round 3<" in base64.b64decode(picture).decode() for picture in pictures] == [True]
    assert played.snapshot.values == played.settings


FAMILY_MODELS = {name: model for name, model in models().items() if model.__module__.startswith("coordkit.")}


@pytest.mark.parametrize("model", list(FAMILY_MODELS.values()), ids=list(FAMILY_MODELS))  # (not the tests' toys)
def test_every_model_plays_in_a_player_with_its_own_view(model):
    played = model_player(model, [], fixed=dict(model.small))
    assert played.last_error is None and played.model.steps == 0
    for _ in range(3):
        played.step()
    assert played.last_error is None, played.status.value
    assert played.model.steps == min(3, played.model.steps) and isinstance(played.output.children[0], LiveChart)
    played.reset_button.click()
    assert played.model.steps == 0
    if hasattr(played.model, "close"):
        played.model.close()
    assert views.view_of(model) is played.chart_area.chart
