#!/usr/bin/env python3
"""Set up and run coordkit on any system: the one implementation behind `make lab` and `make test`.

    python3 tools/kit.py lab [JUPYTER ARGS]   install what the notebooks need into .venv, open JupyterLab on 00
    python3 tools/kit.py test [PYTEST ARGS]   add the test tools, then run ruff and every test and notebook
    python3 tools/kit.py test-loaded [ARGS]   the same, with 2 CPU-bound processes per core running beside it
    python3 tools/kit.py install lab|test     install only (make venv-lab, make venv)
    python3 tools/kit.py binder-url           the Binder link for this repository's remote `origin`
    python3 tools/kit.py clean                remove .venv

On Windows, without make: `py tools\\kit.py lab`. Standard library only. It runs under any Python 3 and finds a
Python >= 3.12 for .venv: $PYTHON if set, else the one running it, python3.13, python3.12, python3, the Windows
launcher `py`, or pyenv's versions. Two markers in .venv remember what is installed (.installed-lab, .installed-test)
and are redone when pyproject.toml or tools/lab-overrides.json changes, so `lab` then `test` installs only the test
tools the second time.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
WINDOWS = os.name == "nt"
START = "notebooks/00_start_here.ipynb"
PYTEST = ["-m", "pytest", "tests", "notebooks", "--nbval-lax", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]
# `test-loaded`: processes that each keep a core busy beside the suite, as other people's work does on a shared
# machine. kit.py kills them when the tests end, however they end; Ctrl-C, which reaches them too, is left to kit.py;
# and each ends by itself once the kit.py that started it is gone (its parent changes: SIGTERM, SIGKILL), so none
# outlives the command (on Windows, where a process keeps its parent's id, only the first holds).
LOAD_PER_CORE = 2
BURN = """import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
parent = int(sys.argv[1])  # given, not read at start: kit.py may be gone before this line runs
while os.getppid() == parent:
    for _ in range(100_000):
        pass
"""
CHECK = "import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 12) else 1)"
READ_TEST_EXTRA = (
    "import tomllib; print('\\n'.join(tomllib.load(open('pyproject.toml', 'rb'))"
    "['project']['optional-dependencies']['test']))"
)
NO_PYTHON = """kit.py: no Python >= 3.12 found (coordkit needs 3.12 or newer, with the venv module).
Install Python 3.12, then run this again, for example:
  Windows:        winget install Python.Python.3.12   (or the installer from python.org), then py tools\\kit.py lab
  Debian/Ubuntu:  sudo apt-get install python3.12 python3.12-venv
  macOS:          brew install python@3.12
  pyenv:          pyenv install 3.12
  conda:          conda env create -f environment.yml   (then use that environment instead)
Or name one:  make lab PYTHON=/path/to/python3.12   (without make: set PYTHON, then run kit.py)"""


def venv_python(venv: Path = VENV, windows: bool = WINDOWS) -> Path:
    return venv / ("Scripts/python.exe" if windows else "bin/python")


def candidates(env: dict, running: str, windows: bool = WINDOWS) -> list[list[str]]:
    """The interpreters to try for .venv, in order; $PYTHON, when set, is the only one."""
    if env.get("PYTHON"):
        return [[env["PYTHON"]]]
    found = [[running], ["python3.13"], ["python3.12"], ["python3"]]
    if windows:
        found += [["py", "-3.13"], ["py", "-3.12"], ["py", "-3"]]
    roots = [env.get("PYENV_ROOT", ""), str(Path.home() / ".pyenv")]
    for root in dict.fromkeys(filter(None, roots)):
        found += [[str(p)] for p in sorted(Path(root).glob("versions/3.1[2-9]*/bin/python3"))]
    return found


def find_python() -> str:
    """The path of the first candidate that is a Python >= 3.12 with venv and ensurepip (not a shim)."""
    for command in candidates(dict(os.environ), sys.executable):
        try:
            checked = subprocess.run(command + ["-c", CHECK], capture_output=True, timeout=60)
            if checked.returncode == 0:
                where = subprocess.run(command + ["-c", "import sys; print(sys.executable)"], capture_output=True)
                return where.stdout.decode().strip()
        except (OSError, subprocess.TimeoutExpired):
            continue
    if os.environ.get("PYTHON"):
        sys.exit(f"kit.py: PYTHON={os.environ['PYTHON']} is not a Python >= 3.12 with venv and ensurepip")
    sys.exit(NO_PYTHON)


def stale(marker: Path, sources: list[Path]) -> bool:
    """Like make: the marker is missing, or older than one of its sources."""
    if not marker.exists():
        return True
    return any(source.stat().st_mtime > marker.stat().st_mtime for source in sources)


def install_commands(vpy: str, want: str, lab_stale: bool, test_stale: bool, test_extra: list[str]) -> list[list[str]]:
    """The pip commands that bring .venv to ``want`` ("lab" or "test"), given which markers are stale."""
    pip = [vpy, "-m", "pip", "install", "--quiet"]
    if lab_stale:
        target = ".[test]" if want == "test" else "."
        return [pip + ["--upgrade", "pip"], pip + ["-e", target]]
    if want == "test" and test_stale:
        return [pip + test_extra]
    return []


def lab_command(vpy: str, args: list[str], as_root: bool) -> list[str]:
    """JupyterLab on the start notebook; Jupyter refuses to run as root without --allow-root (containers, CI)."""
    command = [vpy, "-m", "jupyter", "lab", f"--ServerApp.root_dir={ROOT}", START]
    return command + (["--allow-root"] if as_root else []) + args


def test_commands(vpy: str, args: list[str]) -> list[list[str]]:
    """Ruff (lint, then format), then every test and notebook; pytest's arguments default to -q."""
    return [
        [vpy, "-m", "ruff", "check", "."],
        [vpy, "-m", "ruff", "format", "--check", "."],
        [vpy] + PYTEST + parallel() + (args or ["-q"]),
    ]


