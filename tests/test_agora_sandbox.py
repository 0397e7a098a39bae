"""The routine sandbox (issue 12): each threat of ``coordkit.agora.sandbox``'s model ends in ``RoutineError``.

No network is needed: the routines that reach for it are stopped before they touch it. The time bounds asserted
below are the sandbox's own limits (the routine's ``timeout_s`` plus the parent's grace), not speed targets; those are
``benchmarks/bench_agora_sandbox.py``'s.
"""

import os
import signal
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from coordkit.agora.sandbox import _GRACE_S, REASONS, RoutineError, SandboxPool, run_routine

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


def refused(pool: SandboxPool, source: str, reason: str, *, timeout_s: float = 1.0, memory_mb: int = 64) -> str:
    """Run ``source``, expect ``RoutineError(reason)`` within the call's limits, and return its message."""
    start = time.monotonic()
    with pytest.raises(RoutineError) as caught:
        pool.run(routine(source), "{}", timeout_s=timeout_s, memory_mb=memory_mb)
    assert time.monotonic() - start < timeout_s + _GRACE_S
    assert caught.value.reason == reason, caught.value
    assert caught.value.reason in REASONS
    assert SECRET not in str(caught.value)
    return caught.value.message


# --- the threat model, one threat at a time -------------------------------------------------------------------------

THREATS = {
    "infinite loop": ("def handle(body):\n    while True:\n        pass", "timeout"),
    "sleeping forever": ("import time\ndef handle(body):\n    time.sleep(3600)", "timeout"),
    "loop that blocks SIGXCPU": (
        "import signal\ndef handle(body):\n    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGXCPU})\n"
        "    while True:\n        pass",
        "timeout",
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
}


def threat(name: str) -> str:
    """The source of the threat ``name``, aimed at ``ESCAPE``."""
    return THREATS[name][0].replace("ESCAPE_NAME", Path(ESCAPE).name).replace("ESCAPE", ESCAPE)


@pytest.mark.parametrize("name", THREATS)
def test_each_threat_ends_in_a_routine_error_within_its_limits(pool, name):
    reason = THREATS[name][1]
    refused(pool, threat(name), reason, timeout_s=0.5 if reason == "timeout" else 2.0)
    assert not Path(ESCAPE).exists()


def test_messages_name_what_happened(pool):
    assert "environment" in refused(pool, threat("environment: os.environ"), "forbidden")
    assert "outside its working directory" in refused(pool, threat("write outside: absolute"), "forbidden")
    assert "socket" in refused(pool, threat("socket module"), "forbidden")
    assert "start a process" in refused(pool, threat("process: os.system"), "forbidden")
    assert "0.5 s" in refused(pool, threat("infinite loop"), "timeout", timeout_s=0.5)
    assert "16 MB" in refused(pool, threat("memory bomb by steps"), "memory", memory_mb=16)


def test_the_parents_secrets_never_reach_a_routine(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with SandboxPool(1) as fresh:  # started after the secret was set
        for name in ("environment: os.environ", "environment: /proc/self/environ", "environment: the parent's"):
            refused(fresh, threat(name), "forbidden")
        # beneath the guard, the worker's environment never held it: it started with the hash seed alone
        worker = Path(f"/proc/{fresh._idle[0].process.pid}/environ")
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
        pid = single._idle[0].process.pid
        for name in ("process: fork", "memory bomb at once", "native: ctypes"):
            with pytest.raises(RoutineError):
                single.run(routine(threat(name)), "")
        assert single.run(ECHO, "after") == "after"
        assert single._idle[0].process.pid == pid  # the breaches killed a forked child each, not the worker
        os.kill(pid, signal.SIGKILL)
        single._idle[0].process.wait()
        assert single.run(ECHO, "replaced") == "replaced"
        assert single._idle[0].process.pid != pid


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
    with pytest.raises(error, match="routine|timeout_s|memory_mb"):
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
    workers = list(pool._idle)
    parents = {worker.process.pid for worker in workers}
    child = os.fork()
    if child == 0:  # pragma: no cover - reported through the exit status
        ok = not pool._idle and pool.run(ECHO, "child") == "child" and pool._idle[0].process.pid not in parents
        pool.close()
        os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert all(worker.process.poll() is None for worker in workers)  # the child's close() left them alone
    assert pool.run(ECHO, "parent again") == "parent again"
