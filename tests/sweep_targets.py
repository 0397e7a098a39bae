"""Module-level run functions for test_sweep.py, importable by spawned worker processes."""

import numpy as np
import pandas as pd


def coin_run(p: float, flips: int, seed: int) -> dict[str, float]:
    """One row: how many of ``flips`` biased coin flips came up heads."""
    heads = int((np.random.default_rng(seed).random(flips) < p).sum())
    return {"heads": heads, "rate": heads / flips}


def walk_run(steps: int, seed: int) -> pd.DataFrame:
    """One row per step of a seeded random walk, indexed by step like Mesa's datacollector."""
    position = np.random.default_rng(seed).normal(size=steps).cumsum()
    return pd.DataFrame({"position": position}, index=pd.RangeIndex(steps, name="step"))


def seed_echo_run(seed: int) -> dict[str, int]:
    """One row whose own ``seed`` column must win over the sweep's."""
    return {"seed": -seed, "value": seed % 7}
