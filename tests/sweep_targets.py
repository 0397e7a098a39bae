"""Module-level run functions for test_sweep.py, importable by spawned worker processes."""

import os
import time

import numpy as np
import pandas as pd

from coordkit.engines import SerialEngine
from coordkit.model import Model
from coordkit.parameters import Integer, Parameters, Real

SLOW_RUNS = "COORDKIT_TEST_SLOW_RUNS"  # set: slow_run waits before it answers


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


def failing_run(x: int, seed: int) -> dict[str, int]:
    """One row, except that x == 3 raises: a sweep must report it and still collect the others."""
    if x == 3:
        raise ZeroDivisionError(f"x={x} divides by zero")
    return {"square": x * x + seed % 5}


def slow_run(x: int, seed: int) -> dict[str, float]:
    """One row, after 100 ms of waiting where ``SLOW_RUNS`` is set (in the process whose sweep is killed half way:
    the 50 runs after the 30th take 5 s, more than a loaded machine keeps the test from noticing the 30th); at once
    elsewhere (the resumed sweep and the uninterrupted one it is compared with)."""
    if os.environ.get(SLOW_RUNS):
        time.sleep(0.1)
    return {"value": float(np.random.default_rng(seed).normal() + x)}


def dying_run(x: int, seed: int) -> dict[str, int]:
    """One row, except that x == 2 kills the worker process that runs it (as the out-of-memory killer would)."""
    if x == 2:
        os._exit(1)
    return {"value": x}


def client_run(seed: int, client) -> dict[str, int]:
    """One row; ``client`` is a fixed parameter the sweep must keep in its own process (an LLM client)."""
    return {"value": seed % 7}


class CountingEngine(SerialEngine):
    """Serial, counting the runs it is given: a resumed sweep must run only what is missing."""

    def __init__(self):
        self.runs = 0

    def map_unordered(self, fn, tasks):
        self.runs += len(tasks)
        return super().map_unordered(fn, tasks)
