"""Machinery for driving the notebooks in a real browser: a throwaway JupyterLab server and headless Chromium.

Used by the browser tests (``tests/browser``) and by ``benchmarks/bench_panels.py``, as ``lab.<name>``. Nothing here
writes into the repository's ``notebooks/`` folder: the server works on a temporary copy, with autosave off.

    with JupyterLab() as lab, browser() as chromium:
        page = new_page(chromium)
        open_notebook(page, lab, "00_start_here.ipynb")
        run_all(page)
        for panel in panels(page).all(): ...

The machinery lives in the modules beside this one, re-exported here:

- ``lab_server``: the JupyterLab server, Chromium and new pages, the repository's notebooks, ``skip_reason``;
- ``lab_notebook``: opening a notebook, Run All Cells, saving, reloading, and the cells' outputs;
- ``lab_checks``: what must not be seen: tracebacks, undisplayable widgets, outputs too wide, dollars drawn as math;
- ``lab_charts``: the charts in the outputs, whether they are drawn, whether their text shows whole, and what they hide
  (a line squashed by another's scale, a colour shared with a legend it is not in);
- ``lab_panels``: the panels, their controls, and changing a control and waiting for the panel to run again;
- ``lab_player`` (imported as itself): the players, pressing Play, Pause, Step, and recording the frames they draw;
- ``lab_screenshots``: screenshots under test-artifacts/browser/, taken when a block fails.

A JavaScript handle on the application (``window.jupyterapp``, exposed by the server option
``expose_app_in_browser``) runs JupyterLab's own commands (the same as the menu's Run → Run All Cells) and reads the
kernel's status and the cells' outputs; everything else goes through the page as a user sees it.
"""

from lab_charts import Chart, charts, cut_text, hidden_shapes, wait_for_charts_loaded, wait_for_live_charts
from lab_checks import (
    Problem,
    dollars_shown_as_math,
    error_outputs_in_page,
    errors_in_outputs,
    scroll_to_first_error,
    too_wide,
    widget_errors,
)
from lab_notebook import (
    cell_outputs,
    notebook_json,
    open_notebook,
    pending_prompts,
    reload_notebook,
    run_all,
    save_notebook,
)
from lab_panels import (
    STATUS_DONE,
    STATUS_ERROR,
    Control,
    Update,
    change,
    change_and_wait,
    controls,
    is_inactive,
    is_on_demand,
    kernel_ms,
    label_problem,
    next_option,
    nudge_slider,
    panels,
    slider_value,
    status_text,
    toggle,
    wait_for_panels,
)
from lab_screenshots import ARTIFACTS, screenshot, screenshot_element, screenshot_on_failure
from lab_server import (
    NOTEBOOKS,
    REPO,
    JupyterLab,
    browser,
    chromium_path,
    new_page,
    notebook_names,
    panel_cells,
    skip_reason,
)

__all__ = [
    # lab_server
    "REPO",
    "NOTEBOOKS",
    "JupyterLab",
    "browser",
    "chromium_path",
    "new_page",
    "notebook_names",
    "panel_cells",
    "skip_reason",
    # lab_notebook
    "open_notebook",
    "reload_notebook",
    "run_all",
    "pending_prompts",
    "save_notebook",
    "cell_outputs",
    "notebook_json",
    # lab_checks
    "Problem",
    "errors_in_outputs",
    "error_outputs_in_page",
    "scroll_to_first_error",
    "widget_errors",
    "too_wide",
    "dollars_shown_as_math",
    # lab_charts
    "Chart",
    "charts",
    "cut_text",
    "hidden_shapes",
    "wait_for_charts_loaded",
    "wait_for_live_charts",
    # lab_panels
    "STATUS_DONE",
    "STATUS_ERROR",
    "panels",
    "wait_for_panels",
    "status_text",
    "Control",
    "controls",
    "is_inactive",
    "is_on_demand",
    "label_problem",
    "slider_value",
    "nudge_slider",
    "next_option",
    "toggle",
    "change",
    "Update",
    "change_and_wait",
    "kernel_ms",
    # lab_screenshots
    "ARTIFACTS",
    "screenshot",
    "screenshot_element",
    "screenshot_on_failure",
]