def parallel() -> list[str]:
    """pytest-xdist's arguments: one worker per core and one more, each taking whole files (a notebook's cells run in
    order on one kernel, and the browser tests share one JupyterLab). A tenth of the tests' time is spent waiting (on
    servers, subprocesses, time limits), which the extra worker fills (2 cores: 643 s with 2 workers, the cores 90%
    busy; 590 s with 3, 97% busy). ``-n 0`` as a test argument runs everything in this process (for -s, pdb)."""
    return ["-n", str(cores() + 1), "--dist", "loadfile"]


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else every core)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


@contextlib.contextmanager
def cpu_load(count: int):
    """``count`` CPU-bound processes (an empty loop each) running while the block runs, killed and reaped when it ends,
    however it ends (an error, Ctrl-C)."""
    burners = []
    try:
        for _ in range(count):
            burners.append(subprocess.Popen([sys.executable, "-c", BURN, str(os.getpid())], stdin=subprocess.DEVNULL))
        yield burners
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()


def binder_url(remote: str, ref: str = "HEAD") -> str | None:
    """The mybinder.org link that opens the start notebook from a GitHub remote (https or ssh); None otherwise."""
    github = r"^(?:https://(?:[^@/]+@)?|ssh://git@|git@)github\.com[:/]([^/]+)/([^/]+?)(?:\.git)?/?$"
    match = re.match(github, remote.strip())
    if not match:
        return None
    owner, name = match.groups()
    return f"https://mybinder.org/v2/gh/{owner}/{name}/{ref}?urlpath=lab/tree/{START}"


def run(command: list[str]) -> int:
    print("+ " + " ".join(map(shlex.quote, command)), flush=True)
    try:
        return subprocess.run(command, cwd=ROOT).returncode
    except KeyboardInterrupt:
        return 130


def ensure_venv() -> str:
    """.venv's Python, reused if it is >= 3.12, otherwise (re)created with the Python that find_python finds."""
    vpy = venv_python()
    if vpy.exists() and subprocess.run([str(vpy), "-c", CHECK], capture_output=True).returncode == 0:
        return str(vpy)
    python = find_python()
    print(f"Creating .venv with {python}", flush=True)
    if run([python, "-m", "venv", "--clear", str(VENV)]) != 0:
        sys.exit("kit.py: could not create .venv")
    return str(vpy)


def install(want: str) -> str:
    """Install what ``want`` needs into .venv if a marker is stale; return .venv's Python."""
    vpy = ensure_venv()
    lab_marker, test_marker = VENV / ".installed-lab", VENV / ".installed-test"
    lab_stale = stale(lab_marker, [ROOT / "pyproject.toml", ROOT / "tools/lab-overrides.json"])
    test_stale = stale(test_marker, [ROOT / "pyproject.toml"])
    extra = []
    if want == "test" and test_stale and not lab_stale:
        read = subprocess.run([vpy, "-c", READ_TEST_EXTRA], cwd=ROOT, capture_output=True, text=True, check=True)
        extra = read.stdout.splitlines()
    for command in install_commands(vpy, want, lab_stale, test_stale, extra):
        if run(command) != 0:
            sys.exit(f"kit.py: installing failed: {' '.join(command)}")
    if lab_stale:  # JupyterLab defaults for this environment: save widget state, so a saved notebook shows its panels
        settings = VENV / "share/jupyter/lab/settings"
        settings.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "tools/lab-overrides.json", settings / "overrides.json")
        lab_marker.touch()
    if want == "test":
        test_marker.touch()
    return vpy


def binder() -> int:
    remote = subprocess.run(["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True, text=True)
    url = binder_url(remote.stdout) if remote.returncode == 0 else None
    if url:
        print(url)
        print(f"Badge for a README: [![Binder](https://mybinder.org/badge_logo.svg)]({url})")
        print("Binder builds what is pushed to GitHub, not this checkout: push first.")
        return 0
    where = "the remote origin is not on GitHub" if remote.returncode == 0 else "there is no remote origin"
    print(
        f"kit.py: {where}. Binder needs the kit on a public GitHub repository: push it there "
        "(git remote add origin https://github.com/OWNER/NAME.git && git push -u origin main), then run this again; "
        "or paste the repository's URL into the form at https://mybinder.org with the file "
        f"{START}.",
        file=sys.stderr,
    )
    return 1


def run_tests(vpy: str, args: list[str]) -> int:
    """Ruff, then the tests; the first step that fails gives the exit code."""
    for step in test_commands(vpy, args):
        code = run(step)
        if code:
            return code
    return 0


def main(argv: list[str]) -> int:
    os.chdir(ROOT)
    command, args = (argv[0], argv[1:]) if argv else ("", [])
    if command == "lab":
        return run(lab_command(install("lab"), args, hasattr(os, "geteuid") and os.geteuid() == 0))
    if command in ("test", "test-loaded"):
        vpy = install("test")
        if command == "test":
            return run_tests(vpy, args)
        count = LOAD_PER_CORE * cores()
        with cpu_load(count):
            print(f"+ beside it: {count} CPU-bound processes ({LOAD_PER_CORE} per core), ended with it", flush=True)
            return run_tests(vpy, args)
    if command == "install" and args in (["lab"], ["test"]):
        install(args[0])
        return 0
    if command == "binder-url":
        return binder()
    if command == "clean":
        shutil.rmtree(VENV, ignore_errors=True)
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
