"""Driving a notebook in the page: open it, Run All Cells, save it, reload it, and read its kernel's status and its
cells' outputs.

It goes through the JavaScript handle on the application (``window.jupyterapp``, exposed by the server option
``expose_app_in_browser``): JupyterLab's own commands, the same as the menus', and the notebook model.
"""

import json
import time

from lab_server import JupyterLab

# In the page: the current notebook panel (JupyterLab's NotebookPanel), or null.
JS_NOTEBOOK = (
    "(() => { const w = window.jupyterapp.shell.currentWidget; return w && w.content && w.sessionContext ? w : null; })"
)


# In the page: close every document JupyterLab shows, without asking to save (a test saves what it keeps), and open
# `path` in their place, as a user opens another notebook in the JupyterLab they have open.
_JS_OPEN_IN_PLACE = """
async (path) => {
    const app = window.jupyterapp;
    for (const widget of [...app.shell.widgets('main')]) widget.dispose();
    await app.commands.execute('docmanager:open', {path});
}
"""


def go_to(page, lab: JupyterLab, name: str) -> None:
    """Show notebook ``name`` of ``lab``'s copy in ``page``: in the JupyterLab the page shows, if it shows ``lab``'s,
    in place of what it showed (loading JupyterLab costs seconds of Chromium's time each time); else by loading it."""
    in_place = "() => Boolean(window.jupyterapp) && !document.querySelector('.jp-Dialog')"  # (no dialog left open)
    if page.url.startswith(lab.base_url) and page.evaluate(in_place):
        page.evaluate(_JS_OPEN_IN_PLACE, name)
    else:
        page.goto(lab.url(name))


def open_notebook(page, lab: JupyterLab, name: str, timeout: float = 300.0) -> None:
    """Open notebook ``name`` of the server's copy in ``page`` and wait until its kernel is idle."""
    go_to(page, lab, name)
    _wait_until_open(page, name, timeout)


def reload_notebook(page, lab: JupyterLab, name: str, timeout: float = 300.0) -> None:
    """Save the open notebook, reload the page with its kernel still running, as a reader does, and wait until the
    notebook is open again and its kernel idle: its outputs are the saved ones, its widgets made again from the
    kernel's."""
    save_notebook(page, lab, name)
    page.on("dialog", _leave)  # (a "leave the page?" for a change made since the save)
    page.reload()
    page.remove_listener("dialog", _leave)
    _wait_until_open(page, name, timeout)


def _leave(dialog) -> None:
    dialog.accept()


def _wait_until_open(page, name: str, timeout: float) -> None:
    page.wait_for_function(
        f"""() => {{
            if (!window.jupyterapp) return false;
            const panel = {JS_NOTEBOOK}();
            if (!panel || !panel.context.path.endsWith({json.dumps(name)})) return false;
            const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
            return panel.context.isReady && kernel && kernel.status === "idle";
        }}""",
        timeout=timeout * 1000,
        polling=200,
    )
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="attached")


def save_notebook(page, lab: JupyterLab, name: str, timeout: float = 120.0) -> dict:
    """Save the open notebook (the File menu's command) and return the file as written."""
    path = lab.root / name
    before = path.stat().st_mtime_ns
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    deadline = time.monotonic() + timeout
    while path.stat().st_mtime_ns == before:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{name} was not saved within {timeout:.0f} s")
        time.sleep(0.1)
    while True:  # the server may still be writing it
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def run_all(page, timeout: float = 1200.0) -> float:
    """Run All Cells (the menu's command) and wait until no cell is queued or running and the kernel is idle.

    Returns the seconds it took. Raises TimeoutError with the prompts still pending if it does not finish."""
    started = time.monotonic()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    script = f"""() => {{
        const panel = {JS_NOTEBOOK}();
        const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
        const pending = [...document.querySelectorAll('.jp-Notebook .jp-InputPrompt')]
            .filter(prompt => prompt.textContent.includes('*')).length;
        return pending === 0 && kernel && kernel.status === 'idle';
    }}"""
    # idle twice, 0.5 s apart: the kernel can look idle for a moment between two queued cells
    deadline = started + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"the notebook was still running after {timeout:.0f} s: {pending_prompts(page)}")
        try:
            page.wait_for_function(script, timeout=remaining * 1000, polling=100)
        except Exception as error:  # playwright's TimeoutError
            raise TimeoutError(
                f"the notebook was still running after {timeout:.0f} s: {pending_prompts(page)}"
            ) from error
        page.wait_for_timeout(500)
        if page.evaluate(script):
            return time.monotonic() - started


def pending_prompts(page) -> list[str]:
    """The prompts of the cells still queued or running ("[*]:")."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-InputPrompt')]
            .map(prompt => prompt.textContent.trim()).filter(text => text.includes('*'))"""
    )


def cell_outputs(page) -> list[dict]:
    """Every code cell's outputs as the notebook model holds them: [{"index", "source", "outputs": [...]}]."""
    return page.evaluate(
        f"""() => {{
            const panel = {JS_NOTEBOOK}();
            const cells = [];
            const model = panel.content.model;
            for (let i = 0; i < model.cells.length; i++) {{
                const cell = model.cells.get(i);
                if (cell.type !== 'code') continue;
                cells.push({{
                    index: i,
                    source: cell.sharedModel.getSource(),
                    execution_count: cell.executionCount,
                    outputs: cell.outputs.toJSON(),
                }});
            }}
            return cells;
        }}"""
    )


def notebook_json(page) -> dict:
    """The open notebook as the page holds it (nbformat JSON): its Markdown and this run's outputs."""
    return page.evaluate(f"() => {JS_NOTEBOOK}().content.model.toJSON()")
