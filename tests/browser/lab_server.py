"""The browser and the server for the browser tests: a throwaway JupyterLab server on a temporary copy of the
repository's notebooks, and the system's Chromium in headless mode.

Also what the tests need to know about the notebooks themselves (their names, how many panels each builds) and why
the machinery cannot run in an environment (``skip_reason``).
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
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
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
# JupyterLab's page config for the run: no build check. At every page load the page asks the server whether its
# extensions need a rebuild (GET /lab/api/build), which runs a subprocess: ~0.8 s of CPU a load (measured under
# load); the kit's extensions come prebuilt, so the answer is always no and nothing on the page changes.
PAGE_CONFIG = {"buildCheck": False}
PANEL_CALL = re.compile(r"\b(?:ExperimentPanel|ModelPlayer|model_player|\w+_panel)\(")  # a panel, model_panel, a player


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
    """How many code cells of notebook ``name`` build a panel (their source calls ExperimentPanel, model_panel or a
    family's ``…_panel`` function from its panels.py)."""
    cells = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
    sources = ("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
    return sum(bool(PANEL_CALL.search(source)) for source in sources)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class JupyterLab:
    """A JupyterLab server on a temporary copy of ``notebooks``, on a free port with a random token.

    Its user settings turn autosave off, the news pop-up off and notebook windowing off; its workspaces and runtime
    files live in the same temporary folder, which is removed on exit. The server's log is kept there too and is
    quoted if it fails to start. With ``starts_kernels=False``, a notebook opens with no kernel, as a saved notebook
    does for a reader who has none.
    """

    def __init__(
        self, notebooks: Path = NOTEBOOKS, startup_timeout: float = 300.0, starts_kernels: bool = True
    ) -> None:
        self.source = Path(notebooks)
        self.starts_kernels = starts_kernels
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
        (self._temp / "config" / "labconfig").mkdir()
        (self._temp / "config" / "labconfig" / "page_config.json").write_text(json.dumps(PAGE_CONFIG), encoding="utf-8")
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
            f"--LabApp.notebook_starts_kernel={self.starts_kernels}",
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


def new_page(chromium, timeout_ms: float = 120_000):
    """A page in a fresh browser context (no storage shared with other pages), 1400×1000."""
    context = chromium.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    return page
