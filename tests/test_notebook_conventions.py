"""The classroom conventions every notebook keeps (CONTRIBUTING.md, step 6): a lesson plan, tagged exercises, a
solutions notebook, and links (to notebooks and to glossary terms) that lead somewhere."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
CHAPTERS = sorted(path for path in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if not path.name.startswith("00_"))
ALL = sorted(NOTEBOOKS.rglob("*.ipynb"))
TAG = re.compile(r"★{1,3} (warm-up|core|stretch)")
LINK = re.compile(r"\]\(([^()\s]+(?:\([^)\s]*\))?[^)\s]*)\)")  # a Markdown link's target; one level of parentheses


def markdown(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def exercises_section(text: str) -> str:
    """From the last heading that names the exercises to the end of the notebook."""
    headings = [match.start() for match in re.finditer(r"^#+ .*Exercises", text, flags=re.MULTILINE)]
    return text[headings[-1] :] if headings else ""


def heading_ids(path: Path) -> set[str]:
    """The anchors JupyterLab, GitHub-style renderers and nbviewer give a notebook's headings: the text, spaces to -."""
    return {line.lstrip("#").strip().replace(" ", "-") for line in markdown(path).splitlines() if line.startswith("#")}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda path: path.stem)
def test_a_chapter_has_a_lesson_plan_tagged_exercises_and_a_solutions_notebook(chapter):
    text = markdown(chapter)
    assert "**Lesson plan**" in text, f"{chapter.name}: no lesson-plan cell"
    assert re.search(r"\| minutes \|", text), f"{chapter.name}: the lesson plan has no minutes per section"
    exercises = exercises_section(text)
    items = re.findall(r"^(?:\d+\.\s|\*\*Exercise|#+ Exercise\s+\d).*", exercises, flags=re.MULTILINE)
    assert items, f"{chapter.name}: no numbered exercises after its Exercises heading"
    untagged = [item for item in items if not TAG.search(item)]
    assert not untagged, f"{chapter.name}: exercises not tagged ★ warm-up, ★★ core or ★★★ stretch: {untagged}"
    if "<details>" in exercises:  # the answers are folded under the exercises themselves
        return
    solutions = NOTEBOOKS / "solutions" / f"{chapter.stem}_solutions.ipynb"
    assert solutions.exists(), f"{chapter.name}: no {solutions.relative_to(NOTEBOOKS)}"


@pytest.mark.parametrize("notebook", ALL, ids=lambda path: str(path.relative_to(NOTEBOOKS)))
def test_links_to_notebooks_and_their_headings_lead_somewhere(notebook):
    broken = []
    for target in LINK.findall(markdown(notebook)):
        if "://" in target or target.startswith("mailto:"):
            continue
        file, _, anchor = target.partition("#")
        linked = (notebook.parent / file).resolve() if file else notebook
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".ipynb" and anchor not in heading_ids(linked):
            broken.append(f"{target}: no heading {anchor!r} in {linked.name}")
    assert not broken, f"{notebook.name}: broken links:\n" + "\n".join(broken)


CHECKED = "nbval-check-output"


@pytest.mark.parametrize("notebook", ALL, ids=lambda path: str(path.relative_to(NOTEBOOKS)))
def test_output_checks_are_cell_tags_not_comments_a_student_reads(notebook):
    """nbval's output checks are cell tags: no ``# NBVAL_…`` comment heads a student's cell, every cell that keeps
    its outputs in the file is one nbval compares, and every compared cell has outputs to compare."""
    cells = [cell for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"] if cell["cell_type"] == "code"]
    commented = [i for i, cell in enumerate(cells) if "NBVAL" in "".join(cell["source"])]
    assert not commented, f"{notebook.name}: code cells {commented} carry an NBVAL comment; tag them {CHECKED!r}"
    tagged = [CHECKED in cell["metadata"].get("tags", []) for cell in cells]
    stray = [i for i, (cell, checked) in enumerate(zip(cells, tagged, strict=True)) if cell["outputs"] and not checked]
    assert not stray, f"{notebook.name}: code cells {stray} keep outputs nbval never checks (tools/refresh_notebook.py)"
    empty = [i for i, (cell, checked) in enumerate(zip(cells, tagged, strict=True)) if checked and not cell["outputs"]]
    assert not empty, f"{notebook.name}: code cells {empty} are tagged {CHECKED!r} but store no output to compare"


def test_nbval_compares_the_outputs_of_tagged_cells(tmp_path):
    """The tag is what nbval reads: a tagged cell whose stored output differs from a fresh run fails, the same cell
    untagged passes (under --nbval-lax, as `make test` runs it)."""
    import subprocess
    import sys

    def notebook(tags: list[str]) -> dict:
        cell = {
            "cell_type": "code",
            "execution_count": 1,
            "id": "c1",
            "metadata": {"tags": tags},
            "outputs": [{"name": "stdout", "output_type": "stream", "text": ["2\n"]}],
            "source": ["print(1 + 2)"],
        }
        kernel = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
        return {"cells": [cell], "metadata": kernel, "nbformat": 4, "nbformat_minor": 5}

    outcomes = {}
    for name, tags in {"tagged": [CHECKED], "untagged": []}.items():
        path = tmp_path / f"{name}.ipynb"
        path.write_text(json.dumps(notebook(tags)), encoding="utf-8")
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax", "-n", "0", str(path)]
        outcomes[name] = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True).returncode
    assert outcomes == {"tagged": 1, "untagged": 0}, outcomes


PANEL_BUILDERS = re.compile(r"\b(model_panel|ExperimentPanel|controls)\(")


@pytest.mark.parametrize("notebook", [path for path in ALL if not path.name.startswith("00_")], ids=lambda p: p.stem)
def test_a_chapter_takes_its_panels_from_its_familys_panels_module(notebook):
    """Panels are built in ``panels.py`` (CONTRIBUTING.md, step 5), so their defaults are the declaration's unless a
    cell passes ``start=`` visibly; the start notebook alone shows how ``model_panel`` puts one together."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    code = ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
    built = [match for source in code for match in PANEL_BUILDERS.findall(source)]
    assert not built, f"{notebook.name} builds panels in a cell ({built}): move them into the family's panels.py"
