"""The papers' headline claims as data: ``data/papers/claims.csv``, one row per claim (see data/README.md).

Each row names the registered figure and the measure (``@figure(..., measures=...)``) whose estimate decides it,
and the test that decides (:mod:`coordkit.replication.verdicts`). The row holds no verdict of the kit's, only the
one it is ``expected`` to compute, so that a change in a model that flips a claim fails a test
(``tests/test_replication_ledger.py``) until the row is updated, with its reason, in the same commit.
"""

import math
import re
from dataclasses import dataclass
from functools import cache

import pandas as pd

from coordkit.paths import DATA
from coordkit.replication import PAPERS
from coordkit.replication.verdicts import NEEDS_BAND, NEEDS_REFERENCE, TESTS, VERDICTS, Band

FILE = DATA / "papers" / "claims.csv"
COLUMNS = (
    "paper",
    "id",
    "section",
    "claim",
    "paper_value",
    "figure",
    "measure",
    "test",
    "reference",
    "band",
    "notebook",
    "llm_run",
    "kit_only",
    "expected",
    "note",
)
SECTION = re.compile(r"(?P<notebook>\w+\.ipynb) §(?P<section>\d+(\.\d+)?)")


@dataclass(frozen=True)
class Claim:
    """One row of ``claims.csv``, checked."""

    paper: str
    id: str
    section: str
    claim: str
    paper_value: str
    figure: str
    measure: str
    test: str
    reference: float | None
    band: Band | None
    notebook: str  # "01_rep_beer_game.ipynb §3": the notebook section that explains the claim
    llm_run: str  # what a recorded LLM run would have to show
    kit_only: str  # why rule-based agents test only the kit here, not what the claim is about ("" when they reach it)
    expected: str
    note: str

    @property
    def needs_llm(self) -> bool:
        return self.test == "llm"


@cache
def claims() -> tuple[Claim, ...]:
    """Every claim, in file order (papers in the notebooks' order)."""
    frame = pd.read_csv(FILE, dtype=str, keep_default_na=False)
    if tuple(frame.columns) != COLUMNS:
        raise ValueError(f"{FILE.name} has columns {list(frame.columns)}; it must have {list(COLUMNS)}")
    read = tuple(_claim(row) for row in frame.to_dict("records"))
    duplicated = sorted({c.id for c in read if sum(d.id == c.id for d in read) > 1})
    if duplicated:
        raise ValueError(f"{FILE.name}: claim ids must be unique; repeated: {duplicated}")
    return read


def of_paper(paper: str | None = None, figures: tuple[str, ...] = ()) -> tuple[Claim, ...]:
    """The claims of ``paper`` (all with None), only those decided by ``figures`` when given."""
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper={paper!r} is not one of the kit's papers: {', '.join(PAPERS)}")
    return tuple(c for c in claims() if (paper is None or c.paper == paper) and (not figures or c.figure in figures))


def _claim(row: dict[str, str]) -> Claim:
    where = f"{FILE.name}, claim {row['id'] or '(no id)'}"
    if row["paper"] not in PAPERS:
        raise ValueError(f"{where}: paper {row['paper']!r} is not one of {PAPERS}")
    if row["test"] not in TESTS:
        raise ValueError(f"{where}: test {row['test']!r} is not one of {TESTS}")
    if row["expected"] not in VERDICTS:
        raise ValueError(f"{where}: expected {row['expected']!r} is not one of {VERDICTS}")
    missing = [name for name in ("id", "section", "claim", "paper_value", "figure", "notebook") if not row[name]]
    if row["test"] != "llm" and not row["measure"]:
        missing.append("measure")
    if row["test"] == "llm" and not row["llm_run"]:
        missing.append("llm_run")
    if row["test"] in NEEDS_REFERENCE and not row["reference"]:
        missing.append("reference")
    if row["test"] in NEEDS_BAND and not row["band"]:
        missing.append("band")
    if missing:
        raise ValueError(f"{where}: {', '.join(missing)} must be given for a test {row['test']!r}")
    if row["test"] == "llm" and row["kit_only"]:
        raise ValueError(f"{where}: kit_only is for a claim the kit measures; a test 'llm' measures nothing")
    if not SECTION.fullmatch(row["notebook"]):
        raise ValueError(f"{where}: notebook {row['notebook']!r} must name a section: NOTEBOOK.ipynb §NUMBER")
    reference = float(row["reference"]) if row["reference"] else None
    if reference is not None and not math.isfinite(reference):
        raise ValueError(f"{where}: reference {row['reference']!r} must be a finite number")
    try:
        band = Band.parse(row["band"])
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None
    return Claim(**{**row, "reference": reference, "band": band})
