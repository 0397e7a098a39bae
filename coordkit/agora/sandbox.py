"""The routine sandbox: LLM-written routines (Agora §4.1–4.2) run outside the kit's process.

A routine is Python source that defines ``handle(body: str) -> str``. ``run_routine(source, body)`` runs it in a
separate, throw-away process and returns the string it returns, or raises ``RoutineError`` with a reason code
(``budget``, ``timeout``, ``memory``, ``forbidden``, ``crashed``, ``bad_return``, ``syntax``) and a message naming what
happened; the agent then falls back to natural language, counted. ``routine_session(source)`` gives a
:class:`RoutineSession` instead, a callable ``session(body) -> str`` whose calls share one sandboxed process (a
session's), with the same confinement and the same errors, at a fraction of a call's cost. The paper's library execs
routines in the agent's own process; the kit never does with an LLM's (its rule-based programmer's, a template of its
own, run there when that gives this module's answer: :mod:`~coordkit.agora.in_process`).

Threat model. The routine's author is untrusted (an LLM that read a protocol document written by a stranger); its
input ``body`` comes from another agent. We defend the kit's process, the machine and the other routines against a
routine that tries to:

- run forever (a loop, a sleep): a call may run ``max_lines`` lines of Python (its *budget*, counted by the child
  itself, each turn of a loop counted too: the same on every run, whatever the machine's load), then it ends with
  ``budget``; that is what decides a
  routine that computes too long (issue 43: one seed, one answer). The wall clock is the *safety net*, for what the
  budget does not count (a sleep, a long computation in C within one line, a routine that escapes the count): the
  worker kills a call at ``timeout_s`` of wall time (30 s by default, over a hundred times what a call within the
  default budget takes on a quiet machine), and the parent kills the whole worker, children included, if the worker
  itself stops answering; either is a ``timeout``, which the models count apart (a run whose safety net fired
  depended on the machine's speed, and says so). ``RLIMIT_CPU`` is the backstop:
  ``timeout_s`` rounded up plus 1 second for a call's process, and ``SESSION_CALLS`` (100) times that for a
  session's, which the worker replaces after that many calls, so that no call is stopped for the CPU time earlier
  calls spent. A session's process may not start threads, which would run between its calls, outside any call's time.
  The report names what stopped it: the wall time, or the CPU limit (read from the CPU time the process used, so that
  a routine that kills itself is reported as killed by its signal, "killed by signal SIGKILL");
- exhaust memory: ``RLIMIT_AS`` caps its address space at the interpreter's own plus ``memory_mb`` (a session's: all
  its calls together);
- read secrets: the process starts with an empty environment (no API key), and reading ``os.environ``,
  ``os.getenv`` or ``/proc/self/environ`` is a breach, but for the variables the standard library reads to
  configure itself (``PYTHONTZPATH``, ``LANG``, ...), which read as unset, as they are;
- read or write files outside its fresh working directory (removed after the call, or with the session's process):
  refused, except read-only access to the standard library's files, so that a routine may ``import statistics``, and
  to the time zone database, so that it may use ``zoneinfo``;
  ``RLIMIT_FSIZE`` bounds each file it writes inside and ``RLIMIT_NOFILE`` the files it holds open; links cannot be
  made, nor the directory left;
- reach the network: sockets are refused where they are used (``socket()``, ``connect``, name look-ups; the few
  functions that read system files or interfaces with no audit event are removed), so that the modules built on
  them (``email``, ``http.client``) import but reach nothing, and on Linux the worker sits in new user
  and network namespaces: no interface but a down loopback, so that even native code finds no network, and no
  capability over the machine, so that even root cannot raise a hard limit;
- start processes: ``fork``, ``exec*``, ``system``, ``posix_spawn`` and ``subprocess`` are refused (``RLIMIT_NPROC``
  is set too, but Linux does not enforce it for root, so for root the refusal alone stands);
- load native code: ``ctypes``, ``dlopen`` and every C extension module outside a short list of pure-computation
  standard ones (``math``, ``_json``, ``_datetime``, ...) are refused, and so are code objects built from bytes
  (``marshal``, ``CodeType``), the usual door to memory corruption; ``pwd``, ``grp``, ``termios``, ``fcntl`` and
  ``ssl``, which reach system files, terminals or the network in C, are merely absent (an ImportError), since the
  standard library probes for them. The worker's table (``sandbox_worker``) says why each module a routine may use
  cannot reach the outside;
- forge its answer: a routine holds one descriptor that is read (its reply pipe): by the worker, and for a session's
  calls after its first by the kit, which the worker hands that pipe. Whoever reads it reads it as untrusted: every
  frame on it is checked (its size, its shape, the cap of ``MAX_TEXT_CHARS`` on a result, a reason the routine's own
  code can cause: never a timeout, memory or a death, which the reader finds out from its clock and the worker from
  the process's wait status, and a breach only as the guard names it), and the kit checks the worker's replies the
  same way;
- tamper with the guard or with later calls: the guard is an audit hook (PEP 578), which cannot be removed, binds
  everything it uses when installed (monkeypatching ``os`` or ``builtins`` cannot fool it), and refuses the ways to
  reach it (``gc`` object walks, tracing and monitoring, new audit hooks, signal handlers, new resource limits, fresh
  copies of built-in modules and of the extension modules the worker loaded). A ``run_routine`` call runs in a process
  forked for it alone, so nothing a routine changes outlives its call. A session's calls share its process, so what its
  routine changes (its globals, the modules it patches, the files in its directory) outlives a call and lasts as long as
  that process: until a call fails, the worker evicts it or it has served ``SESSION_CALLS`` calls, or the session is
  closed; then the next call forks a fresh one. It never outlives its session and never reaches another: sessions never
  share a process, and a routine's process holds no descriptor but its own pipes to the worker (none of the worker's,
  none of another session's);
- litter the machine: its directory goes after its call (or with its session's process) however deep the tree it
  built, whatever modes it gave its folders, following no link it holds; the worker's folder
  (``coordkit-routines-*`` in the temporary directory) goes with the worker: when the pool closes or is
  garbage-collected, or the kit exits.

A breach ends the process at once (a routine cannot catch it) and raises ``RoutineError("forbidden")``, whose
message names what was tried ("read the environment"), never what was read. In a session, so does every other
failure (a timeout, a crash, a bad return): the process is gone, and the session's next call starts from the source.

What is not defended: audit hooks are not a security boundary (PEP 578 says so); an exploit of a memory bug in the
interpreter or in an allowed C module would run native code, and then only the operating system's layers hold (a
separate process, resource limits, an empty environment, the network namespace), not the file and process rules. A
routine can still read file metadata (``os.stat``) anywhere, spend its time and memory budget, and read the clock or
``os.urandom`` (so a routine that does is not deterministic by its own doing). On its reply pipe a routine can write a
reply it could have given honestly (a result, a failure of its own code, a breach it could have made), in a session even
ahead of the body it answers, so that its process computes between calls, within its CPU limit; and in a session the
files it writes pile up in its directory for up to ``SESSION_CALLS`` calls (``RLIMIT_FSIZE`` bounds each, time alone
their number). Where ``os.unshare`` is missing (macOS) or not permitted, the audit hook alone keeps the network out;
macOS does not enforce ``RLIMIT_AS`` either. For hostile code at scale, run the kit inside a container or a seccomp jail
as well.

Design, standard library only. A pool of warm workers: each is a clean interpreter (``-s -S -B -P``, which is ``-I`` but
for ``-E``: the environment it gets holds only ``PYTHONHASHSEED=0``, for determinism, and is cleared at start) with the
usual standard modules imported, that enters the namespaces once and then serves calls over a pipe (length-prefixed
JSON). For each call it forks a child (a few milliseconds in all), which takes a fresh directory, sets its limits,
installs the hook, runs the routine and writes one reply (a frame, as on every pipe); the worker enforces the wall
clock, checks the reply and reports. The routine never runs in the worker, so breaches, crashes and timeouts discard the
child only; a worker that stops answering is killed and replaced. A session is pinned to one worker (the one with the
fewest sessions when it opened), whose requests carry the session's key: the worker forks the session's child on its
first call (confined as a call's, its routine compiled once) and, once it has answered, hands the kit the child's own
pipes (over a Unix socket, ``SCM_RIGHTS``): the session's later calls go from the kit to the child and back, two
processes woken a call rather than four, with the wall clock enforced per call by the kit; when those pipes end, the
worker says how the child ended (its wait status), or that it ended it. It keeps at most ``sessions_per_worker`` (128)
such children, evicting the least recently used, which the kit names. Threads share the pool: a worker serves one
request at a time, two sessions' later calls run side by side, and a session's calls take turns. Determinism: every
child starts from the same state (a fixed hash seed, ``random`` seeded with 0, the same modules, an empty directory), so
a routine's output depends on its source and body only, and a session's on its source and the bodies since its process
started: on the sequence of its bodies alone while no eviction replaces its process (at most ``sessions_per_worker``
sessions open on a worker), and on each body alone for a routine that keeps no state (the kit's contract,
:mod:`~coordkit.agora.routines`). POSIX only (it forks). The worker is :mod:`coordkit.agora.sandbox_worker`, run as a
script.
"""

