"""The sandbox's worker process; :mod:`coordkit.agora.sandbox` gives the threat model and the design.

The pool runs this file as a script with ``-P``, so it cannot import the kit: it holds everything a worker needs, the
rules its audit hook enforces, and what the pool imports from here: the one frame format every pipe carries (a 4-byte
big-endian length, then a JSON object in ASCII; :func:`write_frame`, :func:`read_frame`), the one check of a reply
(:func:`check_reply`) and the removal of a folder tree (:func:`remove_tree`).

A worker serves four requests: a call (``source``, ``body``, limits: a child forked for it alone), a session's first
call (the same with a ``session`` key: the session's own child is forked for it, and once it has answered, the worker
hands the kit the two ends of its pipes, over the handover socket, so that the session's later calls go from the kit to
the child and back with no stop in the worker), ``ended`` (the kit found a session's pipes closed: how the child
ended, or that it is gone, evicted) and ``close`` (a session's child ends). Each child answers on a pipe of its own,
which the worker, and after the handover the kit, reads as untrusted: a routine holds that pipe and may write anything
on it, so every frame read from it passes :func:`check_reply` (a routine's process may report a result within the cap,
a failure of its own code, or a breach the guard names; never a timeout, which the reader finds out itself), and how a
child ended is read from its wait status and CPU time, not from its words. A session's child reads its bodies, frames
too, from a second pipe.
"""

import json
import math
import os
import re
import select
import signal
import sys
import time
from collections.abc import Callable

# why a routine gave no answer
REASONS = ("budget", "timeout", "memory", "forbidden", "crashed", "bad_return", "syntax")
MAX_TEXT_CHARS = 1_000_000  # of a source, a body or a result
MAX_MESSAGE_CHARS = 1_000  # of a failure's message
MAX_FILE_BYTES = 16 << 20
MAX_OPEN_FILES = 64
SESSION_CALLS = 100  # calls a session's child serves before it is ended and the next call forks a fresh one
_MAX_FRAME = 32 * MAX_TEXT_CHARS  # a request: a source and a body, at up to 12 bytes a character in ASCII JSON
MAX_REPLY_FRAME = 12 * MAX_TEXT_CHARS + 4096  # a reply: a result at the cap, or a failure
_EXIT_FORBIDDEN, _EXIT_MEMORY, _EXIT_BUDGET = 97, 98, 99
_BUDGET_TOOL = 4  # the sys.monitoring tool id of the line budget (0-2 and 5 are the debugger's, coverage's, ...)
_UNCOUNTED = 1 << 62  # lines left between calls: the kit's own lines in the child never run out
_CPU_SLACK_S = 0.5  # a child stopped at its CPU limit may show up to a few tenths of a second less in its rusage


