"""Fixtures for the browser tests: one JupyterLab server (and one for readers without a kernel), one headless
Chromium and a page for each server, shared by a test module.

Module-scoped on purpose, not session-scoped: while Playwright's sync API is open, an asyncio loop counts as running
in the main thread, so tests collected after these (``asyncio.run``, the panels' debounce) would see it. Torn down at
the end of the module, they leave nothing behind.

Every test here is marked ``browser`` (deselect them with ``-m "not browser"``). Without Playwright or Chromium they
are skipped with the reason, never failed.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[1]))  # tests/: the prose and glossary checks, read in the page

import lab  # noqa: E402 (the folder is put on the path just above)

HERE = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: runs the notebooks in JupyterLab in headless Chromium (slow)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_machinery() -> None:
    """Skip, with the reason, where Playwright, Chromium or JupyterLab is missing."""
    reason = lab.skip_reason()
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def jupyter_lab(browser_machinery):
    """A JupyterLab server on a temporary copy of notebooks/ (stopped, and the copy removed, at the end)."""
    with lab.JupyterLab() as server:
        yield server


@pytest.fixture(scope="module")
def reader_lab(browser_machinery):
    """A second JupyterLab server whose notebooks open with no kernel, as a saved notebook's reader opens it."""
    with lab.JupyterLab(starts_kernels=False) as server:
        yield server


@pytest.fixture(scope="module")
def chromium(browser_machinery):
    """Headless Chromium, shared by the module's tests (see above why not longer)."""
    with lab.browser() as launched:
        yield launched


@pytest.fixture(scope="module")
def lab_page(chromium):
    """The page the module's tests drive JupyterLab in: each test's notebook opens in the JupyterLab it loaded first,
    in place of the one before (lab_notebook.go_to)."""
    page = lab.new_page(chromium)
    yield page
    page.context.close()


@pytest.fixture
def page(lab_page, jupyter_lab):
    """The module's JupyterLab page; the test's kernels are shut down afterwards."""
    yield lab_page
    jupyter_lab.shutdown_kernels()


@pytest.fixture(scope="module")
def reader_page(chromium, reader_lab):
    """One page for the reader's JupyterLab, shared by the module's tests: each saved notebook opens in the
    JupyterLab it loaded first, in place of the one before (lab_saved.open_without_kernel)."""
    page = lab.new_page(chromium)
    yield page
    page.context.close()


@pytest.fixture
def browser_report(request) -> list:
    """Rows for the summary table printed at the end of the session (by tests/conftest.py). They travel with the
    test's report (its ``user_properties``), so that under pytest-xdist the controller, which prints it, receives
    them."""
    rows = []
    yield rows
    request.node.user_properties.extend(("browser-report", row) for row in rows)