import atexit
import itertools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import weakref

from coordkit.agora import sandbox_worker
from coordkit.agora.sandbox_worker import (
    MAX_REPLY_FRAME,
    MAX_TEXT_CHARS,
    REASONS,  # noqa: F401  (a RoutineError's reasons, imported from here)
    SESSION_CALLS,
    check_reply,
    malformed,
    ran_past,
    read_frame,
    remove_tree,
    write_frame,
)

DEFAULT_MAX_LINES = 1_000_000  # a schema routine's call runs under 200; a second of CPU runs about 5 million
MAX_LINES = 10_000_000
DEFAULT_TIMEOUT_S = 30.0  # the safety net: far beyond what a busy machine makes of a call within its line budget
DEFAULT_MEMORY_MB = 64
DEFAULT_SESSIONS_PER_WORKER = 128
MAX_SESSIONS_PER_WORKER = 256  # two pipes each (the kit holds them once handed over), under the usual 1,024 files
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
    """One warm worker process, spoken to over its stdin and stdout; it keeps at most ``max_sessions`` session
    children. Its folder goes with it: when it is closed or killed, garbage-collected, or the kit exits."""

    def __init__(self, max_sessions: int):
        self.directory = tempfile.mkdtemp(prefix="coordkit-routines-")
        self.handover, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)  # session children's pipes
        arguments = [self.directory, str(max_sessions), str(theirs.fileno())]
        try:
            self.process = subprocess.Popen(
                [sys.executable, *_INTERPRETER_FLAGS, sandbox_worker.__file__, *arguments],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={"PYTHONHASHSEED": "0"},
                cwd=self.directory,
                bufsize=0,
                start_new_session=True,
                pass_fds=(theirs.fileno(),),
            )
        except BaseException:
            self.handover.close()
            remove_tree(self.directory)
            raise
        finally:
            theirs.close()
        self._owner = os.getpid()
        self._finalizer = weakref.finalize(
            self, _stop_worker, self.process, self.directory, self.handover, self._owner, gently=True
        )
        try:
            hello = read_frame(self.process.stdout.fileno(), time.monotonic() + _START_TIMEOUT_S)
        except TimeoutError:
            self.kill()
            message = f"the sandbox's worker process did not start within {_START_TIMEOUT_S:g} s"
            raise RoutineError("timeout", message) from None
        except (ValueError, OSError):
            hello = None
        if not isinstance(hello, dict) or hello.get("ready") is not True:
            self.kill()
            raise RoutineError("crashed", "the sandbox's worker process did not start")
        self.network_namespace = bool(hello.get("network_namespace"))

    def call(self, request: dict, deadline: float) -> dict | None:
        """The worker's reply; None if it died; TimeoutError past ``deadline``, ValueError for a malformed frame."""
        write_frame(self.process.stdin.fileno(), request)
        return read_frame(self.process.stdout.fileno(), deadline)

    def pipes(self, deadline: float) -> "_ChildPipes":
        """The pipes of the session child that just answered its first call, which the worker hands over (after a
        result); TimeoutError past ``deadline``, ValueError if the worker sent anything but two descriptors."""
        self.handover.settimeout(max(deadline - time.monotonic(), 0.001))
        _, fds, flags, _ = socket.recv_fds(self.handover, 1, 2, socket.MSG_CMSG_CLOEXEC)
        if len(fds) != 2 or flags & socket.MSG_CTRUNC:
            for fd in fds:
                os.close(fd)
            raise ValueError("the sandbox's worker process handed over no pipes")
        return _ChildPipes(*fds)

    def kill(self) -> None:
        """Kill the worker and, with it, its children (they share its process group, which a routine cannot leave)."""
        self._stop(gently=False)

    def close(self) -> None:
        """Ask the worker to exit (end of its input; it ends its session children), killing it if it does not
        within a second."""
        self._stop(gently=True)

    def _stop(self, *, gently: bool) -> None:
        if self._finalizer.detach() is not None:  # not stopped yet
            _stop_worker(self.process, self.directory, self.handover, self._owner, gently=gently)


