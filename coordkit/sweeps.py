"""Run a model over a parameter grid and many seeds, collecting one tidy DataFrame.

``run`` is either a model class (:class:`coordkit.model.Model`), played as ``Model(**params, rng=seed).run()``
and collected as one row of its ``summary()`` (or its ``frame()``), or a function called as
``run(**params, seed=seed)`` that returns a DataFrame (many rows) or a Mapping (one row). A model's grid is
checked against its declared parameters before anything runs.

Runs execute on an engine (:mod:`coordkit.engines`): here, in local processes, or on a Dask cluster; the result
is the same frame whatever the engine. For ``engine="processes"``, ``run`` must live in an importable module (a
``.py`` file), not in a notebook cell, because each worker process imports it by name. With ``store=``, every
finished run is kept on disk as it arrives (:mod:`coordkit.sweep_store`), and the same sweep run again skips
what is done; a stored run that fails its checks is never returned, but computed again.
"""

import itertools
import traceback
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from coordkit.engines import (
    DaskEngine,
    Engine,
    ProcessEngine,
    SerialEngine,
    WorkerLost,
    has_default,
    resolve,
    stays_here,
)
from coordkit.llm.base import LLMClient, StopRun
from coordkit.model import Model
from coordkit.seeds import check_seeds, derive_seeds
from coordkit.sweep_store import SweepStore

__all__ = ["DaskEngine", "Engine", "ProcessEngine", "SerialEngine", "SweepError", "sweep", "sweep_cells"]

type RunResult = pd.DataFrame | Mapping[str, Any]
type Run = Callable[..., RunResult] | type[Model]
type Task = tuple[Run, dict[str, Any], dict[str, Any], int, bool]
type Row = dict[str, Any]


@dataclass(frozen=True)
class RunFailed:
    """What a run raised, as text (it travels back from a worker process or a cluster)."""

    error: str
    trace: str


class SweepError(RuntimeError):
    """Some runs failed or a worker died. ``failures`` lists each failed run (params, seed, error, trace);
    ``results`` holds the runs that finished, in task order."""

    def __init__(self, message: str, failures: list[dict[str, Any]], results: pd.DataFrame):
        super().__init__(message)
        self.failures = failures
        self.results = results


