"""Where a sweep's runs execute: this process, a pool of local processes, or a Dask cluster.

An engine applies a function to every task and yields ``(position, result)`` pairs as the tasks finish, in any
order; :func:`coordkit.sweeps.sweep` puts them back in task order, stores each as it arrives, and feeds the progress
bar. The function never raises (the sweep wraps every run so that a failure comes back as a value), so one
failing run cannot take the others down.

- :class:`SerialEngine`: one after another, here.
- :class:`ProcessEngine`: a pool of fresh processes on this machine.
- :class:`DaskEngine`: ``dask.distributed``; a :class:`~distributed.LocalCluster` by default, or the cluster
  whose scheduler is at ``address`` (or ``$COORDKIT_DASK_SCHEDULER``): the one-line move from a laptop to a
  cluster. Every worker needs coordkit installed, at the same version.

Tasks go out in chunks (a few runs each) so that the per-task overhead of a pool or a scheduler stays small while
results still arrive, and are stored, within seconds of finishing.

Failures are said early and in words (issue 29): a scheduler address that is empty, malformed or unreachable is a
:class:`SchedulerError` naming the address, where it came from and the fix, within seconds; a script that sweeps
outside ``if __name__ == "__main__":`` is a :class:`MainGuardMissing`, not a storm of worker tracebacks; and the
workers of a sweep whose process is killed exit with it.
"""

import atexit
import io
import os
import pickle
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from types import FunctionType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from concurrent.futures import Future

SCHEDULER_VARIABLE = "COORDKIT_DASK_SCHEDULER"
ENGINES = ("serial", "processes", "dask")
MAX_CHUNK = 8  # runs per chunk at most: a killed sweep loses at most this many finished runs per worker
CONNECT_TIMEOUT = 5  # seconds to reach a scheduler: one that is up answers in milliseconds (Dask waits 30 s)
MAIN_GUARD_EXIT = 86  # the exit status of a worker that was made to start a sweep while starting up
PROBE_TIMEOUT = 60  # seconds a probe may take to import the script (see _sweeps_on_import)
SERVER_PRELOAD = ("coordkit.sweeps",)  # what every worker needs, with Mesa, numpy and pandas: imported once
WORKERS_PER_CPU = 4  # worker processes at most: more only share the CPUs, each with an interpreter's memory


