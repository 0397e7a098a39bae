"""The whole suite's hooks: which notebooks nbval runs, how pytest-xdist shares the tests among workers, and the
browser tests' summary; a figure cache of the suite's own, and Hypothesis without deadlines.

The hooks live here, at the top of the suite, because under xdist the controller process collects nothing: it loads
the conftest files of the command's paths (tests/, notebooks/) but not tests/browser/conftest.py.
"""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# The suite passes on a machine busy with other work, so no test may time itself: Hypothesis's 200 ms deadline a
# case is off (a case that took 275 ms on a loaded machine failed a test of arithmetic).
settings.register_profile("coordkit", deadline=None)
settings.load_profile("coordkit")

# Figures the tests compute (coordkit.figure_cache) go to a folder of this process's own, removed at exit: never
# into the user's cache, and never read back from a run of other code.
os.environ["COORDKIT_CACHE"] = tempfile.mkdtemp(prefix="coordkit-test-cache-")
atexit.register(shutil.rmtree, os.environ["COORDKIT_CACHE"], ignore_errors=True)

BROWSER = "tests/browser/"
_browser_rows: dict[str, list[str]] = {}  # test → its summary rows, from its report (tests/browser/conftest.py)


BROWSER_RUN = "test_notebook_runs_and_its_panels_respond"  # the browser test that runs a notebook, one per notebook
FIRST = ("tests/browser/", "tests/test_replication_ledger.py", "notebooks/solutions/", "notebooks/")  # longest first


@pytest.hookimpl(trylast=True)  # after -m and -k have chosen the tests
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each notebook runs once: nbval leaves out a notebook whose browser test runs, since that test's Run All makes
    nbval's checks too (tests/browser/lab_nbval.py). Then the longest work first: the browser tests (a notebook each,
    up to two minutes), the solution notebooks, the notebooks, then the test files, each in its own order. A worker
    then ends on short files, not on a two-minute notebook that started last (xdist hands out the units in this order;
    see below)."""
    run_in_browser = _notebooks_run_in_browser(config, items)
    if run_in_browser:
        left_out = [item for item in items if item.nodeid.split("::")[0] in run_in_browser]
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if item.nodeid.split("::")[0] not in run_in_browser]
    items.sort(key=lambda item: next((k for k, start in enumerate(FIRST) if item.nodeid.startswith(start)), len(FIRST)))


def _notebooks_run_in_browser(config: pytest.Config, items: list[pytest.Item]) -> set[str]:
    """The notebooks (as nbval's node ids begin: ``notebooks/00_start_here.ipynb``) that nbval collected under
    ``--nbval-lax`` and whose browser test is chosen and can run (Chromium, Playwright and JupyterLab are here), and
    whose cells use no nbval marker but output checks (lab_nbval.handled_here)."""
    if not config.getoption("nbval_lax", False) or config.getoption("nbval", False):
        return set()
    in_browser = {
        f"notebooks/{item.callspec.params['name']}"
        for item in items
        if item.nodeid.startswith(BROWSER) and getattr(item, "originalname", "") == BROWSER_RUN
    }
    if not in_browser:
        return set()
    import lab_nbval  # tests/browser/ is on the path once its conftest is loaded, which collecting its tests does
    import lab_server

    if lab_server.skip_reason():
        return set()
    return {notebook for notebook in in_browser if lab_nbval.handled_here(Path(config.rootpath) / notebook)}


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


@pytest.fixture(autouse=True)
def _policy_registry_restored():
    """Every test leaves the names given to coordkit.register_policy as it found them (a student's file that a
    command runs registers in the test's own process)."""
    from coordkit.policy_registry import _REGISTERED

    kept = {model: dict(names) for model, names in _REGISTERED.items()}
    yield
    _REGISTERED.clear()
    _REGISTERED.update(kept)