def sweep(
    run: Run,
    grid: Mapping[str, Sequence] | Sequence[Mapping[str, Any]] | None = None,
    seeds: int | Sequence[int] = 1,
    *,
    base_seed: int = 0,
    fixed: Mapping[str, Any] | None = None,
    frame: bool = False,
    engine: str | Engine | None = None,
    workers: int | None = None,
    store: str | Path | None = None,
    progress: bool = True,
    desc: str | None = None,
) -> pd.DataFrame:
    """Call ``run`` for every grid combination and seed; return all results as one DataFrame.

    ``grid`` maps parameter names to the values to try, every combination of them (None or {} means one run
    per seed with no parameters), or is a list of settings (dicts), each tried as it is; ``fixed`` parameters go
    to every run without a column of their own (an LLM client, say). ``seeds`` is a number of seeds to
    derive from ``base_seed`` or an explicit sequence of seeds. A model class
    gives one row of ``summary()`` per run, or its ``frame()`` with
    ``frame=True``. ``engine`` is "serial", "processes", "dask" or any ``Engine``
    (default: serial, or the engine of an enclosing :func:`coordkit.engines.using`, or
    :func:`coordkit.engines.use_every_core`'s pool);
    ``workers`` sets the pool size for "processes" and "dask". ``store`` is a folder
    that keeps every finished run; run the same sweep again to finish an interrupted one.
    Each result gets the parameter columns and a ``seed`` column in front (unless it already has a
    column of that name; a setting without a parameter another has leaves it empty). Rows follow grid order (the
    product of the grid's values, first key slowest, or the list's order), then seed order, whatever the engine. The
    results' own indexes are discarded. Runs that raise do not stop the others: once all are done,
    :class:`SweepError` names each failed run's parameters and seed and carries the finished results. A
    :class:`~coordkit.llm.base.StopRun` (the budget reached, a provider that fails every call) stops the sweep
    at once: it is raised as it came, carrying the runs that had finished in its ``results`` (a DataFrame, in task
    order) and the runs that had failed in its ``failures`` (as :class:`SweepError`'s).
    ``progress`` shows a progress bar (tqdm's: a widget in a notebook, a line on stderr elsewhere) labelled
    ``desc`` (default: "<the run's name> runs").
    """
    combinations = _combinations(grid)
    seed_list = seeds_to_run(seeds, base_seed)
    fixed = dict(fixed or {})
    if _is_model(run):
        run.parameters.check_grid(({**fixed, **params} for params in combinations), owner=run.__name__, model=run)
    elif frame:
        raise ValueError("frame=True collects a model's frame(); pass a model class, or return a frame from run")
    engine = _engine_for(engine, workers, fixed, run, combinations)
    if isinstance(engine, ProcessEngine):
        _require_importable(run)
    tasks = [(run, params, fixed, seed, frame) for params in combinations for seed in seed_list]
    opened = SweepStore(store, run, fixed=fixed, frame=frame) if store is not None else nullcontext()
    desc = desc if desc is not None else f"{getattr(run, '__name__', 'sweep')} runs"
    with opened as kept, tqdm(total=len(tasks), desc=desc, disable=not progress) as bar:
        results = _read_stored(kept, tasks)
        if kept is not None and any(result is None for result in results):
            kept.require_writable()
        bar.update(sum(result is not None for result in results))
        failures: dict[int, dict[str, Any]] = {}
        try:
            _run_the_rest(engine, tasks, results, failures, kept, bar)
        except WorkerLost as lost:
            raise _sweep_error(f"{lost}", failures, results, store) from None
        except StopRun as stop:  # raised as it came (callers say its headline), with what was done before it
            stop.results = _finished(results)
            stop.failures = [failures[i] for i in sorted(failures)]
            raise
    if failures:
        raise _sweep_error(f"{len(failures)} of {len(tasks)} runs failed", failures, results, store)
    return _joined(results)


def sweep_cells(
    run: Callable[..., RunResult], grid: Mapping[str, Sequence], base_seed: int = 0, **options: Any
) -> pd.DataFrame:
    """:func:`sweep` for a figure whose every run is a *cell*: one setting's trials, each cell deriving its trials'
    seeds from ``base_seed`` itself (``run(**cell, seed=base_seed)``), so that every cell plays the same trials
    (common random numbers). One sweep for the whole figure, on the default engine; ``options`` go to
    :func:`sweep` (``fixed``, ``progress``, ``desc``, ...). The result has no ``seed`` column."""
    return sweep(run, grid, [base_seed], **options).drop(columns="seed")


def _read_stored(kept: SweepStore | None, tasks: list[Task]) -> list[pd.DataFrame | None]:
    """Each task's stored result, verified, or None for a task still to run: not stored yet, or stored damaged
    (then the store has moved the file aside and warned, and the run is computed again)."""
    if kept is None:
        return [None] * len(tasks)
    return kept.read([kept.key(params, seed) for _, params, _, seed, _ in tasks])


def _run_the_rest(engine: Engine, tasks: list[Task], results: list, failures: dict, kept: SweepStore | None, bar):
    """Run every task without a result on ``engine``, filling ``results`` (and the store) as runs finish, and
    ``failures`` (task position → params, seed, error, trace) as runs fail."""
    todo = [i for i, result in enumerate(results) if result is None]
    for position, outcome in engine.map_unordered(_attempt, [tasks[i] for i in todo]):
        i = todo[position]
        _, params, _, seed, _ = tasks[i]
        if isinstance(outcome, RunFailed):
            failures[i] = {"params": params, "seed": seed, "error": outcome.error, "trace": outcome.trace}
        else:
            results[i] = outcome
            if kept is not None:
                kept.write(kept.key(params, seed), params, seed, _joined([outcome]))
        bar.update()


