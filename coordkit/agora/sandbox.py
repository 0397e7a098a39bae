"""The routine sandbox: LLM-written routines (Agora §4.1–4.2) run outside the kit's process.

A routine is Python source that defines ``handle(body: str) -> str``. ``run_routine(source, body)`` runs it in a
separate, throw-away process and returns the string it returns, or raises ``RoutineError`` with a reason code
(``timeout``, ``memory``, ``forbidden``, ``crashed``, ``bad_return``, ``syntax``) and a message naming what happened;
the agent then falls back to natural language, counted. The paper's library execs routines in the agent's own
process; the kit never does.

Threat model. The routine's author is untrusted (an LLM that read a protocol document written by a stranger); its
input ``body`` comes from another agent. We defend the kit's process, the machine and the other routines against a
routine that tries to:

- run forever (a loop, a sleep): the worker kills it at ``timeout_s`` of wall time (``RLIMIT_CPU`` is the backstop),
  and the parent kills the whole worker if the worker itself stops answering;
- exhaust memory: ``RLIMIT_AS`` caps its address space at the interpreter's own plus ``memory_mb``;
- read secrets: the process starts with an empty environment (no API key), and reading ``os.environ``,
  ``os.getenv`` or ``/proc/self/environ`` is a breach;
- read or write files outside its fresh working directory (removed after each call): refused, except read-only
  access to the standard library's files so that a routine may ``import statistics``; ``RLIMIT_FSIZE`` bounds each
  file it writes inside and ``RLIMIT_NOFILE`` the files it holds open; links cannot be made, nor the directory left;
- reach the network: sockets (and every module built on them) are refused, and on Linux the worker sits in new user
  and network namespaces: no interface but a down loopback, so that even native code finds no network, and no
  capability over the machine, so that even root cannot raise a hard limit;
- start processes: ``fork``, ``exec*``, ``system``, ``posix_spawn`` and ``subprocess`` are refused (``RLIMIT_NPROC``
  is set too, but Linux does not enforce it for root, so for root the refusal alone stands);
- load native code: ``ctypes``, ``dlopen`` and every C extension module outside a short list of pure-computation
  standard ones (``math``, ``_json``, ``_datetime``, ...) are refused, and so are code objects built from bytes
  (``marshal``, ``CodeType``), the usual door to memory corruption; ``pwd`` and ``grp``, which read system files
  in C, are merely absent (an ImportError), since the standard library probes for them;
- tamper with the guard or with later calls: the guard is an audit hook (PEP 578), which cannot be removed, binds
  everything it uses when installed (monkeypatching ``os`` or ``builtins`` cannot fool it), and refuses the ways to
  reach it (``gc`` object walks, tracing and monitoring, new audit hooks, signal handlers, new resource limits, fresh
  copies of built-in modules). Each call runs in a process forked for it alone, so nothing a routine changes
  outlives its call.

A breach ends the process at once (a routine cannot catch it) and raises ``RoutineError("forbidden")``, whose
message names what was tried ("read the environment"), never what was read.

What is not defended: audit hooks are not a security boundary (PEP 578 says so); an exploit of a memory bug in the
interpreter or in an allowed C module would run native code, and then only the operating system's layers hold (a
separate process, resource limits, an empty environment, the network namespace), not the file and process rules. A
routine can still read file metadata (``os.stat``) anywhere, spend its time and memory budget, and read the clock or
``os.urandom`` (so a routine that does is not deterministic by its own doing). Where ``os.unshare`` is missing (macOS)
or not permitted, the audit hook alone keeps the network out; macOS does not enforce ``RLIMIT_AS`` either. For
hostile code at scale, run the kit inside a container or a seccomp jail as well.

Design, standard library only. A pool of warm workers: each is a clean interpreter (``-s -S -B -P``, which is ``-I``
but for ``-E``: the environment it gets holds only ``PYTHONHASHSEED=0``, for determinism, and is cleared at start)
with the usual standard modules imported, that enters the namespaces once and then serves calls over a pipe
(length-prefixed JSON). For each call it forks a child (a few milliseconds in all), which takes a fresh directory,
sets its limits, installs the hook, runs the routine and writes one JSON reply; the worker enforces the wall clock
and reports. The routine never runs in the worker, so breaches, crashes and timeouts discard the child only; a worker
that stops answering is killed and replaced. Determinism: every child starts from the same state (a fixed hash seed,
``random`` seeded with 0, the same modules, an empty directory), so a routine's output depends on its source and
body only. POSIX only (it forks). The worker is :mod:`coordkit.agora.sandbox_worker`, run as a script.
"""

