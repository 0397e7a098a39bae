"""Every number a notebook's prose states has a source that a test checks.

A number in a notebook's Markdown is *sourced* when it is

- a kit result: some number printed in a checked output of the same notebook (a code cell tagged
  ``nbval-check-output``, whose stored outputs nbval compares with a fresh run) equals it, rounded as the prose
  rounds it. A percentage may quote a printed share (0.29 as 29%), and "about 1,800" is rounded to its hundreds;
- a published number of the notebook's paper (``data/papers/``, for the papers ``data/citations.csv`` names);
- a default the kit declares for what the notebook imports from it (a model's ``parameters``, a function's keyword
  defaults, the statistics' 95% level), or a number literal of the notebook's own code (a setting it plays).

So a model change that moves a printed number fails nbval, and the refreshed outputs fail this test until the prose
says the new number; a number the prose states and no checked cell prints fails at once.

Not quantities a run produces, so skipped: references (Figure 3, Table 2, §6.1, the notebook's own section 2.4,
Appendix B.4, Listing 1.8, exercise 3, notebook 01, seed 0), headings, years (the notebooks write thousands with a
comma: 2,000), model versions (Claude Haiku 4.5), numbers in code, formulas, links and the papers' citations
(``test_citations.py`` checks those), the exercises and the lists of things to try (settings the reader is asked to
play), integers below 10 (every printed table holds them, so that a check by value could not fail), and class time
(minutes, and the columns headed minutes, short or lesson plan), which the lesson-plan tests below add up. Run All times
come only from ``data/notebook_times.csv``, which notebook 00 prints. The glossary is not checked: it defines terms,
and its numbers are conventions (p < 0.05, 1.96) and examples.
"""

import csv
import html
import importlib
import inspect
import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from coordkit import stats
from coordkit.parameters import Parameters

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
ALL = sorted(path for path in NOTEBOOKS.rglob("*.ipynb") if ".ipynb_checkpoints" not in path.parts)
CHECKED = [path for path in ALL if path.name != "glossary.ipynb"]
PLANNED = [path for path in CHECKED if path.parent == NOTEBOOKS]  # the notebooks with a lesson plan
TIMES = ROOT / "data" / "notebook_times.csv"
TAG = "nbval-check-output"

# Phrases whose numbers are not results, each with its reason; keep this short.
UNCHECKED = {
    "01_rep_beer_game.ipynb": {"0.8 is conventionally": "Cohen's convention for a large effect"},
    "03_pressure_fields_solutions.ipynb": {"p < 0.05": "the conventional significance level"},
    "04_delay_dilemma.ipynb": {"50 ms": "the latencies of the paper's Figure 1 illustration"},
}

NUMBER = re.compile(r"(?<![\w.,:/#])(?<![A-Za-z]-)\d+(?:,\d{3})*(?:\.\d+)?(?!\w|\.\d)")
PRINTED = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?")
LITERAL = re.compile(r"(?<![\w.])\d[\d_]*(?:\.\d+)?")
IMPORT = re.compile(r"^from (coordkit[\w.]*) import ([\w, ]+)$", flags=re.MULTILINE)
NOT_PROSE = re.compile(
    r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|<[^>]*>|https?://\S+"  # code, formulas, links, HTML
    r"|^\s*#[^\n]*|^[>\s]*(?:\d+\.|[*-])\s"  # headings, list markers
    r"|(?:Claude|Haiku|Sonnet|Opus|GPT|Qwen|Llama)[ -]?\d+(?:\.\d+)*",  # model versions
    flags=re.DOTALL | re.MULTILINE,
)
ITEM = r"(?:[A-Z]\.?)?\d+(?:\.\d+)*[a-z]?"
REFERENCE = re.compile(
    r"(?:Figures?|Figs?\.|Tables?|§|[Ss]ections?|Appendix|Listings?|Parts?|[Ee]xercises?|[Nn]otebooks?|Insights?"
    rf"|RFC|[Ee]q\.|[Ss]eeds?|[Qq]uestions?|[Ll]ayers?)\s*{ITEM}(?:\s*(?:,|and|or|to|–|-)\s*{ITEM})*"
)
CLASS_TIME = re.compile(r"\d+\s*(?:min\b|minutes\b|-minute)")
ABOUT = re.compile(r"(?:about|around|roughly|nearly|almost|some|~|≈)\s*(?:[\d,.]+%?\s*(?:,|and|or|to|–)\s*)*$")
RUN_ALL_TIME = re.compile(r"(?:Run All|notebook runs)[^.]*?\d+(?:\.\d+)?\s*(?:s|seconds?|minutes?)\b")
PLAN = re.compile(r"Lesson plan\W+\(for instructors\) · about (\d+) minutes(?: \((\d+) without the exercises\))?")


