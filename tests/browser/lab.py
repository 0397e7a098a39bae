"""Machinery for driving the notebooks in a real browser: a throwaway JupyterLab server and headless Chromium.

Used by the browser tests (``tests/browser``) and by ``benchmarks/bench_panels.py``. Nothing here writes into the
repository's ``notebooks/`` folder: the server works on a temporary copy, with autosave off.

    with JupyterLab() as lab, browser() as chromium:
        page = new_page(chromium)
        open_notebook(page, lab, "00_start_here.ipynb")
        run_all(page)
        for panel in panels(page).all(): ...

A JavaScript handle on the application (``window.jupyterapp``, exposed by the server option
``expose_app_in_browser``) runs JupyterLab's own commands (the same as the menu's Run → Run All Cells) and reads the
kernel's status and the cells' outputs; everything else goes through the page as a user sees it.
"""

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = REPO / "test-artifacts" / "browser"
VIEWPORT = {"width": 1400, "height": 1000}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# JupyterLab user settings for the run: no autosave (nothing is written back), no news pop-up over the page, and
# every cell in the DOM (the windowed notebook renders only the visible cells).
SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
PANEL_CALLS = ("ExperimentPanel(", "model_panel(")
STATUS_DONE = re.compile(r"^done in ")
STATUS_ERROR = re.compile(r"^error: ")


def chromium_path() -> str | None:
    """The Chromium executable (Debian's ``chromium``, or ``chromium-browser``), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def skip_reason() -> str | None:
    """Why the browser machinery cannot run here (no Playwright, no Chromium, no JupyterLab), or None if it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install playwright; no `playwright install` needed)"
    if chromium_path() is None:
        return "no Chromium executable on PATH (apt-get install chromium)"
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return "JupyterLab is not installed in this environment"
    return None


def notebook_names() -> list[str]:
    """The notebooks of the kit, in order (00_start_here.ipynb, ...)."""
    return sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))