import atexit
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref

from coordkit.agora import sandbox_worker
from coordkit.agora.sandbox_worker import MAX_TEXT_CHARS, REASONS, read_frame, write_frame

DEFAULT_TIMEOUT_S = 1.0
DEFAULT_MEMORY_MB = 64
MAX_TIMEOUT_S = 60.0
MAX_MEMORY_MB = 4096

_INTERPRETER_FLAGS = ("-s", "-S", "-B", "-P", "-X", "utf8")
_START_TIMEOUT_S = 30.0
_GRACE_S = 5.0  # the worker answers within timeout_s; past timeout_s + _GRACE_S the parent kills it


class RoutineError(Exception):
    """A routine that could not give an answer: ``reason`` is one of ``REASONS`` (a
    :class:`~coordkit.agora.routines.ContractError` adds its own), the message says what happened."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


# --- the parent's side: workers and the pool ------------------------------------------------------------------------


class _Worker:
    """One warm worker process, spoken to over its stdin and stdout."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="coordkit-routines-")
        self.process = subprocess.Popen(
            [sys.executable, *_INTERPRETER_FLAGS, sandbox_worker.__file__, self.directory],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={"PYTHONHASHSEED": "0"},
            cwd=self.directory,
            bufsize=0,
            start_new_session=True,
        )
        try:
            hello = read_frame(self.process.stdout.fileno(), time.monotonic() + _START_TIMEOUT_S)
        except (TimeoutError, ValueError, OSError):
            hello = None
        if not isinstance(hello, dict) or hello.get("ready") is not True:
            self.kill()
            raise RoutineError("crashed", "the sandbox's worker process did not start")
        self.network_namespace = bool(hello.get("network_namespace"))

    def call(self, request: dict, deadline: float) -> dict | None:
        """The worker's reply; None if it died; TimeoutError past ``deadline``."""
        write_frame(self.process.stdin.fileno(), request)
        return read_frame(self.process.stdout.fileno(), deadline)

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except OSError:
            pass
        self._reap()

    def close(self) -> None:
        """Ask the worker to exit (end of its input), killing it if it does not within a second."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=1)
        except Exception:
            self.kill()
        else:
            self._reap()

    def _reap(self) -> None:
        import shutil

        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            stream.close()
        shutil.rmtree(self.directory, ignore_errors=True)


class SandboxPool:
    """Up to ``size`` warm workers, started on first use, shared by threads; ``run`` is ``run_routine``."""

    def __init__(self, size: int = 2):
        if not isinstance(size, int) or not 1 <= size <= 64:
            raise ValueError(f"a sandbox pool has 1 to 64 workers, not {size!r}")
        self.size = size
        self._closed = False
        self._forget_workers()
        _pools.add(self)

    def _forget_workers(self) -> None:
        """Start with no workers (also in a forked copy of the kit: the workers belong to the original)."""
        self._idle: list[_Worker] = []
        self._live = 0
        self._condition = threading.Condition()

    def run(
        self, source: str, body: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, memory_mb: int = DEFAULT_MEMORY_MB
    ) -> str:
        """What the routine's ``handle(body)`` returns, or ``RoutineError``; see the module's docstring."""
        _check_call(source, body, timeout_s, memory_mb)
        request = {"source": source, "body": body, "timeout_s": float(timeout_s), "memory_mb": int(memory_mb)}
        worker = self._acquire()
        healthy = False
        try:
            reply = worker.call(request, time.monotonic() + timeout_s + _GRACE_S)
            healthy = reply is not None
        except TimeoutError:
            raise RoutineError("timeout", f"the sandbox stopped answering after {timeout_s:g} s") from None
        except (OSError, ValueError):
            reply = None
        finally:
            self._release(worker, healthy)
        return _answer(reply)

    @property
    def network_namespace(self) -> bool:
        """Whether the workers sit in their own network namespace (the second layer; starts a worker if none)."""
        worker = self._acquire()
        try:
            return worker.network_namespace
        finally:
            self._release(worker, True)

    def close(self) -> None:
        """Stop the idle workers now, and the busy ones when their calls end."""
        with self._condition:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._condition.notify_all()
        for worker in idle:
            worker.close()

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _acquire(self) -> _Worker:
        with self._condition:
            while True:
                if self._closed:
                    raise RuntimeError("this sandbox pool is closed")
                if self._idle:
                    worker = self._idle.pop()
                    if worker.process.poll() is None:
                        return worker
                    self._live -= 1  # died while idle: replaced below
                    worker.kill()
                    continue
                if self._live < self.size:
                    self._live += 1
                    break
                self._condition.wait()
        try:
            return _Worker()
        except BaseException:
            with self._condition:
                self._live -= 1
                self._condition.notify()
            raise

    def _release(self, worker: _Worker, healthy: bool) -> None:
        with self._condition:
            keep = healthy and not self._closed
            if keep:
                self._idle.append(worker)
            else:
                self._live -= 1
            self._condition.notify()
        if not keep:
            (worker.close if healthy else worker.kill)()


def _check_call(source: object, body: object, timeout_s: object, memory_mb: object) -> None:
    for name, text in (("source", source), ("body", body)):
        if not isinstance(text, str):
            raise TypeError(f"a routine's {name} is a str, not {type(text).__name__}")
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"a routine's {name} has at most {MAX_TEXT_CHARS:,} characters, not {len(text):,}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise ValueError(f"timeout_s is a number of seconds in (0, {MAX_TIMEOUT_S:g}], not {timeout_s!r}")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or not 1 <= memory_mb <= MAX_MEMORY_MB:
        raise ValueError(f"memory_mb is a whole number of megabytes in [1, {MAX_MEMORY_MB}], not {memory_mb!r}")


def _answer(reply: object) -> str:
    """The routine's result from a worker's reply, or the ``RoutineError`` the reply describes."""
    if isinstance(reply, dict) and type(reply.get("result")) is str:
        return reply["result"]
    if isinstance(reply, dict) and reply.get("reason") in REASONS and isinstance(reply.get("message"), str):
        raise RoutineError(reply["reason"], reply["message"])
    raise RoutineError("crashed", "the sandbox's worker process died or sent a malformed reply")


_default_pool: SandboxPool | None = None
_default_lock = threading.Lock()
_pools: "weakref.WeakSet[SandboxPool]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    global _default_lock
    _default_lock = threading.Lock()
    for pool in _pools:
        pool._forget_workers()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def default_pool() -> SandboxPool:
    """The pool ``run_routine`` uses: two workers, started on first use, stopped at exit."""
    global _default_pool
    with _default_lock:
        if _default_pool is None:
            _default_pool = SandboxPool(2)
            atexit.register(_default_pool.close)
        return _default_pool


def run_routine(
    source: str, body: str, *, timeout_s: float = DEFAULT_TIMEOUT_S, memory_mb: int = DEFAULT_MEMORY_MB
) -> str:
    """Run the routine ``source`` (which defines ``handle(body: str) -> str``) on ``body`` in the sandbox.

    ``timeout_s`` is the wall time the call may take (at most 60 s), ``memory_mb`` the memory it may allocate beyond
    the interpreter's own (at most 4096). Returns ``handle(body)``; raises ``RoutineError`` on any breach, timeout,
    crash, syntax error or non-str return, and ``ValueError``/``TypeError`` on bad arguments.
    """
    return default_pool().run(source, body, timeout_s=timeout_s, memory_mb=memory_mb)
