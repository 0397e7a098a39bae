"""The kit's panels (``ExperimentPanel``, ``model_panel``) in the page: finding them and their controls, changing a
control as a user would, and waiting until the panel has run again and its chart has settled (``change_and_wait``,
which reports what happened as an ``Update``).
"""

import re
from collections.abc import Callable
from dataclasses import dataclass, field

STATUS_DONE = re.compile(r"^done in ")
STATUS_ERROR = re.compile(r"^error: ")


def panels(page):
    """A locator of every panel (``.coordkit-panel``) in the notebook, in order."""
    return page.locator(".jp-Notebook .coordkit-panel")


def wait_for_panels(page, expected: int, timeout: float = 120.0) -> None:
    """Wait until ``expected`` panels are shown and each status line says how its first run went."""
    page.wait_for_function(
        """(expected) => {
            const found = document.querySelectorAll('.jp-Notebook .coordkit-panel');
            if (found.length < expected) return false;
            return [...found].every(panel => {
                const status = panel.querySelector('.coordkit-panel-status');
                return status && /^(done in |error: )/.test(status.innerText.trim());
            });
        }""",
        arg=expected,
        timeout=timeout * 1000,
    )


def status_text(panel) -> str:
    """The panel's status line: "done in 23 ms", "running…" or "error: ..."."""
    return panel.locator(".coordkit-panel-status").inner_text().strip()


@dataclass
class Control:
    """One control of a panel: its kind ("slider", "dropdown", "checkbox"), label and locator."""

    kind: str
    label: str
    locator: object = field(repr=False)


def controls(panel) -> list[Control]:
    """The panel's controls, in order."""
    found = []
    widgets = panel.locator(
        ".coordkit-panel-controls > .widget-slider, .coordkit-panel-controls > .widget-dropdown,"
        " .coordkit-panel-controls > .widget-checkbox"
    )
    for index in range(widgets.count()):
        widget = widgets.nth(index)
        classes = widget.get_attribute("class") or ""
        kind = next(kind for kind in ("slider", "dropdown", "checkbox") if f"widget-{kind}" in classes)
        # a checkbox's first label is a hidden zero-width space; its description sits beside the box
        labels = widget.locator("label.widget-label-basic" if kind == "checkbox" else "label")
        label = labels.first.inner_text().strip() if labels.count() else ""
        found.append(Control(kind, label, widget))
    return found


def is_inactive(control: Control) -> bool:
    """Whether the panel has greyed the control out (``active_when``): its slider, select or checkbox is disabled."""
    return control.locator.locator("[disabled]").count() > 0


def slider_value(control: Control) -> tuple[float, float, float]:
    """(value, min, max) of a slider, from its handle's ARIA attributes."""
    handle = control.locator.locator(".noUi-handle").first
    return tuple(float(handle.get_attribute(name)) for name in ("aria-valuenow", "aria-valuemin", "aria-valuemax"))


def nudge_slider(control: Control, direction: int = +1) -> str:
    """Move a slider one step (ArrowRight for +1, ArrowLeft for -1; the other way at the end of its range).

    Returns the key pressed."""
    value, low, high = slider_value(control)
    key = "ArrowRight" if direction > 0 else "ArrowLeft"
    if key == "ArrowRight" and value >= high:
        key = "ArrowLeft"
    elif key == "ArrowLeft" and value <= low:
        key = "ArrowRight"
    handle = control.locator.locator(".noUi-handle").first
    handle.focus()
    handle.press(key)
    return key


def next_option(control: Control, direction: int = +1) -> str:
    """Select the dropdown's next option (the first after the last), or with ``direction=-1`` the previous one;
    returns the option's label."""
    select = control.locator.locator("select")
    options = select.locator("option").all_inner_texts()
    index = (select.evaluate("el => el.selectedIndex") + (1 if direction > 0 else -1)) % len(options)
    select.select_option(index=index)
    return options[index]


