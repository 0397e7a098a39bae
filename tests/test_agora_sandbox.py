"""The routine sandbox (issue 12): each threat of ``coordkit.agora.sandbox``'s model ends in ``RoutineError``, in a
call's own process (``run_routine``) and in a session's (``RoutineSession``).

No network is needed: the routines that reach for it are stopped before they touch it. The time bounds asserted
below are the sandbox's own limits (the routine's ``timeout_s`` plus the parent's grace), not speed targets; those are
``benchmarks/bench_agora_sandbox.py``'s. A routine that computes too long is stopped by its line budget
(``max_lines``), the same on every run; the wall clock's ``timeout_s`` is tested with routines that sleep, which the
budget does not count, so that no outcome below depends on how busy the machine is.
"""

import gc
import os
import resource
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from coordkit.agora import routines
from coordkit.agora.sandbox import (
    _GRACE_S,
    DEFAULT_MAX_LINES,
    DEFAULT_TIMEOUT_S,
    REASONS,
    RoutineError,
    SandboxPool,
    routine_session,
    run_routine,
)
from coordkit.agora.sandbox_worker import (
    SESSION_CALLS,
    _describe_end,
    check_reply,
    read_frame,
    remove_tree,
    write_frame,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the sandbox forks: POSIX only")

SECRET = "sk-test-0123456789-do-not-leak"
ECHO = "def handle(body):\n    return body\n"
ESCAPE = f"/tmp/coordkit-escape-{os.getpid()}"  # where the routines below try to write


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(2) as pool:
        yield pool


def routine(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


def refused(
    pool: SandboxPool,
    source: str,
    reason: str,
    *,
    max_lines: int = DEFAULT_MAX_LINES,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    memory_mb: int = 64,
) -> str:
    """Run ``source``, expect ``RoutineError(reason)`` within the call's limits, and return its message."""
    start = time.monotonic()
    with pytest.raises(RoutineError) as caught:
        pool.run(routine(source), "{}", max_lines=max_lines, timeout_s=timeout_s, memory_mb=memory_mb)
    assert time.monotonic() - start < timeout_s + _GRACE_S
    assert caught.value.reason == reason, caught.value
    assert caught.value.reason in REASONS
    assert SECRET not in str(caught.value)
    return caught.value.message


# --- the threat model, one threat at a time -------------------------------------------------------------------------

THREATS = {
    "infinite loop": ("def handle(body):\n    while True:\n        pass", "budget"),
    "infinite loop on one line": ("def handle(body):\n    while True: pass", "budget"),  # no new line: its jumps
    "endless generator": ("def handle(body):\n    return sum(1 for _ in iter(int, 1))", "budget"),
    "sleeping forever": ("import time\ndef handle(body):\n    time.sleep(3600)", "timeout"),
    "loop that blocks SIGXCPU": (
        "import signal\ndef handle(body):\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGXCPU})\n"
        "    while True:\n        pass",
        "budget",
    ),
    "signal handler": ("import signal\ndef handle(body):\n    signal.signal(signal.SIGALRM, print)", "forbidden"),
    "memory bomb at once": ("def handle(body):\n    return str(len(bytearray(1 << 34)))", "memory"),
    "memory bomb by steps": (
        "def handle(body):\n    hoard = []\n    while True:\n        hoard.append(bytearray(1 << 20))",
        "memory",
    ),
    "environment: os.environ": ("import os\ndef handle(body):\n    return os.environ['OPENAI_API_KEY']", "forbidden"),
    "environment: os.getenv": ("import os\ndef handle(body):\n    return str(os.getenv('ANY_KEY'))", "forbidden"),
    "environment: /proc/self/environ": ("def handle(body):\n    return open('/proc/self/environ').read()", "forbidden"),
    "environment: the parent's": (
        "import os\ndef handle(body):\n    return open(f'/proc/{os.getppid()}/environ').read()",
        "forbidden",
    ),
    "write outside: absolute": ("def handle(body):\n    open('ESCAPE', 'w').write('x')", "forbidden"),
    "write outside: ..": ("def handle(body):\n    open('../../ESCAPE_NAME', 'w').write('x')", "forbidden"),
    "write outside: os.open": (
        "import os\ndef handle(body):\n    os.open('ESCAPE', os.O_WRONLY | os.O_CREAT)",
        "forbidden",
    ),
    "write outside: rename": (
        "import os\ndef handle(body):\n    open('x', 'w').close()\n    os.rename('x', 'ESCAPE')",
        "forbidden",
    ),
    "write outside: symlink": ("import os\ndef handle(body):\n    os.symlink('/tmp', 'tmp')", "forbidden"),
    "write outside: fifo": ("import os\ndef handle(body):\n    os.mkfifo('ESCAPE')", "forbidden"),
    "read outside": ("def handle(body):\n    return open('/etc/hostname').read()", "forbidden"),
    "list outside": ("import os\ndef handle(body):\n    return str(os.listdir('/'))", "forbidden"),
    "socket module": ("import socket\ndef handle(body):\n    return str(socket.socket())", "forbidden"),
    "socket extension": ("import _socket\ndef handle(body):\n    return str(_socket.socket())", "forbidden"),
    "http client": (
        "import urllib.request\ndef handle(body):\n    return urllib.request.urlopen('http://example.com').read()",
        "forbidden",
    ),
    "process: os.system": ("import os\ndef handle(body):\n    return str(os.system('true'))", "forbidden"),
    "process: fork": ("import os\ndef handle(body):\n    return str(os.fork())", "forbidden"),
    "process: posix_spawn": (
        "import os\ndef handle(body):\n    return str(os.posix_spawn('/bin/true', ['true'], {}))",
        "forbidden",
    ),
    "process: exec": ("import os\ndef handle(body):\n    os.execv('/bin/true', ['true'])", "forbidden"),
    "process: subprocess": ("import subprocess\ndef handle(body):\n    return subprocess.getoutput('id')", "forbidden"),
    "process: multiprocessing": ("import multiprocessing\ndef handle(body):\n    return 'x'", "forbidden"),
    "process: signal the worker": ("import os\ndef handle(body):\n    os.kill(os.getppid(), 9)", "forbidden"),
    "process: signal through a pidfd": (
        "import os, signal\ndef handle(body):\n    signal.pidfd_send_signal(os.pidfd_open(os.getppid()), 0)",
        "forbidden",
    ),
    "process: reprioritise the worker": (
        "import os\ndef handle(body):\n    os.setpriority(os.PRIO_PROCESS, os.getppid(), 19)",
        "forbidden",
    ),
    "process: leave the session": ("import os\ndef handle(body):\n    os.setsid()", "forbidden"),
    "native: ctypes": ("import ctypes\ndef handle(body):\n    return str(ctypes.CDLL(None))", "forbidden"),
    "native: _imp.create_dynamic": (
        """
        import _imp, importlib.machinery, os
        def handle(body):
            path = os.path.join(os.path.dirname(os.__file__), 'lib-dynload', '_ctypes.so')
            return str(_imp.create_dynamic(importlib.machinery.ModuleSpec('_ctypes', None, origin=path)))
        """,
        "forbidden",
    ),
    "native: a library written in its directory": (
        """
        import sys
        def handle(body):
            open('evil.cpython-312-x86_64-linux-gnu.so', 'wb').write(b'not really a library')
            open('evil.so', 'wb').write(b'not really a library')
            sys.path.insert(0, '.')
            import evil
            return 'loaded'
        """,
        "forbidden",
    ),
    "native: code from bytes": (
        "def handle(body):\n    return str((lambda: 1).__code__.replace(co_consts=(2,)))",
        "forbidden",
    ),
    "native: marshal": ("import marshal\ndef handle(body):\n    return str(marshal.loads(b'\\xe3'))", "forbidden"),
    # issue 28: the modules a routine may now import reach nothing where they are used
    "environment: getpass.getuser": ("import getpass\ndef handle(body):\n    return getpass.getuser()", "forbidden"),
    "network: the host's name": ("import socket\ndef handle(body):\n    return socket.gethostname()", "forbidden"),
    "network: a name look-up": (
        "import socket\ndef handle(body):\n    return str(socket.getaddrinfo('example.com', 80))",
        "forbidden",
    ),
    "network: a look-up with no audit event": (
        "import socket\ndef handle(body):\n    return str(socket.getprotobyname('tcp'))",
        "forbidden",
    ),
    "network: the interfaces": (
        "import _socket\ndef handle(body):\n    return str(_socket.if_nameindex())",
        "forbidden",
    ),
    "network: a message id (the host's name)": (
        "import email.utils\ndef handle(body):\n    return email.utils.make_msgid()",
        "forbidden",
    ),
    "native: a fresh copy of _socket": (
        "import sys\ndel sys.modules['_socket']\nimport _socket\n"
        "def handle(body):\n    return str(_socket.if_nameindex())",
        "forbidden",
    ),
    "read outside: through zoneinfo's path": (
        "import zoneinfo\ndef handle(body):\n"
        "    zoneinfo.reset_tzpath(['/etc'])\n    return str(zoneinfo.ZoneInfo('hostname'))",
        "forbidden",
    ),
    "read outside: pwd stays absent": ("import pwd\ndef handle(body):\n    return str(pwd.getpwuid(0))", "crashed"),
    "process: a process pool": (
        "import concurrent.futures\ndef handle(body):\n    return str(concurrent.futures.ProcessPoolExecutor())",
        "forbidden",
    ),
    "open an inherited descriptor": ("def handle(body):\n    return open(0).read()", "forbidden"),
}


def threat(name: str) -> str:
    """The source of the threat ``name``, aimed at ``ESCAPE``."""
    return THREATS[name][0].replace("ESCAPE_NAME", Path(ESCAPE).name).replace("ESCAPE", ESCAPE)


def limits(reason: str) -> dict:
    """Limits under which a threat meets the one that stops it: a short wall clock for a sleep, a small budget for a
    loop, otherwise the defaults (a wall clock of 30 s, which nothing else reaches on any machine)."""
    if reason == "timeout":
        return {"timeout_s": 0.5}
    return {"max_lines": 10_000} if reason == "budget" else {}


@pytest.mark.parametrize("name", THREATS)
def test_each_threat_ends_in_a_routine_error_within_its_limits(pool, name):
    reason = THREATS[name][1]
    refused(pool, threat(name), reason, **limits(reason))
    assert not Path(ESCAPE).exists()


def test_messages_name_what_happened(pool):
    assert "environment" in refused(pool, threat("environment: os.environ"), "forbidden")
    assert "outside its working directory" in refused(pool, threat("write outside: absolute"), "forbidden")
    assert "socket" in refused(pool, threat("socket module"), "forbidden")
    assert "start a process" in refused(pool, threat("process: os.system"), "forbidden")
    assert "0.5 s" in refused(pool, threat("sleeping forever"), "timeout", timeout_s=0.5)
    assert "10,000 lines" in refused(pool, threat("infinite loop"), "budget", max_lines=10_000)
    assert "16 MB" in refused(pool, threat("memory bomb by steps"), "memory", memory_mb=16)


def test_the_parents_secrets_never_reach_a_routine(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with SandboxPool(1) as fresh:  # started after the secret was set
        for name in ("environment: os.environ", "environment: /proc/self/environ", "environment: the parent's"):
            refused(fresh, threat(name), "forbidden")
        # beneath the guard, the worker's environment never held it: it started with the hash seed alone
        worker = Path(f"/proc/{fresh._workers[0].process.pid}/environ")
        if worker.exists():
            assert worker.read_bytes() == b"PYTHONHASHSEED=0\0"


def test_a_breach_cannot_be_caught_or_hidden(pool):
    refused(
        pool,
        """
        def handle(body):
            try:
                open('/etc/hostname').read()
            except BaseException:
                pass
            return 'nothing happened'
        """,
        "forbidden",
    )


def test_monkeypatching_cannot_fool_the_guard(pool):
    refused(
        pool,
        """
        import builtins, os, posixpath, json
        builtins.isinstance = lambda *args: True
        builtins.any = lambda *args: False
        os.path.normpath = posixpath.normpath = lambda path: 'inside'
        os.fspath = lambda path: 'inside'
        json.dumps = lambda *args, **kwargs: '{"result": "fooled"}'
        def handle(body):
            return open('/etc/hostname').read()
        """,
        "forbidden",
    )


def test_routines_may_compute_import_the_stdlib_and_use_their_directory(pool):
    source = routine(
        """
        import json, statistics, difflib, xml.etree.ElementTree as ElementTree
        def handle(body):
            query = json.loads(body)
            with open('scratch.txt', 'w') as scratch:
                scratch.write(query['city'])
            with open('scratch.txt') as scratch:
                city = scratch.read()
            ElementTree.fromstring('<a/>')
            return json.dumps({'city': city, 'mean': statistics.mean(query['temperatures'])})
        """
    )
    assert pool.run(source, '{"city": "London, UK", "temperatures": [10, 12, 14]}') == (
        '{"city": "London, UK", "mean": 12}'
    )


def test_bodies_and_results_pass_verbatim(pool):
    for body in ("", "ünïcödé ☂ 𝄞", "\x00\n\t\"'\\", "\udcff lone surrogate", "x" * 100_000):
        assert pool.run(ECHO, body) == body
    assert run_routine(ECHO, "through the default pool") == "through the default pool"


def test_each_call_gets_a_fresh_directory_and_fresh_modules(pool):
    first = routine(
        """
        import json, os
        json.dumps = lambda *args, **kwargs: 'patched'
        def handle(body):
            open('left-behind.txt', 'w').write('x')
            return str(os.listdir('.'))
        """
    )
    second = routine(
        """
        import json, os
        def handle(body):
            return json.dumps(os.listdir('.'))
        """
    )
    for _ in range(3):  # the same worker serves both (pool of 2, calls in sequence)
        pool.run(first, "")
        assert pool.run(second, "") == "[]"


@pytest.mark.parametrize(
    ("source", "reason", "words"),
    [
        ("def handle(body):\n    return 3\n", "bad_return", "int, not str"),
        ("def handle(body):\n    pass\n", "bad_return", "NoneType, not str"),
        ("def handle(body):\n    return 'x' * 2_000_000\n", "bad_return", "characters"),
        ("def handle(body:\n    return body\n", "syntax", "does not compile"),
        ("x = 1\n", "syntax", "no handle(body)"),
        ("def handle(body):\n    raise ValueError('no such city')\n", "crashed", "ValueError: no such city"),
        ("import sys\ndef handle(body):\n    sys.exit(3)\n", "crashed", "SystemExit"),
        ("import os\ndef handle(body):\n    os._exit(5)\n", "crashed", "status 5"),
        ("import os, signal\ndef handle(body):\n    os.abort()\n", "crashed", "SIGABRT"),
    ],
)
def test_bad_routines_get_the_right_reason(pool, source, reason, words):
    with pytest.raises(RoutineError) as caught:
        pool.run(source, "{}")
    assert caught.value.reason == reason
    assert words in caught.value.message


def test_the_worker_survives_breaches_and_a_dead_worker_is_replaced():
    with SandboxPool(1) as single:
        assert single.run(ECHO, "before") == "before"
        pid = single._workers[0].process.pid
        for name in ("process: fork", "memory bomb at once", "native: ctypes"):
            with pytest.raises(RoutineError):
                single.run(routine(threat(name)), "")
        assert single.run(ECHO, "after") == "after"
        assert single._workers[0].process.pid == pid  # the breaches killed a forked child each, not the worker
        os.kill(pid, signal.SIGKILL)
        single._workers[0].process.wait()
        assert single.run(ECHO, "replaced") == "replaced"
        assert single._workers[0].process.pid != pid


def test_routines_never_run_in_the_kits_process(pool):
    assert int(pool.run("import os\ndef handle(body):\n    return str(os.getpid())\n", "")) != os.getpid()


def test_output_depends_only_on_source_and_body():
    source = routine(
        """
        import random
        def handle(body):
            words = set(body.split())
            return f"{random.random()} {hash(body)} {list(words)} {id(words) % 1}"
        """
    )
    body = "sunny cloudy rainy snowy windy foggy"
    with SandboxPool(1) as one, SandboxPool(1) as other:
        answers = {one.run(source, body), one.run(source, body), other.run(source, body)}
    assert len(answers) == 1


def test_the_pool_serves_several_threads(pool):
    results, errors = {}, []

    def work(k: int) -> None:
        try:
            results[k] = pool.run("def handle(body):\n    return body.upper()\n", f"call {k}")
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert results == {k: f"CALL {k}" for k in range(12)}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="network namespaces are Linux's")
def test_workers_sit_in_their_own_network_namespace_where_linux_allows(pool):
    try:
        os.stat("/proc/self/ns/net")
    except OSError:
        pytest.skip("no /proc/self/ns")
    if not pool.network_namespace:
        pytest.skip("this kernel or container does not allow unshare(CLONE_NEWNET): the audit hook stands alone")
    assert pool.network_namespace


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"source": 3, "body": ""}, TypeError),
        ({"source": ECHO, "body": b"bytes"}, TypeError),
        ({"source": ECHO, "body": "", "max_lines": 0}, ValueError),
        ({"source": ECHO, "body": "", "max_lines": 10**9}, ValueError),
        ({"source": ECHO, "body": "", "max_lines": 1.5}, ValueError),
        ({"source": ECHO, "body": "", "timeout_s": 0}, ValueError),
        ({"source": ECHO, "body": "", "timeout_s": 1000}, ValueError),
        ({"source": ECHO, "body": "", "timeout_s": True}, ValueError),
        ({"source": ECHO, "body": "", "memory_mb": 0}, ValueError),
        ({"source": ECHO, "body": "", "memory_mb": 1.5}, ValueError),
        ({"source": ECHO, "body": "", "memory_mb": 100_000}, ValueError),
        ({"source": ECHO, "body": "x" * 1_000_001}, ValueError),
    ],
)
def test_bad_arguments_get_clear_errors(pool, arguments, error):
    with pytest.raises(error, match="routine|max_lines|timeout_s|memory_mb"):
        pool.run(**arguments)