def _stop_worker(
    process: subprocess.Popen, directory: str, handover: socket.socket, owner: int, *, gently: bool
) -> None:
    """Stop a worker, asked to exit or killed with its children, and remove its folder: in the process that started
    it only (a forked copy of the kit leaves the original's workers alone)."""
    if os.getpid() != owner:
        return
    handover.close()
    if gently:
        try:
            process.stdin.close()
            process.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            gently = False
    if not gently:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        process.wait()
    for stream in (process.stdin, process.stdout):
        stream.close()
    try:
        remove_tree(directory)
    except FileNotFoundError:
        pass  # the worker removed it as it exited
    except OSError as error:
        warnings.warn(f"the routine sandbox could not remove {directory} ({error}); remove it by hand", stacklevel=2)


class _ChildPipes:
    """The kit's ends of a session child's pipes, handed over by its worker: the kit writes bodies on one and reads
    replies on the other, as untrusted as the worker reads them (:func:`check_reply`), with no stop in the worker."""

    def __init__(self, bodies: int, replies: int):
        os.set_blocking(bodies, False)  # a child that stops reading cannot block the kit
        self.bodies, self.replies = bodies, replies
        self.calls = 1  # the first call, which the worker passed on
        self._finalizer = weakref.finalize(self, _close_all, bodies, replies)

    def ask(self, body: str, deadline: float) -> dict | None:
        """The child's reply to ``body``, checked; None if its pipes ended (it died, or its worker ended it).
        TimeoutError past ``deadline``; ValueError for a malformed frame, with what is wrong."""
        try:
            write_frame(self.bodies, {"body": body}, deadline)
        except BrokenPipeError:
            return None
        reply = read_frame(self.replies, deadline, MAX_REPLY_FRAME)
        if reply is None:
            return None
        problem = check_reply(reply, from_routine=True)
        if problem is not None:
            raise ValueError(problem)
        self.calls += 1
        return reply

    def close(self) -> None:
        self._finalizer()


