"""The sandbox edges of issue 28 ("Measured", "Sandbox edges"), tried as a hostile routine would, one figure a line.

    .venv/bin/python benchmarks/agora_sandbox_edges.py
    PYTHONPATH=/path/to/an/older/clone .venv/bin/python benchmarks/agora_sandbox_edges.py   # the same, on older code

Prints what the kit reads when a routine writes a forged reply on every descriptor it holds (0..255: a result of
5,000,000 characters, past the 1,000,000 cap, and a made-up failure "timeout: SPOOFED"; in a call's process and in a
session's, in both framings a routine might try: bare JSON and length-prefixed JSON); what it reads when a routine
kills itself with SIGKILL, and after how long; whether ``SandboxPool.close()`` raises, and how many folders are left
under the pool's ``coordkit-routines-*`` folder, after a routine nests 1,500 folders in its working directory (and the
same for ``run_routine`` in a process that exits normally, and for a pool that is garbage-collected); and what
importing ``zoneinfo``, ``email.message`` and ``getpass`` gives.
"""

import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from coordkit.agora.sandbox import RoutineError, SandboxPool

FORGERIES = {"big": "a result of 5,000,000 characters", "spoof": "the made-up failure timeout: SPOOFED"}
FRAMINGS = ("bare JSON", "a length-prefixed frame")
FORGER = """
import json, os

def handle(body):
    forgery, framing = json.loads(body)
    forged = {"result": "x" * 5_000_000} if forgery == "big" else {"reason": "timeout", "message": "SPOOFED"}
    payload = json.dumps(forged).encode()
    if framing == "a length-prefixed frame":
        payload = len(payload).to_bytes(4, "big") + payload
    for fd in range(256):
        try:
            os.write(fd, payload)
        except OSError:
            pass
    os._exit(0)
"""
NEST = """
import os

def handle(body):
    path = "d"
    for _ in range(1500):
        os.mkdir(path)
        path += "/d"
    return "nested"
"""
AT_EXIT = f"""
from coordkit.agora.sandbox import default_pool, run_routine
print(run_routine({NEST!r}, "", timeout_s=10.0))
print(*(worker.directory for worker in default_pool()._workers if worker is not None))
"""
IMPORTS = {
    "zoneinfo": "import zoneinfo\ndef handle(body):\n    return str(zoneinfo.ZoneInfo('UTC'))\n",
    "email.message": (
        "import email.message\ndef handle(body):\n"
        "    message = email.message.EmailMessage()\n    message['Subject'] = 'forecast'\n    return str(message)\n"
    ),
    "getpass": "import getpass\ndef handle(body):\n    return getpass.__name__\n",
}


def outcome(call, *args, **kwargs) -> tuple[str, float]:
    """What the kit read from ``call(*args, **kwargs)`` (a result's size, or the error) and how long it took."""
    start = time.perf_counter()
    try:
        result = call(*args, **kwargs)
    except RoutineError as error:
        text = f"RoutineError {str(error)[:120]!r}"
    else:
        text = f"a result of {len(result):,} characters"
    return text, time.perf_counter() - start


def folders_under(directories: list[str]) -> int:
    """The folders left in ``directories`` and below (the directories themselves included), counted with find(1)."""
    left = [directory for directory in directories if os.path.lexists(directory)]
    if not left:
        return 0
    listing = subprocess.run(["find", *left, "-type", "d"], capture_output=True, text=True, check=False).stdout
    return len(listing.split())


def remove(directories: list[str]) -> None:
    """Clear what a measurement left behind (rm -rf, with read permission restored first)."""
    left = [directory for directory in directories if os.path.lexists(directory)]
    if left:
        subprocess.run(["chmod", "-R", "u+rwx", *left], capture_output=True, check=False)
        subprocess.run(["rm", "-rf", *left], check=False)


def forged_replies(pool: SandboxPool) -> None:
    for forgery, label in FORGERIES.items():
        for framing in FRAMINGS:
            body = json.dumps([forgery, framing])
            text, seconds = outcome(pool.run, FORGER, body, timeout_s=5.0)
            print(f"forged reply, {label}, as {framing}, in a call's process: {text} after {seconds:.2f} s")
            with pool.session(FORGER, timeout_s=5.0) as session:
                text, seconds = outcome(session, body)
            print(f"forged reply, {label}, as {framing}, in a session's process: {text} after {seconds:.2f} s")


def signals(pool: SandboxPool) -> None:
    for name in ("SIGKILL", "SIGSEGV"):
        source = f"import signal\ndef handle(body):\n    signal.raise_signal(signal.{name})\n"
        text, seconds = outcome(pool.run, source, "")
        print(f"signal.raise_signal({name}) in a call's process: {text} after {seconds:.2f} s")


def nested_folders() -> None:
    pool = SandboxPool(1)
    text, _ = outcome(pool.run, NEST, "", timeout_s=10.0)
    with pool.session(NEST, timeout_s=10.0) as session:
        session_text, _ = outcome(session, "")
    directories = [worker.directory for worker in pool._workers if worker is not None]
    try:
        pool.close()
        raised = "nothing"
    except BaseException as error:  # the measurement: what close() raises
        raised = type(error).__name__
    time.sleep(0.5)  # a worker still exiting removes its own folder
    print(f"1,500 nested folders, a call and a session: {text}; {session_text}")
    print(f"  SandboxPool.close() raised {raised}; folders left under the pool's folder: {folders_under(directories)}")
    remove(directories)


def nested_folders_at_exit() -> None:
    script = subprocess.run([sys.executable, "-c", AT_EXIT], capture_output=True, text=True, timeout=120, check=False)
    directories = script.stdout.split()[1:]
    time.sleep(0.5)
    traceback = "a traceback" if "Traceback" in script.stderr else "no traceback"
    print(f"run_routine of 1,500 nested folders, then a normal exit: {traceback} on stderr; ", end="")
    print(f"folders left: {folders_under(directories)}")
    remove(directories)


def collected_pool() -> None:
    pool = SandboxPool(1)
    pool.run("def handle(body):\n    return body\n", "")
    worker = pool._workers[0]
    pid, directories = worker.process.pid, [worker.directory]
    del pool, worker
    gc.collect()
    time.sleep(1.5)
    stat = Path(f"/proc/{pid}/stat")
    alive = stat.exists() and stat.read_text().split()[2] != "Z"  # not a zombie
    print(f"a pool garbage-collected: its worker {'still runs' if alive else 'ended'}; ", end="")
    print(f"folders left under its folder: {folders_under(directories)}")


def imports(pool: SandboxPool) -> None:
    for name, source in IMPORTS.items():
        text, _ = outcome(pool.run, source, "")
        print(f"import {name}: {text}")


def main() -> None:
    with SandboxPool(1) as pool:
        forged_replies(pool)
        signals(pool)
        imports(pool)
    nested_folders()
    nested_folders_at_exit()
    collected_pool()


if __name__ == "__main__":
    main()