def test_a_closed_pool_refuses_calls():
    closed = SandboxPool(1)
    closed.close()
    with pytest.raises(RuntimeError, match="closed"):
        closed.run(ECHO, "")
    with pytest.raises(ValueError, match="1 to 64"):
        SandboxPool(0)


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # the fork is the test
def test_a_forked_copy_of_the_kit_gets_its_own_workers(pool):
    assert pool.run(ECHO, "parent") == "parent"
    workers = [worker for worker in pool._workers if worker is not None]
    parents = {worker.process.pid for worker in workers}
    child = os.fork()
    if child == 0:  # pragma: no cover - reported through the exit status
        ok = (
            not any(pool._workers)
            and pool.run(ECHO, "child") == "child"
            and pool._workers[0].process.pid not in parents
        )
        pool.close()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert all(worker.process.poll() is None for worker in workers)  # the child's close() left them alone
    assert pool.run(ECHO, "parent again") == "parent again"


# --- sessions: one process for many calls of one routine ------------------------------------------------------------

COUNTER = "calls = 0\ndef handle(body):\n    global calls\n    calls += 1\n    return f'{calls} {body}'\n"


def session_threat(name: str) -> str:
    """The threat ``name`` as a routine that answers the body "safe" and runs the threat, module and all, on others."""
    return routine(
        f"""
        THREAT = {routine(threat(name))!r}
        def handle(body):
            if body == 'safe':
                return 'safe'
            namespace = {{}}
            exec(THREAT, namespace)
            return namespace['handle'](body)
        """
    )


