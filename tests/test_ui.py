"""`ExperimentPanel` and its parameter declarations, without a kernel: widget observers fire synchronously."""

import asyncio
import base64
import html
import re

import altair as alt
import ipywidgets as widgets
import pandas as pd
import pytest
from altair.utils import schemapi

from coordkit import parameters, snapshot, viz
from coordkit.live_chart import LiveChart
from coordkit.model import models
from coordkit.parameters import Integer, Real
from coordkit.snapshot import LiveMark
from coordkit.ui import CheckboxControl, DropdownControl, ExperimentPanel, SliderControl, control, controls, model_panel


class Recorder:
    """A `run` function that remembers its calls and returns its arguments as a one-row DataFrame."""

    def __init__(self) -> None:
        self.calls: list[dict] = []

    def __call__(self, **values) -> pd.DataFrame:
        self.calls.append(values)
        return pd.DataFrame([values])


PARAMS = [
    SliderControl("n_agents", 2, 20, default=5),
    SliderControl("noise", 0.0, 1.0, 0.05, default=0.1, label="Noise level"),
    DropdownControl("strategy", [("Tit for tat", "tft"), ("Always defect", "alld")], default="alld"),
    CheckboxControl("memory", default=True),
]


def shown_mimetypes(panel: ExperimentPanel) -> list[list[str]]:
    return [list(slot.outputs[0]["data"]) for slot in panel.output.children]


def line_chart(frame: pd.DataFrame) -> alt.Chart:
    return alt.Chart(frame).mark_line().encode(x="x", y="y")


def line_of(n: int) -> pd.DataFrame:
    return pd.DataFrame({"x": range(n), "y": range(n)})


def test_builds_one_control_of_the_right_type_per_parameter():
    panel = ExperimentPanel(Recorder(), PARAMS)
    controls = panel.controls
    assert [type(control) for control in controls.values()] == [
        widgets.IntSlider,
        widgets.FloatSlider,
        widgets.Dropdown,
        widgets.Checkbox,
    ]
    assert not controls["n_agents"].continuous_update and not controls["noise"].continuous_update
    assert controls["n_agents"].description == "n agents"
    assert controls["noise"].description == "Noise level"
    assert controls["noise"].readout_format == ".2f"
    assert controls["strategy"].label == "Always defect"
    assert panel.values == {"n_agents": 5, "noise": 0.1, "strategy": "alld", "memory": True}


def test_layout_is_controls_then_status_then_chart():
    panel = ExperimentPanel(Recorder(), PARAMS, title="Prisoner's dilemma")
    heading, controls, status_line, output, mark = panel.widget.children
    assert "Prisoner&#x27;s dilemma" in heading.value
    assert list(controls.children) == list(panel.controls.values())
    assert status_line.children == (panel.status,)
    assert output is panel.output
    assert isinstance(mark, LiveMark) and mark.key == panel.snapshot.key  # hides the snapshot when live


def test_runs_on_start_and_shows_the_result():
    run = Recorder()
    panel = ExperimentPanel(run, PARAMS)
    assert run.calls == [panel.values]
    assert "done in" in panel.status.value
    assert "text/html" in shown_mimetypes(panel)[0]


def test_run_on_start_false_waits_for_refresh():
    run = Recorder()
    panel = ExperimentPanel(run, PARAMS, run_on_start=False)
    assert run.calls == [] and panel.result is None
    panel.refresh()
    assert len(run.calls) == 1


def test_changing_a_control_runs_once_with_the_new_values():
    run = Recorder()
    panel = ExperimentPanel(run, PARAMS)
    panel.controls["n_agents"].value = 12
    assert len(run.calls) == 2
    assert run.calls[-1] == {"n_agents": 12, "noise": 0.1, "strategy": "alld", "memory": True}
    assert panel.result["n_agents"].item() == 12


