"""nbval's checks, made on a notebook that the browser test has just run (Run All Cells in JupyterLab), so that nbval
need not run it a second time: tests/conftest.py leaves out the nbval items of every notebook whose browser test runs
(``handled_here``), and the browser test calls ``differences`` on its Run All.

The checks are nbval's own, as ``--nbval-lax`` makes them: every code cell ran without an error (the browser test's
own check of the outputs), and every cell nbval would compare (tagged ``nbval-check-output``, or with the comment
``# NBVAL_CHECK_OUTPUT``) shows what the notebook stores, compared by nbval's ``compare_outputs`` itself: the same
sanitizers (``--nbval-sanitize-with``; tests/nbval_sanitize.cfg when the option is not given), streams coalesced as
nbval coalesces them, the same keys left out. A stored cell that was never run must have no outputs, as nbval
requires. nbval's other markers (skip a cell, expect an error) change what Run All would be checked for, so a notebook
that uses one is left to nbval.
"""

import copy
from collections import OrderedDict
from pathlib import Path
from types import SimpleNamespace

import nbformat
from lab_server import NOTEBOOKS, REPO
from nbval.plugin import (
    IPyNbCell,
    coalesce_streams,
    find_comment_markers,
    find_metadata_tags,
    get_sanitize_patterns,
    nocolors,
)

SANITIZE = REPO / "tests" / "nbval_sanitize.cfg"
# What nbval never compares (IPyNbFile.skip_compare, nbval 0.11 without nbdime): test_the_browser_compares_as_nbval
# checks this copy against a notebook item nbval collects.
SKIP_COMPARE = (
    "metadata",
    "traceback",
    "prompt_number",
    "output_type",
    "name",
    "execution_count",
    "application/vnd.jupyter.widget-view+json",
    "image/png",
    "image/jpeg",
)


def options(cell) -> dict:
    """nbval's options for a code cell under --nbval-lax: its tags, then its comments (which win), and whether its
    output is compared (not by default)."""
    found = dict(find_metadata_tags(cell.metadata))
    found.update(find_comment_markers(cell.source))
    found.setdefault("check", False)
    return found


def handled_here(path: Path) -> bool:
    """Whether the browser test makes every check nbval makes of the notebook at ``path``: none of its cells is
    skipped or expected to fail."""
    cells = nbformat.read(path, as_version=4).cells
    return all(set(options(cell)) <= {"check"} for cell in cells if cell.cell_type == "code")


class _Cell:
    """What nbval's ``IPyNbCell.compare_outputs`` reads of the cell it is a method of, so that the comparison is its
    own code, not a copy of it."""

    compare_outputs = IPyNbCell.compare_outputs
    format_output_compare = IPyNbCell.format_output_compare
    sanitize = IPyNbCell.sanitize
    colors = nocolors

    def __init__(self, config, patterns: OrderedDict) -> None:
        self.config, self.ihook = config, config.hook
        self.parent = SimpleNamespace(skip_compare=SKIP_COMPARE, sanitize_patterns=patterns)
        self.comparison_traceback = []


def sanitize_patterns(config) -> OrderedDict:
    """The regexes of the sanitize file the session names (relative to where pytest was started, as nbval opens it),
    or of tests/nbval_sanitize.cfg."""
    given = config.getoption("nbval_sanitize_with", None)
    path = config.invocation_params.dir / given if given else SANITIZE
    return OrderedDict(get_sanitize_patterns(path.read_text(encoding="utf-8")))


def _whole(value):
    return "".join(value) if isinstance(value, list) else value


def _output(shown: dict) -> nbformat.NotebookNode:
    """An output as the page's notebook model holds it, as nbval holds what the kernel sent (texts whole strings)."""
    output = {key: _whole(value) if key == "text" else value for key, value in shown.items()}
    if "data" in output:
        output["data"] = {mime: _whole(value) for mime, value in output["data"].items()}
    return nbformat.from_dict(output)


def differences(name: str, ran: list[dict], config) -> tuple[int, list[str]]:
    """How many cells nbval would compare in notebook ``name``, and what nbval would report of them after the page's
    Run All (``ran``: ``lab.cell_outputs(page)``, every code cell in order). Cells that show an error are the browser
    test's to report (nbval stops at the error too, before comparing)."""
    stored = [cell for cell in nbformat.read(NOTEBOOKS / name, as_version=4).cells if cell.cell_type == "code"]
    if len(stored) != len(ran):
        return 0, [f"{name}: {len(ran)} code cells in the page, {len(stored)} in the file"]
    patterns = sanitize_patterns(config)
    compared, problems = 0, []
    for number, (cell, shown) in enumerate(zip(stored, ran, strict=True)):
        where = f"{name}::Cell {number}"
        unrun = cell.execution_count is None
        if unrun and cell.outputs:
            problems.append(f"{where}: Unrun reference cell has outputs")
        if unrun or not options(cell)["check"] or any(o["output_type"] == "error" for o in shown["outputs"]):
            continue
        compared += 1
        checker = _Cell(config, patterns)
        outputs = coalesce_streams([_output(output) for output in shown["outputs"]])
        if not checker.compare_outputs(outputs, coalesce_streams(copy.deepcopy(cell.outputs))):
            problems.append(f"{where}: Cell outputs differ\n" + "\n".join(checker.comparison_traceback))
    return compared, problems