@dataclass(frozen=True)
class Quoted:
    """A number as the prose states it: its text, the decimal places it is rounded to, and whether it is a share."""

    text: str
    places: int
    percent: bool

    @classmethod
    def at(cls, text: str, match: re.Match) -> "Quoted":
        """The number ``match`` found in ``text``, as precise as its wording ("about 1,800": to the hundred)."""
        digits = match.group().replace(",", "")
        places = len(digits.partition(".")[2])
        if not places and ABOUT.search(text[: match.start()]):
            places = len(digits.rstrip("0")) - len(digits)
        return cls(match.group(), places, text[match.end() : match.end() + 1] == "%")

    @property
    def value(self) -> float:
        return float(self.text.replace(",", ""))

    def matches(self, printed: float) -> bool:
        candidates = (printed, 100 * printed) if self.percent else (printed,)
        return any(abs(round(abs(number), self.places) - self.value) < 1e-9 for number in candidates)


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def markdown(notebook: list[dict]) -> list[str]:
    return ["".join(cell["source"]) for cell in notebook if cell["cell_type"] == "markdown"]


def code(notebook: list[dict]) -> str:
    return "\n".join("".join(cell["source"]) for cell in notebook if cell["cell_type"] == "code")


def printed_numbers(notebook: list[dict]) -> list[float]:
    """Every number in the stored outputs of the cells nbval checks."""
    texts = []
    for cell in notebook:
        if cell["cell_type"] == "code" and TAG in cell["metadata"].get("tags", []):
            for output in cell["outputs"]:
                if output.get("name", "stdout") == "stdout":
                    data = output.get("data", {})
                    texts += [output.get("text", ""), data.get("text/plain", ""), data.get("text/html", "")]
    text = html.unescape(re.sub(r"<[^>]*>", " ", " ".join("".join(t) for t in texts)))
    return [float(token.replace(",", "")) for token in PRINTED.findall(text)]


def published_numbers(name: str) -> list[float]:
    """The numbers of the papers a notebook (or its solutions) rebuilds, from their values and notes."""
    with open(ROOT / "data" / "citations.csv", newline="", encoding="utf-8") as file:
        papers = [row["paper"] for row in csv.DictReader(file) if name[:2] in row["notebooks"].split()]
    paths = [ROOT / "data" / "papers" / f"{paper}.csv" for paper in papers]
    rows = [pd.read_csv(path, dtype=str, keep_default_na=False) for path in paths if path.exists()]
    text = " ".join(" ".join(row["value"] + " " + row["note"]) for row in rows)
    return [float(token.replace(",", "")) for token in PRINTED.findall(text)]


def imported(notebook: list[dict]) -> list:
    """What the notebook's code imports from the kit (modules, models, functions), and the statistics it reports."""
    things = [stats]
    for module, names in IMPORT.findall(code(notebook)):
        parent = importlib.import_module(module)
        for name in (name.split(" as ")[0].strip() for name in names.split(",")):
            things.append(
                getattr(parent, name) if hasattr(parent, name) else importlib.import_module(f"{module}.{name}")
            )
    return things