def toggle(control: Control) -> bool:
    """Tick or untick a checkbox; returns the new state."""
    box = control.locator.locator("input[type=checkbox]")
    box.click()
    return box.is_checked()


def change(control: Control, direction: int = +1) -> str:
    """Change one control once, as a user would; ``direction=-1`` undoes a dropdown's or a checkbox's change (and
    moves a slider the other way). Returns what was done ("ArrowRight", "option a2a", "ticked")."""
    if control.kind == "slider":
        return nudge_slider(control, direction)
    if control.kind == "dropdown":
        return f"option {next_option(control, direction)}"
    return "ticked" if toggle(control) else "unticked"


# How long (ms) a panel's chart must stay unchanged after its run has finished before the panel counts as settled.
QUIET_MS = 150

# What the chart area shows, slot by slot (live charts and outputs): an <img>'s source, an <svg>'s markup, a <canvas>'s
# pixels (Vega's canvas renderer: the markup of a redrawn canvas is the same), the text of anything else.
_JS_SIGNATURE = r"""
(chart) => [...chart.querySelectorAll('.coordkit-live-chart, .jp-OutputArea-output')].map(output => {
    const parts = [];
    for (const el of output.querySelectorAll('img, svg, canvas')) {
        const tag = el.tagName.toLowerCase();
        if (tag === 'img') parts.push(el.src);
        else if (tag === 'canvas') { try { parts.push(el.toDataURL()); } catch (e) { parts.push('canvas?'); } }
        else if (!el.parentElement.closest('svg')) parts.push(el.outerHTML);
    }
    return parts.length ? parts.join('|') : output.innerText;
}).join('\n')
"""

# In the page: watch a panel's status line and chart area from here on, to tell when a new run has finished and
# its chart has settled (the status line can show "done in" a moment before the new chart is in place).
_JS_ARM = r"""
(panel) => {
    const signature = SIGNATURE;
    if (panel.__coordkit_observers) panel.__coordkit_observers.forEach(observer => observer.disconnect());
    const status = panel.querySelector('.coordkit-panel-status');
    const chart = panel.querySelector('.coordkit-panel-chart');
    const state = {
        armed: performance.now(),
        chart_before: signature(chart),
        status_before: status.innerText.trim(),
        seen: [],               // status texts seen since armed
        running_at: null,       // when "running…" first showed
        done_at: null,          // when a "done in"/"error:" status followed it
        chart_changed_at: null, // the last change in the chart area
    };
    const look = () => {
        const text = status.innerText.trim();
        if (state.seen[state.seen.length - 1] !== text) state.seen.push(text);
        if (text.startsWith('running') && state.running_at === null) state.running_at = performance.now();
        if (state.running_at !== null && state.done_at === null && /^(done in |error: )/.test(text)) {
            state.done_at = performance.now();
        }
    };
    const statusObserver = new MutationObserver(records => {
        for (const record of records) {   // also the texts that were replaced within the same task
            for (const node of record.addedNodes) {
                const text = (node.textContent || '').trim();
                if (text.startsWith('running') && state.running_at === null) {
                    state.running_at = performance.now();
                    state.seen.push(text);
                }
            }
        }
        look();
    });
    statusObserver.observe(status, {childList: true, subtree: true, characterData: true});
    const chartObserver = new MutationObserver(() => { state.chart_changed_at = performance.now(); });
    chartObserver.observe(chart, {childList: true, subtree: true, characterData: true, attributes: true});
    panel.__coordkit_observers = [statusObserver, chartObserver];
    panel.__coordkit_state = state;
    panel.__coordkit_signature = signature;
}
""".replace("SIGNATURE", _JS_SIGNATURE.strip())