def _attempt(task: Task) -> Row | pd.DataFrame | RunFailed:
    """One task's labelled result, or what it raised (an engine never sees an exception), except a
    :class:`~coordkit.llm.base.StopRun` (the budget reached, a provider that fails every call), which stops the
    whole sweep: the next run would only meet it again. (LLM runs sweep in this process: :func:`_engine_for`.)"""
    try:
        return _run_task(task)
    except StopRun:
        raise
    except Exception as error:
        return RunFailed(f"{type(error).__name__}: {error}", traceback.format_exc())


def _sweep_error(problem: str, failed: dict[int, dict], results: list, store: str | Path | None) -> SweepError:
    failures = [failed[i] for i in sorted(failed)]
    finished = sum(result is not None for result in results)
    lines = [f"  {_labels(f['params'], f['seed'])}: {f['error']}" for f in failures[:5]]
    lines += [f"  ... and {len(failures) - 5} more"] if len(failures) > 5 else []
    kept = f", and in {store}: run the same sweep again to redo only what is missing" if store is not None else ""
    message = "\n".join(
        [f"{problem}:" if failures else f"{problem}.", *lines]
        + [f"The {finished} finished runs are in the error's .results{kept} (tracebacks in .failures)."]
    )
    return SweepError(message, failures, _finished(results))


def _finished(results: list) -> pd.DataFrame:
    """The runs that finished, in task order, as one frame (empty if none did)."""
    finished = [result for result in results if result is not None]
    return _joined(finished) if finished else pd.DataFrame()


def _joined(results: Sequence[Row | pd.DataFrame]) -> pd.DataFrame:
    """The results, in order, as one frame: the frame ``pd.concat`` gives of their one-row frames (a row is a dict),
    with the rows of a stretch that all have the same columns, each of one plain type, made into a frame at once
    (:func:`_plain_rows`): a sweep of a thousand short runs spends no third of a second making one-row frames."""
    parts: list[pd.DataFrame] = []
    for is_row, stretch in itertools.groupby(results, key=lambda result: isinstance(result, dict)):
        stretch = list(stretch)
        if not is_row:
            parts += stretch
        elif _plain_rows(stretch):
            parts.append(pd.DataFrame(stretch))
        else:
            parts += [pd.DataFrame([row]) for row in stretch]
    return pd.concat(parts, ignore_index=True)


PLAIN_TYPES = frozenset({bool, int, float, str, np.bool_, np.int64, np.float64})


def _plain_rows(rows: list[Row]) -> bool:
    """Whether ``pd.DataFrame(rows)`` is the frame ``pd.concat`` makes of their one-row frames: so when every row
    has the same columns in the same order and each column holds values of one of ``PLAIN_TYPES`` only (ints within
    int64), whose dtype a column infers as one value does. (A None, a mix of types or a missing column is where
    the two differ; those rows get one-row frames.)"""
    columns = list(rows[0])
    types = [type(value) for value in rows[0].values()]
    if not all(kind in PLAIN_TYPES for kind in types):
        return False
    for row in rows:
        if list(row) != columns or any(type(value) is not kind for value, kind in zip(row.values(), types)):
            return False
        if any(type(value) is int and not -(2**63) <= value < 2**63 for value in row.values()):
            return False
    return True


def _labels(params: dict[str, Any], seed: int) -> str:
    return ", ".join([*(f"{name}={value!r}" for name, value in params.items()), f"seed={seed}"])


