"""Seeding helpers: turn one base seed into many independent run seeds, and check a list of seeds."""

from collections.abc import Sequence
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


def check_seeds(seeds: object, name: str = "seeds") -> list[int]:
    """``seeds`` as plain ints: a non-empty sequence (a list, a range, a 1-d array) of non-negative integers, one
    run each. Anything else is a ValueError naming ``name``, the value and the fix."""
    fix = f"pass e.g. {name}=derive_seeds(0, 10) for 10 runs"
    listed = isinstance(seeds, Sequence) and not isinstance(seeds, str | bytes)
    one_dimensional = isinstance(seeds, np.ndarray) and seeds.ndim == 1
    if not (listed or one_dimensional) or len(seeds) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of non-negative integers, got {seeds!r}; {fix}")
    for k, seed in enumerate(seeds):
        if not _is_int(seed) or seed < 0:
            raise ValueError(f"{name}[{k}] must be a non-negative integer, got {seed!r}; {fix}")
    return [int(seed) for seed in seeds]


def _is_int(value: object) -> bool:
    """True for Python and numpy integers, but not for booleans."""
    return isinstance(value, Integral) and not isinstance(value, bool)
