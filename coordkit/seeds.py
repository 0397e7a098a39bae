"""Seeding helpers: turn one base seed into many independent run seeds."""

from numbers import Integral

import numpy as np


def derive_seeds(base_seed: int, n: int) -> list[int]:
    """Return ``n`` independent, reproducible seeds derived from ``base_seed``.

    Each seed comes from one child of ``numpy.random.SeedSequence(base_seed)``,
    so runs seeded with them are statistically independent. Every seed fits in
    32 bits (``0 <= seed < 2**32``). Asking for more seeds keeps the first ones:
    ``derive_seeds(b, 10)[:5] == derive_seeds(b, 5)``.
    """
    if not _is_int(base_seed) or base_seed < 0:
        raise ValueError(f"base_seed must be a non-negative integer, got {base_seed!r}; pass e.g. base_seed=0")
    if not _is_int(n) or n < 0:
        raise ValueError(f"n (the number of seeds) must be a non-negative integer, got {n!r}; pass e.g. n=10")
    children = np.random.SeedSequence(base_seed).spawn(n)
    return [int(child.generate_state(1)[0]) for child in children]


def _is_int(value: object) -> bool:
    """True for Python and numpy integers, but not for booleans."""
    return isinstance(value, Integral) and not isinstance(value, bool)