def test_an_on_demand_panel_runs_only_when_its_button_is_pressed():
    run = Recorder()
    panel = ExperimentPanel(run, PARAMS, on_demand=True)
    assert panel.run_button in panel.widget.children and len(run.calls) == 1
    panel.controls["n_agents"].value = 12
    panel.controls["noise"].value = 0.3
    assert len(run.calls) == 1 and "press Run" in panel.status.value
    panel.run_button.click()
    assert run.calls[-1]["n_agents"] == 12 and run.calls[-1]["noise"] == 0.3 and len(run.calls) == 2
    assert "done in" in panel.status.value
    live = ExperimentPanel(Recorder(), PARAMS)
    assert live.run_button not in live.widget.children


def test_chart_turns_the_result_into_what_is_shown():
    panel = ExperimentPanel(Recorder(), PARAMS, chart=lambda df: [df.columns.tolist(), df])
    assert shown_mimetypes(panel) == [["text/plain"], ["text/plain", "text/html"]]


def test_in_an_event_loop_a_change_runs_at_once_and_the_rest_of_a_burst_once_more_with_the_latest_values():
    run = Recorder()
    panel = ExperimentPanel(run, PARAMS, debounce=0.05, run_on_start=False)

    async def burst() -> None:
        for n in (6, 7, 8, 9):
            panel.controls["n_agents"].value = n
        panel.controls["memory"].value = False
        assert [call["n_agents"] for call in run.calls] == [6]
        await asyncio.sleep(0.2)
        panel.controls["n_agents"].value = 10  # after a quiet spell: at once again
        assert len(run.calls) == 3

    asyncio.run(burst())
    assert run.calls[1:] == [
        {"n_agents": 9, "noise": 0.1, "strategy": "alld", "memory": False},
        {"n_agents": 10, "noise": 0.1, "strategy": "alld", "memory": False},
    ]


def test_refresh_cancels_a_pending_run():
    run = Recorder()
    panel = ExperimentPanel(run, PARAMS, debounce=0.05, run_on_start=False)

    async def change_then_refresh() -> None:
        panel.controls["n_agents"].value = 6
        panel.controls["n_agents"].value = 7  # within the debounce: pending
        panel.refresh()
        await asyncio.sleep(0.2)

    asyncio.run(change_then_refresh())
    assert [call["n_agents"] for call in run.calls] == [6, 7]


def test_debounce_zero_runs_at_once_even_in_an_event_loop():
    run = Recorder()
    panel = ExperimentPanel(run, PARAMS, debounce=0, run_on_start=False)

    async def change() -> None:
        panel.controls["n_agents"].value = 6
        panel.controls["n_agents"].value = 7

    asyncio.run(change())
    assert [call["n_agents"] for call in run.calls] == [6, 7]


def test_a_failing_run_clears_the_previous_charts_and_says_so():
    def run(n_agents: int) -> pd.DataFrame:
        if n_agents > 10:
            raise ValueError("too many agents\nsecond line")
        return line_of(n_agents)

    panel = ExperimentPanel(
        run, [SliderControl("n_agents", 2, 20, default=5)], lambda f: [line_chart(f), f], debounce=0
    )
    assert len(panel.output.children) == 2
    panel.controls["n_agents"].value = 15
    status = html.unescape(panel.status.value)
    assert "error: ValueError: too many agents (the previous run's charts were cleared)" in status
    assert "second line" not in status
    assert isinstance(panel.last_error, ValueError) and panel.result is None
    assert panel.output.children == ()  # nothing of the run at 5 agents passes for the run at 15
    saved = panel.snapshot.html()
    assert settings_in(saved) == {"n agents": "15"} and "failed" in saved and "too many agents" in saved
    assert not charts_in(saved)
    panel.controls["n_agents"].value = 6
    assert panel.last_error is None and "done in" in panel.status.value
    chart, table = panel.output.children
    assert [row["x"] for row in next(iter(chart.spec["datasets"].values()))] == list(range(6))


def test_a_failing_chart_is_reported_too_and_a_first_failure_clears_nothing():
    panel = ExperimentPanel(Recorder(), PARAMS, chart=lambda df: df["missing column"])
    assert "error: KeyError" in panel.status.value and "cleared" not in panel.status.value
    assert panel.output.children == () and panel.result is not None  # the run gave a result; its chart failed


