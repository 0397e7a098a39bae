"""The kit's players (``coordkit.player.ModelPlayer``) in the page: pressing Play, Pause, Step and Reset as a user does,
and recording what the player drew meanwhile: each frame's time (its live chart's ``data-draws`` going up) and each
text its clock showed ("round 3: playing").
"""

import re
from dataclasses import dataclass

from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from coordkit.player import SPEEDS

TOP_SPEED = SPEEDS[1]  # frames a second

# In the page: record from now on each draw of the player's live chart (time, count), each new text of its clock, and
# each text of its status line (a frame's "done in 12 ms": the kernel's share).
_JS_RECORD = r"""
(panel) => {
    if (panel.__coordkit_player) panel.__coordkit_player.stop();
    const chart = panel.querySelector('.coordkit-panel-chart .coordkit-live-chart');
    const clock = panel.querySelector('.coordkit-player-clock');
    const status = panel.querySelector('.coordkit-panel-status');
    const record = {draws: [], clocks: [clock.innerText.trim()], statuses: []};
    const drawn = new MutationObserver(() => record.draws.push([performance.now(), Number(chart.dataset.draws || 0)]));
    drawn.observe(chart, {attributes: true, attributeFilter: ['data-draws']});
    const ticked = new MutationObserver(() => {
        const text = clock.innerText.trim();
        if (record.clocks[record.clocks.length - 1] !== text) record.clocks.push(text);
    });
    ticked.observe(clock, {childList: true, subtree: true, characterData: true});
    const reported = new MutationObserver(() => record.statuses.push(status.innerText.trim()));
    reported.observe(status, {childList: true, subtree: true, characterData: true});
    panel.__coordkit_player = {record, stop: () => [drawn, ticked, reported].forEach(seen => seen.disconnect())};
}
"""

_JS_RECORDED = "(panel) => panel.__coordkit_player.record"

STEP = re.compile(r"\b(\d[\d,]*)\b")
ENDED = "ended"


@dataclass
class Recording:
    """What a player drew since ``record``: each frame's time (ms, the page's clock), its clock's texts and its status
    line's."""

    frame_times: list[float]
    clocks: list[str]
    statuses: list[str]

    @property
    def steps(self) -> list[int]:
        """The steps the clock showed, in order."""
        return [step_of(text) for text in self.clocks if step_of(text) is not None]

    @property
    def intervals(self) -> list[float]:
        """The time from each frame to the next (ms)."""
        return [later - earlier for earlier, later in zip(self.frame_times, self.frame_times[1:], strict=False)]


def is_player(panel) -> bool:
    """Whether the panel is a player (it has the bar of Play, Step and Reset)."""
    return panel.locator(".coordkit-player-bar").count() > 0


def clock(panel) -> str:
    """The player's clock: "round 3", "round 3: playing", "the run ended at round 20: ..."."""
    return panel.locator(".coordkit-player-clock").inner_text().strip()


def step_of(text: str) -> int | None:
    """The step a clock text names ("round 1,203: playing" → 1203), or None."""
    found = STEP.search(text)
    return int(found[1].replace(",", "")) if found else None


def press(panel, button: str) -> None:
    """Click the player's "play" (Play or Pause: one button), "step" or "reset" button."""
    panel.locator(f".coordkit-player-{button}").click()


def reset(panel, timeout: float = 300.0) -> None:
    """Press Reset and wait until the clock shows the new model at its step 0, not playing (the page hears of it a
    message later: a recording started before would begin with the old clock)."""
    press(panel, "reset")
    panel.page.wait_for_function(
        """panel => {
            const text = panel.querySelector('.coordkit-player-clock').innerText.trim();
            const step = text.match(/\\d[\\d,]*/);
            return step !== null && step[0] === '0' && !text.includes('playing');
        }""",
        arg=panel.element_handle(),
        timeout=timeout * 1000,
    )


def record(panel) -> None:
    """Start recording the player's frames and clock."""
    panel.element_handle().evaluate(_JS_RECORD)


def recorded(panel) -> Recording:
    """What the player drew since ``record``."""
    found = panel.element_handle().evaluate(_JS_RECORDED)
    return Recording([time for time, _ in found["draws"]], found["clocks"], found["statuses"])


def play(panel, frames: int, timeout: float = 300.0) -> Recording:
    """Press Play and wait until ``frames`` frames are drawn or the run ends; what it drew."""
    record(panel)
    press(panel, "play")
    panel.page.wait_for_function(
        """([panel, frames]) => {
            const record = panel.__coordkit_player.record;
            return record.draws.length >= frames || record.clocks[record.clocks.length - 1].includes('ended');
        }""",
        arg=[panel.element_handle(), frames],
        timeout=timeout * 1000,
    )
    return recorded(panel)


def pause(panel, timeout: float = 120.0) -> int | None:
    """Press Pause, and wait until the clock says where Pause took hold ("paused at round 5", its ``data-paused-at``):
    that step, which the clock must go on showing (a step the kernel was running when Pause came finishes; none starts
    after). None if the run ended first (the button is then disabled, or the clock says the run ended)."""
    button = panel.locator(".coordkit-player-play")
    if ENDED in clock(panel) or button.is_disabled():
        return None
    try:  # a renderer starved by a loaded machine took over 10 s to take a click on an enabled, visible button
        button.click(timeout=timeout * 1000)
    except PlaywrightTimeoutError:
        if ENDED in clock(panel):  # (it ended between the look and the click)
            return None
        raise
    panel.page.wait_for_function(
        """panel => {
            const clock = panel.querySelector('.coordkit-player-clock');
            return clock.querySelector('[data-paused-at]') || clock.innerText.includes('ended');
        }""",
        arg=panel.element_handle(),
        timeout=timeout * 1000,
    )
    return paused_at(panel)


def paused_at(panel) -> int | None:
    """The step at which the player says Pause took hold, or None if it does not say it is paused."""
    found = panel.locator(".coordkit-player-clock [data-paused-at]")
    return int(found.get_attribute("data-paused-at")) if found.count() else None


def set_speed(panel, frames_a_second: int) -> None:
    """Set the speed control by typing into its readout, as a user can."""
    readout = panel.locator(".coordkit-player-speed .widget-readout")
    readout.click()
    readout.press("Control+a")
    readout.type(str(frames_a_second))
    readout.press("Enter")
    panel.page.wait_for_function(
        "([panel, value]) => panel.querySelector('.coordkit-player-speed .widget-readout').innerText.trim() === value",
        arg=[panel.element_handle(), str(frames_a_second)],
        timeout=60_000,
    )