# Imported by every worker once, so that calls need not; routines may import any other standard module in Python.
_PRELOAD = (
    "atexit _symtable _tracemalloc base64 bisect collections copy csv dataclasses datetime decimal enum errno "
    "fractions functools gc hashlib heapq itertools json locale math operator random re socket statistics string "
    "textwrap time typing unicodedata urllib.parse zoneinfo"
).split()
# C extension modules a routine may load: computation only, no files, processes, sockets or foreign code (``_socket``
# and ``select``: see below).
_ALLOWED_EXTENSIONS = frozenset(
    "_bisect _blake2 _bz2 _contextvars _csv _datetime _decimal _elementtree _hashlib _heapq _json _lzma _md5 "
    "_multibytecodec _opcode _pickle _queue _random _sha1 _sha2 _sha3 _socket _statistics _struct _zoneinfo array "
    "audioop binascii cmath math pyexpat select unicodedata zlib _codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp "
    "_codecs_kr _codecs_tw".split()
)
# What routines may use since issue 28, each unable to reach the outside:
#   socket, _socket     imported only (by email.*, http.client, urllib.request, logging.handlers): every way out,
#                       socket(), connect, getaddrinfo, gethostname..., raises a socket.* audit event, refused below;
#                       the functions that read system files or interfaces in C with no event are removed
#                       (_REMOVED_SOCKET), and a fresh copy of a module the worker loaded is refused
#   select, selectors   wait on descriptors the routine holds already
#   concurrent.futures  threads; its process pool imports multiprocessing, still refused
#   atexit              registers functions for an exit a routine's process never reaches (it ends with _exit);
#                       logging imports it
#   symtable            the compiler's symbol tables of source the routine gives it
#   tracemalloc         traces the routine's own allocations
#   audioop             arithmetic on bytes
#   zoneinfo            reads the time zone database (the TZPATH folders: public data), read-only
#   getpass, mailbox,   import with termios, fcntl and ssl absent (an ImportError, below), as those modules allow;
#   http.client, ...    getpass.getuser() and os.path.expanduser() still read the environment (LOGNAME, USER, HOME):
#                       refused, as who runs the kit and where is not the routine's business (and pwd is absent)
#   the environment     the variables the standard library reads to configure itself read as unset (they are: the
#                       environment is empty), so that zoneinfo, sysconfig, gettext, xml.sax or pydoc import; any
#                       other read is still a breach (_SealedEnvironment)
# Modules whose import alone is a breach (their top-level name), including built-in ones, and a second copy of the
# interpreter's own ``posix`` and ``_imp`` (a fresh ``posix`` would bring back the functions the child removes).
_DENIED_MODULES = frozenset(
    "_posixsubprocess subprocess _ctypes ctypes _multiprocessing multiprocessing "
    "asyncio _asyncio _posixshmem _crypt crypt tty pty mmap "
    "_xxsubinterpreters _xxinterpchannels _interpreters _testcapi _testinternalcapi _testmultiphase "
    "_testsinglephase _ctypes_test _sqlite3 sqlite3 _dbm _gdbm readline _curses _curses_panel _tkinter syslog "
    "ossaudiodev _imp posix".split()
)
# Modules the standard library probes for (``try: import pwd``), which reach system files, terminals, daemons or the
# network in C: absent.
_UNAVAILABLE_MODULES = frozenset("pwd grp spwd nis _uuid termios fcntl ssl _ssl".split())
# The variables the standard library reads to configure itself (zoneinfo, sysconfig, gettext, locale, xml.sax,
# pydoc, shutil.get_terminal_size), which read as unset.
_UNSET_VARIABLES = frozenset(
    "PYTHONTZPATH PYTHONUSERBASE PYTHONDOCS _PYTHON_PROJECT_BASE _PYTHON_SYSCONFIGDATA_NAME _PYTHON_HOST_PLATFORM "
    "LANG LANGUAGE LC_ALL LC_CTYPE LC_MESSAGES PY_SAX_PARSER COLUMNS LINES".split()
)
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
# installed (Python code run by a signal could interrupt the hook before it ends the process); and from ``_socket``
# (and ``socket``): system files and network interfaces read in C.
_REMOVED_POSIX = (
    "mkfifo mknod pidfd_open setpriority sched_setaffinity sched_setscheduler sched_setparam setpgid setpgrp setsid "
    "setuid seteuid setreuid setresuid setgid setegid setregid setresgid setgroups initgroups tcsetpgrp"
).split()
_REMOVED_SIGNAL = ("signal", "pidfd_send_signal")
_REMOVED_SOCKET = ("getprotobyname", "if_nameindex", "if_nametoindex", "if_indextoname")
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
# A breach's message, and what the guard may say a routine tried besides _DENIED_EVENTS' (or one of
# _NAMED_ATTEMPTS): the worker believes no other breach report from a routine's process.
_BREACH = "the routine tried to {}, which routines may not do"
_ATTEMPTS = frozenset(what for _, what in _DENIED_EVENTS) | {
    "read outside its working directory",
    "write outside its working directory",
    "use a path that is not a str",
    "open an inherited file descriptor",
    "open a directory outside its working directory",
    "import a module by a name that is not a str",
    "start a thread, which would run between its session's calls",
    "call a removed function",
    "do something forbidden",
}
_NAMED_ATTEMPTS = re.compile(
    r"(?:import|call|load a fresh copy of) \S{1,200}|load native code \(\S{1,200}\)"
    r"|raise the audit event \S{1,200} in a way the sandbox could not check"
)
# How each failure's message begins in a reply from a routine's own process: its own code's failures and breaches.
# Timeouts, memory and deaths the worker finds out itself, so that a routine cannot claim one.
_ROUTINE_MESSAGES = {
    "syntax": ("the routine does not compile: ", "the routine defines no handle(body) function"),
    "crashed": ("the routine raised ",),
    "bad_return": ("handle(body) returned ",),
    "forbidden": ("the routine tried to ",),
}