def test_run_with_a_progress_argument_gets_a_progress_bar():
    seen = []

    def run(steps: int, progress) -> int:
        for step in range(steps):
            progress((step + 1) / steps)
            seen.append((panel.progress.value, panel.progress.layout.visibility))
        return steps

    panel = ExperimentPanel(run, [SliderControl("steps", 1, 10, default=4)], run_on_start=False)
    assert panel.progress in panel.widget.children[-3].children
    panel.refresh()
    assert seen == [(0.25, "visible"), (0.5, "visible"), (0.75, "visible"), (1.0, "visible")]
    assert panel.progress.layout.visibility == "hidden"


@pytest.mark.parametrize(
    "declare, message",
    [
        (lambda: SliderControl("n", 5, 1), "low"),
        (lambda: SliderControl("n", 1, 5, step=0), "step"),
        (lambda: SliderControl("n", 1, 5, default=9), r"not in \[1, 5\]"),
        (lambda: DropdownControl("mode", []), "no options"),
        (lambda: DropdownControl("mode", ["a", "b"], default="c"), "not among"),
        (lambda: CheckboxControl("memory", default="yes"), "True or False"),
        (lambda: SliderControl("number of agents", 1, 5), "identifier"),
        (
            lambda: ExperimentPanel(Recorder(), [SliderControl("n", 1, 5), CheckboxControl("n")]),
            "duplicate parameter names: n$",
        ),
    ],
)
def test_bad_declarations_raise_clear_errors(declare, message):
    with pytest.raises(ValueError, match=message):
        declare()


def test_choice_values_and_labels():
    assert DropdownControl("size", [10, 20]).pairs == (("10", 10), ("20", 20))
    assert DropdownControl("grid", [(3, 3), (5, 5)]).values == ((3, 3), (5, 5))
    assert DropdownControl("mode", [("Fast", "f"), ("Slow", "s")]).values == ("f", "s")


def test_slider_kind_follows_its_numbers():
    assert SliderControl("n", 1, 5).is_int
    assert not SliderControl("p", 0, 1, 0.1).is_int
    assert not SliderControl("p", 0, 10, default=2.5).is_int


def test_controls_come_from_a_models_declaration_with_overrides():
    from sweep_targets import Walk

    length, scale = controls(Walk, ["length", "scale"], scale={"label": "step size σ", "high": 5.0, "step": 0.5})
    assert (length.low, length.high, length.step, length.start, length.label) == (1, 100, 1, 3, "length")
    assert (scale.low, scale.high, scale.step, scale.start, scale.label) == (0, 5.0, 0.5, 1.0, "step size σ")
    assert not length.widget().continuous_update and isinstance(scale.widget(), widgets.FloatSlider)


def test_choices_and_flags_get_their_declared_labels():
    declared = parameters.Parameters(
        parameters.Choice("protocol", "a2a", ("a2a", "rep"), labels={"a2a": "A2A"}, doc="how"),
        parameters.Flag("decay", True, doc="decay on"),
        parameters.Real("delay", 2.0, 0, 600, slider=(0, 30), step=1.0, unit="s", doc="delay"),
    )
    protocol, decay, delay = controls(declared, ["protocol", "decay", "delay"])
    assert protocol.pairs == (("A2A", "a2a"), ("rep", "rep")) and protocol.start == "a2a"
    assert decay.default is True and (delay.low, delay.high, delay.label) == (0, 30, "delay (s)")


def test_a_control_starts_at_the_declared_default_unless_the_notebook_says_otherwise():
    declared = parameters.Parameters(
        parameters.Real("delay", 2.0, 0, 600, slider=(0, 30), doc="delay"),
        parameters.Integer("event", None, 1, 9, optional="no event", doc="step of the event"),
    )
    with pytest.raises(parameters.ParameterError, match=r"starts at its declared default 2.0.*start=\{'delay': 5\}"):
        controls(declared, ["delay"], delay={"default": 5})
    delay, event = controls(declared, ["delay", "event"], start={"delay": 5}, event={"default": 3})
    assert (delay.start, event.start) == (5.0, 3)
    with pytest.raises(parameters.ParameterError, match="delay"):
        controls(declared, ["delay"], start={"delay": -1})
    with pytest.raises(parameters.ParameterError, match=r"start values for \['event'\]"):
        controls(declared, ["delay"], start={"event": 3})


