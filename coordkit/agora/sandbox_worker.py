"""The sandbox's worker process; :mod:`coordkit.agora.sandbox` gives the threat model and the design.

The pool runs this file as a script with ``-P``, so it cannot import the kit: it holds everything a worker needs,
the rules its audit hook enforces, and the framing both sides speak (a 4-byte big-endian length, then UTF-8 JSON),
which the pool imports from here.

A worker serves three requests: a call (``source``, ``body``, limits: a child forked for it alone), a session call
(the same with a ``session`` key: the session's own child, forked on its first call, serves it) and ``close`` (a
session's child ends). A session's child speaks to the worker over two pipes of its own: bodies in (a 4-byte length,
then UTF-8 with lone surrogates kept), replies out (a 4-byte length, then the reply's JSON).
"""

import json
import math
import os
import select
import signal
import struct
import sys
import time

REASONS = ("timeout", "memory", "forbidden", "crashed", "bad_return", "syntax")  # why a routine gave no answer
MAX_TEXT_CHARS = 1_000_000  # of a source, a body or a result
MAX_FILE_BYTES = 16 << 20
MAX_OPEN_FILES = 64
SESSION_CALLS = 100  # calls a session's child serves before the worker ends it and the next call forks a fresh one
_MAX_FRAME = 32 * MAX_TEXT_CHARS  # JSON escapes take up to 12 bytes a character
_EXIT_FORBIDDEN, _EXIT_MEMORY = 97, 98