def _run_task(task: Task) -> Row | pd.DataFrame:
    """Run one (run, params, fixed, seed, frame) task and label its result with params and seed: one row (a dict)
    or a frame."""
    run, params, fixed, seed, frame = task
    if _is_model(run):
        model = run(**params, **fixed, rng=seed).run()
        result = model.frame() if frame else model.summary()
    else:
        result = run(**params, **fixed, seed=seed)
    labels = {**params, "seed": seed}
    if isinstance(result, Mapping):  # one row: its labels and values (made a frame with the others, by `_joined`)
        row = dict(result)
        return {name: value for name, value in labels.items() if name not in row} | row
    if not isinstance(result, pd.DataFrame):
        raise TypeError(f"run must return a DataFrame or a Mapping (one row), got {type(result).__name__}")
    frame = result.reset_index(drop=True)
    columns = {name: [value] * len(frame) for name, value in labels.items() if name not in frame.columns}
    return pd.concat([pd.DataFrame(columns, index=frame.index), frame], axis=1)


def _engine_for(
    engine: "str | Engine | None", workers: int | None, fixed: dict[str, Any], run: Run, combinations: list[dict]
) -> Engine:
    """The engine of the sweep: as asked, but serial when a fixed parameter is an LLM client (its ledger, budget
    and recording live in this process; a copy in a worker would spend unseen). The default engine (of a
    :func:`~coordkit.engines.using` block or :func:`~coordkit.engines.use_every_core`) yields to that, and to a
    run or parameters that cannot reach another process (:func:`~coordkit.engines.stays_here`); an engine asked
    for by name or object is refused for a client."""
    clients = sorted(name for name, value in fixed.items() if isinstance(value, LLMClient))
    if engine is None and not clients and has_default() and stays_here(run, fixed, combinations):
        return SerialEngine()
    if not clients:
        return resolve(engine, workers)
    chosen = SerialEngine() if engine is None else resolve(engine, workers)
    if not isinstance(chosen, SerialEngine):
        raise ValueError(
            f"fixed[{clients[0]!r}] is an LLM client, which cannot go to another process (its ledger, budget and "
            "recording live in this one): use engine='serial' (the calls of a round still run concurrently), or "
            "sweep without the client"
        )
    return chosen


def _combinations(grid: Mapping[str, Sequence] | Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """Every combination of grid values, as keyword dicts, in itertools.product order; or a list of settings, as
    given."""
    if isinstance(grid, Sequence) and not isinstance(grid, str | bytes):
        return _settings(grid)
    grid = grid or {}
    for name, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray)) or len(values) == 0:
            raise ValueError(f"grid[{name!r}] must be a non-empty sequence of values such as a list, got {values!r}")
    if "seed" in grid:
        raise ValueError("grid must not contain 'seed'; pass seeds=... to sweep instead")
    return [dict(zip(grid, values, strict=True)) for values in itertools.product(*grid.values())]


def _settings(grid: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A list of settings, checked: at least one, each a dict of parameters, none with a seed."""
    if len(grid) == 0:
        raise ValueError("grid is an empty list: give at least one setting (a dict of parameters), or None")
    for position, setting in enumerate(grid):
        if not isinstance(setting, Mapping):
            raise ValueError(
                f"grid[{position}] is {setting!r}: a list grid holds settings, each a dict such as "
                "{'protocol': 'a2a', 'seats': 3}; for every combination of values, pass a dict of lists instead"
            )
        if "seed" in setting:
            raise ValueError(f"grid[{position}] must not contain 'seed'; pass seeds=... to sweep instead")
    return [dict(setting) for setting in grid]


def seeds_to_run(seeds: int | Sequence[int], base_seed: int) -> list[int]:
    """The seeds to run: derived from ``base_seed`` if ``seeds`` is a count, else as given, checked before any run
    (:func:`~coordkit.seeds.check_seeds`)."""
    if isinstance(seeds, Integral) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"sweep needs at least one seed, got seeds={seeds!r}")
        return derive_seeds(base_seed, seeds)
    return check_seeds(seeds)


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