# --- frames: a 4-byte big-endian length, then a JSON object in ASCII (every pipe, both ways) ------------------------

_encode = json.JSONEncoder(separators=(",", ":")).encode  # bound now: a routine may replace json's functions
_decode = json.JSONDecoder().decode


def write_frame(fd: int, message: dict, deadline: float | None = None) -> None:
    """Write ``message`` to ``fd`` as one frame; TimeoutError if a non-blocking ``fd`` has not taken it all by
    ``deadline`` (a ``time.monotonic`` time)."""
    payload = _encode(message).encode()
    view = memoryview(len(payload).to_bytes(4, "big") + payload)
    while view:
        if deadline is not None and not _ready(fd, deadline, select.POLLOUT):
            raise TimeoutError
        view = view[os.write(fd, view) :]


def read_frame(fd: int, deadline: float | None = None, limit: int = _MAX_FRAME) -> dict | None:
    """The message of the next frame on ``fd``; None if ``fd`` ends before a frame starts. ValueError for a frame
    cut short, longer than ``limit`` bytes, or not a JSON object; TimeoutError past ``deadline``."""
    header = _read_exactly(fd, 4, deadline)
    if not header:
        return None
    if len(header) < 4:
        raise ValueError("a frame cut short")
    size = int.from_bytes(header, "big")
    if size > limit:
        raise ValueError(f"a frame of {size:,} bytes, over {limit:,}")
    payload = _read_exactly(fd, size, deadline)
    if len(payload) < size:
        raise ValueError("a frame cut short")
    try:
        message = _decode(payload.decode())
    except RecursionError:
        raise ValueError("a frame nested too deep") from None
    if not isinstance(message, dict):
        raise ValueError("a frame that is not a JSON object")
    return message


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    """``size`` bytes from ``fd``, fewer if it ends first; TimeoutError past ``deadline``."""
    chunks, missing = [], size
    while missing:
        if deadline is not None and not _ready(fd, deadline, select.POLLIN):
            raise TimeoutError
        chunk = os.read(fd, min(missing, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


def _ready(fd: int, deadline: float, event: int) -> bool:
    """Whether ``fd`` is ready for ``event`` (or has ended) before ``deadline``. poll, not select: the kit's own
    descriptors may number past select's 1,024."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    poller = select.poll()
    poller.register(fd, event)
    return bool(poller.poll(math.ceil(remaining * 1000)))


# --- replies -----------------------------------------------------------------------------------------------------


def check_reply(reply: dict, *, from_routine: bool = False) -> str | None:
    """What is wrong with ``reply``, or None if nothing: a reply is ``{"result": text}``, at most ``MAX_TEXT_CHARS``
    characters, or ``{"reason": one of REASONS, "message": text}``, at most ``MAX_MESSAGE_CHARS``, a breach's naming
    an attempt the guard refuses. One ``from_routine`` (written by a routine's own process, which the routine may
    have forged) may give only the reasons of its own code, their messages beginning as the child's do."""
    if reply.keys() == {"result"}:
        result = reply["result"]
        if type(result) is not str:
            return f"a result that is a {type(result).__name__}, not a str"
        if len(result) > MAX_TEXT_CHARS:
            return f"a result of {len(result):,} characters, over {MAX_TEXT_CHARS:,}"
        return None
    if reply.keys() != {"reason", "message"}:
        return "neither a result nor a failure"
    reason, message = reply["reason"], reply["message"]
    if reason not in REASONS:
        return "an unknown reason"
    if from_routine and reason not in _ROUTINE_MESSAGES:
        return f"the reason {reason}, which only the sandbox finds out"
    if type(message) is not str or len(message) > MAX_MESSAGE_CHARS:
        return f"a message that is not a str of at most {MAX_MESSAGE_CHARS:,} characters"
    if from_routine and not message.startswith(_ROUTINE_MESSAGES[reason]):
        return f"a {reason} message unlike the sandbox's"
    if reason == "forbidden" and not _names_an_attempt(message):
        return "a breach the sandbox does not know"
    return None


def _names_an_attempt(message: str) -> bool:
    """Whether ``message`` is ``_BREACH`` naming something the guard refuses."""
    before, after = _BREACH.split("{}")
    if not (message.startswith(before) and message.endswith(after)):
        return False
    attempt = message[len(before) : len(message) - len(after)]
    return attempt in _ATTEMPTS or _NAMED_ATTEMPTS.fullmatch(attempt) is not None


def _failure(reason: str, message: str) -> dict:
    return {"reason": reason, "message": message}


def malformed(problem: str) -> dict:
    """The failure of a routine's process that wrote ``problem`` on its reply pipe."""
    return _failure("crashed", f"the routine's process wrote a malformed reply: {problem}")


def ran_past(timeout_s: float) -> dict:
    """The failure of a call stopped at its wall-clock safety net, ``timeout_s``."""
    return _failure("timeout", f"the routine ran past its {timeout_s:g} s and was stopped")


# --- removing a tree a routine built -----------------------------------------------------------------------------

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def remove_tree(path: str) -> None:
    """Remove the folder ``path`` and all it holds, however deep, whatever modes a routine gave its folders, never
    following a link: a loop down and back up through descriptors (two open at a time), so no recursion and no path
    longer than one name. Call it once no process writes in the tree; FileNotFoundError if ``path`` is gone."""
    folder = _open_folder(path, None)
    names, pending = [], [_clear_files(folder)]  # the folders from path down to folder; the subfolders each has left
    try:
        while pending[-1] or names:
            if pending[-1]:
                name = pending[-1].pop()
                inner = _open_folder(name, folder)
                os.close(folder)
                folder = inner
                names.append(name)
                pending.append(_clear_files(folder))
            else:
                outer = os.open("..", _FOLDER, dir_fd=folder)
                os.close(folder)
                folder = outer
                os.rmdir(names.pop(), dir_fd=folder)
                pending.pop()
    finally:
        os.close(folder)
    os.rmdir(path)


def _open_folder(name: str, parent: int | None) -> int:
    """A descriptor of the folder ``name`` (in the folder ``parent``, if given), never a link's target, whose owner
    may then list and empty it (a routine may have taken those rights away)."""
    try:
        folder = os.open(name, _FOLDER, dir_fd=parent)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=parent)  # a folder (scandir said so, not a link), with no one writing in the tree
        folder = os.open(name, _FOLDER, dir_fd=parent)
    os.fchmod(folder, 0o700)
    return folder


def _clear_files(folder: int) -> list[str]:
    """Unlink all that ``folder`` holds but its subfolders (files, links, pipes: never followed); their names."""
    with os.scandir(folder) as entries:
        listed = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for name, is_folder in listed:
        if not is_folder:
            os.unlink(name, dir_fd=folder)
    return [name for name, is_folder in listed if is_folder]


# --- the worker ------------------------------------------------------------------------------------------------


def _serve(directory: str, max_sessions: int, handover: int) -> None:
    """The worker's loop: one request in, one reply out, until its input ends; then its sessions' children end and
    its directory goes. A session child's pipes go to the kit on ``handover`` (a Unix socket)."""
    import socket

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
    channel = socket.socket(fileno=handover)
    number = 0
    while (request := read_frame(requests)) is not None:
        child = None
        if "close" in request:
            reply = sessions.close(request["close"])
        elif "ended" in request:
            reply = sessions.ended(request)
        elif "session" in request:
            reply, child = sessions.call(request)
        else:
            number += 1
            reply = _serve_call(request, os.path.join(directory, f"call-{number}"))
        write_frame(replies, reply)
        if child is not None:
            child.hand_over(channel)
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
    """One call in a child forked for it alone: its reply, or the failure it ended in."""
    child = _Child(request, workdir, session=False)
    try:
        return child.ask(request)
    finally:
        child.end()


def _remove_workdir(workdir: str) -> None:
    try:
        remove_tree(workdir)
    except OSError:
        pass  # what is left goes with the worker's directory, or the pool removes it


class _Sessions:
    """The worker's session children, by session key, oldest first; at most ``limit`` live. The kit names the
    sessions to evict (``evict``: the least recently used, which only the kit sees once it calls them directly)."""

    def __init__(self, directory: str, limit: int):
        self.directory, self.limit = directory, limit
        self.children: dict[object, _Child] = {}  # insertion order is start order
        self.started = 0

    def call(self, request: dict) -> tuple[dict, "_Child | None"]:
        """A session's first call: its child, forked now, runs ``handle(body)``; a failure ends it. The reply, and
        the child whose pipes go to the kit (None when it failed)."""
        for key in request.get("evict", ()):
            self.close(key)
        self.close(request["session"])  # a child the kit no longer reaches
        while len(self.children) >= self.limit:  # the kit named none: the oldest
            self.children.pop(next(iter(self.children))).end()
        self.started += 1
        child = _Child(request, os.path.join(self.directory, f"session-{self.started}"), session=True)
        reply = child.ask(request)
        if "result" not in reply:
            child.end()
            return reply, None
        self.children[request["session"]] = child
        return reply, child

    def ended(self, request: dict) -> dict:
        """How a session's child ended, once the kit found its pipes closed (by ``wait_s`` from now), or ``gone``:
        the worker ended it (evicted, or the session's first call of a fresh worker)."""
        child = self.children.pop(request["ended"], None)
        if child is None:
            return {"gone": True}
        return child.ending(request, time.monotonic() + request["wait_s"])

    def close(self, key: object) -> dict:
        child = self.children.pop(key, None)
        if child is not None:
            child.end()
        return {"closed": child is not None}

    def close_all(self) -> None:
        while self.children:
            self.children.popitem()[1].end()


class _Child:
    """A process forked to run one routine, confined, in a fresh directory: a call's answers once and exits, a
    session's compiles the routine once and answers each body the worker sends it. Either answers on a pipe of its
    own, which the worker reads as untrusted."""

    def __init__(self, request: dict, workdir: str, *, session: bool):
        os.mkdir(workdir, 0o700)
        self.workdir, self.calls = workdir, 0
        self.cpu_s = (math.ceil(request["timeout_s"]) + 1) * (SESSION_CALLS if session else 1)
        self.replies, replies_out = os.pipe()
        bodies_in, self.bodies = os.pipe() if session else (None, None)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                if session:
                    _close_all_but(bodies_in, replies_out)
                    _serve_session_in_child(request, workdir, self.cpu_s, bodies_in, replies_out)
                else:
                    _close_all_but(replies_out)
                    _run_in_child(request, workdir, self.cpu_s, replies_out)
            finally:
                os._exit(1)
        os.close(replies_out)
        if session:
            os.close(bodies_in)
            os.set_blocking(self.bodies, False)  # a child that stops reading cannot block the worker

    def ask(self, request: dict) -> dict:
        """The child's reply to ``request`` (a session's child is sent the body first) within the call's time, once
        checked; else the failure it ended in (it is then gone)."""
        deadline = time.monotonic() + request["timeout_s"]
        self.calls += 1
        try:
            if self.bodies is not None:
                write_frame(self.bodies, {"body": request["body"]}, deadline)
            reply = read_frame(self.replies, deadline, MAX_REPLY_FRAME)
        except TimeoutError:
            self.end()
            return ran_past(request["timeout_s"])
        except BrokenPipeError:
            reply = None  # it ended before reading its body: how it ended says why
        except ValueError as error:
            self.end()
            return malformed(str(error))
        if reply is None:
            return self.ending(request, deadline)
        problem = check_reply(reply, from_routine=True)
        if problem is not None:
            self.end()
            return malformed(problem)
        if "reason" in reply:
            self.end()
        return reply

    def hand_over(self, channel) -> None:
        """Send the kit this session child's pipes (the end it writes bodies to, the end it reads replies from) and
        close the worker's copies: the kit calls the child directly, and the worker keeps its process (to end it and
        say how it ended)."""
        import socket

        socket.send_fds(channel, [b"\0"], [self.bodies, self.replies])
        os.close(self.bodies)
        os.close(self.replies)
        self.bodies = self.replies = None

    def ending(self, request: dict, deadline: float) -> dict:
        """The failure of a child that ended its replies with none: how it ends, by ``deadline``."""
        ended = _wait_for_end(self.pid, deadline)
        self.pid = None
        self.end()
        if ended is None:
            return ran_past(request["timeout_s"])
        status, cpu_used = ended
        return _describe_end(status, cpu_used, self.cpu_s, request["memory_mb"], request["max_lines"])

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
        if self.workdir is not None:
            _remove_workdir(self.workdir)
            self.workdir = None


def _close_all_but(*kept: int) -> None:
    """In a forked child: close every descriptor above stderr except ``kept``, so that no routine holds the worker's
    pipes or another session's."""
    low = 3
    for fd in sorted(kept):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def _wait_for_end(pid: int, deadline: float) -> tuple[int, float] | None:
    """The child's wait status and the CPU time it used, once it ends; None if it still runs at ``deadline`` (it is
    then killed)."""
    try:  # Linux 5.3 on: wait on a descriptor of the child
        pidfd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        pidfd = None
    pause = 0.0001
    try:
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return status, usage.ru_utime + usage.ru_stime
            if time.monotonic() >= deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            if pidfd is not None:
                _ready(pidfd, deadline, select.POLLIN)
            else:
                time.sleep(pause)
                pause = min(2 * pause, 0.01)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _describe_end(status: int, cpu_used: float, cpu_s: int, memory_mb: int, max_lines: int) -> dict:
    """The failure of a child that ended without a reply, from its wait status and the CPU time it used: a signal is
    named, unless it is the CPU limit's (SIGXCPU, or SIGKILL at the hard limit ``cpu_s``) and the child did use up
    its CPU time; an exit status is the guard's (a breach it could not report), the memory's, the line budget's, or
    a crash."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number in (signal.SIGXCPU, signal.SIGKILL) and cpu_used >= cpu_s - _CPU_SLACK_S:
            return _failure("timeout", f"the routine used up its {cpu_s} s of CPU time and was stopped")
        return _failure("crashed", f"the routine's process was killed by signal {_signal_name(number)}")
    code = os.waitstatus_to_exitcode(status)
    if code == _EXIT_FORBIDDEN:
        return _failure("forbidden", _BREACH.format("do something forbidden"))
    if code == _EXIT_MEMORY:
        return _failure("memory", f"the routine ran out of its {memory_mb} MB of memory")
    if code == _EXIT_BUDGET:
        return _failure("budget", f"the routine ran past its budget of {max_lines:,} lines and was stopped")
    return _failure("crashed", f"the routine's process ended with status {code} and no reply")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # a real-time signal has no name of its own
        return str(number)


# --- the child ---------------------------------------------------------------------------------------------------


def _run_in_child(request: dict, workdir: str, cpu_s: int, out: int) -> None:
    """In the forked child: confine this process, run the routine, write its reply to ``out`` and exit."""
    import builtins
    import posix

    exit_now = posix._exit  # bound now: a routine may replace os's functions
    count_lines = _confine(request, workdir, out, cpu_s, threads=True)
    try:
        count_lines(request["max_lines"])  # the routine's module and its call, together
        reply = _call_handle(request["source"], request["body"], builtins)
        count_lines(None)
        write_frame(out, reply)
    except MemoryError:
        exit_now(_EXIT_MEMORY)
    exit_now(0)


def _serve_session_in_child(request: dict, workdir: str, cpu_s: int, bodies: int, out: int) -> None:
    """In a session's forked child: confine this process, load the routine once, then answer each body on ``bodies``
    with a reply on ``out``, until the worker closes ``bodies``.

    Its CPU limit covers all the calls it may serve (``SESSION_CALLS``), and it may not start threads, which would
    run between calls, outside any call's time limit. The routine's module runs within one line budget, each call
    within another: the lines that read a body and write a reply, which vary with how the pipe delivers them, are
    not counted.
    """
    import builtins
    import posix

    exit_now = posix._exit
    count_lines = _confine(request, workdir, out, cpu_s, threads=False)
    try:
        count_lines(request["max_lines"])
        handle, failure = _load_routine(request["source"], builtins)
        count_lines(None)
        while (message := read_frame(bodies)) is not None:
            count_lines(request["max_lines"])
            reply = failure or call_loaded(handle, message["body"])
            count_lines(None)
            write_frame(out, reply)
    except MemoryError:
        exit_now(_EXIT_MEMORY)
    exit_now(0)


def _confine(request: dict, workdir: str, out: int, cpu_s: int, *, threads: bool) -> Callable[[int | None], None]:
    """Confine this forked child: its directory, no denied modules or removed functions, a sealed environment,
    ``random`` seeded with 0, its limits, the line budget (whose setter it returns) and the audit hook (which reports
    breaches on ``out``)."""
    import _signal
    import _socket
    import posix
    import random
    import socket

    os.chdir(workdir)
    gone = (_DENIED_MODULES | _UNAVAILABLE_MODULES) - {"posix", "_imp"}  # pwd, which the worker's imports loaded
    for name in [name for name in sys.modules if name.partition(".")[0] in gone]:
        del sys.modules[name]
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # no Python handler left to interrupt the hook
    removals = ((posix, os, _REMOVED_POSIX), (_signal, signal, _REMOVED_SIGNAL), (_socket, socket, _REMOVED_SOCKET))
    for module, public, names in removals:
        for name in names:  # gone: nothing left in the process refers to them
            if hasattr(module, name):
                setattr(module, name, _removed(f"{public.__name__}.{name}"))
                setattr(public, name, getattr(module, name))
    os.environ = os.environb = posix.environ = _SealedEnvironment()
    random.seed(0)
    _limit_resources(cpu_s, request["memory_mb"])
    count_lines = _line_budget(posix._exit)
    sys.addaudithook(_guard(workdir, out, threads))
    return count_lines


def _line_budget(exit_now: Callable[[int], None]) -> Callable[[int | None], None]:
    """Count every line of Python this process runs (``sys.monitoring``'s LINE events: the routine's, and the
    standard library's it calls), and every jump back to the start of a loop (JUMP events: a loop on one line,
    ``while True: pass``, runs no new line), and end it with ``_EXIT_BUDGET`` once a call has run its budget;
    returns the setter, ``count_lines(n)`` to allow the next ``n`` lines, ``count_lines(None)`` to stop counting.

    Why lines, not time: the same source on the same body runs the same lines on any machine under any load, so a
    routine that runs out does so on every run, at the same line (a count of CPU time would vary with the load's
    cache effects, wall time far more). Work done in C within a line (a sort, a regular expression) counts as one
    line: the wall clock and ``RLIMIT_CPU`` bound it. The budget is a measure, not a guard: a routine that reaches
    the counter through the interpreter's frames can escape it, and then only the wall clock stops it (reported as a
    ``timeout``). ``sys.monitoring`` is removed from ``sys`` once the count starts, so that the routine cannot simply
    switch it off, and registering a callback is refused by the audit hook.
    """
    monitoring = sys.monitoring
    left = [_UNCOUNTED]

    def line(*_event) -> None:  # a LINE event (code, line) or a JUMP event (code, from, to)
        left[0] -= 1
        if left[0] < 0:
            exit_now(_EXIT_BUDGET)

    def count_lines(lines: int | None) -> None:
        left[0] = _UNCOUNTED if lines is None else lines

    monitoring.use_tool_id(_BUDGET_TOOL, "coordkit line budget")
    monitoring.register_callback(_BUDGET_TOOL, monitoring.events.LINE, line)
    monitoring.register_callback(_BUDGET_TOOL, monitoring.events.JUMP, line)
    monitoring.set_events(_BUDGET_TOOL, monitoring.events.LINE | monitoring.events.JUMP)
    del sys.monitoring
    return count_lines


def _call_handle(source: str, body: str, builtins) -> dict:
    """Compile and run the routine; its result, or the failure it ends in (MemoryError propagates)."""
    handle, failure = _load_routine(source, builtins)
    return failure or call_loaded(handle, body)


def _load_routine(source: str, builtins) -> tuple[object, dict | None]:
    """Compile and run the routine's module: its ``handle`` and None, or None and the failure it ends in."""
    try:
        code = compile(source, "<routine>", "exec")
    except (SyntaxError, ValueError) as error:
        return None, _failure("syntax", f"the routine does not compile: {describe_exception(error)}")
    namespace = {"__name__": "routine", "__builtins__": builtins}
    try:
        exec(code, namespace)
    except MemoryError:
        raise
    except BaseException as error:
        return None, _failure("crashed", f"the routine raised {describe_exception(error)}")
    handle = namespace.get("handle")
    if not callable(handle):
        return None, _failure("syntax", "the routine defines no handle(body) function")
    return handle, None


