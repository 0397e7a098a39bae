"""tools/kit.py, behind `make lab` and `make test` (and Windows users' route without make): the commands it builds,
checked without installing or running anything; and the split it relies on, that the notebooks and the package
need no test tool."""

import ast
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("kit", ROOT / "tools" / "kit.py")
kit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kit)

VPY = "/repo/.venv/bin/python"
TEST_TOOLS = {"pytest", "pytest-xdist", "nbval", "hypothesis", "ruff", "playwright"}  # the test extra
TEST_MODULES = {"pytest", "xdist", "nbval", "hypothesis", "ruff", "playwright"}  # what they are imported as
MAKE_VARIABLES = ("LAB_ARGS", "TEST_ARGS", "PYTHON")  # the Makefile's variables a user may set in the environment


def test_make_test_runs_ruff_then_every_test_and_notebook_quietly_unless_told_otherwise():
    lint, formatting, tests = kit.test_commands(VPY, [])
    assert lint == [VPY, "-m", "ruff", "check", "."]
    assert formatting == [VPY, "-m", "ruff", "format", "--check", "."]
    assert tests == [VPY, "-m", "pytest", "tests", "notebooks", "--nbval-lax", "--nbval-sanitize-with"] + [
        "tests/nbval_sanitize.cfg",
        *["-n", str(kit.cores() + 1), "--dist", "loadfile"],  # a test file to a worker, one per core and one more
        "-q",
    ]
    assert kit.test_commands(VPY, ["-q", "-m", "not browser"])[2][-3:] == ["-q", "-m", "not browser"]


@pytest.fixture
def loaded_run(monkeypatch):
    """``kit.main(["test-loaded"])`` with nothing installed or run: each step's command, and whether each load process
    was alive then, are recorded; the load processes are the real ones, one per core's share on a one-core machine."""
    steps, burners = [], []
    real_load = kit.cpu_load

    @contextlib.contextmanager
    def recorded_load(count):
        with real_load(count) as started:
            burners.extend(started)
            yield started

    monkeypatch.setattr(kit, "install", lambda want: VPY)
    monkeypatch.setattr(kit, "cores", lambda: 1)
    monkeypatch.setattr(kit, "cpu_load", recorded_load)
    return steps, burners


def test_make_test_loaded_runs_the_suite_beside_two_busy_processes_per_core_and_ends_them(loaded_run, monkeypatch):
    steps, burners = loaded_run

    def run(command):
        steps.append((command, [burner.poll() is None for burner in burners]))
        if len(steps) == 1 and Path("/proc/self/stat").exists():  # busy: each burns CPU, however loaded the machine
            deadline = time.monotonic() + 60  # only a guard against a hang
            while min(map(_cpu_ticks, burners)) < 20 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert min(map(_cpu_ticks, burners)) >= 20  # 0.2 s of CPU each at the usual 100 ticks a second
        return 0

    monkeypatch.setattr(kit, "run", run)
    assert kit.main(["test-loaded", "-q", "-x"]) == 0
    assert [command for command, _ in steps] == kit.test_commands(VPY, ["-q", "-x"])  # the same steps as make test
    assert [alive for _, alive in steps] == [[True, True]] * 3  # 2 per core, running through every step
    assert [burner.poll() is not None for burner in burners] == [True, True]  # ended and reaped