def test_objects_have_no_control_and_overrides_must_name_a_control():
    declared = parameters.Parameters(
        parameters.Instance("llm", None, object, optional="none", doc="client"),
        parameters.Flag("decay", True, doc="decay on"),
    )
    with pytest.raises(parameters.ParameterError, match="a panel has no control for it"):
        controls(declared, ["llm"])
    with pytest.raises(parameters.ParameterError, match=r"overrides for \['llm'\]"):
        controls(declared, ["decay"], llm={"label": "x"})


def test_a_model_panel_plays_the_model_with_the_controls_and_the_seed():
    from sweep_targets import Walk

    shown = []
    panel = model_panel(
        Walk,
        ["scale"],
        chart=lambda walk: shown.append(walk) or pd.DataFrame(walk.path),
        fixed={"length": 5},
        seeds=(0, 9),
    )
    assert panel.values == {"scale": 1.0, "seed": 0}
    panel.controls["seed"].value = 4
    first, last = shown
    assert (first.length, last.path) == (5, Walk(length=5, rng=4).run().path)


def test_a_control_that_the_other_values_make_irrelevant_is_greyed_out_and_still_read():
    run = Recorder()
    memory = SliderControl("memory", 1, 10, active_when=lambda values: values["strategy"] == "tft")
    panel = ExperimentPanel(run, [*PARAMS[2:3], memory])  # the strategy starts at "alld"
    control = panel.controls["memory"]
    assert control.disabled and control.tooltip == "no effect with the current settings"
    panel.controls["strategy"].value = 0  # "tft"
    assert not control.disabled and control.tooltip is None
    assert run.calls[-1] == {"strategy": "tft", "memory": 1}


def test_a_declared_parameter_takes_its_condition_as_an_override():
    declared = parameters.Parameters(
        parameters.Choice("protocol", "a2a", ("a2a", "rep"), doc="how"),
        parameters.Flag("consensus", True, doc="agree first"),
    )
    panel = ExperimentPanel(
        Recorder(),
        controls(declared, ["protocol", "consensus"], consensus={"active_when": lambda v: v["protocol"] != "a2a"}),
    )
    assert panel.controls["consensus"].disabled
    panel.controls["protocol"].value = 1
    assert not panel.controls["consensus"].disabled


def test_a_model_panels_seed_can_say_when_it_matters():
    from sweep_targets import Walk

    panel = model_panel(
        Walk,
        ["scale"],
        chart=lambda walk: pd.DataFrame(walk.path),
        seed={"active_when": lambda values: values["scale"] > 0},
    )
    assert not panel.controls["seed"].disabled
    panel.controls["scale"].value = 0.0
    assert panel.controls["seed"].disabled


def test_an_option_meaning_none_shows_its_label_and_gives_none():
    calls = Recorder()
    consensus = DropdownControl("consensus", [("median", "median_coordinate"), ("none", None)])
    panel = ExperimentPanel(calls, [consensus], debounce=0)
    dropdown = panel.controls["consensus"]
    dropdown.label = "none"
    assert dropdown.label == "none" and dropdown.index == 1  # a blank dropdown would have no label and no index
    assert panel.values == {"consensus": None} and calls.calls[-1] == {"consensus": None}
    dropdown.label = "median"
    assert panel.values == {"consensus": "median_coordinate"}


def test_a_chart_goes_to_a_live_chart_that_gets_each_new_spec_with_a_new_serial():
    panel = ExperimentPanel(line_of, [SliderControl("n", 2, 10, default=3)], lambda f: [line_chart(f), f], debounce=0)
    chart, table = panel.output.children
    assert isinstance(chart, LiveChart) and isinstance(table, widgets.Output)
    assert chart.spec["mark"] == {"type": "line"} and len(chart.spec["datasets"]) == 1
    assert [row["x"] for row in next(iter(chart.spec["datasets"].values()))] == [0, 1, 2]
    assert chart.snapshot.startswith("<svg") and chart.serial == chart.snapshot_serial == 1  # drawn in the kernel
    panel.controls["n"].value = 5
    assert panel.output.children == (chart, table)  # the same slots, redrawn in the page
    assert [row["x"] for row in next(iter(chart.spec["datasets"].values()))] == [0, 1, 2, 3, 4]
    assert chart.serial == 2 and chart.current_snapshot() is None  # the page is to send the new one
    panel.refresh()  # the same spec again: nothing to draw, nothing new to wait for
    assert chart.serial == 2


