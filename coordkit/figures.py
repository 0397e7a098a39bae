"""The registry of reproducible paper figures behind `coordkit list` and `coordkit reproduce`.

Each domain registers its figures in its ``experiments`` module; :data:`DOMAINS` lists those modules so the
registry can import them on first use.
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import altair as alt
import pandas as pd

DOMAINS = ("coordkit.rep.beer_game.experiments", "coordkit.delay.experiments", "coordkit.pressure.experiments",
           "coordkit.ahoy.scenarios")


@dataclass(frozen=True)
class Figure:
    """A paper figure the kit reproduces.

    ``compute(seeds, base_seed)`` returns the figure's tidy data; ``chart(data)`` draws it; ``compare(data)``
    returns the key numbers as a table with columns metric, paper, kit. A figure whose agents can be LLMs also
    takes ``compute(seeds, base_seed, llm=client)`` and names a ``stand_in`` (a function of an
    :class:`~coordkit.llm.LLMRequest` answering in the prompts' format) for keyless demonstrations.
    """

    id: str
    description: str
    compute: Callable[[int, int], pd.DataFrame]
    chart: Callable[[pd.DataFrame], alt.TopLevelMixin]
    compare: Callable[[pd.DataFrame], pd.DataFrame]
    default_seeds: int = 5
    stand_in: Callable | None = None

    @property
    def uses_llm(self) -> bool:
        return self.stand_in is not None


_REGISTRY: dict[str, Figure] = {}


def register(figure: Figure) -> Figure:
    if figure.id in _REGISTRY and _REGISTRY[figure.id] is not figure:
        raise ValueError(f"a figure with id {figure.id!r} is already registered")
    _REGISTRY[figure.id] = figure
    return figure


def all_figures() -> dict[str, Figure]:
    for module in DOMAINS:
        importlib.import_module(module)
    return dict(sorted(_REGISTRY.items()))


def get(figure_id: str) -> Figure:
    figures = all_figures()
    if figure_id not in figures:
        raise KeyError(f"no figure {figure_id!r}; `coordkit list` shows them: {', '.join(figures)}")
    return figures[figure_id]
