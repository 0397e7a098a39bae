"""The pressure-field paper's trial design (§6), and the cells every pressure figure sweeps.

One trial is the model itself: ``PressureField(strategy="hierarchical", rng=0).run()``. A *cell* is one strategy's
trials under one set of parameters, their seeds derived from one seed (:func:`trials`). A figure is a grid of cells
played by :func:`coordkit.sweeps.sweep` through :func:`strategy_cell` (or :func:`design_cell` for Table 2's four
conditions), one sweep for the whole figure, so that ``coordkit reproduce --engine processes`` plays its cells in
parallel and a sweep's ``store=`` keeps them. This module is apart from ``experiments`` because a sweep's worker
process imports the module of the function it runs, and ``experiments`` imports Altair for its charts (seconds).

The paper's 1,078 trials come from four conditions (counts read from the authors' results, see
``data/papers/pressure_fields.csv``): the main grid (7×7, 7 empty, 1/2/4/8 agents), scaling (7×7, 8 empty, 2–32
agents, pressure-field and hierarchical only), escalation (7×7, 8 empty) and easy (5×5, 5 empty). Within a condition
every strategy plays the same puzzles (the trial seeds are shared).
"""

from itertools import product

import pandas as pd

from coordkit.llm import LLMClient
from coordkit.pressure.model import PressureField
from coordkit.pressure.strategies import STRATEGIES
from coordkit.seeds import derive_seeds

TOP_TIER = ("pressure_field", "hierarchical")
BASELINES = ("sequential", "random")
CONDITIONS = ("main", "scaling", "escalation", "easy")  # Table 2's, in the order their seeds are derived
DESIGN_TRIALS = 30  # the paper's trials per strategy and condition
CONVERSATION_TRIALS = {"main": 18, "escalation": 20, "easy": 20}  # the conversation's, of those 30 (the design)


def conversation_seeds(seeds: int, condition: str) -> int:
    """The conversation baseline's trials in ``condition`` beside ``seeds`` trials of every other strategy, in the
    paper's proportion (18 of 30 in the main condition, 20 of 30 in the others), at least one."""
    return max(1, round(seeds * CONVERSATION_TRIALS[condition] / DESIGN_TRIALS))


def trials(strategy: str, seeds: int, base_seed: int = 0, *, llm: LLMClient | None = None, **params) -> pd.DataFrame:
    """``seeds`` trials of one strategy (seeds derived from ``base_seed``): one row per trial with its parameters
    and :meth:`PressureField.summary`."""
    rows = [
        {
            "strategy": strategy,
            "trial": k,
            **params,
            **PressureField(strategy=strategy, llm=llm, rng=seed, **params).run().summary(),
        }
        for k, seed in enumerate(derive_seeds(base_seed, seeds))
    ]
    return pd.DataFrame(rows)


def design(seeds: int = DESIGN_TRIALS) -> list[tuple[str, str, int, dict]]:
    """The paper's trial design: (condition, strategy, trials, parameters) — 1,078 trials at 30 ``seeds``, the
    conversation baseline's smaller counts scaled alike (:func:`conversation_seeds`)."""
    runs = []
    for agents, strategy in product((1, 2, 4, 8), (*TOP_TIER, *BASELINES)):
        runs.append(("main", strategy, seeds, {"n": 7, "empty": 7, "agent_count": agents}))
    runs.append(("main", "conversation", conversation_seeds(seeds, "main"), {"n": 7, "empty": 7}))
    for agents, strategy in product((2, 4, 8, 16, 32), TOP_TIER):
        runs.append(("scaling", strategy, seeds, {"n": 7, "empty": 8, "agent_count": agents}))
    for condition, size in (("escalation", {"n": 7, "empty": 8}), ("easy", {"n": 5, "empty": 5})):
        for strategy in STRATEGIES:
            count = conversation_seeds(seeds, condition) if strategy == "conversation" else seeds
            runs.append((condition, strategy, count, size))
    return runs


# --- the cells a figure sweeps --------------------------------------------------------------------------------------


def strategy_cell(
    seed: int,
    strategy: str,
    per_strategy: int,
    condition: str | None = None,
    *,
    n: int,
    empty: int,
    llm: LLMClient | None = None,
    **params,
) -> pd.DataFrame:
    """One cell of a figure: :func:`trials` of ``strategy`` on ``n``×``n`` puzzles with ``empty`` holes, seeds
    derived from ``seed``; ``per_strategy`` trials, or for the conversation its share of them in ``condition``
    (:func:`conversation_seeds`). The columns: strategy, trial, n, empty, ``params`` in the order given, the
    summary."""
    count = conversation_seeds(per_strategy, condition) if strategy == "conversation" else per_strategy
    return trials(strategy, count, seed, llm=llm, n=n, empty=empty, **params)


def design_cell(cell: int, seed: int, per_strategy: int, llm: LLMClient | None = None, **actor) -> pd.DataFrame:
    """Cell number ``cell`` of :func:`design` at ``per_strategy`` trials: its trials with the seeds of its condition
    (each condition's seed derived from ``seed``) and a ``condition`` column; ``actor`` sets the actors' parameters
    (such as ``failure``)."""
    condition, strategy, count, params = design(per_strategy)[cell]
    condition_seed = derive_seeds(seed, len(CONDITIONS))[CONDITIONS.index(condition)]
    return trials(strategy, count, condition_seed, llm=llm, **params, **actor).assign(condition=condition)