def session_children(pool: SandboxPool, slot: int = 0) -> list[int]:
    """The processes the worker of ``slot`` has forked and not yet reaped (Linux's /proc)."""
    pid = pool._workers[slot].process.pid
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if not children.exists():
        pytest.skip("no /proc/<pid>/task/<pid>/children here")
    return [int(child) for child in children.read_text().split()]


def test_a_session_call_equals_run_routines_result(pool):
    source = routine(
        """
        import json, random, statistics
        def handle(body):
            query = json.loads(body)
            return json.dumps({'mean': statistics.mean(query['values']), 'draw': random.random(), 'h': hash(body)})
        """
    )
    body = '{"values": [3, 4, 8]}'
    with pool.session(source) as session:
        assert session(body) == pool.run(source, body)  # the first call starts from the same state as run's
    with pool.session(ECHO) as echo:
        for body in ("", "ünïcödé ☂ 𝄞", "\x00\n\t\"'\\", "\udcff lone surrogate", "x" * 100_000):
            assert echo(body) == pool.run(ECHO, body) == body
        assert (echo.calls, echo.restarts) == (5, 0)


def test_state_persists_within_a_session_and_never_across_sessions(pool):
    with pool.session(COUNTER) as first, pool.session(COUNTER) as second:
        assert [first("a"), first("b"), second("c"), first("d")] == ["1 a", "2 b", "1 c", "3 d"]
        pids = {first("pid"), second("pid")}
    assert len(pids) == 2
    with pool.session("import os\ndef handle(body):\n    return str(os.getpid())\n") as session:
        assert session("") == session("") != str(os.getpid())  # one process, never the kit's


