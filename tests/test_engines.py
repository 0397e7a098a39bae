"""Engines whose errors are clear and early, and whose workers never outlive a killed sweep (issue 29): a scheduler
address that is empty, malformed or unreachable is refused in seconds, naming it, where it came from and the fix; a
script that sweeps outside its main guard is told so in those words; the workers of a sweep killed with SIGKILL
exit with it. The subprocess tests run real scripts, each bounded in time."""

import multiprocessing
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from coordkit import engines, figures
from coordkit.cli import main
from coordkit.engines import SCHEDULER_VARIABLE, DaskEngine, SchedulerError, resolve

TESTS = Path(__file__).parent
EXIT_WITHIN = 60  # seconds for the workers of a killed sweep to be gone: they notice at once, and a loaded machine
# may take a while to end them; a worker that did not notice sleeps in its run ten times as long


def closed_port() -> int:
    """A loopback port where nothing listens (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("address", ["", "   "])
def test_an_empty_address_is_refused_never_a_local_cluster(address):
    with pytest.raises(SchedulerError, match=rf"DaskEngine\(address='{address}'\) is empty: .* address=None"):
        DaskEngine(address=address)


def test_an_empty_scheduler_variable_is_refused_saying_it_is_set_but_empty(monkeypatch):
    monkeypatch.setenv(SCHEDULER_VARIABLE, "")
    with pytest.raises(SchedulerError, match=rf"\${SCHEDULER_VARIABLE}='' is set but empty: .* or unset"):
        resolve("dask")


@pytest.mark.parametrize(
    ("address", "problem"),
    [
        ("tcp://", "missing port number"),
        ("http://scheduler:8786", "unknown address scheme 'http'"),
        ("scheduler:port", "invalid literal"),
        ("tcp://scheduler:0", "port 0 is not 1 to 65535"),
    ],
)
def test_a_malformed_address_is_refused_naming_it_and_what_is_wrong(monkeypatch, address, problem):
    monkeypatch.setenv(SCHEDULER_VARIABLE, address)
    with pytest.raises(SchedulerError, match=rf"='{address}' is not a scheduler address \({problem}.*tcp://"):
        DaskEngine()


def test_an_unreachable_scheduler_is_said_within_the_connect_timeout(monkeypatch):
    monkeypatch.setattr(engines, "CONNECT_TIMEOUT", 1)
    address = f"tcp://127.0.0.1:{closed_port()}"
    refused = rf"cannot reach a Dask scheduler at {address} \(the address in Dask"
    with pytest.raises(SchedulerError, match=refused) as raised:
        list(DaskEngine(address=address).map_unordered(abs, [1]))
    assert "after 1 s" in str(raised.value)  # Dask gave up at the connect timeout, not its own 30 s (not timed here)


@pytest.mark.parametrize(
    ("address", "message"),
    [
        ("unreachable", r"cannot reach a Dask scheduler at tcp://127\.0\.0\.1:\d+ \(the address in \$COORDKIT"),
        ("", r"\$COORDKIT_DASK_SCHEDULER='' is set but empty"),
    ],
)
def test_the_command_line_says_a_bad_scheduler_in_one_line(tmp_path, capsys, monkeypatch, address, message):
    monkeypatch.setattr(engines, "CONNECT_TIMEOUT", 1)
    monkeypatch.setenv(SCHEDULER_VARIABLE, f"tcp://127.0.0.1:{closed_port()}" if address else "")
    monkeypatch.setattr(figures, "get", lambda _: pytest.fail("the figure was loaded before the engine"))
    assert main(["reproduce", "delay-fig4", "--engine", "dask", "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("coordkit: ") and error.count("\n") == 1, error
    assert re.search(message, error), error


KILLED_SWEEP = """\
import sys
import time
from pathlib import Path

from coordkit.engines import resolve


def run(task):
    Path(f"running-{task}").touch()
    time.sleep(600)


if __name__ == "__main__":
    list(resolve(sys.argv[1], workers=2).map_unordered(run, list(range(8))))
