"""Module-level run functions for test_sweep.py, importable by spawned worker processes."""

import numpy as np
import pandas as pd

from coordkit.model import Model
from coordkit.parameters import Integer, Parameters, Real


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


class Walk(Model):
    """A seeded random walk of ``length`` steps of size ``scale``, as a model (for sweeps over a model class)."""

    parameters = Parameters(
        Integer("length", 3, 1, 100, doc="steps to walk"), Real("scale", 1.0, 0, 10, doc="step size")
    )

    def __init__(self, *, rng=None, **params):
        super().__init__(rng=rng, **params)
        self.path = [0.0]

    def step(self):
        self.path.append(self.path[-1] + self.scale * float(self.rng.normal()))
        self.running = self.steps < self.length

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame({"step": range(len(self.path)), "position": self.path})

    def summary(self) -> dict:
        return {"final": self.path[-1]}
