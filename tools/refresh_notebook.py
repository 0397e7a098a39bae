"""Re-execute a notebook and save it with outputs only in its cells tagged `nbval-check-output`.

nbval compares those stored outputs with a fresh run; every other output (charts, widgets) is stripped so
the notebook stays small and its diffs readable. Usage: .venv/bin/python tools/refresh_notebook.py NOTEBOOK...
"""

import pathlib
import subprocess
import sys

import nbformat

CHECKED = "nbval-check-output"  # the cell tag nbval reads: compare this cell's stored outputs with a fresh run


def refresh(path: pathlib.Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace", str(path)],
        check=True,
        cwd=path.parent,
        capture_output=True,
    )
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if CHECKED not in cell.metadata.get("tags", []):
            cell.outputs, cell.execution_count = [], None
        cell.metadata.pop("execution", None)
    notebook.metadata.pop("widgets", None)  # widget state without its outputs is dead weight
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        refresh(pathlib.Path(name).resolve())