# Imported by every worker once, so that calls need not; routines may import any other standard module in Python.
_PRELOAD = (
    "base64 bisect collections copy csv dataclasses datetime decimal enum errno fractions functools gc hashlib heapq "
    "itertools json locale math operator random re statistics string textwrap time typing unicodedata urllib.parse"
).split()
# C extension modules a routine may load: computation only, no files, processes, sockets or foreign code.
_ALLOWED_EXTENSIONS = frozenset(
    "_bisect _blake2 _bz2 _contextvars _csv _datetime _decimal _elementtree _hashlib _heapq _json _lzma _md5 "
    "_multibytecodec _opcode _pickle _queue _random _sha1 _sha2 _sha3 _statistics _struct _zoneinfo array "
    "binascii cmath math pyexpat unicodedata zlib _codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr "
    "_codecs_tw".split()
)
# Modules whose import alone is a breach (their top-level name), including built-in ones, and a second copy of the
# interpreter's own ``posix`` and ``_imp`` (a fresh ``posix`` would bring back the functions the child removes).
_DENIED_MODULES = frozenset(
    "_posixsubprocess subprocess _socket socket _ssl ssl _ctypes ctypes _multiprocessing multiprocessing "
    "concurrent asyncio _asyncio _posixshmem _crypt crypt fcntl termios tty pty mmap "
    "_xxsubinterpreters _xxinterpchannels _interpreters _testcapi _testinternalcapi _testmultiphase "
    "_testsinglephase _ctypes_test _sqlite3 sqlite3 _dbm _gdbm readline _curses _curses_panel _tkinter syslog "
    "ossaudiodev _imp posix".split()
)
# Modules the standard library probes for (``try: import pwd``), which reach system files or daemons in C: absent.
_UNAVAILABLE_MODULES = frozenset("pwd grp spwd nis _uuid".split())
# Audit events refused outright, by prefix, with what the routine tried to do.
_DENIED_EVENTS = (
    ("socket.", "open a socket"),
    ("subprocess.", "start a process"),
    ("os.exec", "start a process"),
    ("os.spawn", "start a process"),
    ("os.posix_spawn", "start a process"),
    ("os.fork", "start a process"),
    ("os.system", "start a process"),
    ("os.startfile", "start a process"),
    ("pty.", "start a process"),
    ("ctypes.", "load native code"),
    ("os.add_dll_directory", "load native code"),
    ("code.__new__", "build code from bytes"),
    ("marshal.load", "build code from bytes"),
    ("coordkit.environ", "read the environment"),
    ("os.putenv", "change the environment"),
    ("os.unsetenv", "change the environment"),
    ("os.kill", "signal a process"),
    ("signal.pthread_kill", "signal a process"),
    ("os.chdir", "leave its working directory"),
    ("os.fchdir", "leave its working directory"),
    ("os.chroot", "leave its working directory"),
    ("os.symlink", "make a link"),
    ("os.link", "make a link"),
    ("os.chown", "change a file's owner"),
    ("os.setxattr", "change file attributes"),
    ("os.removexattr", "change file attributes"),
    ("os.chflags", "change file attributes"),
    ("os.unshare", "change its namespaces"),
    ("os.setns", "change its namespaces"),
    ("resource.", "change its resource limits"),
    ("sys.addaudithook", "add an audit hook"),
    ("sys.settrace", "trace the interpreter"),
    ("sys.setprofile", "trace the interpreter"),
    ("sys.monitoring", "trace the interpreter"),
    ("sys._current_frames", "inspect other threads"),
    ("gc.get_objects", "walk the interpreter's objects"),
    ("gc.get_referrers", "walk the interpreter's objects"),
    ("gc.get_referents", "walk the interpreter's objects"),
    ("sqlite3.", "open a database"),
    ("urllib.", "use the network"),
    ("http.client.", "use the network"),
    ("ftplib.", "use the network"),
    ("smtplib.", "use the network"),
    ("poplib.", "use the network"),
    ("imaplib.", "use the network"),
    ("nntplib.", "use the network"),
    ("telnetlib.", "use the network"),
    ("webbrowser.", "start a process"),
    ("fcntl.", "control a file descriptor"),
    ("syslog.", "write to the system log"),
    ("winreg.", "read the registry"),
)
# Functions the audit hook cannot see, removed from the child's ``posix`` and ``_signal`` (and ``os``, ``signal``):
# files made anywhere, other processes signalled or reprioritised, the session left, ids changed, signal handlers
# installed (Python code run by a signal could interrupt the hook before it ends the process).
_REMOVED_POSIX = (
    "mkfifo mknod pidfd_open setpriority sched_setaffinity sched_setscheduler sched_setparam setpgid setpgrp setsid "
    "setuid seteuid setreuid setresuid setgid setegid setregid setresgid setgroups initgroups tcsetpgrp"
).split()
_REMOVED_SIGNAL = ("signal", "pidfd_send_signal")
# Audit events that name paths: (event, indices of the path arguments, whether they write).
_PATH_EVENTS = {
    "os.listdir": ((0,), False),
    "os.scandir": ((0,), False),
    "os.mkdir": ((0,), True),
    "os.rmdir": ((0,), True),
    "os.remove": ((0,), True),
    "os.rename": ((0, 1), True),
    "os.chmod": ((0,), True),
    "os.utime": ((0,), True),
    "os.truncate": ((0,), True),
    "os.getxattr": ((0,), False),
    "os.listxattr": ((0,), False),
    "os.walk": ((0,), False),
    "os.fwalk": ((0,), False),
    "glob.glob": ((0,), False),
    "glob.glob/2": ((0,), False),
    "shutil.copyfile": ((0, 1), True),
    "shutil.copymode": ((0, 1), True),
    "shutil.copystat": ((0, 1), True),
    "shutil.copytree": ((0, 1), True),
    "shutil.move": ((0, 1), True),
    "shutil.rmtree": ((0,), True),
    "shutil.make_archive": ((0,), True),
    "shutil.unpack_archive": ((0, 1), True),
}


# --- framing: a 4-byte big-endian length, then UTF-8 JSON (both sides) ------------------------------------------


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes | None:
    """``size`` bytes from ``fd``; None at end of file; TimeoutError past ``deadline`` (a ``time.monotonic`` time)."""
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(missing, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, deadline: float | None = None) -> dict | None:
    header = _read_exactly(fd, 4, deadline)
    if header is None:
        return None
    (size,) = struct.unpack(">I", header)
    if size > _MAX_FRAME:
        raise ValueError(f"a frame of {size} bytes")
    payload = _read_exactly(fd, size, deadline)
    return None if payload is None else json.loads(payload)


def write_frame(fd: int, message: dict) -> None:
    payload = json.dumps(message).encode()
    view = memoryview(struct.pack(">I", len(payload)) + payload)
    while view:
        view = view[os.write(fd, view) :]


# --- the worker ------------------------------------------------------------------------------------------------