class Engine(Protocol):
    """Something that applies ``fn`` to every task, yielding ``(position, result)`` as each finishes."""

    def map_unordered[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[tuple[int, R]]: ...


class WorkerLost(RuntimeError):
    """A worker process died (killed, or out of memory) before its runs came back."""


class MainGuardMissing(RuntimeError):
    """The script sweeps on worker processes outside ``if __name__ == "__main__":``, so that every worker, which
    imports the script to start up, started the sweep again instead of running its share."""


class SchedulerError(ValueError):
    """The Dask scheduler's address is empty or malformed, or no scheduler answers there. A ValueError (a wrong
    address is a wrong value), which the command line prints as one line."""


class SerialEngine:
    """Runs tasks one after another in this process."""

    def map_unordered[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[tuple[int, R]]:
        for position, task in enumerate(tasks):
            yield position, fn(task)


@dataclass
class ProcessEngine:
    """Runs tasks in a pool of ``workers`` fresh processes, at most :func:`max_workers`; None means one per CPU.

    Fresh processes rather than forks of this one, because forking a process that runs threads (as a Jupyter kernel
    does) can deadlock: forks of a fork server where the system has one, else spawned (:func:`_fresh_processes`). Each
    worker exits as soon as this process ends, even killed (:func:`_exit_with_parent`). Used in a ``with`` block, the
    engine keeps its pool between sweeps (a new worker is a fork of the fork server, or, spawned, imports Python, pandas
    and Mesa again: a second or two of CPU); otherwise each sweep starts and stops one. A pool that lost a worker is
    replaced. Each worker imports the modules named in ``preload`` as it starts; with ``ignore_interrupts``, the workers
    ignore SIGINT, which a kernel's *Interrupt* sends to every process it started, and leave the interrupting to their
    parent.
    """

    workers: int | None = None
    preload: tuple[str, ...] = field(default=(), repr=False)
    ignore_interrupts: bool = False
    _pool: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_workers(self.workers)

    def __enter__(self) -> "ProcessEngine":
        self._pool = _process_pool(self._size(), self.preload, self.ignore_interrupts)
        return self

    def __exit__(self, *exc_info) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(cancel_futures=True)

    def map_unordered[T, R](self, fn: Callable[[T], R], tasks: list[T]) -> Iterator[tuple[int, R]]:
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        if not tasks:
            return
        kept = self._pool
        workers = self._size() if kept else min(self._size(), len(tasks))
        pool = kept or _process_pool(workers, self.preload, self.ignore_interrupts)
        pending = [pool.submit(_run_chunk, fn, chunk) for chunk in chunks(tasks, workers)]
        try:
            for done in as_completed(pending):
                yield from done.result()
        except BrokenProcessPool:
            if kept is not None:
                kept.shutdown(cancel_futures=True)
                self._pool = _process_pool(workers, self.preload, self.ignore_interrupts)
            if _sweeps_on_import():
                raise _main_guard_missing() from None
            raise WorkerLost("a worker process died (killed, or out of memory)") from None
        finally:
            for future in pending:
                future.cancel()
            if kept is None:
                pool.shutdown()

    def start_workers(self) -> None:
        """Have the kept pool's workers ready for the first sweep. Spawned workers start now, each importing its
        modules in the background. Forks of a fork server are made at the first sweep, in milliseconds, once the
        server has imported their modules: the server starts now and imports them on a thread
        (:func:`_warm_fork_server`), seconds the first time, while this process goes on."""
        import threading

        context = _fresh_processes(self.preload)
        if context.get_start_method() != "forkserver":
            for _ in range(self._size()):
                self.submit(int)
            return
        threading.Thread(target=_warm_fork_server, args=(context,), name="coordkit-fork-server").start()

    def submit[R](self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> "Future[R]":
        """``fn(*args, **kwargs)`` on the kept pool (a ``with`` block's); a pool that lost a worker is replaced."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            return self._pool.submit(fn, *args, **kwargs)
        except BrokenProcessPool:
            self._pool.shutdown(cancel_futures=True)
            self._pool = _process_pool(self._size(), self.preload, self.ignore_interrupts)
            return self._pool.submit(fn, *args, **kwargs)

    def _size(self) -> int:
        return self.workers or os.cpu_count() or 1


@dataclass
class DaskEngine:
    """Runs tasks on a Dask cluster: the one at ``address`` (default ``$COORDKIT_DASK_SCHEDULER``), else a
    :class:`~distributed.LocalCluster` of ``workers`` single-threaded processes (at most :func:`max_workers`; None:
    one per CPU).

    An empty or malformed address is refused at once, and one where no scheduler answers within
    :data:`CONNECT_TIMEOUT` seconds when the cluster is first used, each with a :class:`SchedulerError`. Used in a
    ``with`` block, the engine keeps its cluster between sweeps; otherwise each sweep starts and stops one.
    """

    address: str | None = None
    workers: int | None = None
    _scheduler: "_Scheduler | None" = field(default=None, init=False, repr=False)
    _client: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        check_workers(self.workers)
        self._scheduler = _scheduler_at(self.address)

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
        if self._scheduler is not None:
            return self._scheduler.connect()
        return _local_cluster(self.workers or os.cpu_count() or 1)


@dataclass(frozen=True)
class _Scheduler:
    """A scheduler's address, checked, with where it was given and how to run on a local cluster instead, for
    errors that say all three."""

    address: str
    source: str
    instead: str

    def connect(self):
        from distributed import Client

        try:
            return Client(self.address, set_as_default=False, timeout=CONNECT_TIMEOUT)
        except OSError as error:  # Dask's "Timed out trying to connect to ... after 5 s"
            raise SchedulerError(
                f"cannot reach a Dask scheduler at {self.address} (the address in {self.source}): {error}. "
                f"Start the scheduler (`dask scheduler`) or correct the address, {self.instead}."
            ) from None


def _scheduler_at(address: str | None) -> _Scheduler | None:
    """The scheduler at ``address``, else at ``$COORDKIT_DASK_SCHEDULER``, checked; None when neither names one
    (then a local cluster runs). An empty or blank address is refused, never taken to mean a local cluster."""
    if address is not None:
        given, source, shown = address, "DaskEngine(address=...)", f"DaskEngine(address={address!r})"
        instead, empty = "or address=None for a local cluster", "is empty"
    elif SCHEDULER_VARIABLE in os.environ:
        given = os.environ[SCHEDULER_VARIABLE]
        source, shown = f"${SCHEDULER_VARIABLE}", f"${SCHEDULER_VARIABLE}={given!r}"
        instead, empty = f"or unset {SCHEDULER_VARIABLE} for a local cluster", "is set but empty"
    else:
        return None
    if not given.strip():
        raise SchedulerError(f"{shown} {empty}: give the scheduler's address, such as tcp://scheduler:8786, {instead}")
    problem = _address_problem(given.strip())
    if problem is not None:
        raise SchedulerError(
            f"{shown} is not a scheduler address ({problem}): give one such as tcp://scheduler:8786, {instead}"
        )
    return _Scheduler(given.strip(), source, instead)


def _address_problem(address: str) -> str | None:
    """What keeps Dask from reading a host and a port in ``address``, or None."""
    from distributed.comm import get_address_host_port

    try:
        _, port = get_address_host_port(address)
    except ValueError as error:  # "unknown address scheme 'http' ...", "missing port number ..."
        return str(error)
    return None if 1 <= port <= 65535 else f"port {port} is not 1 to 65535"


def _local_cluster(workers: int):
    """A client of a new LocalCluster of ``workers`` single-threaded processes, all on this machine."""
    import logging

    from distributed import Client, LocalCluster

    _leave_if_starting_up()
    try:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address="127.0.0.1:0",  # its HTTP server on a free local port, never a fixed one
            host="127.0.0.1",
            silence_logs=logging.ERROR,
        )
    except RuntimeError:  # "Nanny failed to start.": a worker process ended while starting
        if _sweeps_on_import():
            raise _main_guard_missing() from None
        raise
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


def _process_pool(workers: int, preload: tuple[str, ...] = (), ignore_interrupts: bool = False):
    """A pool of ``workers`` fresh processes (:func:`_fresh_processes`), each of which exits with this process and
    imports ``preload`` (ignoring SIGINT, if asked)."""
    from concurrent.futures import ProcessPoolExecutor

    context = _fresh_processes(preload)
    return ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(preload, ignore_interrupts)
    )


def _fresh_processes(preload: tuple[str, ...] = ()):
    """The multiprocessing context of the pools' workers: "forkserver" where the system has it, else "spawn".

    Either way a worker is a fresh process, never a fork of this one (whose threads, a Jupyter kernel's, could hold a
    lock the child then waits on forever). A spawned worker imports Python, Mesa and pandas anew, one to two seconds
    of CPU each; the fork server, one process started once for this process (by its first pool), imports
    :data:`SERVER_PRELOAD` and that pool's ``preload`` once, and each worker is a fork of it, with those modules in
    place. The runs are the same either way."""
    import multiprocessing  # here, as Dask's: a command line that only names the engines starts faster

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(dict.fromkeys([*SERVER_PRELOAD, *preload])))  # (read when it starts)
    return context


def _warm_fork_server(context) -> None:
    """Start the fork server of ``context`` and wait until it has imported its modules: a process forked from it that
    does nothing, joined. The thread that runs it is not a daemon, so that a process that ends at once waits for that
    child rather than leave it half started. A head start only: if it fails (this process ending meanwhile), the
    first sweep starts the server."""
    try:
        idle = context.Process(target=int)
        idle.start()
        idle.join()
    except Exception:
        return


def _start_worker(preload: tuple[str, ...], ignore_interrupts: bool) -> None:
    """A pool worker's initializer: exit with the parent (:func:`_exit_with_parent`), ignore SIGINT if asked, then
    import ``preload``."""
    import importlib

    _exit_with_parent()
    if ignore_interrupts:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    for module in preload:
        try:
            importlib.import_module(module)
        except Exception:  # a head start only: a run that needs the module meets the error itself, in its own words
            continue


def _run_chunk[T, R](fn: Callable[[T], R], chunk: list[tuple[int, T]]) -> list[tuple[int, R]]:
    return [(position, fn(task)) for position, task in chunk]


def _exit_with_parent() -> None:
    """A pool worker's initializer: end this worker as soon as the process that started it ends.

    Killed without cleanup (``kill -9``), a sweep would leave its workers waiting for work forever, with their
    memory, and multiprocessing's resource tracker, which waits for every worker, with them. A thread waits on the
    parent's sentinel, a pipe that the parent alone keeps open (spawned or forked from the server alike): it wakes
    the moment the parent ends, whatever ended it, on every platform, without polling. (Linux's PR_SET_PDEATHSIG
    would be Linux's alone, and would fire when the thread that started the worker ends, which for a pool is not
    the parent's end.)
    """
    import multiprocessing
    import threading

    parent = multiprocessing.parent_process()
    threading.Thread(target=_exit_when_ended, args=(parent,), name="exit-with-parent", daemon=True).start()


def _exit_when_ended(parent) -> None:
    parent.join()  # returns once the parent has ended
    os._exit(1)


def _leave_if_starting_up() -> None:
    """Exit at once, quietly, with :data:`MAIN_GUARD_EXIT`, if this process is a worker still starting up.

    A fresh worker starts by importing its parent's script; one that sweeps outside ``if __name__ ==
    "__main__":`` then reaches its sweep again, here, before any worker could run. Left alone, multiprocessing would
    raise in every worker, each printing its traceback, and the parent would only see its workers die; exiting
    quietly instead lets the parent find the cause with one probe (:func:`_sweeps_on_import`) and say it once.
    ``_inheriting`` is the flag multiprocessing sets while a worker imports the script, and checks for the same
    mistake.
    """
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        os._exit(MAIN_GUARD_EXIT)


def _sweeps_on_import() -> bool:
    """Whether a fresh worker process, importing this process's script as every worker does, is made to start a
    sweep (and so exits with :data:`MAIN_GUARD_EXIT`). Asked only once workers have died, to say why."""
    import multiprocessing

    probe = multiprocessing.get_context("spawn").Process(name="coordkit-main-guard-probe", daemon=True)
    probe.start()
    probe.join(PROBE_TIMEOUT)
    if probe.exitcode is None:  # still importing: a script this slow to import is not the one stopped at a sweep
        probe.kill()
        probe.join()
    return probe.exitcode == MAIN_GUARD_EXIT


def _main_guard_missing() -> MainGuardMissing:
    script = getattr(sys.modules["__main__"], "__file__", None) or "the script"
    return MainGuardMissing(
        f"{script} sweeps on worker processes outside `if __name__ == '__main__':`. Each worker imports the "
        "script to start up, so each started the sweep again instead of running its share. Put the script's "
        "top-level code (at least the sweep and what calls it) under `if __name__ == '__main__':`, or sweep with "
        "engine='serial'."
    )


@dataclass
class Default:
    """The engine :func:`using` makes the default, and how many sweeps took it."""

    engine: Engine
    sweeps: int = 0


_default: ContextVar[Default | None] = ContextVar("default_engine", default=None)
_every_core: Default | None = None  # use_every_core()'s, for every sweep of the process outside a using() block


def use_every_core(workers: int | None = None) -> None:
    """From now on, every sweep of this process that names no engine runs on a kept pool of worker processes, one
    per CPU (or ``workers``): what a notebook's first cell asks, so that a 2-core machine runs its sweeps on both
    cores. The results are the same, row for row, as on one core.

    The kit's modules this process has imported are imported at once, in the background, by the fork server (where
    there is one; elsewhere the workers start at once and import them), so that the first sweep forks ready workers
    (:meth:`ProcessEngine.start_workers`). A sweep whose run or parameters live in this process alone (defined in a
    notebook cell; an LLM client) still runs here (:func:`coordkit.sweeps.sweep`), and a :func:`using` block still
    chooses its own engine. The workers ignore SIGINT: a kernel's *Interrupt*, which reaches every process the kernel
    started, stops the cell and leaves the pool to the next sweep. Called again with the same ``workers``, it keeps
    the pool; with one CPU and no ``workers``, it does nothing (a pool would only share the one core).
    :func:`use_one_core` undoes it."""
    global _every_core
    check_workers(workers)
    if _every_core is not None and _every_core.engine.workers == workers:
        return
    use_one_core()
    if workers is None and (os.cpu_count() or 1) == 1:
        return
    preload = tuple(sorted(name for name in sys.modules if name.split(".")[0] == "coordkit"))
    engine = ProcessEngine(workers, preload=preload, ignore_interrupts=True).__enter__()
    engine.start_workers()
    _every_core = Default(engine)


def on_another_core[R](fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> "Future[R] | None":
    """``fn(*args, **kwargs)`` started on a worker of :func:`use_every_core`'s pool, to be waited for with
    ``.result()``; None when there is no pool or the call cannot reach another process (:func:`stays_here`): then
    call it here. For one run beside another, as both arms of an experiment."""
    if _every_core is None or stays_here(fn, args, kwargs):
        return None
    return _every_core.engine.submit(fn, *args, **kwargs)


class _DefinedHere(Exception):
    """Raised by :class:`_TravelCheck` at the first object that only this process can know."""


class _TravelCheck(pickle.Pickler):
    """A pickler that stops at an object a worker process could not rebuild: one whose class or function is
    defined in ``__main__`` (a notebook cell, a script) or inside a function."""

    def reducer_override(self, obj: Any) -> Any:
        defined = obj if isinstance(obj, type | FunctionType) else type(obj)
        if getattr(defined, "__module__", None) == "__main__" or "<locals>" in getattr(defined, "__qualname__", ""):
            raise _DefinedHere
        return NotImplemented


def stays_here(*objects: Any) -> bool:
    """Whether ``objects`` (a run and its parameters) cannot go to a worker process: defined in a notebook cell, a
    lambda, or anything else pickle cannot send."""
    try:
        _TravelCheck(io.BytesIO()).dump(objects)
    except (_DefinedHere, pickle.PicklingError, TypeError, AttributeError):
        return True
    return False


def use_one_core() -> None:
    """Undo :func:`use_every_core`: sweeps that name no engine run in this process again, and the pool stops."""
    global _every_core
    kept, _every_core = _every_core, None
    if kept is not None:
        kept.engine.__exit__(None, None, None)


atexit.register(use_one_core)  # the pool's workers would exit with this process anyway; this lets them finish cleanly


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


@contextmanager
def running(engine: Engine):
    """:func:`using` ``engine`` for the block, with its workers kept from one sweep to the next where it can keep
    them (a :class:`ProcessEngine`'s pool, a :class:`DaskEngine`'s cluster), as a command's sweeps do."""
    with engine if isinstance(engine, ProcessEngine | DaskEngine) else nullcontext(), using(engine) as default:
        yield default


def resolve(engine: "str | Engine | None", workers: int | None = None) -> Engine:
    """An engine by name ("serial", "processes", "dask"), an Engine passed through, or None: the default.

    In a worker still starting up, an engine that starts processes ends the worker (:func:`_leave_if_starting_up`)
    here, before the sweep takes its store: the parent's sweep holds it."""
    check_workers(workers)
    chosen = _chosen(engine, workers)
    if isinstance(chosen, ProcessEngine | DaskEngine):
        _leave_if_starting_up()
    return chosen


def max_workers() -> int:
    """The most worker processes an engine may start on this machine: :data:`WORKERS_PER_CPU` per CPU."""
    return WORKERS_PER_CPU * (os.cpu_count() or 1)


def check_workers(workers: int | None) -> None:
    """Refuse a number of workers that is not a whole number from 1 to :func:`max_workers` (None: one per CPU)."""
    if workers is None:
        return
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= max_workers():
        raise ValueError(
            f"workers={workers!r}: give a number of worker processes from 1 to {max_workers():,} "
            f"({WORKERS_PER_CPU} per CPU of this machine's {os.cpu_count() or 1}), or None for one per CPU"
        )


def has_default() -> bool:
    """Whether sweeps that name no engine go to another engine than this process's: a :func:`using` block's, or
    :func:`use_every_core`'s pool."""
    return _default_now() is not None


def _default_now() -> Default | None:
    """The default engine in force here: a :func:`using` block's, else :func:`use_every_core`'s, else None."""
    return _default.get() or _every_core


def _chosen(engine: "str | Engine | None", workers: int | None) -> Engine:
    if engine is None:
        default = _default_now()
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
