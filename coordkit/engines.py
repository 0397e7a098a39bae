"""Where a sweep's runs execute: this process, a pool of local processes, or a Dask cluster.

An engine applies a function to every task and yields ``(position, result)`` pairs as the tasks finish, in any
order; :func:`coordkit.sweep.sweep` puts them back in task order, stores each as it arrives, and feeds the progress
bar. The function never raises (the sweep wraps every run so that a failure comes back as a value), so one
failing run cannot take the others down.

- :class:`SerialEngine`: one after another, here.
- :class:`ProcessEngine`: a pool of fresh ("spawn") processes on this machine.
- :class:`DaskEngine`: ``dask.distributed``; a :class:`~distributed.LocalCluster` by default, or the cluster
  whose scheduler is at ``address`` (or ``$COORDKIT_DASK_SCHEDULER``): the one-line move from a laptop to a
  cluster. Every worker needs coordkit installed, at the same version.

Tasks go out in chunks (a few runs each) so that the per-task overhead of a pool or a scheduler stays small while
results still arrive, and are stored, within seconds of finishing.
"""

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

SCHEDULER_VARIABLE = "COORDKIT_DASK_SCHEDULER"
ENGINES = ("serial", "processes", "dask")
MAX_CHUNK = 8  # runs per chunk at most: a killed sweep loses at most this many finished runs per worker


class Engine(Protocol):
    """Something that applies ``fn`` to every task, yielding ``(position, result)`` as each finishes."""

    def map_unordered[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[tuple[int, R]]: ...


class WorkerLost(RuntimeError):
    """A worker process died (killed, or out of memory) before its runs came back."""


class SerialEngine:
    """Runs tasks one after another in this process."""

    def map_unordered[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[tuple[int, R]]:
        for position, task in enumerate(tasks):
            yield position, fn(task)


@dataclass(frozen=True)
class ProcessEngine:
    """Runs tasks in a pool of ``workers`` fresh ("spawn") processes; None means one per CPU.

    Spawn rather than fork, because forking a process that runs threads (as a Jupyter kernel does) can deadlock.
    """

    workers: int | None = None

    def map_unordered[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[tuple[int, R]]:
        import multiprocessing  # here, as Dask's below: a command line that only names the engines starts faster
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        if not tasks:
            return
        workers = min(self.workers or os.cpu_count() or 1, len(tasks))
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as executor:
            pending = [executor.submit(_run_chunk, fn, chunk) for chunk in chunks(tasks, workers)]
            try:
                for done in as_completed(pending):
                    yield from done.result()
            except BrokenProcessPool:
                raise WorkerLost("a worker process died (killed, or out of memory)") from None
            finally:
                for future in pending:
                    future.cancel()


@dataclass
class DaskEngine:
    """Runs tasks on a Dask cluster: the one at ``address`` (default ``$COORDKIT_DASK_SCHEDULER``), else a
    :class:`~distributed.LocalCluster` of ``workers`` single-threaded processes (None: one per CPU).

    Used in a ``with`` block, it keeps its cluster between sweeps; otherwise each sweep starts and stops one.
    """

    address: str | None = None
    workers: int | None = None
    _client: Any = field(default=None, init=False, repr=False)

    def __enter__(self) -> "DaskEngine":
        self._client = self._connect()
        return self

    def __exit__(self, *exc_info) -> None:
        client, self._client = self._client, None
        _close(client)

    def map_unordered[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[tuple[int, R]]:
        if not tasks:
            return
        from distributed import KilledWorker
        from distributed import as_completed as completed

        client = self._client or self._connect()
        try:
            workers = len(client.scheduler_info().get("workers", {})) or 1
            pending = client.map(partial(_run_chunk, fn), chunks(tasks, workers), pure=False)
            try:
                for done in completed(pending, loop=client.loop):
                    yield from done.result()
            except KilledWorker:
                raise WorkerLost("Dask workers kept dying on the same runs (killed, or out of memory)") from None
            finally:
                client.cancel(pending)
        finally:
            if client is not self._client:
                _close(client)

    def _connect(self):
        import logging

        from distributed import Client, LocalCluster

        address = self.address or os.environ.get(SCHEDULER_VARIABLE) or None
        if address:
            return Client(address, set_as_default=False)
        cluster = LocalCluster(
            n_workers=self.workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",  # its HTTP server on a free local port, never a fixed one
            host="127.0.0.1",
            silence_logs=logging.ERROR,
        )
        return Client(cluster, set_as_default=False)


def _close(client) -> None:
    if client is None:
        return
    cluster = client.cluster
    client.close()
    if cluster is not None:
        cluster.close()


def chunks[T](tasks: list[T], workers: int) -> list[list[tuple[int, T]]]:
    """``tasks`` with their positions, cut into chunks of at most :data:`MAX_CHUNK`, at least 4 per worker."""
    size = max(1, min(MAX_CHUNK, len(tasks) // (4 * workers)))
    numbered = list(enumerate(tasks))
    return [numbered[start : start + size] for start in range(0, len(numbered), size)]


def _run_chunk[T, R](fn: Callable[[T], R], chunk: list[tuple[int, T]]) -> list[tuple[int, R]]:
    return [(position, fn(task)) for position, task in chunk]


@dataclass
class Default:
    """The engine :func:`using` makes the default, and how many sweeps took it."""

    engine: Engine
    sweeps: int = 0


_default: ContextVar[Default | None] = ContextVar("default_engine", default=None)


@contextmanager
def using(engine: Engine):
    """Make ``engine`` the default of every sweep in the block (``coordkit reproduce --engine`` uses this);
    the block gets a :class:`Default` that counts the sweeps that used it."""
    default = Default(engine)
    token = _default.set(default)
    try:
        yield default
    finally:
        _default.reset(token)


def resolve(engine: "str | Engine | None", workers: int | None = None) -> Engine:
    """An engine by name ("serial", "processes", "dask"), an Engine passed through, or None: the default."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers={workers!r}: give a number of worker processes, 1 or more, or None for one per CPU")
    if engine is None:
        default = _default.get()
        if default is None:
            return SerialEngine()
        default.sweeps += 1
        return default.engine
    if engine == "serial":
        return SerialEngine()
    if engine == "processes":
        return ProcessEngine(workers)
    if engine == "dask":
        return DaskEngine(workers=workers)
    if isinstance(engine, str) or not callable(getattr(engine, "map_unordered", None)):
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(map(repr, ENGINES))}, or an Engine")
    return engine