def declared_defaults(notebook: list[dict]) -> list[float]:
    """The numeric defaults the kit declares for what the notebook imports: a model's ``parameters``, a function's
    keyword defaults (every function's, for a module)."""
    defaults = []
    for thing in imported(notebook):
        if isinstance(getattr(thing, "parameters", None), Parameters):
            defaults += [parameter.default for parameter in thing.parameters]
        functions = (
            [member for _, member in inspect.getmembers(thing, inspect.isfunction)]
            if inspect.ismodule(thing)
            else [thing]
        )
        for function in functions:
            try:
                defaults += [parameter.default for parameter in inspect.signature(function).parameters.values()]
            except (TypeError, ValueError):  # a class or a constant, with no signature to read
                continue
    return [value for value in defaults if type(value) in (int, float)]


def code_settings(notebook: list[dict]) -> list[float]:
    """The number literals of the notebook's code: the settings it plays (``rounds=40``, ``10_000``)."""
    return [float(literal.replace("_", "")) for literal in LITERAL.findall(code(notebook))]


@cache
def citations() -> tuple[str, ...]:
    with open(ROOT / "data" / "citations.csv", newline="", encoding="utf-8") as file:
        return tuple(" ".join(row["citation"].split()) for row in csv.DictReader(file))


def statements(notebook: list[dict]) -> list[str]:
    """The Markdown cells that state things: all before the exercises' heading, but the lists of things to try."""
    texts = markdown(notebook)
    exercises = [i for i, text in enumerate(texts) if re.search(r"^#+ .*Exercises", text, flags=re.MULTILINE)]
    return [text for text in texts[: exercises[-1] if exercises else None] if not text.startswith("Things to try")]


def prose(text: str, name: str) -> str:
    """``text`` as one line, without what the module docstring skips."""
    text = " ".join(NOT_PROSE.sub(" ", without_class_time_columns(text)).split())
    for phrase in (*citations(), *UNCHECKED.get(name, {})):
        text = text.replace(phrase, " ")
    return CLASS_TIME.sub(" ", REFERENCE.sub(" ", text))


def without_class_time_columns(text: str) -> str:
    """``text`` with its tables' header rows and class-time columns (headed minutes, short or lesson plan) left out."""
    lines, skip, header = [], set(), True
    for line in text.splitlines():
        row = line.lstrip("> ").strip()
        columns = [column.strip() for column in row.strip("|").split("|")]
        if not row.startswith("|"):
            lines.append(line)
            header = True
        elif header:
            skip = {i for i, column in enumerate(columns) if column in ("minutes", "short", "lesson plan")}
            header = False
        elif set(columns) - {"---", ""}:
            lines.append(" | ".join(column for i, column in enumerate(columns) if i not in skip))
    return "\n".join(lines)


def unsourced(notebook: list[dict], name: str) -> list[str]:
    """The numbers the Markdown of ``notebook`` (named ``name``) states without a source, each in its context."""
    texts = statements(notebook)
    headings = {number for text in texts for number in re.findall(r"^#+\s*(\d+\.\d+)", text, flags=re.MULTILINE)}
    sources = [*printed_numbers(notebook), *published_numbers(name), *declared_defaults(notebook)]
    sources += code_settings(notebook)
    found = []
    for text in (prose(text, name) for text in texts):
        for match in NUMBER.finditer(text):
            number = Quoted.at(text, match)
            small = number.places == 0 and number.value < 10
            year = number.places == 0 and "," not in number.text and 1900 <= number.value < 2100
            if small or year or number.text in headings or any(map(number.matches, sources)):
                continue
            found.append(f"{number.text!r} in '…{text[max(0, match.start() - 60) : match.end() + 40]}…'")
    return found


@pytest.mark.parametrize("notebook", CHECKED, ids=lambda path: str(path.relative_to(NOTEBOOKS)))
def test_every_number_the_prose_states_has_a_source(notebook):
    missing = unsourced(cells(notebook), notebook.name)
    assert not missing, (
        f"{notebook.relative_to(NOTEBOOKS)}: numbers that no checked output prints, no paper publishes and the kit "
        "does not declare; print them in a cell tagged nbval-check-output, or point to the output:\n"
        + "\n".join(missing)
    )


