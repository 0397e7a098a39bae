"""How a model's entrants meet in a tournament (:func:`coordkit.tournament`) and in :func:`coordkit.check_policy`:
a model declares its ``contest``, which seats the entrants, fields their policies and scores each seat.

- :class:`Pairs` — a two-player game: every pair of entrants, each entrant against itself too.
- :class:`Population` — a model whose agents all take one policy parameter: every entrant fielded as the whole
  population, and every two entrants in a mixed population (seats alternate, in both orders).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations, combinations_with_replacement
from typing import Any

Lineup = tuple[str, ...]
"""The entrants' names, seat by seat, repeated over the seats: ("a", "b") seats a, b, a, b, ..."""


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
    lower_is_better: bool = False

    @property
    def parameter(self) -> str:
        """The parameter a policy under study takes: the first side's."""
        return self.first

    def lineups(self, names: Sequence[str]) -> list[tuple[str, Lineup]]:
        """Every pair, self-play included; no field (the table needs no column for it)."""
        return [("", pair) for pair in combinations_with_replacement(names, 2)]

    def seats(self, params: dict, model: type) -> int:
        return 2

    def fielding(self, policies: Sequence[Any]) -> dict[str, Any]:
        """The keyword arguments that seat ``policies``, one per seat."""
        return {self.first: policies[0], self.second: policies[1]}

    def scores(self, played: Any) -> list[float]:
        return [self.score(played, 0), self.score(played, 1)]


@dataclass(frozen=True)
class Population:
    """Every agent of the model takes the policy parameter ``parameter`` (given a list, one per agent); the model's
    parameter ``count`` says how many agents there are; ``scores(model)`` is each agent's score in a finished run, in
    words ``measure``; ``sparring`` are built-in names :func:`coordkit.check_policy` fills the other seats with (None:
    the agents' own rule)."""

    parameter: str
    count: str
    score: Callable[[Any], Sequence[float]]
    measure: str
    sparring: tuple[str | None, ...] = (None,)
    lower_is_better: bool = False

    def lineups(self, names: Sequence[str]) -> list[tuple[str, Lineup]]:
        """Each entrant as the whole population, then each two mixed, seated a, b, a, ... and b, a, b, ..."""
        whole = [("whole population", (name,)) for name in names]
        mixed = [("mixed", order) for a, b in combinations(names, 2) for order in ((a, b), (b, a))]
        return whole + mixed

    def seats(self, params: dict, model: type) -> int:
        return model.parameters.resolve(params, owner=model.__name__, model=model)[self.count]

    def fielding(self, policies: Sequence[Any]) -> dict[str, Any]:
        return {self.parameter: list(policies)}

    def scores(self, played: Any) -> list[float]:
        return [float(score) for score in self.score(played)]


Contest = Pairs | Population