def call_loaded(handle, body: str, caught: type[BaseException] = BaseException) -> dict:
    """``handle(body)`` as a reply: its result, or the failure it ends in, for what it raises of ``caught``
    (MemoryError propagates; the kit's process, calling the rule-based programmer's routines, lets an interrupt
    through: :mod:`~coordkit.agora.in_process`)."""
    try:
        result = handle(body)
    except MemoryError:
        raise
    except caught as error:
        return _failure("crashed", f"the routine raised {describe_exception(error)}")
    if not isinstance(result, str):
        return _failure("bad_return", f"handle(body) returned {type(result).__name__[:100]}, not str")
    if len(result) > MAX_TEXT_CHARS:
        return _failure("bad_return", f"handle(body) returned {len(result):,} characters, over {MAX_TEXT_CHARS:,}")
    return {"result": str.__str__(result)}


def describe_exception(error: BaseException) -> str:
    try:
        text = str(error)
    except BaseException:
        text = ""
    name = type(error).__name__[:100]
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
    """An empty environment (the process's real one is empty too) whose every read is a breach, except a look-up of
    one of the variables the standard library reads to configure itself (``_UNSET_VARIABLES``), which is unset."""

    def __getitem__(self, key):
        self._look_up(key)
        raise KeyError(key)

    def get(self, key, default=None):
        self._look_up(key)
        return default

    def __contains__(self, key) -> bool:
        self._look_up(key)
        return False

    def _look_up(self, key) -> None:
        name = key.decode("utf-8", "surrogateescape") if isinstance(key, bytes) else key
        if not isinstance(name, str) or name not in _UNSET_VARIABLES:
            sys.audit("coordkit.environ")

    def _refuse(self, *args, **kwargs):
        sys.audit("coordkit.environ")

    __iter__ = __len__ = keys = items = values = copy = _refuse
    __setitem__ = __delitem__ = setdefault = pop = update = _refuse