def _serve(directory: str, max_sessions: int) -> None:
    """The worker's loop: one request in, one reply out, until its input ends; then its sessions' children end and
    its directory goes."""
    requests, replies = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # a routine's prints go nowhere, and cannot reach the pipes
        os.dup2(devnull, fd)
    os.close(devnull)
    isolated = _enter_network_namespace()
    import posix
    import resource  # noqa: F401  (for the children's limits: loaded once here)

    os.environ.clear()
    posix.environ.clear()
    for name in _PRELOAD:
        __import__(name)
    sys.implementation.cache_tag = None  # imports compile from source: no marshal, which the hook refuses
    import _imp

    _imp.create_builtin = _no_builtin  # no fresh copy of a built-in module (a posix with what the child removes)
    write_frame(replies, {"ready": True, "network_namespace": isolated})
    sessions = _Sessions(directory, max_sessions)
    number = 0
    while (request := read_frame(requests)) is not None:
        if "close" in request:
            reply = sessions.close(request["close"])
        elif "session" in request:
            reply = sessions.call(request)
        else:
            number += 1
            reply = _serve_call(request, os.path.join(directory, f"call-{number}"))
        write_frame(replies, reply)
    sessions.close_all()
    _remove_workdir(directory)  # also when the kit exits without closing its pool


def _no_builtin(spec) -> None:
    raise ImportError(f"{spec.name} is not available to routines")


def _enter_network_namespace() -> bool:
    """Move this process into new user and network namespaces (or a network one alone); False if impossible.

    In its own user namespace even root loses its capabilities over the machine (it cannot raise a hard limit).
    """
    if not hasattr(os, "unshare"):
        return False
    uid, gid = os.geteuid(), os.getegid()
    try:
        os.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNET)
    except OSError:
        try:
            os.unshare(os.CLONE_NEWNET)
        except OSError:
            return False
        return True
    # map our own ids, so that the child can still create files in its directory
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)
    return True


def _serve_call(request: dict, workdir: str) -> dict:
    """Fork a child for one call, wait for its reply at most ``timeout_s``, and describe how it ended."""
    os.mkdir(workdir, 0o700)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            _close_all_but(write_end)
            _run_in_child(request, workdir, write_end)
        finally:
            os._exit(1)
    os.close(write_end)
    deadline = time.monotonic() + request["timeout_s"]
    output, stopped = _collect(read_end, pid, deadline)
    os.close(read_end)
    status = _reap_child(pid, deadline)
    _remove_workdir(workdir)
    return _describe_end(request, status, output, stopped or ("timeout" if status is None else None))


def _close_all_but(*kept: int) -> None:
    """In a forked child: close every descriptor above stderr except ``kept``, so that no routine holds the worker's
    pipes or another session's."""
    low = 3
    for fd in sorted(kept):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def _remove_workdir(workdir: str) -> None:
    try:
        _remove_tree(workdir)
    except (OSError, RecursionError):
        pass  # what is left goes with the worker's directory


class _Sessions:
    """The worker's session children, by session key, least recently used first; at most ``limit`` live."""

    def __init__(self, directory: str, limit: int):
        self.directory, self.limit = directory, limit
        self.children: dict[object, _SessionChild] = {}  # insertion order is use order
        self.started = 0

    def call(self, request: dict) -> dict:
        """One call of a session: its child (forked now if it has none) runs ``handle(body)``; a failure ends it."""
        deadline = time.monotonic() + request["timeout_s"]
        child = self.children.pop(request["session"], None)
        if child is None:
            while len(self.children) >= self.limit:  # evict the least recently used
                self.children.pop(next(iter(self.children))).end()
            self.started += 1
            child = _SessionChild(request, os.path.join(self.directory, f"session-{self.started}"))
        reply = child.ask(request, deadline)
        if "result" in reply and child.calls < SESSION_CALLS:
            self.children[request["session"]] = child
        else:
            child.end()
        return reply

    def close(self, key: object) -> dict:
        child = self.children.pop(key, None)
        if child is not None:
            child.end()
        return {"closed": child is not None}

    def close_all(self) -> None:
        while self.children:
            self.children.popitem()[1].end()


