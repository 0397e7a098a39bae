"""A kernel's sweeps on every core (issue 48): ``engines.use_every_core()`` makes a kept pool, readied in the
background, the default of every sweep that names no engine; a run or parameters only this process knows (a notebook
cell's class, a lambda, an LLM client) stay here; the frames are the same as on one core; ``use_one_core()`` undoes
it."""

import os
import signal
import subprocess
import sys
import time
import types

import pytest

from coordkit import engines, sweep
from coordkit.agora.experiments import play_both
from coordkit.agora.model import AgoraNetwork
from coordkit.llm import ScriptedClient
from coordkit.rep.fishbanks.model import Fishbanks


def worker_pid(seed: int) -> dict:
    return {"pid": os.getpid()}


def notebook_class() -> type:
    """A model class as a notebook cell defines it: its module is __main__."""
    return type("MyFishbanks", (Fishbanks,), {"__module__": "__main__"})


@pytest.fixture
def every_core():
    engines.use_every_core(workers=2)
    yield
    engines.use_one_core()


def test_sweeps_that_name_no_engine_run_on_the_kept_pool_until_use_one_core(every_core):
    first = set(sweep(worker_pid, None, 8, progress=False)["pid"])
    second = set(sweep(worker_pid, None, 8, progress=False)["pid"])
    assert os.getpid() not in first | second
    assert len(first | second) <= 2, "two sweeps ran on more processes than the kept pool of 2"
    engines.use_one_core()
    assert set(sweep(worker_pid, None, 3, progress=False)["pid"]) == {os.getpid()}


def test_an_interrupt_of_the_kernel_leaves_the_pool_to_the_next_sweep(every_core):
    """Jupyter's Interrupt signals the kernel's whole process group: the workers must not die of it."""
    workers = set(sweep(worker_pid, None, 8, progress=False)["pid"])
    for pid in workers:
        os.kill(pid, signal.SIGINT)
    time.sleep(0.5)
    for pid in workers:
        os.kill(pid, 0)  # raises ProcessLookupError for a worker that died of the interrupt
    assert len(sweep(worker_pid, None, 8, progress=False)) == 8


def test_a_using_block_and_a_named_engine_still_choose_their_own(every_core):
    with engines.using(engines.SerialEngine()):
        assert set(sweep(worker_pid, None, 3, progress=False)["pid"]) == {os.getpid()}
    assert set(sweep(worker_pid, None, 3, engine="serial", progress=False)["pid"]) == {os.getpid()}


def test_what_only_this_process_knows_stays_here():
    local_function = lambda seed: {"x": seed}  # noqa: E731
    assert not engines.stays_here(Fishbanks, {"protocol": "a2a"}, [{"seats": 3}])
    assert not engines.stays_here(worker_pid, {}, [])
    assert engines.stays_here(notebook_class())
    assert engines.stays_here(Fishbanks, {"policy": notebook_class()})  # a parameter from a notebook cell
    assert engines.stays_here(local_function)
    assert engines.stays_here(Fishbanks, {"callback": lambda: None})


def test_a_notebook_cells_model_and_an_llm_client_sweep_here_with_the_serial_frame(every_core):
    mine = notebook_class()
    frame = sweep(mine, {"protocol": ["a2a"]}, 2, progress=False)
    engines.use_one_core()
    assert frame.equals(sweep(Fishbanks, {"protocol": ["a2a"]}, 2, progress=False))
    engines.use_every_core(workers=2)
    client = ScriptedClient(lambda request: "not an answer")
    played = sweep(Fishbanks, None, 1, fixed={"llm": client}, progress=False)
    assert client.requests, "the client's calls were not made in this process"
    assert played["llm_fallbacks"].iloc[0] > 0


def test_the_frames_are_those_of_one_core(every_core):
    pooled = sweep(Fishbanks, {"protocol": ["a2a", "rep_numerical"]}, 3, progress=False)
    both = play_both(AgoraNetwork, 2, queries=120)
    engines.use_one_core()
    assert pooled.equals(sweep(Fishbanks, {"protocol": ["a2a", "rep_numerical"]}, 3, progress=False))
    assert both.equals(play_both(AgoraNetwork, 2, queries=120))


def test_agoras_two_arms_play_side_by_side_with_the_pool(every_core):
    beside = engines.on_another_core(worker_pid, 0)
    assert beside is not None and beside.result()["pid"] != os.getpid()
    assert engines.on_another_core(notebook_class()) is None, "a notebook cell's class cannot go to a worker"
    engines.use_one_core()
    assert engines.on_another_core(worker_pid, 0) is None, "without the pool, the call is made here"


def test_a_module_the_workers_cannot_import_leaves_the_pool_working(monkeypatch):
    monkeypatch.setitem(sys.modules, "coordkit.not_a_module", types.ModuleType("coordkit.not_a_module"))
    engines.use_every_core(workers=2)
    try:
        assert len(set(sweep(worker_pid, None, 4, progress=False)["pid"]) - {os.getpid()}) >= 1
    finally:
        engines.use_one_core()


def test_a_pool_that_lost_a_worker_is_replaced_for_the_next_arm(every_core):
    first = engines.on_another_core(worker_pid, 0).result()["pid"]
    os.kill(first, signal.SIGKILL)
    time.sleep(1)  # the pool sees its worker end, and stops taking tasks
    assert engines.on_another_core(worker_pid, 0).result()["pid"] != first


def test_a_script_that_ends_at_once_ends_cleanly(tmp_path):
    """The pool is being readied in the background when the script ends: nothing is left half started, and nothing
    is printed (a thread cannot start during the interpreter's shutdown; a worker whose parent ended cannot start)."""
    script = tmp_path / "quick.py"
    script.write_text("from coordkit import engines\n\nif __name__ == '__main__':\n    engines.use_every_core(2)\n")
    for _ in range(3):  # the race is at whatever point the background work has reached
        done = subprocess.run([sys.executable, script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_one_cpu_gets_no_pool(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    engines.use_every_core()
    assert engines.on_another_core(worker_pid, 0) is None
    assert set(sweep(worker_pid, None, 2, progress=False)["pid"]) == {os.getpid()}


def test_without_a_default_engine_no_sweep_asks_whether_its_run_could_leave(monkeypatch):
    """Only a default engine (a using() block, use_every_core) needs to know whether the run can reach a worker."""

    def asked(*args):
        raise AssertionError("stays_here was asked with no default engine")

    monkeypatch.setattr("coordkit.sweeps.stays_here", asked)
    assert not engines.has_default()
    assert set(sweep(worker_pid, None, 2, progress=False)["pid"]) == {os.getpid()}
    with engines.using(engines.SerialEngine()):
        assert engines.has_default()
        with pytest.raises(AssertionError, match="stays_here was asked"):
            sweep(worker_pid, None, 2, progress=False)