_JS_SETTLED = r"""
([panel, quiet]) => {
    const state = panel.__coordkit_state;
    const status = panel.querySelector('.coordkit-panel-status').innerText.trim();
    const now = performance.now();
    if (state.done_at === null && state.running_at !== null && /^(done in |error: )/.test(status)) {
        state.done_at = now;
    }
    if (state.done_at === null) return false;
    if (now - Math.max(state.done_at, state.chart_changed_at || 0) < quiet) return false;
    const chart = panel.querySelector('.coordkit-panel-chart');
    // every slot drawn: images loaded, and no live chart or output still empty (Vega draws a moment after)
    return [...chart.querySelectorAll('img')].every(img => img.complete && img.naturalWidth > 0)
        && [...chart.querySelectorAll('.coordkit-live-chart, .jp-OutputArea-output')]
            .every(o => o.childElementCount || o.innerText.trim());
}
"""

_JS_RESULT = r"""
(panel) => {
    const state = panel.__coordkit_state;
    if (panel.__coordkit_observers) panel.__coordkit_observers.forEach(observer => observer.disconnect());
    const chart = panel.querySelector('.coordkit-panel-chart');
    return {
        status_before: state.status_before,
        status_after: panel.querySelector('.coordkit-panel-status').innerText.trim(),
        seen: state.seen,
        chart_changed: panel.__coordkit_signature(chart) !== state.chart_before,
        ms: state.done_at === null ? null : state.done_at - state.armed,
    };
}
"""


@dataclass
class Update:
    """What a panel did after one change of a control."""

    action: str
    status_before: str
    status_after: str
    seen: list[str]
    chart_changed: bool
    ms: float | None  # from just before the change to the new status line, in the browser's clock

    @property
    def reran(self) -> bool:
        return any(text.startswith("running") for text in self.seen) and bool(STATUS_DONE.match(self.status_after))

    @property
    def error(self) -> str | None:
        return self.status_after if STATUS_ERROR.match(self.status_after) else None


def change_and_wait(panel, action: Callable[[], str], timeout: float = 300.0) -> Update:
    """Do ``action`` (which changes a control of ``panel``) and wait until the panel has run again.

    Raises TimeoutError if the status line never went through "running…" to "done in"/"error:" in time."""
    handle = panel.element_handle()
    handle.evaluate(_JS_ARM)
    done = action()
    if is_on_demand(panel):  # the change only marks the settings changed; the Run button plays them
        panel.locator(".coordkit-panel-run").click()
        done += ", then Run"
    try:
        panel.page.wait_for_function(_JS_SETTLED, arg=[handle, QUIET_MS], timeout=timeout * 1000, polling="raf")
    except Exception as error:
        result = handle.evaluate(_JS_RESULT)
        raise TimeoutError(
            f"{done}: no new run within {timeout:.0f} s (status texts seen: {result['seen']}, now "
            f"{result['status_after']!r})"
        ) from error
    return Update(done, **handle.evaluate(_JS_RESULT))


def is_on_demand(panel) -> bool:
    """Whether the panel runs only when its Run button is pressed (``ExperimentPanel(on_demand=True)``)."""
    return panel.locator(".coordkit-panel-run").count() > 0


def kernel_ms(status: str) -> float | None:
    """The run time a status line reports ("done in 23 ms" → 23.0, "done in 1.2 s" → 1200.0), or None."""
    match = re.match(r"done in ([\d.]+) ?(ms|s)\b", status)
    if not match:
        return None
    return float(match[1]) * (1 if match[2] == "ms" else 1000)


def label_problem(label: str) -> str | None:
    """Why a control's label does not read as English ("seasons (seasons)": a unit the words already say; "duration s
    (s)": a unit's symbol left in the words; "max llm calls": an acronym in small letters), or None."""
    words, _, unit = label.partition(" (")
    said = {word.lower().removesuffix("s") for word in words.split()}
    if unit and unit.removesuffix(")").lower().removesuffix("s") in said:
        return "says its unit twice"
    if " s " in f" {words} " or "_" in label:
        return "keeps a name's underscore or unit symbol"
    if {"llm", "sd"} & set(words.split()):
        return "writes an acronym in small letters"
    return None