def _close_all(*fds: int) -> None:
    for fd in fds:
        os.close(fd)


class SandboxPool:
    """Up to ``size`` warm workers, started on first use, shared by threads; ``run`` is ``run_routine``,
    ``session`` opens a :class:`RoutineSession`, pinned to one worker, which keeps at most ``sessions_per_worker``
    session children (the least recently used is evicted)."""

    def __init__(self, size: int = 2, *, sessions_per_worker: int = DEFAULT_SESSIONS_PER_WORKER):
        if not isinstance(size, int) or not 1 <= size <= 64:
            raise ValueError(f"a sandbox pool has 1 to 64 workers, not {size!r}")
        if isinstance(sessions_per_worker, bool) or not isinstance(sessions_per_worker, int):
            raise ValueError(f"sessions_per_worker is a whole number, not {sessions_per_worker!r}")
        if not 1 <= sessions_per_worker <= MAX_SESSIONS_PER_WORKER:
            raise ValueError(f"sessions_per_worker is in [1, {MAX_SESSIONS_PER_WORKER}], not {sessions_per_worker}")
        self.size = size
        self.sessions_per_worker = sessions_per_worker
        self._closed = False
        self._session_keys = itertools.count(1)
        self._forget_workers()
        _pools.add(self)

    def _forget_workers(self) -> None:
        """Start with no workers (also in a forked copy of the kit: the workers belong to the original)."""
        self._workers: list[_Worker | None] = [None] * self.size  # slot -> its worker, if started
        self._busy = [False] * self.size  # slot -> serving a call
        self._pinned = [0] * self.size  # slot -> open sessions pinned to it
        self._live: list[dict[int, None]] = [{} for _ in range(self.size)]  # slot -> its sessions' children, by use
        self._condition = threading.Condition()

    def run(
        self,
        source: str,
        body: str,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_mb: int = DEFAULT_MEMORY_MB,
    ) -> str:
        """What the routine's ``handle(body)`` returns, or ``RoutineError``; see the module's docstring."""
        limits = _limits(max_lines, timeout_s, memory_mb)
        check_text(source, body)
        return self._call(None, {"source": source, "body": body, **limits})

    def session(
        self,
        source: str,
        *,
        max_lines: int = DEFAULT_MAX_LINES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_mb: int = DEFAULT_MEMORY_MB,
    ) -> "RoutineSession":
        """A :class:`RoutineSession` of ``source``: one process for all its calls, each within ``max_lines`` lines
        and ``timeout_s`` seconds, all within ``memory_mb``. Its process starts on its first call."""
        limits = _limits(max_lines, timeout_s, memory_mb)
        check_text(source, "")
        with self._condition:
            if self._closed:
                raise RuntimeError("this sandbox pool is closed")
            slot = self._pinned.index(min(self._pinned))
            self._pinned[slot] += 1
        return RoutineSession(self, next(self._session_keys), slot, source, limits)

    @property
    def network_namespace(self) -> bool:
        """Whether the workers sit in their own network namespace (the second layer; starts a worker if none)."""
        slot, worker = self._acquire(None)
        try:
            return worker.network_namespace
        finally:
            self._release(slot, worker, True)

    def close(self) -> None:
        """Stop the idle workers now, and the busy ones when their calls end; their sessions end with them."""
        with self._condition:
            self._closed = True
            idle = [worker for worker, busy in zip(self._workers, self._busy) if worker is not None and not busy]
            self._workers = [worker if busy else None for worker, busy in zip(self._workers, self._busy)]
            self._condition.notify_all()
        for worker in idle:
            worker.close()

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _call(self, slot: int | None, request: dict, session: "RoutineSession | None" = None) -> str:
        """Send ``request`` to the worker of ``slot`` (any free worker if None); the routine's result. A session's
        first call (``session``) then takes its child's pipes from the worker."""
        slot, worker = self._acquire(slot)
        healthy = False
        try:
            deadline = time.monotonic() + request["timeout_s"] + _GRACE_S
            reply = worker.call(request, deadline)
            if session is not None and reply is not None and "result" in reply:
                session.pipes = worker.pipes(deadline)
            healthy = reply is not None
        except TimeoutError:
            raise RoutineError("timeout", f"the sandbox stopped answering after {request['timeout_s']:g} s") from None
        except (OSError, ValueError):
            reply = None
        finally:
            self._release(slot, worker, healthy)
        return answer(reply)

    def _start_child(self, session: "RoutineSession", body: str) -> str:
        """A session's call that forks its child (evicting the least recently used past ``sessions_per_worker``),
        which answers ``body``; the kit then holds its pipes."""
        with self._condition:
            live = self._live[session.slot]
            live.pop(session.key, None)
            evict = list(live)[: max(0, len(live) - self.sessions_per_worker + 1)]
            for key in evict:
                del live[key]
            live[session.key] = None
        request = {"session": session.key, "evict": evict, "source": session.source, "body": body, **session.limits}
        try:
            return self._call(session.slot, request, session)
        except RoutineError:
            self._forget_child(session)
            raise

    def _ask_child(self, session: "RoutineSession", body: str) -> str | None:
        """``body`` to the session's child, straight through its pipes: the result, or None if the worker ended the
        child (evicted, or the worker itself is gone), for a fresh one to answer; RoutineError for a failure, which
        ends the child."""
        with self._condition:
            live = self._live[session.slot]
            live[session.key] = live.pop(session.key, None)  # the most recently used
        timeout_s = session.limits["timeout_s"]
        deadline = time.monotonic() + timeout_s
        try:
            reply = session.pipes.ask(body, deadline)
        except TimeoutError:
            reply = ran_past(timeout_s)
        except ValueError as error:
            reply = malformed(str(error))
        if reply is None:  # its pipes ended: how it ended, or that it is gone
            wait_s = max(deadline - time.monotonic(), 0.001)
            request = {"ended": session.key, "wait_s": wait_s, **session.limits}
            reply = self._tell(session.slot, request, wait_s + _GRACE_S)
            self._forget_child(session)
            if reply is None or reply == {"gone": True}:
                return None
            return answer(reply)
        if "result" not in reply or session.pipes.calls == SESSION_CALLS:
            self._end_child(session)
        return answer(reply)

    def _end_child(self, session: "RoutineSession") -> None:
        """End the session's child, if it has one on a worker that still runs."""
        if session.pipes is not None:
            self._forget_child(session)
            self._tell(session.slot, {"close": session.key}, _GRACE_S)

    def _forget_child(self, session: "RoutineSession") -> None:
        with self._condition:
            self._live[session.slot].pop(session.key, None)
        if session.pipes is not None:
            session.pipes.close()
            session.pipes = None

    def _tell(self, slot: int, request: dict, seconds: float) -> dict | None:
        """The reply of ``slot``'s worker, if it runs, to ``request`` about a session's child (None if it did not
        answer: it is then replaced, and its children end with it)."""
        try:
            slot, worker = self._acquire(slot, start=False)
        except RuntimeError:
            return None  # the pool closed meanwhile: its workers end their children
        reply = None
        try:
            if worker is not None:
                reply = worker.call(request, time.monotonic() + seconds)
        except (TimeoutError, OSError, ValueError):
            pass
        finally:
            self._release(slot, worker, reply is not None)
        return reply

    def _end_session(self, session: "RoutineSession") -> None:
        """Unpin ``session`` and end its child, if it has one on a worker that still runs."""
        with self._condition:
            self._pinned[session.slot] -= 1
            closed = self._closed
        if closed:
            self._forget_child(session)
        else:
            self._end_child(session)

    def _acquire(self, slot: int | None, *, start: bool = True) -> tuple[int, _Worker | None]:
        """A slot and its worker, reserved for one call: ``slot``'s, or the first free one (started ones first).
        A worker that died while idle is replaced; none is started unless ``start``."""
        with self._condition:
            while True:
                if self._closed:
                    raise RuntimeError("this sandbox pool is closed")
                free = [k for k in range(self.size) if not self._busy[k] and slot in (None, k)]
                if free:
                    slot = min(free, key=lambda k: self._workers[k] is None)
                    break
                self._condition.wait()
            self._busy[slot] = True
            worker, dead = self._workers[slot], None
            if worker is not None and worker.process.poll() is not None:
                self._workers[slot], worker, dead = None, None, worker
        if dead is not None:
            dead.kill()
        if worker is None and start:
            try:
                worker = _Worker(self.sessions_per_worker)
            except BaseException:
                self._release(slot, None, False)
                raise
            with self._condition:
                self._workers[slot] = worker
        return slot, worker

    def _release(self, slot: int, worker: _Worker | None, healthy: bool) -> None:
        with self._condition:
            self._busy[slot] = False
            keep = healthy and not self._closed
            if not keep and worker is not None and self._workers[slot] is worker:
                self._workers[slot] = None
            self._condition.notify_all()
        if worker is not None and not keep:
            (worker.close if healthy else worker.kill)()