class _SessionChild:
    """A process forked for one session: it compiles the routine once, then answers bodies over its own pipes."""

    def __init__(self, request: dict, workdir: str):
        os.mkdir(workdir, 0o700)
        self.workdir, self.calls = workdir, 0
        bodies_in, self.bodies = os.pipe()
        self.replies, replies_out = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            try:
                _close_all_but(bodies_in, replies_out)
                _serve_session_in_child(request, workdir, bodies_in, replies_out)
            finally:
                os._exit(1)
        os.close(bodies_in)
        os.close(replies_out)
        os.set_blocking(self.bodies, False)  # a child that stops reading cannot block the worker

    def ask(self, request: dict, deadline: float) -> dict:
        """The child's reply to ``request["body"]`` within ``deadline``, or how it ended (it is then dead)."""
        self.calls += 1
        body = request["body"].encode("utf-8", "surrogatepass")
        try:
            _write_all(self.bodies, len(body).to_bytes(4, "big") + body, deadline)
        except TimeoutError:
            return self._stop(request, "timeout")
        except BrokenPipeError:
            pass  # it died: what it wrote and its status say how
        output, stopped = _collect_frame(self.replies, deadline)
        if stopped == "frame":
            try:
                reply = json.loads(output[4:])
            except ValueError:
                reply = None
            if isinstance(reply, dict) and (type(reply.get("result")) is str or reply.get("reason") in REASONS):
                return reply
            return self._stop(request, "malformed")
        if stopped is not None:
            return self._stop(request, stopped)
        status = _reap_child(self.pid, deadline)
        self.pid = None
        return _describe_end(request, status, bytes(output), None if status is not None else "timeout")

    def _stop(self, request: dict, why: str) -> dict:
        self.end()
        if why == "malformed":
            return _failure("crashed", "the routine's process wrote a malformed reply")
        return _describe_end(request, None, b"", why)

    def end(self) -> None:
        """Kill the child (if it still runs), and remove its pipes and its directory."""
        if self.pid is not None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            self.pid = None
        for fd in (self.bodies, self.replies):
            if fd is not None:
                os.close(fd)
        self.bodies = self.replies = None
        _remove_workdir(self.workdir)


def _write_all(fd: int, data: bytes, deadline: float) -> None:
    """Write ``data`` to a non-blocking ``fd``; TimeoutError past ``deadline``."""
    view = memoryview(data)
    while view:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([], [fd], [], remaining)[1]:
            raise TimeoutError
        view = view[os.write(fd, view) :]


def _collect_frame(fd: int, deadline: float) -> tuple[bytearray, str | None]:
    """A session child's next reply (a 4-byte length, then JSON) and "frame"; or what it wrote until its end and None
    (a breach's message starts with a newline, never a frame's length); or why we stopped reading ("timeout",
    "overflow", "malformed": more than one reply)."""
    output = bytearray()
    while True:
        size = int.from_bytes(output[:4], "big") if len(output) >= 4 else _MAX_FRAME + 1
        if size <= _MAX_FRAME and len(output) >= 4 + size:
            return output, "frame" if len(output) == 4 + size else "malformed"
        if len(output) > 4 + _MAX_FRAME:
            return output, "overflow"
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            return output, "timeout"
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return output, None
        output += chunk


def _collect(fd: int, pid: int, deadline: float) -> tuple[bytes, str | None]:
    """What the child writes until it closes the pipe; and why we stopped it early ("timeout", "overflow") if we did."""
    chunks, size = [], 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            os.kill(pid, signal.SIGKILL)
            return b"".join(chunks), "timeout"
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks), None
        chunks.append(chunk)
        size += len(chunk)
        if size > _MAX_FRAME:
            os.kill(pid, signal.SIGKILL)
            return b"", "overflow"


def _reap_child(pid: int, deadline: float) -> int | None:
    """The child's wait status; None if it was still running at ``deadline`` (it is then killed)."""
    try:  # Linux 5.3 on: wait on a descriptor of the child
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    if pidfd is not None:
        try:
            remaining = deadline - time.monotonic()
            if remaining > 0 and select.select([pidfd], [], [], remaining)[0]:
                return os.waitpid(pid, 0)[1]
        finally:
            os.close(pidfd)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return None
    pause = 0.0001
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(pause)
        pause = min(2 * pause, 0.01)


