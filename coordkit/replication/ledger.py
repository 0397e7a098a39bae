"""The replication ledger: every claim of ``data/papers/claims.csv``, decided from the kit's own figures.

:func:`compute` plays each figure a claim names once (at its default seeds, or ``seeds``; shared with
`coordkit reproduce` through :mod:`coordkit.figure_cache`), measures it and applies the claim's test. The ledger
as last computed at the defaults is kept in ``data/ledger.csv`` (`coordkit claims --write`), which the notebooks
read; ``tests/test_replication_ledger.py`` computes it afresh and fails when it, or a verdict, has changed.

At the defaults, a claim whose verdict changes with the base seed (``data/ledger_seeds.csv``, the tests' verdicts
from base seeds 0, 1 and 2, kept by ``benchmarks/bench_ledger_seeds.py --write``) is *inconclusive*: at these seeds
its verdict is the draw's, not the model's. The reason gives each base seed's verdict, then base seed 0's own.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from coordkit import figure_cache, figures
from coordkit.outputs import atomic
from coordkit.paths import DATA
from coordkit.replication.claims import PAPERS, Claim, of_paper
from coordkit.replication.estimates import Curve, Estimate
from coordkit.replication.verdicts import INCONCLUSIVE, KIT_ONLY, VERDICTS, Decision, decide

FILE = DATA / "ledger.csv"
SEEDS_FILE = DATA / "ledger_seeds.csv"
COLUMNS = ("paper", "id", "figure", "seeds", "kit", "value", "low", "high", "verdict", "reason")


@dataclass(frozen=True)
class Entry:
    """A claim, what the kit measured for it (None for a claim only LLM agents can test), the verdict, and the
    verdict its test gave before the ledger looked at other base seeds (``tested``: the same unless it flips)."""

    claim: Claim
    measured: Estimate | Curve | None
    decision: Decision
    seeds: int | None
    tested: Decision

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
    at_defaults = seeds is None and base_seed == 0
    return [_entry(claim, played, at_defaults) for claim in chosen]


def _entry(claim: Claim, played: dict[str, tuple[pd.DataFrame, int]], at_defaults: bool) -> Entry:
    if claim.needs_llm:
        decision = decide("llm", None, None, None)
        return Entry(claim, None, decision, None, decision)
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
    flips = by_base_seed().get(claim.id, {}) if at_defaults else {}
    if len(set(flips.values())) > 1:
        spread = "; ".join(f"{base}: {verdict}" for base, verdict in flips.items())
        why = f"its verdict changes with the base seed ({spread}), so at {seeds} seeds it is the draw's"
        return Entry(claim, measured, Decision(INCONCLUSIVE, f"{why}; {decision.reason}"), seeds, decision)
    return Entry(claim, measured, decision, seeds, decision)


@cache
def by_base_seed() -> dict[str, dict[str, str]]:
    """``data/ledger_seeds.csv``: each claim's verdict at the default seeds from each base seed measured ({"base 0":
    "holds", "base 1": ...}); empty before it is first written."""
    if not SEEDS_FILE.exists():
        return {}
    frame = pd.read_csv(SEEDS_FILE, dtype=str, keep_default_na=False).set_index("id")
    return {claim: row.to_dict() for claim, row in frame.iterrows()}


def write_seeds(verdicts: pd.DataFrame) -> None:
    """Keep the tests' verdicts per base seed (a frame indexed by claim id, a column per base seed)."""
    with atomic(SEEDS_FILE) as temporary:
        verdicts.to_csv(temporary)
    by_base_seed.cache_clear()


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