class RoutineSession:
    """One routine in its own sandboxed process for many calls: ``session(body) -> str`` is ``handle(body)``.

    The process (forked on the first call, with a call's confinement) compiles the source once; each call runs within
    ``max_lines`` lines and ``timeout_s`` seconds, and all of them within ``memory_mb``. Its worker forks it and
    answers the first call; later calls go from the kit to the process and back through its pipes, which the worker
    hands over, read as untrusted as the worker reads them. A breach, budget run out,
    timeout, crash or bad return ends the process and raises ``RoutineError`` as ``run_routine`` does; the next call
    forks a fresh one (``restarts`` counts them). The routine's module state lasts while its process does: at most
    ``SESSION_CALLS`` (100) calls, fewer if its worker evicts it (the least recently used past ``sessions_per_worker``),
    which the next call mends silently. Usable as a routine of :func:`coordkit.agora.routines.run`; close it (or use
    ``with``) when done.
    """

    def __init__(self, pool: SandboxPool, key: int, slot: int, source: str, limits: dict):
        self.pool, self.key, self.slot = pool, key, slot
        self.source, self.limits = source, limits  # max_lines, timeout_s, memory_mb
        self.calls = 0  # handle(body) calls sent to the sandbox
        self.restarts = 0  # processes forked anew after a call that ended the previous one
        self._ended = False  # the last call ended the process: the next one forks a fresh one
        self.pipes: _ChildPipes | None = None  # to its process, once its first call forked it
        self._closed = False
        self._owner = os.getpid()  # a forked copy of the kit cannot use it: its process belongs to the original
        self._lock = threading.Lock()

    def __call__(self, body: str) -> str:
        """What ``handle(body)`` returns, or ``RoutineError``; ``TypeError``/``ValueError`` for a bad ``body``."""
        check_text(self.source, body)
        with self._lock:
            self._check_open()
            if self._ended:
                self.restarts += 1
                self._ended = False
            self.calls += 1
            try:
                result = None if self.pipes is None else self.pool._ask_child(self, body)
                return self.pool._start_child(self, body) if result is None else result
            except RoutineError:
                self._ended = True
                raise

    @property
    def closed(self) -> bool:
        """Whether it refuses calls: it was closed, or its pool was."""
        return self._closed or self.pool._closed

    def close(self) -> None:
        """End the session's process; later calls raise RuntimeError."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if os.getpid() == self._owner:
                self.pool._end_session(self)

    def __enter__(self) -> "RoutineSession":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<RoutineSession {self.key} ({state}): {self.calls} calls, {self.restarts} restarts>"

    def _check_open(self) -> None:
        if os.getpid() != self._owner:
            raise RuntimeError("this routine session belongs to the process that opened it; open a new one here")
        if self.closed:
            raise RuntimeError("this routine session is closed")


def check_text(source: object, body: object) -> None:
    for name, text in (("source", source), ("body", body)):
        if not isinstance(text, str):
            raise TypeError(f"a routine's {name} is a str, not {type(text).__name__}")
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"a routine's {name} has at most {MAX_TEXT_CHARS:,} characters, not {len(text):,}")


def _limits(max_lines: object, timeout_s: object, memory_mb: object) -> dict:
    """A call's limits, checked, as its request carries them."""
    if isinstance(max_lines, bool) or not isinstance(max_lines, int) or not 1 <= max_lines <= MAX_LINES:
        raise ValueError(
            f"max_lines is a whole number of lines in [1, {MAX_LINES:,}], not {max_lines!r}; the default, "
            f"{DEFAULT_MAX_LINES:,}, is thousands of times what a schema routine's call runs"
        )
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise ValueError(f"timeout_s is a number of seconds in (0, {MAX_TIMEOUT_S:g}], not {timeout_s!r}")
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, int) or not 1 <= memory_mb <= MAX_MEMORY_MB:
        raise ValueError(f"memory_mb is a whole number of megabytes in [1, {MAX_MEMORY_MB}], not {memory_mb!r}")
    return {"max_lines": max_lines, "timeout_s": float(timeout_s), "memory_mb": memory_mb}


