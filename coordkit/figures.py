"""The registry of reproducible paper figures behind `coordkit list` and `coordkit reproduce`.

A family registers each figure in its ``experiments`` module by decorating the function that computes it::

    @figure("rep-beer-fig1", "REP §5 Fig. 1: ...", chart=charts.figure1, compare=compare_with_paper,
            default_seeds=5, llm_agents=True, stand_in=stand_in.reply)
    def figure1(seeds: int = 5, base_seed: int = 0, *, llm: LLMClient | None = None) -> pd.DataFrame: ...

``compute(seeds, base_seed, *, llm=None)`` returns the figure's tidy data; ``chart(data)`` draws it; ``compare(data)``
returns the key numbers as a table with exactly the columns metric, paper, kit (the paper's from
:mod:`coordkit.papers`); ``measures`` names the functions of the data that decide the papers' claims
(``data/papers/claims.csv``), each returning an :class:`~coordkit.replication.estimates.Estimate` or a
:class:`~coordkit.replication.estimates.Curve`. A figure with ``llm_agents`` plays its agents through ``llm``
when one is given; its ``stand_in`` (a function of an :class:`~coordkit.llm.LLMRequest` answering in the prompts'
format, not an LLM) makes keyless recordings. Families are found by :mod:`coordkit.families`: no list to keep.
"""

from __future__ import annotations  # the annotations name Altair and pandas types, which only the families import

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from coordkit import catalogue
from coordkit.families import import_families

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

COMPARISON = ["metric", "paper", "kit"]


@dataclass(frozen=True)
class Figure:
    """A paper figure the kit reproduces (see the module docstring)."""

    id: str
    description: str
    compute: Callable[..., pd.DataFrame]
    chart: Callable[[pd.DataFrame], alt.TopLevelMixin]
    compare: Callable[[pd.DataFrame], pd.DataFrame]
    default_seeds: int = 5
    llm_agents: bool = False
    stand_in: Callable | None = None
    small: Mapping[str, Any] = field(default_factory=dict)  # compute's keywords for a small run (the contract tests)
    measures: Mapping[str, Callable[[pd.DataFrame], Any]] = field(default_factory=dict)  # the claims' estimates


_REGISTRY: dict[str, Figure] = {}


def figure(
    figure_id: str,
    description: str,
    *,
    chart,
    compare,
    default_seeds: int = 5,
    llm_agents: bool = False,
    stand_in: Callable | None = None,
    small: Mapping[str, Any] | None = None,
    measures: Mapping[str, Callable[[pd.DataFrame], Any]] | None = None,
):
    """Register the decorated ``compute(seeds, base_seed, *, llm=None)`` as the figure ``figure_id``; ``small``
    names compute's keywords for a small run that still plays every mechanism (what the contract tests play where
    the paper's size takes seconds a seed); ``measures`` names the estimates the claims ledger reads from the data
    (:mod:`coordkit.replication`)."""

    def register(compute: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
        check_compute(figure_id, compute, small)
        if stand_in is not None and not llm_agents:
            raise ValueError(f"{figure_id} has a stand-in but no LLM agents (llm_agents=False)")
        known = _REGISTRY.get(figure_id)
        if known is not None and known.compute.__qualname__ != compute.__qualname__:
            raise ValueError(f"a figure with id {figure_id!r} is already registered ({known.compute.__qualname__})")
        _REGISTRY[figure_id] = Figure(
            figure_id,
            description,
            compute,
            chart,
            compare,
            default_seeds,
            llm_agents,
            stand_in,
            dict(small or {}),
            dict(measures or {}),
        )
        return compute

    return register


def check_compute(figure_id: str, compute: Callable, small: Mapping[str, Any] | None = None) -> None:
    """``compute`` must take ``(seeds, base_seed, *, llm=None)``; further parameters need defaults, and ``small``
    names only those."""
    parameters = list(inspect.signature(compute).parameters.values())
    positional = [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
    llm = next((p for p in parameters if p.name == "llm"), None)
    if (
        positional[:2] != ["seeds", "base_seed"]
        or llm is None
        or llm.kind is not llm.KEYWORD_ONLY
        or llm.default is not None
    ):
        raise TypeError(
            f"{figure_id}: compute must be compute(seeds, base_seed, *, llm=None), got {compute.__name__}"
            f"{inspect.signature(compute)}"
        )
    required = [p.name for p in parameters[2:] if p.default is inspect.Parameter.empty and p.kind is not p.VAR_KEYWORD]
    if required:
        raise TypeError(f"{figure_id}: compute's further parameters need defaults: {required}")
    further = {p.name for p in parameters[2:] if p.kind is p.KEYWORD_ONLY and p.name != "llm"}
    unknown = sorted(set(small or {}) - further)
    if unknown:
        raise TypeError(f"{figure_id}: small names {unknown}, which are not compute's further keywords")


def refuse_llm(llm, why: str) -> None:
    """For a figure without LLM agents: an ``llm`` is a mistake, said with ``why`` (what plays instead)."""
    if llm is not None:
        raise ValueError(f"this figure has no LLM agents ({why}); `coordkit list` marks those that have")


def all_figures() -> dict[str, Figure]:
    """Every family's figures, by id."""
    import_families()
    return registered()


def registered() -> dict[str, Figure]:
    """The figures of the modules imported so far, by id."""
    return dict(sorted(_REGISTRY.items()))


def entry(figure_id: str) -> catalogue.FigureEntry:
    """The catalogue's words on figure ``figure_id`` (nothing imported), or a KeyError that lists the figures."""
    known = catalogue.figures()
    if figure_id not in known:
        raise KeyError(f"no figure {figure_id!r}; `coordkit list` shows them: {', '.join(known)}")
    return known[figure_id]


def get(figure_id: str) -> Figure:
    """The figure ``figure_id``, importing only its own family when the catalogue knows it."""
    importlib.import_module(entry(figure_id).module)
    return registered()[figure_id]