def test_a_broken_chart_is_reported_when_its_slot_is_made():
    broken = lambda f: alt.Chart(f).mark_line().encode(x=alt.X("x", type="nonsense"))  # noqa: E731
    panel = ExperimentPanel(line_of, [SliderControl("n", 2, 10, default=3)], broken, debounce=0)
    assert "error: SchemaValidationError" in panel.status.value and panel.output.children == ()


def test_charts_are_built_without_altairs_per_mark_validation_which_is_restored_after():
    seen = []

    def chart(frame):
        seen.append(schemapi.DEBUG_MODE)
        return alt.Chart(frame).mark_line(point=True).encode(x=alt.X("x:Q"), y=alt.Y("y:Q"))

    panel = ExperimentPanel(line_of, [SliderControl("n", 2, 10, default=3)], chart, debounce=0)
    panel.controls["n"].value = 4
    assert seen == [False, False] and schemapi.DEBUG_MODE and panel.last_error is None


def settings_in(view: str) -> dict[str, str]:
    """The settings a snapshot names, label → value."""
    found = re.findall(r'coordkit-setting-label">([^<]*)</span>: <b class="coordkit-setting-value">([^<]*)</b>', view)
    return {html.unescape(label): html.unescape(value) for label, value in found}


def charts_in(view: str) -> list[str]:
    """The SVGs a snapshot shows, decoded from their data URIs."""
    return [base64.b64decode(data).decode() for data in re.findall(r'src="data:image/svg\+xml;base64,([^"]*)"', view)]


def page_sends(chart: LiveChart, svg: str, serial: int | None = None) -> None:
    """What the page does once it has drawn a chart: send it back as SVG, with the serial of the spec drawn."""
    message = {"type": "snapshot", "svg": svg, "serial": chart.serial if serial is None else serial}
    chart._handle_custom_msg(message, [])


def test_a_panel_keeps_a_snapshot_at_the_settings_its_controls_hold():
    viz.setup()
    panel = ExperimentPanel(
        lambda n, on: line_of(n), [SliderControl("n", 2, 10, default=3), CheckboxControl("on")], line_chart, debounce=0
    )
    saved = panel.snapshot
    assert settings_in(saved.html()) == {"n": "3", "on": "off"} and "<img" in saved.html()  # drawn in the kernel
    assert f'class="coordkit-static-view coordkit-static-{saved.key}"' in saved.html()
    (chart,) = panel.output.children
    panel.controls["n"].value = 4
    assert saved.html() == ""  # never the old chart under the new settings
    assert settings_in(panel.snapshot_html())["n"] == "4" and "<img" in panel.snapshot_html()  # drawn here if asked
    page_sends(chart, "<svg>an older chart</svg>", serial=chart.serial - 1)
    assert saved.html() == ""
    page_sends(chart, "<svg>n is 4</svg>")
    assert settings_in(saved.html()) == {"n": "4", "on": "off"} and charts_in(saved.html()) == ["<svg>n is 4</svg>"]
    panel.controls["on"].value = True  # the same chart: the snapshot follows at once
    assert settings_in(saved.html()) == {"n": "4", "on": "on"} and charts_in(saved.html()) == ["<svg>n is 4</svg>"]
    table = ExperimentPanel(lambda n: pd.DataFrame({"n": [n]}), [SliderControl("n", 2, 10)], debounce=0)
    assert "<table" in table.snapshot.html()
    failing = ExperimentPanel(lambda n: 1 / 0, [SliderControl("n", 2, 10)], debounce=0)
    assert settings_in(failing.snapshot.html()) == {"n": "2"}  # no chart: what failed, at which settings
    assert "ZeroDivisionError" in failing.snapshot.html() and not charts_in(failing.snapshot.html())


