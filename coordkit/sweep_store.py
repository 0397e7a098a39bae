"""A sweep's durable results: one Parquet file per finished run, so an interrupted sweep resumes where it stopped.

A store is a folder::

    coordkit-sweep.json   the manifest: what was swept (the run, summary or frame, fixed parameters) and by which
                          coordkit (its version and a fingerprint of its code)
    runs/<key>.parquet    one finished run: its rows, labelled with parameters and seed; the file's metadata repeats
                          them with the coordkit version. ``key`` is a hash of the parameters and seed.

Each run file is written to a temporary name and renamed, so it is whole or absent, whenever the sweep is killed.
The manifest pins what the rows mean: a store made by another sweep, or by another version of the code (its runs
could differ), is refused with the reason. A sweep holds a lock on its store while it writes; a second one is
refused instead of interleaving.
"""

import fcntl
import hashlib
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from functools import cache
from numbers import Number
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import coordkit

FORMAT = 1
MANIFEST = "coordkit-sweep.json"
RUNS = "runs"
PACKAGE = Path(coordkit.__file__).parent


class StoreError(ValueError):
    """A store that cannot be used for this sweep: another sweep's, another code version's, or damaged."""


def run_name(run) -> str:
    """``module:qualname`` of a model class or a run function."""
    return f"{run.__module__}:{run.__qualname__}"


def code_fingerprint(run) -> str:
    """A hash of the code that computes the runs: the coordkit package, and ``run``'s own file if it lives outside
    (a function defined in a notebook cell has no file: a change to it is not seen)."""
    files = sorted(PACKAGE.rglob("*.py"))
    module_file = getattr(sys.modules.get(run.__module__), "__file__", None)  # none for a notebook's cells
    if module_file and not Path(module_file).resolve().is_relative_to(PACKAGE.resolve()):
        files.append(Path(module_file))
    return _fingerprint(tuple(files))


@cache
def _fingerprint(files: tuple[Path, ...]) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(str(path.relative_to(PACKAGE) if path.is_relative_to(PACKAGE) else path.name).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def plain(name: str, value: Any, what: str) -> Any:
    """``value`` if it can be stored and compared exactly (a number, string, boolean or None), else a clear error."""
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, Number):
        return value.item() if hasattr(value, "item") else value
    raise StoreError(
        f"store= keeps {what} that are numbers, strings, booleans or None; {name}={value!r} is a "
        f"{type(value).__name__}. Sweep it without a store, or make it one of those"
    )


class SweepStore:
    """The store at ``path`` for sweeping ``run`` (see the module docstring); use it in a ``with`` block."""

    def __init__(self, path: Path | str, run, *, fixed: dict[str, Any], frame: bool):
        self.path = Path(path)
        self.manifest = {
            "format": FORMAT,
            "run": run_name(run),
            "frame": frame,
            "fixed": {name: plain(name, value, "fixed parameters") for name, value in sorted(fixed.items())},
            "coordkit": coordkit.__version__,
            "code": code_fingerprint(run),
        }
        self._lock = None

    def __enter__(self) -> "SweepStore":
        self._open()
        return self

    def __exit__(self, *exc_info) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    @staticmethod
    def key(params: dict[str, Any], seed: int) -> str:
        """The file name of the run with these parameters and seed."""
        labels = {name: plain(name, value, "parameter values") for name, value in params.items()}
        text = json.dumps({"params": labels, "seed": int(seed)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def done(self) -> set[str]:
        """The keys of the runs already stored."""
        return {path.stem for path in (self.path / RUNS).glob("*.parquet")}

    def read(self, keys: list[str]) -> list[pd.DataFrame]:
        """The stored runs, in the order of ``keys`` (read in parallel)."""
        with ThreadPoolExecutor(max_workers=8) as pool:
            return list(pool.map(self._read_one, keys))

    def write(self, key: str, params: dict[str, Any], seed: int, result: pd.DataFrame) -> None:
        """Store one finished run, whole or not at all."""
        table = pa.Table.from_pandas(result, preserve_index=False)
        labels = {"params": params, "seed": int(seed), "coordkit": coordkit.__version__, "code": self.manifest["code"]}
        table = table.replace_schema_metadata({**table.schema.metadata, b"coordkit": json.dumps(labels).encode()})
        target = self.path / RUNS / f"{key}.parquet"
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        pq.write_table(table, temporary)
        os.replace(temporary, target)

    def _read_one(self, key: str) -> pd.DataFrame:
        path = self.path / RUNS / f"{key}.parquet"
        try:
            return pq.read_table(path).to_pandas()
        except (OSError, pa.ArrowException) as error:
            raise StoreError(
                f"{path} is damaged ({error}); delete it, and run the sweep again to compute that run anew"
            ) from None

    def _open(self) -> None:
        manifest = self.path / MANIFEST
        if self.path.exists() and not self.path.is_dir():
            raise StoreError(f"store={str(self.path)!r} is a file: give a folder (new or made by sweep)")
        if not manifest.exists() and self.path.exists() and any(self.path.iterdir()):
            raise StoreError(
                f"{self.path} is not a sweep store (it has no {MANIFEST}) and is not empty: give a new folder"
            )
        (self.path / RUNS).mkdir(parents=True, exist_ok=True)
        if not manifest.exists():
            created = {**self.manifest, "created": datetime.now(UTC).isoformat(timespec="seconds")}
            temporary = manifest.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(created, indent=2) + "\n", encoding="utf-8")
            os.replace(temporary, manifest)
        self._check(manifest)
        self._lock = manifest.open("rb")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            raise StoreError(f"{self.path} is in use by another sweep: wait for it, or give another folder") from None
        for leftover in (self.path / RUNS).glob("*.tmp"):  # a write cut short by a kill: never a finished run
            leftover.unlink(missing_ok=True)

    def _check(self, manifest: Path) -> None:
        try:
            found = json.loads(manifest.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as error:
            raise StoreError(f"{manifest} is damaged ({error}): give a new folder") from None
        if not isinstance(found, dict) or found.get("format") != FORMAT:
            raise StoreError(f"{manifest} is not a coordkit sweep manifest (format {FORMAT}): give a new folder")
        for field, meaning in (("run", "runs"), ("frame", "frame="), ("fixed", "fixed parameters")):
            if found.get(field) != self.manifest[field]:
                raise StoreError(
                    f"{self.path} holds another sweep: its {meaning} {found.get(field)!r}, this sweep's "
                    f"{self.manifest[field]!r}. Give each sweep its own folder"
                )
        if found.get("code") != self.manifest["code"]:
            raise StoreError(
                f"{self.path} was written by coordkit {found.get('coordkit')} (code {found.get('code')}), and this "
                f"is coordkit {coordkit.__version__} (code {self.manifest['code']}): its runs may not be what this "
                "code computes, so they are not mixed. Give a new folder, or delete this one to start over"
            )