def test_a_session_keeps_its_directory_and_no_other(pool):
    writer = routine(
        """
        import os
        def handle(body):
            open(body, 'w').close()
            return ' '.join(sorted(os.listdir('.')))
        """
    )
    with pool.session(writer) as first, pool.session(writer) as second:
        assert first("a") == "a"
        assert first("b") == "a b"
        assert second("c") == "c"


@pytest.mark.parametrize("name", THREATS)
def test_each_threat_ends_a_sessions_process_and_the_next_call_starts_afresh(pool, name):
    reason = THREATS[name][1]
    with pool.session(session_threat(name), **limits(reason)) as session:
        assert session("safe") == "safe"
        start = time.monotonic()
        with pytest.raises(RoutineError) as caught:
            session("attack")
        assert time.monotonic() - start < session.limits["timeout_s"] + _GRACE_S
        assert caught.value.reason == reason, caught.value
        assert SECRET not in str(caught.value)
        assert not Path(ESCAPE).exists()
        assert (session.calls, session.restarts) == (2, 0)
        assert session("safe") == "safe"
        assert (session.calls, session.restarts) == (3, 1)


def test_a_session_may_not_start_threads_which_would_outlive_its_calls(pool):
    spinner = "import threading\ndef handle(body):\n    threading.Thread(target=lambda: None).start()\n    return ''\n"
    with pool.session(spinner) as session, pytest.raises(RoutineError) as caught:
        session("")
    assert caught.value.reason == "forbidden"
    assert "thread" in caught.value.message


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("def handle(body):\n    return 3\n", "bad_return"),
        ("def handle(body:\n    return body\n", "syntax"),
        ("x = 1\n", "syntax"),
        ("def handle(body):\n    raise ValueError('no such city')\n", "crashed"),
        ("import os\ndef handle(body):\n    os._exit(0)\n", "crashed"),
        ("import os\ndef handle(body):\n    os.abort()\n", "crashed"),
    ],
)
def test_bad_routines_get_the_same_reason_in_a_session(pool, source, reason):
    with pool.session(source) as session:
        for restarts in (0, 1):
            with pytest.raises(RoutineError) as caught:
                session("{}")
            assert caught.value.reason == reason
            assert session.restarts == restarts