def _remove_tree(path: str) -> None:
    os.chmod(path, 0o700)  # a routine may have locked its own directories
    with os.scandir(path) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                _remove_tree(entry.path)
            else:
                os.unlink(entry.path)
    os.rmdir(path)


def _describe_end(request: dict, status: int | None, output: bytes, stopped: str | None) -> dict:
    """The reply for the parent, from how the child ended, what it wrote, and why we stopped it if we did."""
    if stopped == "timeout":
        return _failure("timeout", f"the routine ran past its {request['timeout_s']:g} s and was stopped")
    if stopped == "overflow":
        return _failure("bad_return", f"the routine's process wrote more than {_MAX_FRAME:,} bytes")
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number in (signal.SIGXCPU, signal.SIGKILL):
            return _failure("timeout", "the routine used up its CPU time and was stopped")
        return _failure("crashed", f"the routine's process was killed by {signal.Signals(number).name}")
    code = os.WEXITSTATUS(status)
    if code == _EXIT_FORBIDDEN:
        attempt = output.rpartition(b"\n")[2].decode("utf-8", "replace")[:200] or "do something forbidden"
        return _failure("forbidden", f"the routine tried to {attempt}, which routines may not do")
    if code == _EXIT_MEMORY:
        return _failure("memory", f"the routine ran out of its {request['memory_mb']} MB of memory")
    if code != 0:
        return _failure("crashed", f"the routine's process exited with status {code}")
    try:
        reply = json.loads(output)
    except ValueError:
        reply = None
    if isinstance(reply, dict) and (type(reply.get("result")) is str or reply.get("reason") in REASONS):
        return reply
    return _failure("crashed", "the routine's process wrote a malformed reply")


def _failure(reason: str, message: str) -> dict:
    return {"reason": reason, "message": message}


def _run_in_child(request: dict, workdir: str, out: int) -> None:
    """In the forked child: confine this process, run the routine, write its reply to ``out`` and exit."""
    import builtins
    from json.encoder import encode_basestring_ascii as quote  # bound now: a routine may replace json's functions

    out_of_memory = _encode(_failure("memory", ""), quote)  # made now: there may be no memory to make it later
    _confine(request, workdir, out, math.ceil(request["timeout_s"]) + 1, threads=True)
    try:
        reply = _encode(_call_handle(request["source"], request["body"], builtins), quote)
        while reply:
            reply = reply[os.write(out, reply) :]
    except MemoryError:
        os.write(out, out_of_memory)
        os._exit(_EXIT_MEMORY)
    os._exit(0)


def _serve_session_in_child(request: dict, workdir: str, bodies: int, out: int) -> None:
    """In a session's forked child: confine this process, load the routine once, then answer each body on ``bodies``
    with a reply on ``out``, until the worker closes ``bodies``.

    Its CPU limit covers all the calls it may serve (``SESSION_CALLS``), and it may not start threads, which would
    run between calls, outside any call's time limit.
    """
    import builtins
    import posix
    from json.encoder import encode_basestring_ascii as quote

    read, write, exit_now = posix.read, posix.write, posix._exit  # bound now: a routine may replace os's functions
    _confine(request, workdir, out, (math.ceil(request["timeout_s"]) + 1) * SESSION_CALLS, threads=False)
    try:
        handle, failure = _load_routine(request["source"], builtins)
        while (body := _read_body(read, bodies)) is not None:
            reply = _encode(failure or _call_loaded(handle, body), quote)
            reply = memoryview(len(reply).to_bytes(4, "big") + reply)
            while reply:
                reply = reply[write(out, reply) :]
    except MemoryError:
        exit_now(_EXIT_MEMORY)
    exit_now(0)


