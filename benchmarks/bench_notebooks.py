"""How long each notebook takes to run top to bottom: the *runs in* column of 00's map.

    .venv/bin/python benchmarks/bench_notebooks.py [PATH_PREFIX ...]

Runs every notebook under notebooks/, solutions included (or those whose paths from there start with a prefix
given: ``03``, ``solutions/``), in a fresh kernel, cell by cell as *Run All* does, and prints the wall time of
each. JupyterLab adds a few seconds of drawing; a shared machine's speed drifts, so measure on a quiet one.
"""

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def run_all_seconds(path: Path) -> float:
    """Seconds from a new kernel to the last cell's end, kernel start-up included."""
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    return time.perf_counter() - started


if __name__ == "__main__":
    prefixes = tuple(sys.argv[1:]) or ("",)
    for path in sorted(NOTEBOOKS.rglob("*.ipynb")):
        name = path.relative_to(NOTEBOOKS).as_posix()
        if name.startswith(prefixes) and ".ipynb_checkpoints" not in name:
            print(f"{name:52} {run_all_seconds(path):5.1f} s", flush=True)