def test_the_time_limit_is_per_call_and_the_cpu_limit_spans_the_session(pool):
    with pool.session(
        "import time\ndef handle(body):\n    time.sleep(float(body))\n    return body\n", timeout_s=0.5
    ) as s:
        assert [s("0.3") for _ in range(3)] == ["0.3"] * 3  # 0.9 s in all, 0.3 s a call
        with pytest.raises(RoutineError, match="timeout"):
            s("0.8")
    limit = "import resource\ndef handle(body):\n    return str(resource.getrlimit(resource.RLIMIT_CPU)[0])\n"
    with pool.session(limit, timeout_s=1.0) as session:
        assert (pool.run(limit, "", timeout_s=1.0), session("")) == ("2", str(2 * SESSION_CALLS))
    burner = routine(
        """
        import time
        def handle(body):
            start = time.process_time()
            while time.process_time() - start < 0.05:
                pass
            return 'done'
        """
    )
    # 2.2 s of CPU in all, past a call's own limit of 2 s, in short calls that stay within the 1 s wall limit even
    # when the machine is busy (44 calls, fewer than a session's quota)
    with pool.session(burner, timeout_s=1.0) as session:
        assert [session("") for _ in range(44)] == ["done"] * 44
        assert session.restarts == 0


# --- the line budget (issue 43): what stops a routine that computes too long, the same on every run ---------------

COUNTING = "def handle(body):\n    for _ in range(int(body)):\n        pass\n    return body\n"


def lines_needed(pool: SandboxPool, source: str, body: str) -> int:
    """The smallest ``max_lines`` under which ``source`` answers ``body``, by bisection."""
    low, high = 1, 100_000
    while low < high:
        middle = (low + high) // 2
        try:
            pool.run(source, body, max_lines=middle)
            high = middle
        except RoutineError as error:
            assert error.reason == "budget", error
            low = middle + 1
    return low


def test_a_routine_past_its_budget_fails_the_same_way_on_every_run_at_the_same_line(pool):
    needed = lines_needed(pool, COUNTING, "1000")
    assert 3000 <= needed <= 3100  # two lines and a jump back an iteration, and the module's few: not time
    for _ in range(3):
        assert pool.run(COUNTING, "1000", max_lines=needed) == "1000"
        with pytest.raises(RoutineError) as caught:
            pool.run(COUNTING, "1000", max_lines=needed - 1)
        assert caught.value.reason == "budget"
        assert caught.value.message == f"the routine ran past its budget of {needed - 1:,} lines and was stopped"


def test_each_call_of_a_session_has_a_budget_of_its_own(pool):
    with pool.session(COUNTING, max_lines=800) as session:
        assert [session("200") for _ in range(10)] == ["200"] * 10  # about 600 lines and jumps a call, 6,000 in all
        with pytest.raises(RoutineError, match="budget of 800 lines"):
            session("300")
        assert session("200") == "200"
        assert session.restarts == 1


def test_a_routine_cannot_switch_its_count_off(pool):
    source = "import sys\ndef handle(body):\n    sys.monitoring.set_events(4, 0)\n    while True:\n        pass\n"
    assert "AttributeError" in refused(pool, source, "crashed", max_lines=10_000)


def test_a_sessions_process_is_replaced_after_its_quota_of_calls_not_counted_as_a_restart(pool):
    with pool.session(COUNTER) as session:
        assert [session("") for _ in range(SESSION_CALLS + 1)][-2:] == [f"{SESSION_CALLS} ", "1 "]
        assert (session.calls, session.restarts) == (SESSION_CALLS + 1, 0)


def test_closing_a_session_ends_its_process():
    with SandboxPool(1) as single:
        session = single.session(ECHO)
        assert session("x") == "x"
        assert len(session_children(single)) == 1
        session.close()
        session.close()  # twice is fine
        assert session_children(single) == []
        assert session.closed
        with pytest.raises(RuntimeError, match="closed"):
            session("x")
        with single.session(ECHO) as other:
            assert other("y") == "y"
        assert other.closed and session_children(single) == []
        never_called = single.session(ECHO)
        never_called.close()
        assert "closed" in repr(never_called)


def test_closing_the_pool_closes_its_sessions():
    single = SandboxPool(1)
    session = single.session(ECHO)
    assert session("x") == "x"
    worker = single._workers[0].process
    single.close()
    assert session.closed
    assert worker.poll() is not None  # the worker, and its session children with it, ended
    with pytest.raises(RuntimeError, match="closed"):
        session("x")
    with pytest.raises(RuntimeError, match="closed"):
        single.session(ECHO)
    session.close()


def test_a_sessions_later_calls_go_straight_to_its_process_not_through_the_worker():
    with SandboxPool(1) as single, single.session(COUNTER) as session:
        assert session("a") == "1 a"  # the worker forks the process and hands its pipes over
        worker = single._workers[0].process.pid
        os.kill(worker, signal.SIGSTOP)
        try:
            assert [session("b"), session("c")] == ["2 b", "3 c"]  # answered while the worker cannot run
        finally:
            os.kill(worker, signal.SIGCONT)
        assert session("d") == "4 d" and len(session_children(single)) == 1


def test_the_least_recently_used_session_is_evicted_and_starts_afresh_silently():
    with SandboxPool(1, sessions_per_worker=2) as single:
        first, second, third = (single.session(COUNTER) for _ in range(3))
        assert [first("a"), second("b"), first("c")] == ["1 a", "1 b", "2 c"]
        assert third("d") == "1 d"  # evicts second, the least recently used
        assert len(session_children(single)) == 2
        assert first("e") == "3 e"
        assert second("f") == "1 f"  # second starts afresh, evicting third
        assert third("g") == "1 g"  # and third, evicting first
        assert first("h") == "1 h"
        assert len(session_children(single)) == 2
        assert all(session.restarts == 0 for session in (first, second, third))


