"""Where the model families are: every package of ``coordkit`` with an ``experiments`` module is one.

Nothing keeps a list by hand: a new family is found as soon as its ``experiments.py`` exists, and importing it
registers its figures (:mod:`coordkit.figures`) and its models (:mod:`coordkit.model`).
"""

import importlib
import pkgutil
from functools import cache

import coordkit


@cache
def families() -> tuple[str, ...]:
    """The dotted names of the family packages, e.g. ``("coordkit.ahoy", ..., "coordkit.rep.beer_game")``."""
    found = [
        name.removesuffix(".experiments")
        for _, name, is_package in pkgutil.walk_packages(coordkit.__path__, "coordkit.")
        if not is_package and name.endswith(".experiments")
    ]
    return tuple(sorted(found))


def import_families() -> None:
    """Import every family's experiments module (and with it, its models and figures)."""
    for family in families():
        importlib.import_module(f"{family}.experiments")
