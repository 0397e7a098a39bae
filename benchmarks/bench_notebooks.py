"""How long each notebook takes to run top to bottom: the *runs in* column of 00's map.

    .venv/bin/python benchmarks/bench_notebooks.py [--passes N] [--write] [PATH_PREFIX ...]

Runs every notebook under notebooks/, solutions included (or those whose paths from there start with a prefix
given: ``03``, ``solutions/``), in a fresh kernel, cell by cell as *Run All* does, and prints the wall time of
each. JupyterLab adds a few seconds of drawing; a shared machine's speed drifts, so measure on a quiet one.

With ``--passes N`` it goes over the notebooks N times and gives each notebook's median, with its fastest and
slowest run: a shared VM's speed drifts by a fifth within half an hour (02 took 20.1 and 27.4 s on the same code
here), so that one pass can land on a fast or a slow moment for every notebook at once. Before each pass it times
a fixed pure-Python loop (:func:`speed_probe`), the machine's speed at that moment: the same loop took 0.39 s and,
twenty minutes later on the same idle VM, 0.77–0.98 s, when every notebook took a fifth longer or more.

``--write`` also stores the times (the medians) in data/notebook_times.csv (notebook, seconds, date, machine, and
probe_s: the median probe), replacing the rows of the notebooks measured. Notebook 00 shows that table in a checked
output, so refresh 00 afterwards (``tools/refresh_notebook.py``).
"""

import argparse
import datetime
import os
import platform
import statistics
import time
from pathlib import Path

import nbformat
import pandas as pd
from nbclient import NotebookClient

from coordkit.outputs import atomic
from coordkit.paths import DATA

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
TABLE = DATA / "notebook_times.csv"


def run_all_seconds(path: Path) -> float:
    """Seconds from a new kernel to the last cell's end, kernel start-up included."""
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    return time.perf_counter() - started


PROBE_LOOPS = 6_000_000


def speed_probe() -> float:
    """Seconds a fixed pure-Python loop of ``PROBE_LOOPS`` additions takes here: how fast the machine runs Python at
    this moment (a shared VM's speed drifts), to read the times beside."""
    started = time.perf_counter()
    total = 0
    for number in range(PROBE_LOOPS):
        total += number
    return time.perf_counter() - started


def machine() -> str:
    """The machine in a few words: cores, system, Python."""
    return f"{os.cpu_count()} cores, {platform.system()} {platform.machine()}, Python {platform.python_version()}"


def write(times: dict[str, float], probe_s: float) -> None:
    """Store ``times`` in the table, with the speed probe's seconds, replacing those notebooks' rows and keeping the
    others'."""
    columns = ["notebook", "seconds", "date", "machine", "probe_s"]
    rows = pd.read_csv(TABLE) if TABLE.exists() else pd.DataFrame(columns=columns)
    measured = pd.DataFrame(
        {"notebook": list(times), "seconds": [round(s, 1) for s in times.values()], "date": str(datetime.date.today())}
    ).assign(machine=machine(), probe_s=round(probe_s, 2))
    rows = pd.concat([rows[~rows["notebook"].isin(times)], measured]).sort_values("notebook")
    with atomic(TABLE) as temporary:
        rows.to_csv(temporary, index=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*", default=[""], metavar="PATH_PREFIX")
    parser.add_argument("--passes", type=int, default=1, help="go over the notebooks this many times (medians)")
    parser.add_argument("--write", action="store_true", help=f"store the times in {TABLE.relative_to(DATA.parent)}")
    arguments = parser.parse_args()
    if arguments.passes < 1:
        parser.error(f"--passes {arguments.passes}: give 1 or more")
    chosen = [
        path
        for path in sorted(NOTEBOOKS.rglob("*.ipynb"))
        if path.relative_to(NOTEBOOKS).as_posix().startswith(tuple(arguments.prefixes))
        and ".ipynb_checkpoints" not in path.parts
    ]
    runs: dict[str, list[float]] = {path.relative_to(NOTEBOOKS).as_posix(): [] for path in chosen}
    probes = []
    for number in range(1, arguments.passes + 1):
        probes.append(speed_probe())
        print(f"pass {number}  speed probe: {probes[-1]:.2f} s (a fixed Python loop; higher is slower)", flush=True)
        for path in chosen:
            name = path.relative_to(NOTEBOOKS).as_posix()
            runs[name].append(run_all_seconds(path))
            print(f"pass {number}  {name:52} {runs[name][-1]:5.1f} s", flush=True)
    times = {name: statistics.median(seconds) for name, seconds in runs.items()}
    if arguments.passes > 1:
        print(f"\nmedians of {arguments.passes} passes (fastest – slowest):")
        for name, seconds in runs.items():
            print(f"{name:52} {times[name]:5.1f} s   ({min(seconds):.1f} – {max(seconds):.1f})")
    if arguments.write:
        write(times, statistics.median(probes))