def test_two_threads_use_two_sessions_at_once(pool):
    """Each routine says when its sleep began and ended (the machine's monotonic clock, one for all processes): the
    two sleeps overlap, so the calls ran side by side. Not timed: a loaded machine only stretches both."""
    sleeper = (
        "import time\ndef handle(body):\n    began = time.monotonic()\n    time.sleep(1.0)\n"
        "    return f'{body} {began} {time.monotonic()}'\n"
    )
    with pool.session(sleeper) as first, pool.session(sleeper) as second:
        assert first.slot != second.slot  # pinned to the two workers
        first("warm"), second("warm")
        results, errors = {}, []

        def work(session, label: str) -> None:
            try:
                results[label] = session(label)
            except Exception as error:  # pragma: no cover - reported below
                errors.append(error)

        threads = [threading.Thread(target=work, args=pair) for pair in ((first, "one"), (second, "two"))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors
    said = {label: reply.split() for label, reply in results.items()}
    assert {label: words[0] for label, words in said.items()} == {"one": "one", "two": "two"}
    (began_one, ended_one), (began_two, ended_two) = ([float(t) for t in said[label][1:]] for label in ("one", "two"))
    assert max(began_one, began_two) < min(ended_one, ended_two)  # side by side, not one after the other


def test_threads_sharing_one_session_take_turns(pool):
    with pool.session(COUNTER) as session:
        answers, errors = [], []

        def work() -> None:
            try:
                for _ in range(10):
                    answers.append(int(session("").split()[0]))
            except Exception as error:  # pragma: no cover - reported below
                errors.append(error)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not errors
    assert sorted(answers) == list(range(1, 41))


def test_a_routine_holds_no_descriptor_but_its_own_pipes(pool):
    counter = routine(
        """
        import os
        def handle(body):
            held = []
            for fd in range(3, 1024):
                try:
                    os.fstat(fd)
                except OSError:
                    continue
                held.append(fd)
            return str(len(held))
        """
    )
    with pool.session(ECHO) as other, pool.session(counter) as session:
        other("open")  # a session child beside it, whose pipes the worker holds
        assert session("") == "2"  # bodies in, replies out
        assert pool.run(counter, "") == "1"  # the reply's pipe


def test_session_outputs_depend_only_on_source_and_bodies():
    source = routine(
        """
        import random
        seen = []
        def handle(body):
            seen.append(body)
            return f"{random.random()} {hash(body)} {list(set(seen))}"
        """
    )
    bodies = ["sunny", "cloudy", "rainy", "sunny"]
    with SandboxPool(1) as one, SandboxPool(2) as other:
        answers = []
        for pool in (one, other, one):
            with pool.session(source) as session:
                answers.append([session(body) for body in bodies])
    assert answers[0] == answers[1] == answers[2]
    assert len(set(answers[0])) == 4


def test_a_session_is_a_routine_for_routines_run(pool):
    doubler = routine(
        """
        import json
        def handle(event):
            event = json.loads(event)
            if not event['results']:
                return json.dumps({'call': 'double', 'arguments': {'x': event['input']}})
            return json.dumps({'return': event['results'][-1]})
        """
    )
    with pool.session(doubler) as session:
        assert [routines.run(session, k, {"double": lambda x: 2 * x}) for k in range(3)] == [0, 2, 4]
        assert session.calls == 6
    with pool.session(session_threat("socket module")) as session, pytest.raises(RoutineError) as caught:
        routines.run(session, 1, {})
    assert caught.value.reason == "forbidden"  # the session's own reason, not a crash of a human routine


def test_routine_session_uses_the_default_pool():
    with routine_session(COUNTER) as session:
        assert [session("a"), session("b")] == ["1 a", "2 b"]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda pool: pool.session(3), TypeError),
        (lambda pool: pool.session(ECHO, timeout_s=0), ValueError),
        (lambda pool: pool.session(ECHO, max_lines=True), ValueError),
        (lambda pool: pool.session(ECHO, memory_mb=1.5), ValueError),
        (lambda pool: pool.session(ECHO)(b"bytes"), TypeError),
        (lambda pool: pool.session(ECHO)("x" * 1_000_001), ValueError),
        (lambda pool: SandboxPool(1, sessions_per_worker=0), ValueError),
        (lambda pool: SandboxPool(1, sessions_per_worker=True), ValueError),
    ],
)
def test_bad_session_arguments_get_clear_errors(pool, call, error):
    with pytest.raises(error, match="routine|max_lines|timeout_s|memory_mb|sessions_per_worker"):
        call(pool)


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # the fork is the test
def test_a_forked_copy_of_the_kit_cannot_use_the_parents_sessions(pool):
    session = pool.session(COUNTER)
    assert session("parent") == "1 parent"
    child = os.fork()
    if child == 0:  # pragma: no cover - reported through the exit status
        try:
            session("child")
            ok = False
        except RuntimeError as error:
            ok = "process that opened it" in str(error)
        session.close()
        with pool.session(COUNTER) as own:
            ok = ok and own("child") == "1 child"
        pool.close()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert session("parent") == "2 parent"  # the child's close() left it alone
    session.close()


# --- no soft edges (issue 28): forged replies, signals, deep trees, the harmless standard library -------------------

FORGERIES = {
    "a result past the cap": '{"result": "x" * 5_000_000}',
    "a made-up timeout": '{"reason": "timeout", "message": "SPOOFED"}',
    "a made-up budget run out": '{"reason": "budget", "message": "SPOOFED"}',
    "a made-up memory failure": '{"reason": "memory", "message": "SPOOFED"}',
    "a made-up breach": '{"reason": "forbidden", "message": "the routine tried to SPOOFED, which routines may not do"}',
    "a crash of made-up words": '{"reason": "crashed", "message": "SPOOFED"}',
}
FORGER = """
import json, os

def handle(body):
    forged = json.dumps(FORGERY).encode()
    if body == "framed":
        forged = len(forged).to_bytes(4, "big") + forged
    for fd in range(256):  # every descriptor it might hold, the reply pipe among them
        try:
            os.write(fd, forged)
        except OSError:
            pass
    os._exit(0)
"""


@pytest.mark.parametrize("framing", ["bare", "framed"])
@pytest.mark.parametrize("forgery", FORGERIES)
@pytest.mark.parametrize("where", ["call", "session"])
def test_a_routine_cannot_forge_what_the_kit_reads(pool, where, forgery, framing):
    source = f"FORGERY = {FORGERIES[forgery]}\n{FORGER}"
    with pytest.raises(RoutineError) as caught:
        if where == "call":
            pool.run(source, framing, timeout_s=5.0)
        else:
            with pool.session(source, timeout_s=5.0) as session:
                session(framing)
    assert caught.value.reason == "crashed", caught.value
    assert "malformed reply" in caught.value.message
    assert "SPOOFED" not in str(caught.value)
    assert pool.run(ECHO, "the worker still answers") == "the worker still answers"


