"""Run a model over a parameter grid and many seeds, collecting one tidy DataFrame.

``run`` is either a model class (:class:`coordkit.model.Model`), played as ``Model(**params, rng=seed).run()``
and collected as one row of its ``summary()`` (or its ``frame()``), or a function called as
``run(**params, seed=seed)`` that returns a DataFrame (many rows) or a Mapping (one row). A model's grid is
checked against its declared parameters before anything runs. For ``engine="processes"``, ``run`` must live in
an importable module (a ``.py`` file), not in a notebook cell, because each worker process imports it by name.
"""

import itertools
import multiprocessing
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Protocol

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from coordkit.model import Model
from coordkit.seeds import derive_seeds

type RunResult = pd.DataFrame | Mapping[str, Any]
type Run = Callable[..., RunResult] | type[Model]
type Task = tuple[Run, dict[str, Any], dict[str, Any], int, bool]


class Engine(Protocol):
    """Something that applies ``fn`` to every task, yielding results in task order."""

    def map[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[R]: ...


class SerialEngine:
    """Runs tasks one after another in this process."""

    def map[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[R]:
        return map(fn, tasks)


@dataclass(frozen=True)
class ProcessEngine:
    """Runs tasks in a pool of ``workers`` fresh ("spawn") processes; None means one per CPU.

    Spawn rather than fork, because forking a process that runs threads
    (as a Jupyter kernel does) can deadlock.
    """

    workers: int | None = None

    def map[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[R]:
        if not tasks:
            return
        workers = min(self.workers or os.cpu_count() or 1, len(tasks))
        chunksize = max(1, len(tasks) // (4 * workers))
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as executor:
            yield from executor.map(fn, tasks, chunksize=chunksize)


def sweep(
    run: Run,
    grid: Mapping[str, Sequence] | None = None,
    seeds: int | Sequence[int] = 1,
    *,
    base_seed: int = 0,
    fixed: Mapping[str, Any] | None = None,
    frame: bool = False,
    engine: str | Engine = "serial",
    workers: int | None = None,
    progress: bool = True,
    desc: str | None = None,
) -> pd.DataFrame:
    """Call ``run`` for every grid combination and seed; return all results as one DataFrame.

    ``grid`` maps parameter names to the values to try (None or {} means one run
    per seed with no parameters); ``fixed`` parameters go to every run without a
    column of their own (an LLM client, say). ``seeds`` is a number of seeds to
    derive from ``base_seed`` or an explicit sequence of seeds. A model class
    gives one row of ``summary()`` per run, or its ``frame()`` with
    ``frame=True``. ``engine`` is "serial", "processes" or any ``Engine``;
    ``workers`` sets the pool size for "processes". Each result gets the
    parameter columns and a ``seed`` column in front (unless it already has a
    column of that name). Rows follow grid order (the product of the grid's
    values, first key slowest), then seed order, whatever the engine. The
    results' own indexes are discarded.
    """
    combinations = _combinations(grid)
    seed_list = _seed_list(seeds, base_seed)
    fixed = dict(fixed or {})
    if _is_model(run):
        run.parameters.check_grid(({**fixed, **params} for params in combinations), owner=run.__name__)
    elif frame:
        raise ValueError("frame=True collects a model's frame(); pass a model class, or return a frame from run")
    engine = _engine(engine, workers)
    if isinstance(engine, ProcessEngine):
        _require_importable(run)
    tasks = [(run, params, fixed, seed, frame) for params in combinations for seed in seed_list]
    results = engine.map(_run_task, tasks)
    frames = list(tqdm(results, total=len(tasks), desc=desc, disable=not progress))
    return pd.concat(frames, ignore_index=True)


def _run_task(task: Task) -> pd.DataFrame:
    """Run one (run, params, fixed, seed, frame) task and label its result with params and seed."""
    run, params, fixed, seed, frame = task
    if _is_model(run):
        model = run(**params, **fixed, rng=seed).run()
        result = model.frame() if frame else model.summary()
    else:
        result = run(**params, **fixed, seed=seed)
    if isinstance(result, pd.DataFrame):
        frame = result.reset_index(drop=True)
    elif isinstance(result, Mapping):
        frame = pd.DataFrame([dict(result)])
    else:
        raise TypeError(f"run must return a DataFrame or a Mapping (one row), got {type(result).__name__}")
    labels = {
        name: [value] * len(frame) for name, value in {**params, "seed": seed}.items() if name not in frame.columns
    }
    return pd.concat([pd.DataFrame(labels, index=frame.index), frame], axis=1)


def _combinations(grid: Mapping[str, Sequence] | None) -> list[dict[str, Any]]:
    """Every combination of grid values, as keyword dicts, in itertools.product order."""
    grid = grid or {}
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) or len(values) == 0:
            raise ValueError(f"grid[{name!r}] must be a non-empty sequence of values such as a list, got {values!r}")
    if "seed" in grid:
        raise ValueError("grid must not contain 'seed'; pass seeds=... to sweep instead")
    return [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]


def _seed_list(seeds: int | Sequence[int], base_seed: int) -> list[int]:
    """The seeds to run: derived from ``base_seed`` if ``seeds`` is a count, else as given."""
    seed_list = derive_seeds(base_seed, seeds) if isinstance(seeds, Integral) else list(seeds)
    if not seed_list:
        raise ValueError(f"sweep needs at least one seed, got seeds={seeds!r}")
    return seed_list


def _engine(engine: str | Engine, workers: int | None) -> Engine:
    """Look up an engine by name, or pass an Engine instance through."""
    if engine == "serial":
        return SerialEngine()
    if engine == "processes":
        return ProcessEngine(workers)
    if isinstance(engine, str):
        raise ValueError(f"unknown engine {engine!r}; choose 'serial' or 'processes'")
    return engine


def _is_model(run: Run) -> bool:
    return isinstance(run, type) and issubclass(run, Model)


def _require_importable(run: Run) -> None:
    """Fail early if worker processes could not import ``run`` by name."""
    name = getattr(run, "__qualname__", repr(run))
    if run.__module__ == "__main__":
        problem = f"{name} is defined in __main__ (a notebook cell or script)"
    elif "<lambda>" in name or "<locals>" in name:
        problem = f"{name} is a lambda or a function defined inside another function"
    else:
        return
    raise ValueError(
        f"engine='processes' needs run to be a module-level function of an importable "
        f"module, but {problem}; move it into a .py file and import it, or use engine='serial'"
    )