def played(stated: str, printed: str, source: str = "") -> list[dict]:
    """A notebook of one Markdown cell and one checked code cell that printed ``printed``."""
    output = {"name": "stdout", "output_type": "stream", "text": [printed]}
    return [
        {"cell_type": "markdown", "metadata": {}, "source": [stated]},
        {"cell_type": "code", "metadata": {"tags": [TAG]}, "source": [source], "outputs": [output]},
    ]


def test_prose_and_outputs_that_drift_apart_fail():
    stated = "The default game costs 1,261 dollars, its bullwhip ratio is about 57, and REP keeps 58% of the cost."
    printed = "a2a seed 0: total cost $1,261.0, bullwhip ratio 56.8; REP / A2A cost 0.58\n"
    assert unsourced(played(stated, printed), "00_start_here.ipynb") == []
    moved = unsourced(played(stated, printed.replace("1,261.0", "1,270.0")), "00_start_here.ipynb")
    assert [line[:7] for line in moved] == ["'1,261'"], "a changed result leaves the prose's old number unsourced"
    stale = unsourced(played(stated.replace("about 57", "about 61"), printed), "00_start_here.ipynb")
    assert [line[:4] for line in stale] == ["'61'"], "a number the prose changed alone has no source"


def test_the_papers_numbers_and_the_kits_declarations_are_sources_too():
    paper = "The paper's REP costs 41.8% less than A2A."
    assert unsourced(played(paper, ""), "01_rep_beer_game.ipynb") == []
    assert len(unsourced(played(paper.replace("41.8", "41.9"), ""), "01_rep_beer_game.ipynb")) == 1
    assert len(unsourced(played(paper, ""), "03_pressure_fields.ipynb")) == 1, "another paper's number"
    declared = "The sea holds at most 4,000 fish."
    model = "from coordkit.rep.fishbanks.model import Fishbanks"
    assert unsourced(played(declared, "", model), "02_rep_fishbanks_movies.ipynb") == []
    assert len(unsourced(played(declared.replace("4,000", "5,000"), "", model), "02_rep_fishbanks_movies.ipynb")) == 1


def test_the_measured_run_all_times_cover_every_notebook():
    times = pd.read_csv(TIMES)
    assert list(times.columns) == ["notebook", "seconds", "date", "machine", "probe_s"]
    assert sorted(times["notebook"]) == [path.relative_to(NOTEBOOKS).as_posix() for path in ALL]
    assert (times["seconds"] > 0).all() and times["date"].notna().all() and times["machine"].notna().all()
    assert (times["probe_s"] > 0).all()  # the machine's speed when the times were taken (bench_notebooks.py)


def test_run_all_times_are_stated_only_by_the_measured_table():
    assert RUN_ALL_TIME.search("Run it top to bottom (*Run → Run All Cells*, about 20 seconds).")  # 04, once
    texts = {path.relative_to(ROOT): " ".join(markdown(cells(path))) for path in ALL}
    texts |= {path.relative_to(ROOT): path.read_text(encoding="utf-8") for path in [ROOT / "README.md"]}
    texts |= {path.relative_to(ROOT): path.read_text(encoding="utf-8") for path in (ROOT / "docs").glob("*.md")}
    stated = {str(path): RUN_ALL_TIME.findall(" ".join(text.split())) for path, text in texts.items()}
    assert not {path: found for path, found in stated.items() if found}, "point to 00's map instead"


def lesson_plan(path: Path) -> tuple[int, int | None, dict[str, int]]:
    """A notebook's lesson plan: its minutes in all, without the exercises when it says, and per section."""
    total, without_exercises = PLAN.search(plan_text(path)).groups()
    return int(total), without_exercises and int(without_exercises), plan_column(path, "minutes")


def plan_text(path: Path) -> str:
    (plan,) = [text for text in markdown(cells(path)) if PLAN.search(text)]
    return plan