@pytest.mark.parametrize(
    "reply",
    [
        {"result": "x" * 1_000_001},
        {"result": 3},
        {"result": "x", "reason": "crashed"},
        {"reason": "lost", "message": "x"},
        {"reason": "crashed", "message": "x" * 1_001},
        {"reason": "crashed", "message": None},
        {"reason": "forbidden", "message": "the routine tried to SPOOFED, which routines may not do"},
        {"reason": "forbidden", "message": "the routine tried to import a b c, which routines may not do"},
        {},
    ],
)
def test_the_one_reply_check_refuses_what_no_sender_may_say(reply):
    assert check_reply(reply) is not None
    assert check_reply(reply, from_routine=True) is not None


@pytest.mark.parametrize(
    ("reply", "from_a_routine"),
    [
        ({"result": "x" * 1_000_000}, True),
        ({"reason": "crashed", "message": "the routine raised ValueError: no such city"}, True),
        ({"reason": "forbidden", "message": "the routine tried to import socket.x, which routines may not do"}, True),
        (
            {"reason": "forbidden", "message": "the routine tried to read the environment, which routines may not do"},
            True,
        ),
        ({"reason": "timeout", "message": "the routine ran past its 1 s and was stopped"}, False),
        ({"reason": "budget", "message": "the routine ran past its budget of 50 lines and was stopped"}, False),
        ({"reason": "memory", "message": "the routine ran out of its 64 MB of memory"}, False),
        ({"reason": "crashed", "message": "the routine's process was killed by signal SIGKILL"}, False),
    ],
)
def test_the_one_reply_check_lets_each_sender_say_what_it_may(reply, from_a_routine):
    assert check_reply(reply) is None
    assert (check_reply(reply, from_routine=True) is None) == from_a_routine


@pytest.mark.parametrize("name", ["SIGKILL", "SIGSEGV", "SIGXCPU", "SIGTERM"])
@pytest.mark.parametrize("where", ["call", "session"])
def test_a_routine_killed_by_a_signal_is_reported_as_such(pool, where, name):
    source = f"import signal\ndef handle(body):\n    signal.raise_signal(signal.{name})\n"
    with pytest.raises(RoutineError) as caught:
        if where == "call":
            pool.run(source, "", timeout_s=30.0)
        else:
            with pool.session(source, timeout_s=30.0) as session:
                session("")
    assert caught.value.reason == "crashed", caught.value  # at once: not "timeout", the limit's reason
    assert caught.value.message == f"the routine's process was killed by signal {name}"


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")  # the fork is the test
def test_the_cpu_limit_is_reported_as_used_up_cpu_time():
    child = os.fork()
    if child == 0:  # pragma: no cover - ended by the kernel at its CPU limit
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (1, 1))  # as a routine's: soft = hard, so SIGKILL at the limit
            while True:
                pass
        finally:
            os._exit(1)
    _, status, usage = os.wait4(child, 0)
    assert os.WTERMSIG(status) == signal.SIGKILL
    assert _describe_end(status, usage.ru_utime + usage.ru_stime, 1, 64, 100) == {
        "reason": "timeout",
        "message": "the routine used up its 1 s of CPU time and was stopped",
    }
    assert _describe_end(status, 0.0, 1, 64, 100)["message"] == "the routine's process was killed by signal SIGKILL"


FRAMES = {  # what a reader may find on a pipe (each under a pipe's 64 KB, written before it is read): what it says
    "a length past the limit": ((40 << 20).to_bytes(4, "big"), "over"),
    "half a length": (b"\x00\x00", "cut short"),
    "half a payload": ((10).to_bytes(4, "big") + b"{}", "cut short"),
    "a list": ((2).to_bytes(4, "big") + b"[]", "not a JSON object"),
    "a deep nest": ((50_000).to_bytes(4, "big") + b"[" * 50_000, "nested too deep"),
    "not JSON": ((3).to_bytes(4, "big") + b"{x}", "Expecting property name"),
}


@pytest.mark.parametrize("frame", FRAMES)
def test_the_one_frame_reader_names_what_is_wrong(frame):
    payload, problem = FRAMES[frame]
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, payload)
        os.close(write_end)
        write_end = None
        with pytest.raises(ValueError, match=problem):
            read_frame(read_end, time.monotonic() + 5)
    finally:
        for fd in (read_end, write_end):
            if fd is not None:
                os.close(fd)


def test_the_one_frame_writer_and_reader_agree_and_keep_time():
    read_end, write_end = os.pipe()
    try:
        message = {"body": "ünïcödé ☂ 𝄞 \udcff lone surrogate", "timeout_s": 0.5, "session": 3}
        write_frame(write_end, message)
        assert read_frame(read_end, time.monotonic() + 5) == message
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            read_frame(read_end, time.monotonic() + 0.2)  # nothing comes
        assert time.monotonic() - start > 0.15  # it waited (a lower bound: a loaded machine only waits longer)
        os.close(write_end)
        write_end = None
        assert read_frame(read_end) is None  # the end, between frames
    finally:
        for fd in (read_end, write_end):
            if fd is not None:
                os.close(fd)


def make_hostile_tree(root: Path, outside: Path) -> None:
    """Under ``root``: 1,500 nested folders of 100-character names (a path far past PATH_MAX, made through
    descriptors), a locked folder with a locked file, a fifo, a name that is not UTF-8, and links to ``outside``."""
    folder = os.open(root, os.O_RDONLY)
    for _ in range(1500):
        os.mkdir("d" * 100, dir_fd=folder)
        inner = os.open("d" * 100, os.O_RDONLY, dir_fd=folder)
        os.close(folder)
        folder = inner
    os.close(folder)
    (root / "locked").mkdir()
    (root / "locked" / "secret.txt").write_text("x")
    (root / "locked" / "secret.txt").chmod(0)
    (root / "locked").chmod(0)
    os.mkfifo(root / "fifo")
    os.mkdir(os.fsencode(root) + b"/\xff\xfe not utf-8")
    (root / "link to a folder outside").symlink_to(outside, target_is_directory=True)
    (root / "link to a file outside").symlink_to(outside / "keep.txt")


