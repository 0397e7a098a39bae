"""The whole suite's hooks: how pytest-xdist shares the tests among workers, and the browser tests' summary; and a
figure cache of the suite's own.

The hooks live here, at the top of the suite, because under xdist the controller process collects nothing: it loads
the conftest files of the command's paths (tests/, notebooks/) but not tests/browser/conftest.py.
"""

import atexit
import os
import shutil
import tempfile

import pytest

# Figures the tests compute (coordkit.figure_cache) go to a folder of this process's own, removed at exit: never
# into the user's cache, and never read back from a run of other code.
os.environ["COORDKIT_CACHE"] = tempfile.mkdtemp(prefix="coordkit-test-cache-")
atexit.register(shutil.rmtree, os.environ["COORDKIT_CACHE"], ignore_errors=True)

BROWSER = "tests/browser/"
_browser_rows: dict[str, list[str]] = {}  # test → its summary rows, from its report (tests/browser/conftest.py)


FIRST = ("tests/browser/", "tests/test_replication_ledger.py", "notebooks/solutions/", "notebooks/")  # longest first


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The longest work first: the browser tests (a notebook each, up to two minutes), the solution notebooks,
    the notebooks, then the test files, each in its own order. A worker then ends on short files, not on a
    two-minute notebook that started last (xdist hands out the units in this order; see below)."""
    items.sort(key=lambda item: next((k for k, start in enumerate(FIRST) if item.nodeid.startswith(start)), len(FIRST)))


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """With ``--dist loadfile`` (what ``make test`` asks for): a test file to a worker, as xdist does, except that
    each browser test is a unit of its own, and units go out in the order above (xdist's own order puts the files
    with the most tests first, and so the browser tests, one test a unit, last). A notebook's nbval cells run in
    order on one kernel and a file's tests share its module fixtures, so files stay whole; the browser tests are one
    file holding most of the suite's longest tests, which one worker would otherwise play alone. Each worker that
    receives some starts its own JupyterLab and Chromium (module fixtures, on a free port and a copy of notebooks/).
    """
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    config.option.loadscopereorder = False

    class ByFileBrowserByNotebook(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return nodeid if nodeid.startswith(BROWSER) else super()._split_scope(nodeid)

    return ByFileBrowserByNotebook(config, log)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    rows = [row for key, row in report.user_properties if key == "browser-report"]
    if report.when == "teardown" and rows:
        _browser_rows[report.nodeid] = rows


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    if not _browser_rows:
        return
    terminalreporter.section("notebooks in the browser")
    for test in sorted(_browser_rows):  # in the notebooks' order, whichever worker finished first
        for row in _browser_rows[test]:
            terminalreporter.write_line(row)
