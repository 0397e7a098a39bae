"""The ledger as people read it: in the terminal (`coordkit claims`), as a Markdown report (``--markdown FILE``),
and at the end of each paper's notebook and in the start notebook's summary (read from ``data/ledger.csv``)."""

import json
import os
import re
from pathlib import Path

import pandas as pd

from coordkit import viz
from coordkit.paths import DATA
from coordkit.replication import claims, ledger
from coordkit.replication.claims import SECTION

NOTEBOOKS = DATA.parent / "notebooks"  # absent from an installed wheel: the report then names sections in words
PAPER_NAMES = {
    "rep": "Ripple Effect Protocol",
    "pressure_fields": "Pressure fields",
    "delay": "Delay dilemma",
    "ahoy": "Ahoy",
    "agora": "Agora",
}


def text(entries: list[ledger.Entry]) -> str:
    """One record per claim (claim, the paper's number, the kit's, verdict and reason), paper by paper, then the
    summary."""
    lines = []
    for paper in claims.PAPERS:
        chosen = [e for e in entries if e.claim.paper == paper]
        if not chosen:
            continue
        lines += [f"== {PAPER_NAMES[paper]} ==", ""]
        for e in chosen:
            lines += [
                f"{e.claim.id} · {e.decision.verdict}",
                f"  claim:  {e.claim.claim} ({e.claim.section})",
                f"  paper:  {e.claim.paper_value}",
                f"  kit:    {e.kit()}",
                f"  reason: {e.decision.reason} (see {e.claim.notebook})",
                "",
            ]
    lines.append(ledger.summary(ledger.table(entries)).to_string(index=False))
    return "\n".join(lines)


def markdown(entries: list[ledger.Entry], command: str, where: Path) -> str:
    """The report written to ``where``: the command that made it, the summary, and a table per paper whose reasons
    link to the notebooks' sections (relative to ``where``)."""
    summary = ledger.summary(ledger.table(entries))
    parts = [
        "# The replication ledger",
        "",
        f"Made by `{command}`: every claim of `data/papers/claims.csv`, decided from the kit's own figures with "
        "rule-based agents (`coordkit.replication`).",
        "",
        _markdown_table(summary),
    ]
    for paper in claims.PAPERS:
        chosen = [e for e in entries if e.claim.paper == paper]
        if not chosen:
            continue
        rows = pd.DataFrame(
            {
                "claim": [f"**{e.claim.id}**: {e.claim.claim} ({e.claim.section})" for e in chosen],
                "paper": [e.claim.paper_value for e in chosen],
                "kit": [e.kit() for e in chosen],
                "verdict": [e.decision.verdict for e in chosen],
                "reason": [f"{e.decision.reason}; see {_link(e.claim.notebook, where)}" for e in chosen],
            }
        )
        parts += ["", f"## {PAPER_NAMES[paper]}", "", _markdown_table(rows)]
    return "\n".join(parts) + "\n"


def show(paper: str, figure_ids: tuple[str, ...] = ()) -> viz.Table:
    """The claims of ``paper`` (those decided by ``figure_ids`` when given) with the verdicts in ``data/ledger.csv``,
    as a table for the end of a notebook."""
    kept = ledger.read().set_index("id")
    rows = [
        {
            "claim": f"{c.claim} ({c.section})",
            "paper": c.paper_value,
            "kit": kept.at[c.id, "kit"],
            "verdict": kept.at[c.id, "verdict"],
            "why": kept.at[c.id, "reason"],
        }
        for c in claims.of_paper(paper, figure_ids)
    ]
    return viz.table(pd.DataFrame(rows))


def summary() -> viz.Table:
    """How many claims of each paper get each verdict (:data:`.verdicts.VERDICTS`), from ``data/ledger.csv``."""
    counts = ledger.summary(ledger.read())
    return viz.table(counts.assign(paper=counts["paper"].map(PAPER_NAMES)))


def _markdown_table(frame: pd.DataFrame) -> str:
    header = "| " + " | ".join(map(_markdown_cell, frame.columns)) + " |"
    rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
    body = ["| " + " | ".join(map(_markdown_cell, row)) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def _markdown_cell(value) -> str:
    """A table cell's text, its bars and dollar signs escaped (GitHub and JupyterLab draw the text between two
    dollar signs as math: "$4,251 vs $4,680")."""
    return str(value).replace("|", "\\|").replace("$", "\\$")


def _link(section: str, where: Path) -> str:
    """ "[01_rep_beer_game.ipynb §3](../notebooks/01_rep_beer_game.ipynb#3-·-The-paper's-Figure-1,-reproduced)", or
    the section in words when the notebook is not there."""
    match = SECTION.fullmatch(section)
    notebook = NOTEBOOKS / match["notebook"]
    heading = _heading(notebook, match["section"]) if notebook.is_file() else None
    if heading is None:
        return section
    target = Path(os.path.relpath(notebook, where.resolve().parent)).as_posix()
    return f"[{section}]({target}#{heading.replace(' ', '-')})"


def _heading(notebook: Path, number: str) -> str | None:
    """The text of the notebook's heading numbered ``number`` ("## 3 · The paper's Figure 1, reproduced")."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    pattern = re.compile(rf"#+ ({re.escape(number)} · .+)")
    for cell in cells:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                found = pattern.fullmatch(line.strip())
                if found:
                    return found[1]
    return None