def test_remove_tree_removes_any_tree_without_recursion_and_follows_no_link(tmp_path):
    root, outside = tmp_path / "workdir", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    make_hostile_tree(root, outside)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # far below the tree's depth
    try:
        remove_tree(str(root))
    finally:
        sys.setrecursionlimit(limit)
        left = root.exists()
        if left:  # pytest's own clean-up recurses, and could not remove what a failed run left
            subprocess.run(["chmod", "-R", "u+rwx", str(root)], check=False)
            subprocess.run(["rm", "-rf", str(root)], check=False)
    assert not left
    assert (outside / "keep.txt").read_text() == "kept"
    with pytest.raises(FileNotFoundError):
        remove_tree(str(root))


NEST = """
import os

def handle(body):
    path = body
    for _ in range(1500):
        os.mkdir(path)
        path += "/d"
    os.mkdir(body + "-locked")
    open(body + "-locked/file.txt", "w").close()
    os.chmod(body + "-locked/file.txt", 0)
    os.chmod(body + "-locked", 0)
    return "nested"
"""


def test_a_deep_tree_in_a_routines_directory_goes_and_close_raises_nothing(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("kept")
    single = SandboxPool(1)
    assert single.run(NEST, "call", timeout_s=20.0) == "nested"
    directory = Path(single._workers[0].directory)
    assert sorted(path.name for path in directory.iterdir()) == []  # the call's directory went after the call
    with single.session(NEST, timeout_s=20.0) as session:
        assert session("session") == "nested"
        (workdir,) = directory.iterdir()  # the session's, which lives while its process does
        (workdir / "a link out").symlink_to(outside, target_is_directory=True)  # as if a routine could make one
        single.close()  # raises nothing
    assert not directory.exists()
    assert (outside / "keep.txt").read_text() == "kept"


def test_a_pool_dropped_without_close_ends_its_workers_and_removes_their_folders():
    dropped = SandboxPool(1)
    assert dropped.run(ECHO, "x") == "x"
    process, directory = dropped._workers[0].process, dropped._workers[0].directory
    del dropped
    gc.collect()
    assert process.poll() is not None
    assert not os.path.exists(directory)


def test_run_routine_leaves_no_folder_and_prints_nothing_when_the_kit_exits(tmp_path):
    script = f"""
from coordkit.agora.sandbox import default_pool, run_routine
print(run_routine({NEST!r}, "deep", timeout_s=20.0))
print(default_pool()._workers[0].directory)
"""
    finished = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False
    )
    answer, directory = finished.stdout.split()
    assert (answer, finished.stderr, finished.returncode) == ("nested", "", 0)
    assert not os.path.exists(directory)


HARMLESS = """
import bisect, collections, dataclasses, datetime, decimal, difflib, email.message, fractions, getpass, heapq
import itertools, json, math, re, statistics, string, textwrap, unicodedata, zoneinfo

@dataclasses.dataclass
class Reading:
    city: str
    celsius: float

def handle(body):
    readings = [Reading(city, float(t)) for city, t in re.findall(r"(\\w+)=(-?\\d+)", body)]
    message = email.message.EmailMessage()
    message["Subject"] = "forecast"
    message.set_content(textwrap.fill(" ".join(r.city for r in readings), 20))
    noon = datetime.datetime(2024, 9, 27, 12, tzinfo=zoneinfo.ZoneInfo("UTC"))
    ordered = sorted(r.celsius for r in readings)
    return json.dumps({
        "getpass": getpass.__name__,
        "mean": statistics.mean(ordered),
        "median": str(fractions.Fraction(statistics.median(ordered)).limit_denominator()),
        "sum": str(decimal.Decimal("0.1") * len(readings)),
        "hypot": math.hypot(*ordered[:2]),
        "pairs": len(list(itertools.combinations(ordered, 2))),
        "counts": collections.Counter(r.city[0] for r in readings).most_common(1),
        "rank": bisect.bisect(ordered, 12.0),
        "coldest": heapq.nsmallest(1, ordered),
        "letters": string.ascii_lowercase[:3],
        "name": unicodedata.name("\\u2602"),
        "close": difflib.get_close_matches("Londn", [r.city for r in readings]),
        "subject": message["Subject"],
        "noon": noon.isoformat(),
    })
"""


def test_routines_may_use_the_harmless_standard_library(pool):
    import zoneinfo

    try:
        zoneinfo.ZoneInfo("UTC")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("this machine has no time zone database")
    body = "London=11 Paris=14 Rome=19 Oslo=-2"
    namespace = {}
    exec(HARMLESS, namespace)  # the same source in the kit's own process, trusted here: the expected answer
    expected = namespace["handle"](body)
    assert pool.run(HARMLESS, body) == expected
    with pool.session(HARMLESS) as session:
        assert session(body) == session(body) == expected


@pytest.mark.parametrize(
    "line",
    [
        "import socket; socket.socket()",
        "import subprocess",
        "import os; os.environ.get('OPENAI_API_KEY')",
        "import urllib.request; urllib.request.urlopen('http://example.com')",
        "import ctypes",
    ],
)
def test_what_reaches_out_stays_refused(pool, line):
    refused(pool, f"def handle(body):\n    {line}\n    return 'reached out'", "forbidden")


def test_the_pool_works_when_the_kit_holds_over_1024_descriptors():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"this process may not open 1,200 files (hard limit {hard})")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200) if soft != resource.RLIM_INFINITY else soft, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]  # as the HTTP servers' connections may be
    try:
        with SandboxPool(1) as crowded, crowded.session(ECHO) as session:
            assert crowded.run(ECHO, "call") == "call"
            assert session("session") == "session"
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
