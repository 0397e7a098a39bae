"""How fast the kit starts, in fresh processes, against issue 26's targets.

    .venv/bin/python benchmarks/bench_startup.py [--repeats 5]

Prints the median wall time of ``import coordkit`` (target < 0.3 s); of ``coordkit --help``, ``list``, ``models``
and ``run beer-game --help`` (each < 1 s); of ``import mesa`` alone and of a first Beer Game,
``from coordkit import BeerGame; BeerGame(rng=0).run()``, played alternately so that a busy machine's drift hits
both alike, with the median of their paired differences (target < 0.3 s); and the three slowest imports of
``import coordkit.cli`` (from ``python -X importtime``). Each figure has its CPU time (user + system) beside it,
which a machine shared with other work disturbs less than the wall time.

Where ``PYTHONDONTWRITEBYTECODE`` is set, every process compiles coordkit's modules from source, which an installed
kit does not (pip compiles them once), so the first game is also timed with its compiled modules kept, in a
temporary folder (``PYTHONPYCACHEPREFIX``).
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
COORDKIT = str(Path(sys.executable).with_name("coordkit"))  # the console script, as a user runs it
COMMANDS = {
    "import coordkit": ([PYTHON, "-c", "import coordkit"], 300),
    "coordkit --help": ([COORDKIT, "--help"], 1000),
    "coordkit list": ([COORDKIT, "list"], 1000),
    "coordkit models": ([COORDKIT, "models"], 1000),
    "coordkit run beer-game --help": ([COORDKIT, "run", "beer-game", "--help"], 1000),
}
MESA = [PYTHON, "-c", "import mesa"]
FIRST_GAME = [PYTHON, "-c", "from coordkit import BeerGame; BeerGame(rng=0).run()"]
FIRST_GAME_EXTRA_MS = 300


def fresh(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """The wall time and the CPU time of one fresh process running ``command``, in milliseconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return 1000 * wall, 1000 * cpu


def medians(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(wall for wall, _ in times), statistics.median(cpu for _, cpu in times)


def compiled_once(cache: str) -> dict[str, str]:
    """The environment of a process that keeps its compiled modules in ``cache``, as an installed kit has them."""
    env = dict(os.environ, PYTHONPYCACHEPREFIX=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def differences(times: list[tuple[float, float]], base: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(wall - base_wall, cpu - base_cpu) for (wall, cpu), (base_wall, base_cpu) in zip(times, base)]


def line(label: str, wall: float, cpu: float, target_ms: float | None = None) -> str:
    verdict = f"   target < {target_ms:4.0f} ms   {'ok' if wall < target_ms else 'OVER'}" if target_ms else ""
    return f"  {label:<34} {wall:6.0f} ms   (CPU {cpu:5.0f} ms){verdict}"


def slowest_imports(module: str, count: int = 3) -> list[tuple[str, int, int]]:
    """The ``count`` imports that take longest (cumulative µs) under ``import module``, with their own time."""
    report = subprocess.run([PYTHON, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True)
    rows = []
    for entry in report.stderr.splitlines()[1:]:  # the first line is the header
        own, cumulative, name = entry.removeprefix("import time:").split("|")
        if name.strip() != module:
            rows.append((name.strip(), int(own), int(cumulative)))
    return sorted(rows, key=lambda row: row[2], reverse=True)[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per figure (default: 5)")
    repeats = parser.parse_args().repeats
    compiles = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    if compiles:
        print("PYTHONDONTWRITEBYTECODE is set: every process compiles coordkit's modules from source\n")

    print(f"Fresh processes, median wall time of {repeats}")
    for label, (command, target_ms) in COMMANDS.items():
        print(line(label, *medians([fresh(command) for _ in range(repeats)]), target_ms))

    with tempfile.TemporaryDirectory() as cache:
        kept = compiled_once(cache)
        fresh(FIRST_GAME, kept)  # compiles the modules, once
        mesa, game, game_kept = [], [], []
        for _ in range(repeats):
            mesa.append(fresh(MESA))
            game.append(fresh(FIRST_GAME))
            if compiles:
                game_kept.append(fresh(FIRST_GAME, kept))
    print("A first Beer Game against importing Mesa alone, played alternately")
    print(line("import mesa", *medians(mesa)))
    print(line("import coordkit, BeerGame().run()", *medians(game)))
    print(line("difference (median of the pairs)", *medians(differences(game, mesa)), FIRST_GAME_EXTRA_MS))
    if compiles:
        print(line("the same, modules compiled once", *medians(differences(game_kept, mesa)), FIRST_GAME_EXTRA_MS))

    print("Slowest imports of `import coordkit.cli` (cumulative: the module and what it imports)")
    for name, own, cumulative in slowest_imports("coordkit.cli"):
        print(f"  {name:<34} {cumulative / 1000:6.0f} ms   (its own code {own / 1000:.0f} ms)")


if __name__ == "__main__":
    main()
