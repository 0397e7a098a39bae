"""A figure's data, computed once per version of the kit and shared by `coordkit reproduce` and `coordkit claims`.

A figure computed at some seeds and base seed is kept, pickled, in the cache folder (``$COORDKIT_CACHE``, else
``$XDG_CACHE_HOME/coordkit``, else ``~/.cache/coordkit``), under ``figures/``, named by the figure, the seeds,
the base seed and a fingerprint of the code and data that computed it (every ``.py`` file of the package and every
file under ``data/`` that a figure can read). Same parameters and the same kit give the same data (the kit is
deterministic), so a kept figure is what computing it again would give; a change to any of those files gives a new
fingerprint, and the old files of that figure are removed when the new one is written. Files are written whole
(:func:`coordkit.outputs.atomic`); one that cannot be read is computed again and replaced. Pickle, not Parquet,
because it gives back exactly the frame that was kept (Parquet turns the Beer Game's tuples into arrays and a
column of booleans and NaN into another type), and the folder is the user's own, trusted as Python trusts the
``.pyc`` files it caches beside its sources.

Only rule-based figures are kept: a figure played by LLM agents or replayed from a recording is never cached.
"""

import os
import pickle
from pathlib import Path

import pandas as pd

from coordkit import figures
from coordkit.outputs import atomic
from coordkit.paths import DATA
from coordkit.sweep_store import PACKAGE, files_fingerprint

NOT_INPUTS = ("README.md", "notebook_times.csv", "claims.csv", "ledger.csv")  # data files no figure reads


def folder() -> Path:
    """Where kept figures live (see the module docstring)."""
    if os.environ.get("COORDKIT_CACHE"):
        root = Path(os.environ["COORDKIT_CACHE"])
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "coordkit"
    return root / "figures"


def fingerprint() -> str:
    """A hash of what computes a figure: the package's code and the data it reads."""
    code = sorted(PACKAGE.rglob("*.py"))
    data = sorted(p for p in DATA.rglob("*") if p.is_file() and p.name not in NOT_INPUTS)
    return files_fingerprint(tuple(code + data))


def computed(figure: figures.Figure, seeds: int, base_seed: int, *, fresh: bool = False) -> pd.DataFrame:
    """``figure.compute(seeds, base_seed)``, read from the cache when this kit has computed it before (unless
    ``fresh``), else computed (on the engine in use: :func:`coordkit.engines.using`) and kept."""
    path = _path(figure.id, seeds, base_seed)
    if not fresh and path.is_file():
        try:
            return pd.read_pickle(path)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError):  # damaged: again
            pass
    data = figure.compute(seeds, base_seed)
    _keep(data, path)
    return data


def _path(figure_id: str, seeds: int, base_seed: int) -> Path:
    return folder() / f"{figure_id}--{seeds}-seeds--base-{base_seed}--{fingerprint()}.pickle"


def _keep(data: pd.DataFrame, path: Path) -> None:
    """Write ``data`` whole and remove the files of the same figure made by other versions of the kit; a cache that
    cannot be written is no error (the figure was computed all the same)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic(path) as temporary:
            data.to_pickle(temporary)
    except OSError:
        return
    figure_id = path.name.partition("--")[0]
    for old in path.parent.glob(f"{figure_id}--*.pickle"):
        if not old.name.endswith(f"--{fingerprint()}.pickle"):
            old.unlink(missing_ok=True)