def _read_body(read, fd: int) -> str | None:
    """The next body the worker sends (a 4-byte length, then UTF-8); None when it sends no more."""
    chunks, missing, header = [], 4, True
    while missing:
        chunk = read(fd, min(missing, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        missing -= len(chunk)
        if header and not missing:
            missing, header, chunks = int.from_bytes(b"".join(chunks), "big"), False, []
    return b"".join(chunks).decode("utf-8", "surrogatepass")


def _confine(request: dict, workdir: str, out: int, cpu_s: int, *, threads: bool) -> None:
    """Confine this forked child: its directory, no denied modules or removed functions, a sealed environment,
    ``random`` seeded with 0, its limits, and the audit hook (which reports breaches on ``out``)."""
    import _signal
    import posix
    import random

    os.chdir(workdir)
    for name in [name for name in sys.modules if name.partition(".")[0] in _DENIED_MODULES - {"posix", "_imp"}]:
        del sys.modules[name]
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # no Python handler left to interrupt the hook
    for module, public, names in ((posix, os, _REMOVED_POSIX), (_signal, signal, _REMOVED_SIGNAL)):
        for name in names:  # gone: nothing left in the process refers to them
            if hasattr(module, name):
                setattr(module, name, _removed(f"{public.__name__}.{name}"))
                setattr(public, name, getattr(module, name))
    os.environ = os.environb = posix.environ = _SealedEnvironment()
    random.seed(0)
    _limit_resources(cpu_s, request["memory_mb"])
    sys.addaudithook(_guard(workdir, out, threads))


def _encode(reply: dict, quote) -> bytes:
    """A reply of str values as JSON, with nothing a routine could have replaced."""
    return ("{" + ", ".join(f"{quote(key)}: {quote(value)}" for key, value in reply.items()) + "}").encode()


def _call_handle(source: str, body: str, builtins) -> dict:
    """Compile and run the routine; its result, or the failure it ends in (MemoryError propagates)."""
    handle, failure = _load_routine(source, builtins)
    return failure or _call_loaded(handle, body)


def _load_routine(source: str, builtins) -> tuple[object, dict | None]:
    """Compile and run the routine's module: its ``handle`` and None, or None and the failure it ends in."""
    try:
        code = compile(source, "<routine>", "exec")
    except (SyntaxError, ValueError) as error:
        return None, _failure("syntax", f"the routine does not compile: {_describe_exception(error)}")
    namespace = {"__name__": "routine", "__builtins__": builtins}
    try:
        exec(code, namespace)
    except MemoryError:
        raise
    except BaseException as error:
        return None, _failure("crashed", f"the routine raised {_describe_exception(error)}")
    handle = namespace.get("handle")
    if not callable(handle):
        return None, _failure("syntax", "the routine defines no handle(body) function")
    return handle, None


def _call_loaded(handle, body: str) -> dict:
    """``handle(body)`` as a reply: its result, or the failure it ends in (MemoryError propagates)."""
    try:
        result = handle(body)
    except MemoryError:
        raise
    except BaseException as error:
        return _failure("crashed", f"the routine raised {_describe_exception(error)}")
    if not isinstance(result, str):
        return _failure("bad_return", f"handle(body) returned {type(result).__name__}, not str")
    if len(result) > MAX_TEXT_CHARS:
        return _failure("bad_return", f"handle(body) returned {len(result):,} characters, over {MAX_TEXT_CHARS:,}")
    return {"result": str.__str__(result)}


def _describe_exception(error: BaseException) -> str:
    try:
        text = str(error)
    except BaseException:
        text = ""
    name = type(error).__name__
    return f"{name}: {text[:200]}" if text else name


def _limit_resources(cpu_s: int, memory_mb: int) -> None:
    """Hard limits (soft = hard, so the routine cannot raise them; ``resource.*`` is refused besides)."""
    import resource

    limits = [
        (resource.RLIMIT_CPU, cpu_s),
        (resource.RLIMIT_FSIZE, MAX_FILE_BYTES),
        (resource.RLIMIT_NOFILE, MAX_OPEN_FILES),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NPROC, 0),
    ]
    try:
        with open("/proc/self/statm") as statm:
            in_use = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limits.append((resource.RLIMIT_AS, in_use + (memory_mb << 20)))
    except OSError:
        pass  # no /proc (macOS): no address-space limit
    for which, value in limits:
        resource.setrlimit(which, (value, value))


def _removed(name: str):
    def removed(*args, **kwargs) -> None:
        sys.audit("coordkit.removed", name)

    return removed


class _SealedEnvironment(dict):
    """An empty environment whose every read is a breach (the process's real environment is empty too)."""

    def _refuse(self, *args, **kwargs):
        sys.audit("coordkit.environ")

    __getitem__ = __contains__ = __iter__ = __len__ = get = keys = items = values = copy = _refuse
    __setitem__ = __delitem__ = setdefault = pop = update = _refuse


def _guard(workdir: str, out: int, threads: bool):
    """The audit hook: refuses the breaches of the module's threat model (and new threads unless ``threads``),
    ending the process at once.

    Everything it uses is bound here, as closure variables, so that a routine that replaces ``os.path``,
    ``builtins.isinstance`` or ``json`` cannot change its judgement.
    """
    import _json  # an extension module in the usual builds: its directory is where they all are
    import _stat
    import posix

    stdlib = os.path.dirname(os.__file__)
    dynload = os.path.dirname(getattr(_json, "__file__", os.path.join(stdlib, "lib-dynload", "_json")))
    site = os.path.join(stdlib, "site-packages")
    normpath, stat, is_regular = posix._path_normpath, posix.stat, _stat.S_ISREG
    write, exit_now = posix.write, posix._exit
    str_type, bytes_type, int_type, tuple_type, type_of, len_of, any_of = str, bytes, int, tuple, type, len, any
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
    denied_events, path_events = tuple_type(_DENIED_EVENTS), dict(_PATH_EVENTS)
    denied_modules, allowed_extensions, unavailable = _DENIED_MODULES, _ALLOWED_EXTENSIONS, _UNAVAILABLE_MODULES
    import_error, os_error, any_error, forbidden_status = ImportError, OSError, BaseException, _EXIT_FORBIDDEN

    def inside(path: str, root: str) -> bool:
        return path == root or path.startswith(root + "/")

    def resolve(path) -> str | None:
        """The absolute, normalised form of a str or bytes path; None for anything else."""
        if type_of(path) is bytes_type:
            path = path.decode("utf-8", "surrogateescape")
        if type_of(path) is not str_type:
            return None
        return normpath(path if path.startswith("/") else workdir + "/" + path)

    def check_path(path, writes: bool) -> str | None:
        if path is None and not writes:
            return None  # the working directory
        where = resolve(path)
        if where is None:
            return "use a path that is not a str"
        if inside(where, workdir):
            return None
        if not writes and inside(where, stdlib) and not inside(where, site):
            return None
        return f"{'write' if writes else 'read'} outside its working directory"

    def refusal(event: str, args: tuple) -> str | None:
        if event == "open":
            path, mode, flags = args
            if type_of(path) is int_type:
                return "open an inherited file descriptor"
            if type_of(flags) is int_type:
                writes = bool(flags & write_flags)
            else:
                writes = type_of(mode) is not str_type or any_of(letter in mode for letter in "wax+")
            problem = check_path(path, writes)
            if problem is None and not inside(resolve(path), workdir):
                try:  # no descriptors of directories outside, which dir_fd would make a way out
                    regular = is_regular(stat(resolve(path)).st_mode)
                except os_error:
                    regular = True  # absent: the open fails by itself
                if not regular:
                    return "open a directory outside its working directory"
            return problem
        if event == "import":
            name, filename = args[0], args[1]
            if type_of(name) is not str_type:
                return "import a module by a name that is not a str"
            if name.partition(".")[0] in denied_modules:
                return f"import {name}"
            if filename is not None:
                where = resolve(filename)
                if name not in allowed_extensions or where is None or not inside(where, dynload):
                    return f"load native code ({name})"
            return None
        if event in path_events:
            indices, writes = path_events[event]
            for index in indices:
                if index < len_of(args) and type_of(args[index]) is not int_type:
                    problem = check_path(args[index], writes)
                    if problem is not None:
                        return problem
            return None
        if event == "_thread.start_new_thread" and not threads:
            return "start a thread, which would run between its session's calls"
        if event == "coordkit.removed":
            return f"call {args[0]}" if type_of(args[0]) is str_type else "call a removed function"
        for prefix, what in denied_events:
            if event.startswith(prefix):
                return what
        return None

    def hook(event: str, args: tuple) -> None:
        if event == "import" and type_of(args[0]) is str_type and args[0] in unavailable:
            raise import_error(f"{args[0]} is not available to routines")
        try:
            why = refusal(event, args)
        except any_error:
            why = f"raise the audit event {event} in a way the sandbox could not check"
        if why is not None:
            try:
                write(out, ("\n" + why).encode("utf-8", "replace"))
            finally:
                exit_now(forbidden_status)

    return hook


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]))