def panel_cells(name: str) -> int:
    """How many code cells of notebook ``name`` build a panel (their source calls ExperimentPanel or model_panel)."""
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    sources = ("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    return sum(any(call in source for call in PANEL_CALLS) for source in sources)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    """A JupyterLab server on a temporary copy of ``notebooks``, on a free port with a random token.

    Its user settings turn autosave off, the news pop-up off and notebook windowing off; its workspaces and runtime
    files live in the same temporary folder, which is removed on exit. The server's log is kept there too and is
    quoted if it fails to start.
    """

    def __init__(self, notebooks: Path = NOTEBOOKS, startup_timeout: float = 90.0) -> None:
        self.source = Path(notebooks)
        self.startup_timeout = startup_timeout
        self.token = secrets.token_hex(16)
        self.port = 0
        self.root: Path | None = None
        self._temp: Path | None = None
        self._process: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        """The address that opens ``notebook`` (a fresh workspace: no tab of an earlier page comes back)."""
        return f"{self.base_url}/lab/tree/{notebook}?reset&token={self.token}"

    def __enter__(self) -> "JupyterLab":
        self._temp = Path(tempfile.mkdtemp(prefix="coordkit-lab-"))
        self.root = self._temp / "notebooks"
        shutil.copytree(self.source, self.root, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
        settings = self._temp / "settings"
        for relative, values in SETTINGS.items():
            path = settings / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values), encoding="utf-8")
        for folder in ("workspaces", "runtime", "config"):
            (self._temp / folder).mkdir()
        self.port = _free_port()
        command = [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={self.port}",
            "--port-retries=0",
            f"--ServerApp.token={self.token}",
            f"--ServerApp.root_dir={self.root}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={self._temp / 'workspaces'}",
            "--LabApp.expose_app_in_browser=True",
            "--ServerApp.open_browser=False",
        ]
        # the user's own Jupyter configuration stays out; the kit's environment (kernel, widgets) stays in
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(self._temp / "config"),
            "JUPYTER_RUNTIME_DIR": str(self._temp / "runtime"),
            "PYTHONUNBUFFERED": "1",
        }
        self._log = open(self._temp / "server.log", "wb")  # noqa: SIM115 (closed in __exit__)
        self._process = subprocess.Popen(
            command, cwd=self.root, env=env, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            self._wait_until_up()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait_until_up(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited with code {self._process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/api/status?token={self.token}", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)
        raise RuntimeError(f"JupyterLab did not answer within {self.startup_timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        """The last lines of the server's log."""
        if self._temp is None or not (self._temp / "server.log").exists():
            return ""
        text = (self._temp / "server.log").read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def api(self, path: str, method: str = "GET") -> object:
        """Call the server's REST API (``/api/...``) and return the decoded JSON reply (None if empty)."""
        request = urllib.request.Request(
            f"{self.base_url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            body = reply.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        """Shut every running kernel down (between notebooks, so that only one runs at a time)."""
        for kernel in self.api("/api/kernels"):
            with contextlib.suppress(urllib.error.HTTPError):
                self.api(f"/api/kernels/{kernel['id']}", method="DELETE")

    def __exit__(self, *exc_info) -> None:
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGTERM)  # the server and the kernels it started
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._process.pid, signal.SIGKILL)
                self._process.wait(timeout=15)
        if self._log is not None:
            self._log.close()
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)


@contextlib.contextmanager
def browser() -> Iterator[object]:
    """Headless Chromium (the system's own, not a Playwright download), closed on exit."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def new_page(chromium, timeout_ms: float = 30_000):
    """A page in a fresh browser context (no storage shared with other pages), 1400×1000."""
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    return page


# --- the notebook ---------------------------------------------------------------------------------------------------

# In the page: the current notebook panel (JupyterLab's NotebookPanel), or null.
_JS_NOTEBOOK = (
    "(() => { const w = window.jupyterapp.shell.currentWidget; return w && w.content && w.sessionContext ? w : null; })"
)


def open_notebook(page, lab: JupyterLab, name: str, timeout: float = 90.0) -> None:
    """Open notebook ``name`` of the server's copy in ``page`` and wait until its kernel is idle."""
    page.goto(lab.url(name))
    page.wait_for_function(
        f"""() => {{
            if (!window.jupyterapp) return false;
            const panel = {_JS_NOTEBOOK}();
            if (!panel || !panel.context.path.endsWith({json.dumps(name)})) return false;
            const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
            return panel.context.isReady && kernel && kernel.status === "idle";
        }}""",
        timeout=timeout * 1000,
        polling=200,
    )
    page.locator(".jp-Notebook .jp-Cell").first.wait_for(state="attached")


def save_notebook(page, lab: JupyterLab, name: str, timeout: float = 30.0) -> dict:
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


def widget_errors(page) -> list[str]:
    """Texts of widgets that JupyterLab could not show ("Error displaying widget: model not found")."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
            .filter(el => !el.querySelector('.jp-OutputArea-output') && /Error displaying widget/.test(el.innerText))
            .map(el => el.innerText.trim().slice(0, 200))"""
    )


def kernel_status(page) -> str:
    """The current notebook's kernel status ("idle", "busy", "starting", ...), or "" if it has none."""
    return page.evaluate(
        f"""() => {{
            const panel = {_JS_NOTEBOOK}();
            const kernel = panel && panel.sessionContext.session && panel.sessionContext.session.kernel;
            return kernel ? kernel.status : "";
        }}"""
    )


def run_all(page, timeout: float = 180.0) -> float:
    """Run All Cells (the menu's command) and wait until no cell is queued or running and the kernel is idle.

    Returns the seconds it took. Raises TimeoutError with the prompts still pending if it does not finish."""
    started = time.monotonic()
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    script = f"""() => {{
        const panel = {_JS_NOTEBOOK}();
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
            const panel = {_JS_NOTEBOOK}();
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


# Stderr that is only noise, never a failure.
HARMLESS_STDERR = (
    re.compile(r"^\s*$"),
    re.compile(r"warn", re.IGNORECASE),
    re.compile(r"\d+%\|"),  # tqdm progress bars
)


@dataclass
class Problem:
    """An error found in a cell's output."""

    cell: int
    kind: str  # "error" (a traceback) or "stderr" (text on stderr that looks like one)
    text: str

    def __str__(self) -> str:
        return f"cell {self.cell} ({self.kind}): {self.text[:600]}"


def _strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def errors_in_outputs(cells: list[dict]) -> list[Problem]:
    """Tracebacks in the outputs (error outputs, or stderr with a Traceback); harmless stderr is left alone."""
    problems = []
    for cell in cells:
        for output in cell["outputs"]:
            kind = output.get("output_type")
            if kind == "error":
                trace = _strip_ansi("\n".join(output.get("traceback", [])))
                problems.append(Problem(cell["index"], "error", f"{output['ename']}: {output['evalue']}\n{trace}"))
            elif kind == "stream" and output.get("name") == "stderr":
                text = _strip_ansi("".join(output.get("text", "")))
                if "Traceback (most recent call last)" in text or re.search(r"^\w+(Error|Exception): ", text, re.M):
                    problems.append(Problem(cell["index"], "stderr", text))
    return problems


def error_outputs_in_page(page) -> list[str]:
    """Texts of the rendered outputs that show a traceback (in cells or inside widgets), and of live charts that
    Vega could not draw."""
    return page.evaluate(
        r"""() => [
            ...[...document.querySelectorAll(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], ' +
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')]
                .map(el => el.innerText)
                .filter(text => /Traceback \(most recent call last\)|^\w+(Error|Exception): /m.test(text)),
            ...[...document.querySelectorAll('.coordkit-live-chart-error')].map(el => el.innerText),
        ]"""
    )


def scroll_to_first_error(page) -> bool:
    """Scroll the first output showing a traceback into view (for a screenshot); False if there is none."""
    return page.evaluate(
        r"""() => {
            const outputs = [...document.querySelectorAll(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')];
            const first = outputs.find(el => /Traceback \(most recent call last\)|^\w+(Error|Exception): /m
                .test(el.innerText));
            if (first) first.scrollIntoView({block: "center"});
            return !!first;
        }"""
    )


# --- charts ---------------------------------------------------------------------------------------------------------

# A chart element: an <img> (how JupyterLab shows image/svg+xml and image/png), an inline <svg>, a <canvas> (a
# panel's live chart, drawn by Vega). Each belongs to the innermost output around it (a panel's table slots are
# outputs inside the panel's output).
_JS_CHARTS = r"""
(root) => {
    // a canvas's marks: its pixels that are neither blank nor white (every 4th row and column)
    const inkedPixels = canvas => {
        if (!canvas.width || !canvas.height) return 0;
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let inked = 0;
        for (let y = 0; y < canvas.height; y += 4) {
            for (let x = 0; x < canvas.width; x += 4) {
                const i = 4 * (y * canvas.width + x);
                if (pixels[i + 3] > 0 && (pixels[i] < 250 || pixels[i + 1] < 250 || pixels[i + 2] < 250)) inked++;
            }
        }
        return inked;
    };
    const found = [];
    const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
    const panels = [...document.querySelectorAll('.jp-Notebook .coordkit-panel')];
    const outputs = root.querySelectorAll('.jp-OutputArea-output');
    for (const output of outputs) {
        for (const el of output.querySelectorAll('img, svg, canvas')) {
            if (el.closest('.jp-OutputArea-output') !== output) continue;  // an inner output's: counted there
            if (el.tagName.toLowerCase() === 'svg' && el.parentElement.closest('svg')) continue;  // nested svg
            if (el.closest('.jp-InputArea, .widget-slider, .jp-Toolbar')) continue;
            const box = el.getBoundingClientRect();
            const tag = el.tagName.toLowerCase();
            let marks = 0, loaded = true;
            if (tag === 'svg') marks = el.querySelectorAll('path, rect, circle, line, polygon, polyline').length;
            else if (tag === 'img') { loaded = el.complete && el.naturalWidth > 0; marks = loaded ? 1 : 0; }
            else marks = inkedPixels(el);
            // icons (tiny svgs in buttons, toolbars) are not charts
            if (tag === 'svg' && box.width < 40 && box.height < 40) continue;
            found.push({
                tag, width: box.width, height: box.height, marks, loaded,
                cell: cells.indexOf(el.closest('.jp-Cell')),
                panel: panels.indexOf(el.closest('.coordkit-panel')),
            });
        }
    }
    return found;
}
"""


@dataclass
class Chart:
    tag: str
    width: float
    height: float
    marks: int
    loaded: bool
    cell: int  # index of the notebook cell
    panel: int  # index of the panel it is in, -1 if none

    @property
    def rendered(self) -> bool:
        return self.width > 0 and self.height > 0 and self.marks > 0 and self.loaded


def charts(page) -> list[Chart]:
    """Every chart in the notebook's outputs (panels included)."""
    return [Chart(**found) for found in page.evaluate(f"() => ({_JS_CHARTS})(document.querySelector('.jp-Notebook'))")]


def wait_for_charts_loaded(page, timeout: float = 15.0) -> None:
    """Wait until every <img> in the outputs has loaded (decoding a large SVG takes a moment)."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img')]
            .every(img => img.complete && img.naturalWidth > 0)""",
        timeout=timeout * 1000,
    )


# --- how pages read -------------------------------------------------------------------------------------------------

# Every output wider than its output area: it scrolls sideways, or a table or chart sticks out of it.
_JS_TOO_WIDE = r"""
() => {
    const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
    const found = [];
    for (const output of document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')) {
        const column = output.getBoundingClientRect();
        const wide = [...output.querySelectorAll('table, svg, img, canvas')]
            .filter(el => el.closest('.jp-OutputArea-output') === output && !el.parentElement.closest('svg'))
            .map(el => el.getBoundingClientRect())
            .filter(box => box.right > column.right + 1);
        if (output.scrollWidth > output.clientWidth + 1 || wide.length) {
            found.push({
                cell: cells.indexOf(output.closest('.jp-Cell')),
                column: Math.round(column.width),
                width: Math.round(Math.max(output.scrollWidth, ...wide.map(box => box.right - column.left))),
            });
        }
    }
    return found;
}
"""


def too_wide(page) -> list[str]:
    """Outputs wider than the notebook's column (at the test window, 1400 px wide with the file browser open)."""
    return [
        f"cell {found['cell']}: {found['width']} px in a {found['column']} px column"
        for found in page.evaluate(_JS_TOO_WIDE)
    ]


def dollars_shown_as_math(page) -> list[str]:
    """Markdown cells that escape a dollar sign (``\\$``) but show fewer dollar signs than they escape: JupyterLab
    drew the text between two of them as math ("7,300underA2A")."""
    cells = page.evaluate(
        f"""() => {_JS_NOTEBOOK}().content.widgets
            .map((cell, index) => ({{index, type: cell.model.type, source: cell.model.sharedModel.getSource(),
                                     text: (cell.node.querySelector('.jp-RenderedMarkdown') || {{}}).innerText}}))
            .filter(cell => cell.type === 'markdown')"""
    )
    problems = []
    for cell in cells:
        escaped = len(re.findall(r"\\\$", cell["source"]))
        shown = (cell["text"] or "").count("$")
        if shown < escaped:
            problems.append(f"cell {cell['index']}: {escaped} escaped dollar signs, {shown} shown")
    return problems


# --- panels ---------------------------------------------------------------------------------------------------------


def panels(page):
    """A locator of every panel (``.coordkit-panel``) in the notebook, in order."""
    return page.locator(".jp-Notebook .coordkit-panel")


def wait_for_panels(page, expected: int, timeout: float = 30.0) -> None:
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
        label = widget.locator("label").first.inner_text().strip() if widget.locator("label").count() else ""
        found.append(Control(kind, label, widget))
    return found


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


# In the page: watch a panel's status line and chart area from `arm` on, and tell when a new run has finished and
# its chart has settled (the status line can show "done in" a moment before the new chart is in place).
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


def change_and_wait(panel, action: Callable[[], str], timeout: float = 60.0) -> Update:
    """Do ``action`` (which changes a control of ``panel``) and wait until the panel has run again.

    Raises TimeoutError if the status line never went through "running…" to "done in"/"error:" in time."""
    handle = panel.element_handle()
    handle.evaluate(_JS_ARM)
    done = action()
    try:
        panel.page.wait_for_function(_JS_SETTLED, arg=[handle, QUIET_MS], timeout=timeout * 1000, polling="raf")
    except Exception as error:
        result = handle.evaluate(_JS_RESULT)
        raise TimeoutError(
            f"{done}: no new run within {timeout:.0f} s (status texts seen: {result['seen']}, now "
            f"{result['status_after']!r})"
        ) from error
    return Update(done, **handle.evaluate(_JS_RESULT))


def kernel_ms(status: str) -> float | None:
    """The run time a status line reports ("done in 23 ms" → 23.0, "done in 1.2 s" → 1200.0), or None."""
    match = re.match(r"done in ([\d.]+) ?(ms|s)\b", status)
    if not match:
        return None
    return float(match[1]) * (1 if match[2] == "ms" else 1000)


# --- failures -------------------------------------------------------------------------------------------------------


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def screenshot(page, *parts: object) -> Path | None:
    """Save a full-page PNG of ``page`` under test-artifacts/browser/, named from ``parts``; None if that fails."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{_safe('-'.join(str(part) for part in parts))}.png"
    try:
        page.screenshot(path=str(path), full_page=True)
    except Exception:  # a crashed page must not hide the failure being reported
        return None
    return path


def screenshot_element(locator, *parts: object) -> Path | None:
    """Save a PNG of one element (scrolled into view) under test-artifacts/browser/; None if that fails."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{_safe('-'.join(str(part) for part in parts))}.png"
    try:
        locator.scroll_into_view_if_needed()
        locator.screenshot(path=str(path))
    except Exception:
        return screenshot(locator.page, *parts)
    return path


@contextlib.contextmanager
def screenshot_on_failure(page_or_locator, *parts: object) -> Iterator[None]:
    """On an exception inside the block, save a screenshot (of the element, or the whole page) and add its path to
    the exception's message (AssertionError, TimeoutError) or as a note."""
    try:
        yield
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        if hasattr(page_or_locator, "element_handle"):
            path = screenshot_element(page_or_locator, *parts)
        else:
            path = screenshot(page_or_locator, *parts)
        note = f"screenshot: {path}" if path else "screenshot: could not be taken"
        error.add_note(note)
        if isinstance(error, AssertionError) and error.args:
            error.args = (f"{error.args[0]}\n{note}", *error.args[1:])
        raise
