"""Each notebook runs once: nbval leaves out a notebook whose browser test runs, and that test's Run All makes nbval's
checks instead (tests/browser/lab_nbval.py). Checked here without a browser: that the comparison is nbval's (the same
keys skipped, the same sanitizers, the stored outputs match themselves in the page's form and a changed number does
not), and that nbval leaves a notebook out only when its browser test is chosen and can run."""

import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbval.plugin import IPyNbFile

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import lab_nbval  # noqa: E402 (tests/browser/, put on the path just above)
import lab_server  # noqa: E402

NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
BROWSER_TEST = "tests/browser/test_notebooks_in_browser.py::test_notebook_runs_and_its_panels_respond"


def as_the_page_holds_them(name: str) -> list[dict]:
    """The notebook's code cells as ``lab.cell_outputs`` reads them from the page, with the stored outputs as if
    this Run All had printed them (JupyterLab's JSON: multiline texts as lists of lines, an execution count each)."""
    cells = json.loads((ROOT / "notebooks" / name).read_text(encoding="utf-8"))["cells"]
    code = [cell for cell in cells if cell["cell_type"] == "code"]
    return [{"index": i, "execution_count": i + 1, "outputs": copy.deepcopy(c["outputs"])} for i, c in enumerate(code)]


def checked(name: str) -> int:
    cells = nbformat.read(ROOT / "notebooks" / name, as_version=4).cells
    return sum(lab_nbval.options(cell)["check"] for cell in cells if cell.cell_type == "code")


def test_the_comparison_leaves_out_what_nbval_leaves_out(request):
    notebook = IPyNbFile.from_parent(request.session, path=ROOT / "notebooks" / NOTEBOOKS[0])
    assert notebook.skip_compare == lab_nbval.SKIP_COMPARE


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_notebook_is_checked_in_the_browser_as_nbval_checks_it(name, pytestconfig):
    """Every notebook the browser runs uses no nbval marker but output checks (so nbval may leave it out), and its
    stored outputs, in the page's form, pass the comparison, every checked cell compared."""
    assert lab_nbval.handled_here(ROOT / "notebooks" / name)
    compared, differences = lab_nbval.differences(name, as_the_page_holds_them(name), pytestconfig)
    assert (compared, differences) == (checked(name), [])


def test_a_changed_number_differs_a_timing_does_not_and_unchecked_cells_are_not_compared(
    pytestconfig, monkeypatch, tmp_path
):
    def cell(text, tags=(), count=1):
        output = {"output_type": "stream", "name": "stdout", "text": text}
        return {
            "cell_type": "code",
            "metadata": {"tags": list(tags)},
            "execution_count": count,
            "source": "print()",
            "outputs": [output] if text else [],
        }

    stored = [
        cell("42 cases, done in 1.5 s, 12 ms a step\n", tags=["nbval-check-output"]),
        cell("unchecked 1\n"),
        cell("", tags=["nbval-check-output"], count=None),  # never run when saved: not compared
    ]
    notebook = {"cells": stored, "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    (tmp_path / "toy.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    monkeypatch.setattr(lab_nbval, "NOTEBOOKS", tmp_path)

    def page(first, second="unchecked 2\n", third="anything\n"):
        stream = lambda text: {"output_type": "stream", "name": "stdout", "text": text}  # noqa: E731
        first_outputs = [stream(first[:10]), stream([first[10:]])]  # two pieces, as nbval coalesces them
        return [
            {"index": i, "outputs": outputs}
            for i, outputs in enumerate([first_outputs, [stream(second)], [stream(third)]])
        ]

    assert lab_nbval.differences("toy.ipynb", page("42 cases, done in 9.1 s, 3 ms a step\n"), pytestconfig) == (1, [])
    compared, differences = lab_nbval.differences(
        "toy.ipynb", page("43 cases, done in 1.5 s, 12 ms a step\n"), pytestconfig
    )
    assert (
        compared == 1 and len(differences) == 1 and differences[0].startswith("toy.ipynb::Cell 0: Cell outputs differ")
    )
    assert "mismatch 'stdout'" in differences[0] and "43 cases" in differences[0]

    stored[2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "left over\n"}]
    (tmp_path / "toy.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert lab_nbval.differences("toy.ipynb", page("42 cases, done in 1.5 s, 12 ms a step\n"), pytestconfig) == (
        1,
        ["toy.ipynb::Cell 2: Unrun reference cell has outputs"],
    )


def top_conftest(config):
    return next(
        plugin
        for plugin in config.pluginmanager.get_plugins()
        if getattr(plugin, "__file__", None) == str(ROOT / "tests" / "conftest.py")
    )


@pytest.mark.parametrize(
    "options, browser_tests, skip_reason, left_out",
    [
        ({"nbval_lax": True}, ["03_pressure_fields.ipynb"], None, {"notebooks/03_pressure_fields.ipynb"}),
        ({"nbval_lax": True}, NOTEBOOKS, None, {f"notebooks/{name}" for name in NOTEBOOKS}),
        ({"nbval_lax": True}, [], None, set()),  # -m "not browser": nbval runs every notebook
        ({"nbval_lax": True}, NOTEBOOKS, "no Chromium executable on PATH", set()),  # the browser tests skip
        ({"nbval_lax": False}, NOTEBOOKS, None, set()),  # no nbval: nothing to leave out
        ({"nbval_lax": True, "nbval": True}, NOTEBOOKS, None, set()),  # strict nbval compares every cell
    ],
)
def test_nbval_leaves_out_only_the_notebooks_whose_browser_test_runs(
    pytestconfig, monkeypatch, options, browser_tests, skip_reason, left_out
):
    chosen = [
        SimpleNamespace(
            nodeid=f"{BROWSER_TEST}[{name}]",
            originalname=BROWSER_TEST.rsplit("::", 1)[1],
            callspec=SimpleNamespace(params={"name": name}),
        )
        for name in browser_tests
    ] + [SimpleNamespace(nodeid="tests/browser/test_notebooks_in_browser.py::test_the_checks_see_errors")]
    config = SimpleNamespace(getoption=lambda name, default=None: options.get(name, default), rootpath=ROOT)
    monkeypatch.setattr(lab_server, "skip_reason", lambda: skip_reason)
    assert top_conftest(pytestconfig)._notebooks_run_in_browser(config, chosen) == left_out
