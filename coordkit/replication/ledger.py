"""The replication ledger: every claim of ``data/papers/claims.csv``, decided from the kit's own figures.

:func:`compute` plays each figure a claim names once (at its default seeds, or ``seeds``; shared with
`coordkit reproduce` through :mod:`coordkit.figure_cache`), measures it and applies the claim's test. The ledger
as last computed at the defaults is kept in ``data/ledger.csv`` (`coordkit claims --write`), which the notebooks
read; ``tests/test_replication_ledger.py`` computes it afresh and fails when it, or a verdict, has changed.
"""

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from coordkit import figure_cache, figures
from coordkit.paths import DATA
from coordkit.replication.claims import PAPERS, Claim, of_paper
from coordkit.replication.estimates import Curve, Estimate
from coordkit.replication.verdicts import KIT_ONLY, VERDICTS, Decision, decide

FILE = DATA / "ledger.csv"
COLUMNS = ("paper", "id", "figure", "seeds", "kit", "value", "low", "high", "verdict", "reason")


@dataclass(frozen=True)
class Entry:
    """A claim, what the kit measured for it (None for a claim only LLM agents can test), and the verdict."""

    claim: Claim
    measured: Estimate | Curve | None
    decision: Decision
    seeds: int | None

    def kit(self) -> str:
        return "(not testable with rule-based agents)" if self.measured is None else self.measured.text()


def compute(
    paper: str | None = None,
    seeds: int | None = None,
    base_seed: int = 0,
    *,
    figure_ids: Iterable[str] = (),
    fresh: bool = False,
    progress: bool = True,
) -> list[Entry]:
    """Every claim of ``paper`` (all papers with None), or only those decided by ``figure_ids``, decided from the
    figures played at ``seeds`` (each figure's default with None)."""
    chosen = of_paper(paper, tuple(figure_ids))
    played: dict[str, tuple[pd.DataFrame, int]] = {}
    needed = list(dict.fromkeys(c.figure for c in chosen if not c.needs_llm))
    for figure_id in tqdm(needed, desc="figures", disable=not progress):
        figure = figures.get(figure_id)
        count = figure.default_seeds if seeds is None else seeds
        played[figure_id] = figure_cache.computed(figure, count, base_seed, fresh=fresh), count
    return [_entry(claim, played) for claim in chosen]


def _entry(claim: Claim, played: dict[str, tuple[pd.DataFrame, int]]) -> Entry:
    if claim.needs_llm:
        return Entry(claim, None, decide("llm", None, None, None), None)
    data, seeds = played[claim.figure]
    figure = figures.get(claim.figure)
    if claim.measure not in figure.measures:
        raise KeyError(
            f"claim {claim.id}: {claim.figure} has no measure {claim.measure!r}; it has {sorted(figure.measures)}"
        )
    measured = figure.measures[claim.measure](data)
    decision = decide(claim.test, measured, claim.reference, claim.band)
    if claim.kit_only:
        decision = Decision(KIT_ONLY, f"{claim.kit_only}; as a test of the kit: {decision.verdict}, {decision.reason}")
    return Entry(claim, measured, decision, seeds)


def table(entries: list[Entry]) -> pd.DataFrame:
    """One row per claim: paper, id, claim, paper's number, kit's number, verdict, reason (with the notebook
    section that explains it)."""
    rows = [
        {
            "paper": e.claim.paper,
            "id": e.claim.id,
            "claim": e.claim.claim,
            "paper's number": e.claim.paper_value,
            "kit's number": e.kit(),
            "verdict": e.decision.verdict,
            "reason": f"{e.decision.reason}; see {e.claim.notebook}",
        }
        for e in entries
    ]
    return pd.DataFrame(rows)


def summary(verdicts: pd.DataFrame) -> pd.DataFrame:
    """How many claims of each paper get each verdict, from a frame with columns paper and verdict."""
    counts = pd.crosstab(verdicts["paper"], verdicts["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    counts = counts.reindex([p for p in PAPERS if p in counts.index])
    counts["claims"] = counts.sum(axis=1)
    return counts.reset_index().rename_axis(columns=None)


def kept(entries: list[Entry]) -> pd.DataFrame:
    """The ledger as ``data/ledger.csv`` keeps it."""
    rows = []
    for e in entries:
        scalar = isinstance(e.measured, Estimate)
        rows.append(
            {
                "paper": e.claim.paper,
                "id": e.claim.id,
                "figure": e.claim.figure,
                "seeds": e.seeds if e.seeds is not None else "",
                "kit": e.kit(),
                "value": _number(e.measured.value) if scalar else "",
                "low": _number(e.measured.low) if scalar else "",
                "high": _number(e.measured.high) if scalar else "",
                "verdict": e.decision.verdict,
                "reason": e.decision.reason,
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def read() -> pd.DataFrame:
    """``data/ledger.csv``: the ledger as last computed at the defaults, as text."""
    return pd.read_csv(FILE, dtype=str, keep_default_na=False)


def _number(value: float) -> str:
    return "" if np.isnan(value) else f"{value:.6g}"