def _guard(workdir: str, out: int, threads: bool):
    """The audit hook: refuses the breaches of the module's threat model (and new threads unless ``threads``),
    reporting each on ``out`` and ending the process at once.

    Everything it uses is bound here, as closure variables, so that a routine that replaces ``os.path``,
    ``builtins.isinstance`` or ``json`` cannot change its judgement or its report.
    """
    import _json  # an extension module in the usual builds: its directory is where they all are
    import _stat
    import posix
    import zoneinfo
    from json.encoder import encode_basestring_ascii as quote

    stdlib = os.path.dirname(os.__file__)
    dynload = os.path.dirname(getattr(_json, "__file__", os.path.join(stdlib, "lib-dynload", "_json")))
    site = os.path.join(stdlib, "site-packages")
    time_zones = tuple(posix._path_normpath(folder) for folder in zoneinfo.TZPATH)
    loaded = frozenset(sys.modules)  # no fresh copy of these: a fresh _socket would bring back what the child removed
    normpath, stat, is_regular = posix._path_normpath, posix.stat, _stat.S_ISREG
    write, exit_now, breach = posix.write, posix._exit, _BREACH.format
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

    def readable(where: str) -> bool:
        """Outside its directory, a routine may read the standard library and the time zone database."""
        if inside(where, stdlib) and not inside(where, site):
            return True
        return any_of(inside(where, folder) for folder in time_zones)

    def check_path(path, writes: bool) -> str | None:
        if path is None and not writes:
            return None  # the working directory
        where = resolve(path)
        if where is None:
            return "use a path that is not a str"
        if inside(where, workdir) or (not writes and readable(where)):
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
                if name in loaded:
                    return f"load a fresh copy of {name}"
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

    def report(why: str) -> None:
        """Tell the worker what the routine tried, in one frame made with what was bound above."""
        payload = ('{"reason":"forbidden","message":' + quote(breach(why)) + "}").encode()
        frame = len_of(payload).to_bytes(4, "big") + payload
        while frame:
            frame = frame[write(out, frame) :]

    def hook(event: str, args: tuple) -> None:
        if event == "import" and type_of(args[0]) is str_type and args[0] in unavailable:
            raise import_error(f"{args[0]} is not available to routines")
        try:
            why = refusal(event, args)
        except any_error:
            why = f"raise the audit event {event} in a way the sandbox could not check"
        if why is not None:
            try:
                report(why)
            finally:
                exit_now(forbidden_status)

    return hook


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