"""


def running(processes: list[psutil.Process]) -> list[psutil.Process]:
    """The processes still alive (a zombie holds no memory: it is gone but for its parent's reading)."""
    alive = []
    for process in processes:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                alive.append(process)
        except psutil.NoSuchProcess:
            pass
    return alive


@pytest.mark.parametrize("engine", ["processes", "dask"])
def test_the_workers_of_a_killed_sweep_exit_with_it(tmp_path, engine):
    (tmp_path / "sweep.py").write_text(KILLED_SWEEP)
    sweeping = subprocess.Popen([sys.executable, "sweep.py", engine], cwd=tmp_path)
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 300  # a cluster started on a loaded machine (only a hang waits this long)
        while len(list(tmp_path.glob("running-*"))) < 2 and time.monotonic() < deadline:  # both workers mid-run
            time.sleep(0.05)
        assert sweeping.poll() is None, "the sweep ended before it could be killed"
        children += psutil.Process(sweeping.pid).children(recursive=True)
        assert len(children) >= 3, [child.cmdline() for child in children]  # two workers and the resource tracker
        sweeping.send_signal(signal.SIGKILL)
        sweeping.wait()
        killed = time.monotonic()
        while running(children) and time.monotonic() - killed < EXIT_WITHIN:
            time.sleep(0.05)
        left = running(children)
        assert not left, f"{len(left)} processes outlived the killed sweep: {[p.cmdline()[-1][:60] for p in left]}"
    finally:
        sweeping.kill()
        for child in running(children):  # orphans now, out of this process's tree
            child.kill()


UNGUARDED = {  # a sweep with a store (a worker must stop before it takes the lock), and a cluster in a with block
    "processes": """\
import sys
sys.path.insert(0, {tests!r})
from sweep_targets import coin_run
from coordkit.sweeps import sweep

sweep(coin_run, {{"p": [0.5], "flips": [10, 20]}}, engine="processes", workers=1, store="runs", progress=False)
""",
    "dask": """\
from coordkit.engines import DaskEngine

with DaskEngine(workers=1) as cluster:
    print(list(cluster.map_unordered(abs, [-1])))
""",
}


@pytest.mark.parametrize("engine", ["processes", "dask"])
def test_a_script_without_a_main_guard_is_told_so_without_worker_tracebacks(tmp_path, engine):
    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED[engine].format(tests=str(TESTS)))
    done = subprocess.run([sys.executable, script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.count("Traceback") == 1, done.stderr  # the script's own, none from the workers
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"coordkit.engines.MainGuardMissing: {script} sweeps on worker processes outside ")
    assert "under `if __name__ == '__main__':`, or sweep with engine='serial'." in last


def worker_pid(_task) -> int:
    return os.getpid()


def die(_task) -> None:
    os._exit(1)


def test_a_process_engine_in_a_with_block_keeps_its_workers_between_sweeps():
    tasks = list(range(8))
    with engines.ProcessEngine(workers=2) as engine:
        kept = {pid for _, pid in engine.map_unordered(worker_pid, tasks)}
        kept |= {pid for _, pid in engine.map_unordered(worker_pid, tasks)}
    assert len(kept) <= 2, f"two sweeps in one block ran on {len(kept)} processes, not the block's pool of 2"
    engine = engines.ProcessEngine(workers=2)
    first = {pid for _, pid in engine.map_unordered(worker_pid, tasks)}
    second = {pid for _, pid in engine.map_unordered(worker_pid, tasks)}
    assert not first & second, "outside a with block, each sweep has a pool of its own"


def test_a_kept_pool_that_lost_a_worker_is_replaced():
    with engines.ProcessEngine(workers=2) as engine:
        with pytest.raises(engines.WorkerLost):
            list(engine.map_unordered(die, [0]))
        assert sorted(position for position, _ in engine.map_unordered(worker_pid, [0, 1, 2])) == [0, 1, 2]


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server here")
def test_pool_workers_are_forks_of_the_fork_server_never_of_this_process():
    """A worker is a fresh process (a fork of this one could inherit a lock another thread holds), born from the fork
    server that imported the sweeps module and the pool's modules once, not a new interpreter importing them again."""
    with engines.ProcessEngine(1) as engine:
        worker_parent = psutil.Process(engine.submit(os.getppid).result())
    assert engines._fresh_processes().get_start_method() == "forkserver"
    assert worker_parent.pid != os.getpid() and worker_parent.ppid() == os.getpid()
    assert "multiprocessing.forkserver" in " ".join(worker_parent.cmdline())