def plan_column(path: Path, heading: str) -> dict[str, int]:
    """The minutes of the lesson plan's column ``heading`` (minutes, or the short pace), by section; {} if the plan
    has no such column. A column's "homework" is no class time."""
    rows = [line.lstrip("> ").strip().strip("|").split("|") for line in plan_text(path).splitlines() if "> |" in line]
    headings = [cell.strip() for cell in rows[0]]
    if heading not in headings:
        return {}
    column = headings.index(heading)
    return {row[0].strip(): sum(map(int, re.findall(r"\d+", row[column]))) for row in rows[2:]}


@pytest.mark.parametrize("notebook", PLANNED, ids=lambda path: path.stem)
def test_a_lesson_plans_sections_add_up_to_its_minutes(notebook):
    total, without_exercises, minutes = lesson_plan(notebook)
    assert 5 * round(sum(minutes.values()) / 5) == total, f"about {total} minutes, but the sections take {minutes}"
    if without_exercises:
        taught = sum(count for section, count in minutes.items() if "Exercises" not in section)
        assert 5 * round(taught / 5) == without_exercises


@pytest.mark.parametrize("notebook", PLANNED, ids=lambda path: path.stem)
def test_a_lesson_plans_numbered_sections_are_the_notebooks(notebook):
    """A plan's "N · title" is the notebook's section N, whose heading begins with the plan's title or a shortening
    of it; a section added to the notebook gets its row (03's, 04's and 05's claims sections had none)."""
    headings = dict(re.findall(r"^## (\d+) · (.+)$", "\n".join(markdown(cells(notebook))), flags=re.MULTILINE))
    numbered = [re.match(r"(\d+) · (.+)", section) for section in plan_column(notebook, "minutes")]
    if not headings or not all(numbered):
        pytest.skip("the plan's sections are parts or topics, not numbered sections")
    planned = dict(match.groups() for match in numbered)
    assert planned.keys() == headings.keys(), f"the plan has sections {list(planned)}, the notebook {list(headings)}"
    for number, title in planned.items():
        words = re.findall(r"[\w']+", title.lower())[:2]
        assert set(words) <= set(re.findall(r"[\w']+", headings[number].lower())), f"{title!r}, {headings[number]!r}"


def test_the_90_minute_route_takes_each_notebooks_short_pace():
    """00's route names sections of notebooks, and its minutes are those sections' minutes at the short pace of that
    notebook's own plan (issue 48: 01's sections 1–4 took 35 minutes in 00 and 50 in 01's plan)."""
    route = "\n".join(markdown(cells(NOTEBOOKS / "00_start_here.ipynb")))
    steps = re.findall(r"\*(\d\d), sections? (\d+)(?:–(\d+))?\* \((\d+) min\)", route)
    assert len(steps) == 3
    for number, first, last, minutes in steps:
        (notebook,) = NOTEBOOKS.glob(f"{number}_*.ipynb")
        short = {int(section.split(" · ")[0]): count for section, count in plan_column(notebook, "short").items()}
        taken = [short[section] for section in range(int(first), int(last or first) + 1)]
        assert sum(taken) == int(minutes), f"{number}, sections {first}–{last}: {minutes} min, but its plan {taken}"
    (wrap_up,) = re.findall(r"\*Wrap-up\* \((\d+) min\)[^(]*\((\d\d), section (\d+)\)", route)
    minutes, number, section = map(int, wrap_up)
    (notebook,) = NOTEBOOKS.glob(f"{number:02d}_*.ipynb")
    assert {int(name.split(" · ")[0]): count for name, count in plan_column(notebook, "short").items()}[
        section
    ] == minutes


def test_the_map_and_the_route_in_00_give_the_lesson_plans_minutes():
    route = "\n".join(markdown(cells(NOTEBOOKS / "00_start_here.ipynb")))
    mapped = dict(re.findall(r"^\| \[[^]]+\]\((\d\d_\w+\.ipynb)\) \|[^|]*\| (\d+) min \|", route, flags=re.MULTILINE))
    assert {name: int(minutes) for name, minutes in mapped.items()} == {
        path.name: lesson_plan(path)[0] for path in PLANNED
    }
    (length,) = re.findall(r"A (\d+)-minute class", route)
    assert sum(map(int, re.findall(r"\((\d+) min\)", route))) == int(length)
