"""The papers are cited once, in data/citations.csv, and shown exactly so in the README, in notebook 00 and at the
top of each paper's notebook (line breaks aside)."""

import csv
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
COLUMNS = ["paper", "role", "citation", "modules", "notebooks", "source"]
with open(ROOT / "data" / "citations.csv", newline="", encoding="utf-8") as file:
    ROWS = list(csv.DictReader(file))


def flat(text: str) -> str:
    """The text as Markdown renders it: any run of spaces and line breaks is one space."""
    return " ".join(text.split())


def markdown_cells(number: str) -> list[str]:
    (path,) = NOTEBOOKS.glob(f"{number}_*.ipynb")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [flat("".join(cell["source"])) for cell in cells if cell["cell_type"] == "markdown"]


def test_each_row_is_complete_and_its_module_exists():
    with open(ROOT / "data" / "citations.csv", newline="", encoding="utf-8") as file:
        assert next(csv.reader(file)) == COLUMNS
    assert {row["role"] for row in ROWS} == {"paper", "basis"}
    assert sum(row["role"] == "paper" for row in ROWS) == 5
    for row in ROWS:
        assert all(row[column].strip() for column in COLUMNS), row["paper"]
        module = row["modules"].split()[0].split(".")
        path = ROOT.joinpath(*module)
        assert path.is_dir() or path.with_suffix(".py").exists(), f"{row['paper']}: no module {row['modules']}"


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row["paper"])
def test_the_readme_shows_the_citation(row):
    assert flat(row["citation"]) in flat((ROOT / "README.md").read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "row, number",
    [(row, number) for row in ROWS for number in row["notebooks"].split()],
    ids=lambda value: value if isinstance(value, str) else value["paper"],
)
def test_the_top_cell_of_the_papers_notebook_shows_the_citation(row, number):
    assert flat(row["citation"]) in markdown_cells(number)[0]


@pytest.mark.parametrize("row", [row for row in ROWS if row["role"] == "paper"], ids=lambda row: row["paper"])
def test_notebook_00_lists_every_paper_where_it_introduces_them(row):
    (papers,) = [cell for cell in markdown_cells("00") if cell.startswith("## Five papers, five questions")]
    assert flat(row["citation"]) in papers
