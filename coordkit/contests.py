"""How a model's entrants meet in a tournament (:func:`coordkit.tournament`): a model declares its ``contest``."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Pairs:
    """Entrants meet two by two: ``first`` and ``second`` name the model's policy parameters of the two sides,
    ``score(model, side)`` is side 0's or side 1's score in a finished run, in words ``measure``; ``sparring`` are
    built-in rules :func:`coordkit.check_policy` plays a policy against."""

    first: str
    second: str
    score: Callable[[Any, int], float]
    measure: str
    sparring: tuple[str, ...] = ()