def answer(reply: dict | None) -> str:
    """The routine's result from a worker's reply (None: it died), or the ``RoutineError`` the reply describes."""
    if reply is None:
        raise RoutineError("crashed", "the sandbox's worker process died or sent a malformed frame")
    problem = check_reply(reply)
    if problem is not None:
        raise RoutineError("crashed", f"the sandbox's worker process sent a malformed reply: {problem}")
    if "result" in reply:
        return reply["result"]
    raise RoutineError(reply["reason"], reply["message"])


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
    source: str,
    body: str,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
) -> str:
    """Run the routine ``source`` (which defines ``handle(body: str) -> str``) on ``body`` in the sandbox.

    ``max_lines`` is the lines of Python the call may run (its budget, at most 10,000,000), ``timeout_s`` the wall
    time it may take (the safety net, at most 60 s), ``memory_mb`` the memory it may allocate beyond the
    interpreter's own (at most 4096). Returns ``handle(body)``; raises ``RoutineError`` on any breach, budget run
    out, timeout, crash, syntax error or non-str return, and ``ValueError``/``TypeError`` on bad arguments.
    """
    return default_pool().run(source, body, max_lines=max_lines, timeout_s=timeout_s, memory_mb=memory_mb)


def routine_session(
    source: str,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = DEFAULT_MEMORY_MB,
) -> RoutineSession:
    """A :class:`RoutineSession` of ``source`` on the default pool: ``session(body)`` runs ``handle(body)`` in the
    session's own sandboxed process, each call within ``max_lines`` lines and ``timeout_s`` seconds, all within
    ``memory_mb``."""
    return default_pool().session(source, max_lines=max_lines, timeout_s=timeout_s, memory_mb=memory_mb)