def test_a_shown_panel_replaces_its_snapshot_when_the_page_has_drawn_the_new_settings(monkeypatch):
    shown = []
    monkeypatch.setattr(snapshot, "display", lambda bundle, **how: shown.append(("display", bundle, how)))
    monkeypatch.setattr(snapshot, "update_display", lambda bundle, **how: shown.append(("update", bundle, how)))
    slider = SliderControl("noise", 0.0, 1.0, 0.05, default=0.1)
    panel = ExperimentPanel(
        line_of_noise, [slider, DropdownControl("kind", [("Tit for tat", "tft")])], line_chart, debounce=0
    )
    panel.snapshot.show()
    (chart,) = panel.output.children
    panel.controls["noise"].value = 0.25
    page_sends(chart, "<svg>drawn</svg>")
    assert [what for what, _, _ in shown] == ["display", "update"]
    assert {how["display_id"] for _, _, how in shown} == {panel.snapshot.display_id}
    first, latest = (bundle["text/html"] for _, bundle, _ in shown)
    assert settings_in(first) == {"noise": "0.10", "kind": "Tit for tat"}  # as the slider's readout and dropdown
    assert settings_in(latest) == {"noise": "0.25", "kind": "Tit for tat"} and charts_in(latest) == ["<svg>drawn</svg>"]


def test_a_panels_mark_carries_each_snapshot_shown_for_its_page_to_write(monkeypatch):
    """After a reload no output answers to the display id; the page of the panel's mark writes the mark's bundle
    into the notebook instead (coordkit/live_mark.js), over the output whose HTML has the mark's key as its last
    class. The mark holds every bundle displayed, each given to it after the update_display of it."""
    updates = []
    monkeypatch.setattr(snapshot, "display", lambda bundle, **how: None)
    slider = SliderControl("noise", 0.0, 1.0, 0.05, default=0.1)
    panel = ExperimentPanel(line_of_noise, [slider, DropdownControl("kind", ["tft"])], line_chart, debounce=0)
    mark = panel.chart_area.mark
    monkeypatch.setattr(snapshot, "update_display", lambda bundle, **how: updates.append((bundle, dict(mark.bundle))))
    assert mark.bundle == {}  # nothing shown yet
    panel.snapshot.show()
    assert mark.bundle == panel.snapshot.bundle() and settings_in(mark.bundle["text/html"])["noise"] == "0.10"
    assert f'coordkit-static-{mark.key}">' in mark.bundle["text/html"]  # what the page looks for
    (chart,) = panel.output.children
    panel.controls["noise"].value = 0.25
    assert settings_in(mark.bundle["text/html"])["noise"] == "0.10"  # until the page has drawn the new chart
    page_sends(chart, "<svg>drawn</svg>")
    ((updated, marked_then),) = updates
    assert mark.bundle == updated and settings_in(updated["text/html"])["noise"] == "0.25"
    assert charts_in(mark.bundle["text/html"]) == ["<svg>drawn</svg>"]
    assert settings_in(marked_then["text/html"])["noise"] == "0.10"  # the mark after the update: a page that had
    # the update finds the same snapshot and writes nothing


def line_of_noise(noise: float, kind: str) -> pd.DataFrame:
    return pd.DataFrame({"x": [0, 1], "y": [0, noise]})


def test_a_familys_panels_pass_start_values_on_and_never_choose_them():
    """A panel starts at the declaration's defaults unless a notebook cell says otherwise, where readers see it:
    a ``panels.py`` may pass ``start`` on, never write one (``controls`` already refuses a ``default`` override)."""
    import ast
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "coordkit"
    chosen = [
        f"{path.relative_to(package)}:{call.lineno}"
        for path in sorted(package.rglob("panels.py"))
        for call in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(call, ast.Call)
        for keyword in call.keywords
        if keyword.arg == "start" and not isinstance(keyword.value, ast.Name)
    ]
    assert not chosen, f"panels choose their own start values at {chosen}: let the notebook pass them"


@pytest.mark.parametrize("model", sorted(models().values(), key=lambda m: m.__name__), ids=lambda m: m.__name__)
def test_every_sliders_ends_are_values_its_model_accepts(model):
    for param in model.parameters:
        if isinstance(param, Integer | Real):
            slider = control(param)
            for value in (slider.low, slider.high):
                param.check(value)  # a ParameterError names the slider end a student could reach