def _cpu_ticks(process: subprocess.Popen) -> int:
    """The CPU time a running process has used, in clock ticks (user and system, from /proc)."""
    with open(f"/proc/{process.pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@pytest.mark.parametrize("ending", ["failure", "error", "ctrl-c"])
def test_the_load_ends_however_the_tests_end(loaded_run, monkeypatch, ending):
    steps, burners = loaded_run

    def run(command):
        steps.append(command)
        if ending == "error":
            raise RuntimeError("pytest could not start")
        return 130 if ending == "ctrl-c" else 1  # kit.run gives 130 for a KeyboardInterrupt

    monkeypatch.setattr(kit, "run", run)
    with pytest.raises(RuntimeError) if ending == "error" else contextlib.nullcontext():
        assert kit.main(["test-loaded"]) == (130 if ending == "ctrl-c" else 1)
    assert len(steps) == 1 and len(burners) == 2
    assert all(burner.poll() is not None for burner in burners)


def _running(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (one that ended and awaits its new parent's wait)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_the_load_ends_by_itself_when_kit_py_is_killed_outright():
    """SIGKILL leaves kit.py no `finally`: each load process sees that its parent is gone and stops."""
    script = (
        f"import importlib.util, sys, time\n"
        f"spec = importlib.util.spec_from_file_location('kit', {str(ROOT / 'tools' / 'kit.py')!r})\n"
        "kit = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(kit)\n"
        "with kit.cpu_load(2) as burners:\n"
        "    print(*[burner.pid for burner in burners], flush=True)\n"
        "    time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_running(pid) for pid in pids)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 60  # only a guard against a hang: each checks its parent every ~100,000 loops
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if _running(pid)], "load processes outlived the kit.py that started them"


def test_make_lab_opens_the_start_notebook_and_adds_allow_root_only_for_root():
    command = kit.lab_command(VPY, ["--no-browser"], as_root=False)
    assert command[:4] == [VPY, "-m", "jupyter", "lab"]
    assert f"--ServerApp.root_dir={kit.ROOT}" in command
    assert command[-2:] == ["notebooks/00_start_here.ipynb", "--no-browser"]
    assert kit.lab_command(VPY, [], as_root=True)[-1] == "--allow-root"


@pytest.mark.parametrize(
    "want, lab_stale, test_stale, expected",
    [
        ("test", True, True, [["--upgrade", "pip"], ["-e", ".[test]"]]),  # make test on a fresh clone: everything
        ("lab", True, True, [["--upgrade", "pip"], ["-e", "."]]),  # make lab: no test tool
        ("test", False, True, [["pytest>=8", "ruff"]]),  # make lab, then make test: only the test extra
        ("test", False, False, []),  # nothing changed since
        ("lab", False, True, []),  # make lab never installs the test tools
    ],
)
def test_installs_only_what_is_missing(want, lab_stale, test_stale, expected):
    commands = kit.install_commands(VPY, want, lab_stale, test_stale, ["pytest>=8", "ruff"])
    pip = [VPY, "-m", "pip", "install", "--quiet"]
    assert commands == [pip + rest for rest in expected]


def test_a_marker_is_stale_when_missing_or_older_than_a_source(tmp_path):
    source, marker = tmp_path / "pyproject.toml", tmp_path / ".installed-lab"
    source.touch()
    assert kit.stale(marker, [source])
    marker.touch()
    assert not kit.stale(marker, [source])
    later = marker.stat().st_mtime + 10
    os.utime(source, (later, later))
    assert kit.stale(marker, [source])


def test_the_test_extra_is_read_from_pyproject():
    read = subprocess.run([sys.executable, "-c", kit.READ_TEST_EXTRA], cwd=ROOT, capture_output=True, text=True)
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert read.stdout.splitlines() == extra


def test_python_is_found_from_python_first_and_the_windows_launcher_on_windows():
    assert kit.candidates({"PYTHON": "/opt/py312"}, "/usr/bin/python3") == [["/opt/py312"]]
    found = kit.candidates({}, "/usr/bin/python3", windows=False)
    assert found[:4] == [["/usr/bin/python3"], ["python3.13"], ["python3.12"], ["python3"]]
    assert ["py", "-3.12"] in kit.candidates({}, "C:/Python/python.exe", windows=True)
    assert kit.venv_python(Path(".venv"), windows=True) == Path(".venv/Scripts/python.exe")


@pytest.mark.parametrize(
    "remote",
    [
        "https://github.com/ada/coordkit.git",
        "https://github.com/ada/coordkit",
        "git@github.com:ada/coordkit.git",
        "ssh://git@github.com/ada/coordkit.git",
        "https://x-access-token:SECRET@github.com/ada/coordkit.git\n",
    ],
)
def test_the_binder_link_comes_from_a_github_remote(remote):
    url = kit.binder_url(remote)
    assert url == "https://mybinder.org/v2/gh/ada/coordkit/HEAD?urlpath=lab/tree/notebooks/00_start_here.ipynb"


def test_no_binder_link_for_a_remote_elsewhere():
    assert kit.binder_url("https://gitlab.com/ada/coordkit.git") is None
    assert kit.binder_url("/work/main") is None


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_the_makefile_delegates_to_kit_py():
    def dry_run(*args):
        # as run from a shell, not from within make test (whose MAKEFLAGS and MAKELEVEL a sub-make would read)
        # (nor with the Makefile's own variables from the environment, as `TEST_ARGS=... bash .ci/run` sets them)
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", *MAKE_VARIABLES)}
        command = ["make", "--no-print-directory", "-n", *args]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout

    assert "tools/kit.py lab --no-browser --port 8899" in dry_run("lab", "LAB_ARGS=--no-browser --port 8899")
    assert dry_run("test").rstrip().endswith("tools/kit.py test -q")
    assert 'tools/kit.py test -q -m "not browser"' in dry_run("test", 'TEST_ARGS=-q -m "not browser"')
    assert dry_run("test-loaded").rstrip().endswith("tools/kit.py test-loaded -q")


def imported_modules(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_the_notebooks_and_the_package_import_no_test_tool():
    """`make lab` installs the base dependencies only, so nothing a student runs may need the test extra."""
    offenders = {}
    for path in (ROOT / "coordkit").rglob("*.py"):
        offenders[path] = imported_modules(path.read_text(encoding="utf-8")) & TEST_MODULES
    for path in (ROOT / "notebooks").rglob("*.ipynb"):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]
        lines = [line for line in "\n".join(code).splitlines() if not line.lstrip().startswith(("%", "!"))]
        offenders[path] = imported_modules("\n".join(lines)) & TEST_MODULES
    assert not {str(path.relative_to(ROOT)): sorted(names) for path, names in offenders.items() if names}


def test_the_base_dependencies_hold_no_test_tool():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = {requirement.split("[")[0].split(">")[0].split("<")[0].strip() for requirement in project["dependencies"]}
    assert not base & TEST_TOOLS
    assert {requirement.split(">")[0] for requirement in project["optional-dependencies"]["test"]} == TEST_TOOLS
