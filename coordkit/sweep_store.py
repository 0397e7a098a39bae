"""A sweep's durable results: one Parquet file per finished run, so an interrupted sweep resumes where it stopped.

A store is a folder::

    coordkit-sweep.json             the manifest: what was swept (the run, summary or frame, fixed parameters) and
                                    by which coordkit (its version and a fingerprint of its code)
    runs/<key>.<sha256>.parquet     one finished run: its rows, labelled with parameters and seed; the file's
                                    metadata repeats them with the manifest's fields. ``key`` is a hash of the
                                    parameters and seed, ``sha256`` the SHA-256 of the file's own bytes.
    damaged/                        the run files that failed their checks, moved aside (made when first needed)

Each run file is written whole to a partial name (``.coordkit-partial-<pid>-<n>``) and renamed, so it is whole or
absent whenever the sweep is killed; a store removes the partial files of dead writers only, never a file of
yours. The checksum lives in the file's name: the rename records data and checksum together, and no damaged byte
inside the file can also mend its checksum (a damaged name no longer names a run, or names one whose bytes do not
match).

Every stored run is verified as it is read: the file must be a plain file (not a folder, not a symbolic link), its
bytes must match the SHA-256 in its name, its labels (parameters and seed, run, frame, fixed parameters, code) must
be those of its key and of this store, and the columns that label its rows must say the same. A run that fails
is never returned: it is moved to ``damaged/``, one warning (:class:`DamagedRunWarning`) names each such file and
why, and the sweep computes that run again, so that it still ends with the frame of an uninterrupted sweep. The
checksum guards against accidents (a flipped bit, a torn or renamed file), not against someone who forges a file
and its name.

The manifest pins what the rows mean: a store made by another sweep, by another version of the code (its runs
could differ) or in another store format is refused with the reason. A sweep holds a lock on its store while it
writes; a second one is refused instead of interleaving. Every surprise in the layout (a file where a folder
belongs, or the reverse), and a store it cannot write to (probed when it opens; a finished one is still read), is
a :class:`StoreError` before any run is computed; a write that fails later (a full disk) is a :class:`StoreError`
that keeps the finished runs.
"""

import errno
import fcntl
import hashlib
import itertools
import json
import os
import re
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from datetime import UTC, datetime
from functools import cache
from numbers import Number
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

import coordkit

FORMAT = 2
MANIFEST = "coordkit-sweep.json"
RUNS = "runs"
DAMAGED = "damaged"
PARTIAL = ".coordkit-partial-"
RUN_FILE = re.compile(r"(?P<key>[0-9a-f]{32})\.(?P<sha256>[0-9a-f]{64})\.parquet")
PARTIAL_FILE = re.compile(re.escape(PARTIAL) + r"(?P<pid>\d+)-\d+")
SWEEP_FIELDS = ("run", "frame", "fixed", "code")
PACKAGE = Path(coordkit.__file__).parent
_partial_numbers = itertools.count()


class StoreError(ValueError):
    """A store that cannot be used for this sweep: another sweep's, another code version's or format's, one whose
    files are not what a store keeps, or one the filesystem will not let it write to."""


class DamagedRunWarning(UserWarning):
    """Stored runs failed their checks: they were moved to the store's ``damaged/`` folder and are computed again."""


class DamagedRun(Exception):
    """Why a stored run file cannot be trusted."""


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
    return files_fingerprint(tuple(files))


@cache
def files_fingerprint(files: tuple[Path, ...]) -> str:
    """A short hash of the files' names and bytes (each named by its path in the package, or by its own name)."""
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


def write_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` whole or not at all: to a partial name of this process, then renamed."""
    partial = target.parent / f"{PARTIAL}{os.getpid()}-{next(_partial_numbers)}"
    try:
        partial.write_bytes(data)
        os.replace(partial, target)
    except BaseException:
        _remove_quietly(partial)
        raise


def _remove_quietly(path: Path) -> None:
    """Remove ``path`` if it can be (a read-only filesystem refuses even to remove what is not there)."""
    with suppress(OSError):
        path.unlink()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this machine (its partial files may still be written)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


def _kind(path: Path) -> str:
    if path.is_symlink():
        return "a symbolic link"
    return "a folder" if path.is_dir() else "a file"


def _plain_file_bytes(path: Path) -> bytes:
    """The bytes of ``path`` if it is a plain file, never through a symbolic link."""
    if path.is_symlink():
        raise DamagedRun(f"it is a symbolic link (to {os.readlink(path)}), not a file the store wrote")
    if not path.is_file():
        raise DamagedRun(f"it is {_kind(path)}, not a file the store wrote")
    try:
        return path.read_bytes()
    except OSError as error:
        raise DamagedRun(f"it cannot be read ({error.strerror})") from None


def _map_in_threads(function, items: list) -> list:
    """``function`` over ``items``, in up to 8 threads (reading files overlaps); no thread for a single item."""
    if len(items) < 2:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(function, items))


def _free_name(path: Path) -> Path:
    """``path``, or ``path`` with the first suffix ``.1``, ``.2``, ... that names nothing yet."""
    candidates = (path.with_name(f"{path.name}.{copy}") for copy in itertools.count(1))
    return path if not os.path.lexists(path) else next(c for c in candidates if not os.path.lexists(c))


def _label_columns(table: pa.Table, labels: dict[str, Any]) -> list[str]:
    """The columns that hold a run's parameter or seed in every row (not the run's own columns of those names)."""
    return [
        name
        for name, value in labels.items()
        if name in table.column_names and all(_same(cell, value) for cell in table.column(name).to_pylist())
    ]


def _same(cell: Any, value: Any) -> bool:
    return isinstance(cell, str | Number | None) and cell == value


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
        self.unwritable: StoreError | None = None  # set when the store opens (see require_writable)

    def __enter__(self) -> "SweepStore":
        self._open()
        return self

    def __exit__(self, *exc_info) -> None:
        self._unlock()

    def _unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    @staticmethod
    def key(params: dict[str, Any], seed: int) -> str:
        """The key of the run with these parameters and seed (the start of its file's name)."""
        labels = {name: plain(name, value, "parameter values") for name, value in params.items()}
        text = json.dumps({"params": labels, "seed": int(seed)}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def stored(self) -> dict[str, Path]:
        """The run files by key, not yet verified (``read`` verifies them); other names in ``runs/`` are ignored."""
        names = sorted(entry.name for entry in os.scandir(self.path / RUNS))
        return {match["key"]: self.path / RUNS / name for name in names if (match := RUN_FILE.fullmatch(name))}

    def read(self, keys: list[str]) -> list[pd.DataFrame | None]:
        """Each key's stored rows, verified (read in parallel); None where the run is not stored, or failed its
        checks: then its file is moved to ``damaged/``, one warning names each such file and why, and the sweep
        computes that run again."""
        files = self.stored()
        present = list(dict.fromkeys(key for key in keys if key in files))
        found = dict(zip(present, _map_in_threads(lambda key: self._read_or_reason(key, files[key]), present)))
        damaged = {key: reason for key, reason in found.items() if isinstance(reason, DamagedRun)}
        if damaged:
            self._set_aside({files[key]: reason for key, reason in damaged.items()})
        return [None if key in damaged else found.get(key) for key in keys]

    def write(self, key: str, params: dict[str, Any], seed: int, result: pd.DataFrame) -> None:
        """Store one finished run, whole or not at all, under its key and the SHA-256 of its bytes."""
        labels = {name: plain(name, value, "parameter values") for name, value in params.items()}
        table = pa.Table.from_pandas(result, preserve_index=False)
        metadata = {
            **{field: self.manifest[field] for field in SWEEP_FIELDS},
            "params": labels,
            "seed": int(seed),
            "coordkit": coordkit.__version__,
            "label_columns": _label_columns(table, {**labels, "seed": int(seed)}),
        }
        table = table.replace_schema_metadata({**table.schema.metadata, b"coordkit": json.dumps(metadata).encode()})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
        target = self.path / RUNS / f"{key}.{hashlib.sha256(data).hexdigest()}.parquet"
        try:
            write_atomically(target, data)
        except OSError as error:
            kept = ". The runs finished so far are kept in it: run the same sweep again to compute only the rest"
            raise self._unwritable(error, f"{target.name} could not be written", kept) from None

    def _read_or_reason(self, key: str, path: Path) -> pd.DataFrame | DamagedRun:
        """The verified rows of the run file ``path``, or why they cannot be trusted."""
        try:
            data = _plain_file_bytes(path)
            if hashlib.sha256(data).hexdigest() != RUN_FILE.fullmatch(path.name)["sha256"]:
                raise DamagedRun("its bytes do not match the SHA-256 in its name")
            return self._checked_rows(key, data)
        except DamagedRun as reason:
            return reason

    def _checked_rows(self, key: str, data: bytes) -> pd.DataFrame:
        """The rows of a run file whose checksum matched, once its labels are checked against ``key`` and this
        store."""
        try:
            table = pq.read_table(pa.BufferReader(data))
            labels = json.loads(table.schema.metadata[b"coordkit"])
            rows = table.to_pandas()
            theirs = {field: labels[field] for field in SWEEP_FIELDS}
            runs_key = self.key(labels["params"], labels["seed"])
            values = {**labels["params"], "seed": labels["seed"]}
            holding = set(_label_columns(table, values))
            unlabelled = [name for name in labels["label_columns"] if name not in holding]
        except Exception as error:  # bytes that match their checksum yet do not parse were not written by a store
            raise DamagedRun(f"it is not a run file a store writes ({type(error).__name__}: {error})") from None
        if theirs != {field: self.manifest[field] for field in SWEEP_FIELDS}:
            raise DamagedRun(f"its labels say it belongs to another sweep ({theirs})")
        if runs_key != key:
            raise DamagedRun(f"its labels (params {labels['params']}, seed {labels['seed']}) are another run's")
        if unlabelled:
            raise DamagedRun(f"its rows' {', '.join(unlabelled)} are not its labels {values} in every row")
        return rows

    def _set_aside(self, damaged: dict[Path, DamagedRun]) -> None:
        """Move each damaged run file to ``damaged/`` and warn once, naming each file and why."""
        aside = self.path / DAMAGED
        lines = []
        try:
            aside.mkdir(exist_ok=True)
            for path, reason in damaged.items():
                moved = _free_name(aside / path.name)
                os.rename(path, moved)  # a symbolic link moves as a link, a folder as a whole
                lines.append(f"  {RUNS}/{path.name}: {reason} (now {DAMAGED}/{moved.name})")
        except OSError as error:
            raise self._unwritable(error, f"a damaged run file could not be moved to {aside}") from None
        warnings.warn(
            f"store {str(self.path)!r}: {len(lines)} stored run(s) failed their checks, so they were moved to its "
            f"{DAMAGED}/ folder and are computed again:\n" + "\n".join(lines),
            DamagedRunWarning,
            skip_file_prefixes=(str(PACKAGE),),
        )

    def _unwritable(self, error: OSError, what: str, then: str = "") -> StoreError:
        """The error for a write into the store that the filesystem refused (read-only, full, no permission)."""
        code = errno.errorcode.get(error.errno, "no errno")
        fix = "free some space" if code in ("ENOSPC", "EDQUOT") else "make it writable"
        return StoreError(
            f"store {str(self.path)!r}: {what} ({error.strerror or error} [{code}]): {fix}, or give a folder on "
            f"another filesystem{then}"
        )

    def _open(self) -> None:
        self._check_layout()
        manifest = self.path / MANIFEST
        try:
            (self.path / RUNS).mkdir(parents=True, exist_ok=True)
            if not manifest.exists():
                created = {**self.manifest, "created": datetime.now(UTC).isoformat(timespec="seconds")}
                write_atomically(manifest, (json.dumps(created, indent=2) + "\n").encode())
        except OSError as error:
            raise self._unwritable(error, "it cannot be created", " (no run was computed)") from None
        self._check(manifest)
        self._lock = manifest.open("rb")
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._unlock()
            raise StoreError(f"{self.path} is in use by another sweep: wait for it, or give another folder") from None
        self.unwritable = self._probe_write()
        if self.unwritable is None:
            self._remove_dead_partials()

    def require_writable(self) -> None:
        """Refuse to compute runs that could not be kept: a finished store on read-only media is still read, but
        a sweep with runs to do fails here, before the first one, if the probe at open could not write."""
        if self.unwritable is not None:
            raise self.unwritable

    def _check_layout(self) -> None:
        """Refuse, before anything is written, a path whose files are not what a store keeps there."""
        existing = next(p for p in (self.path, *self.path.absolute().parents) if os.path.lexists(p))
        if not existing.is_dir():
            where = "" if existing == self.path else f" is inside {existing}, which"
            raise StoreError(
                f"store={str(self.path)!r}{where} is {_kind(existing)}: give a folder (new or made by sweep)"
            )
        if existing != self.path:
            return
        manifest, runs = self.path / MANIFEST, self.path / RUNS
        if manifest.is_symlink() or (manifest.exists() and not manifest.is_file()):
            raise StoreError(f"{manifest} is {_kind(manifest)}, not a store's manifest file: give a new folder")
        for folder, role in ((runs, "folder of runs"), (self.path / DAMAGED, "folder of damaged runs")):
            if os.path.lexists(folder) and not folder.is_dir():
                raise StoreError(
                    f"{folder} is {_kind(folder)}, not the store's {role}: move it away, or give a new folder"
                )
        if not manifest.exists() and any(self.path.iterdir()):
            raise StoreError(
                f"{self.path} is not a sweep store (it has no {MANIFEST}) and is not empty: give a new folder"
            )

    def _probe_write(self) -> StoreError | None:
        """The error to give if the store cannot be written to (see :meth:`require_writable`), else None."""
        probe = self.path / RUNS / f"{PARTIAL}{os.getpid()}-{next(_partial_numbers)}"
        try:
            probe.write_bytes(b"probe")
        except OSError as error:
            return self._unwritable(error, "it cannot be written to", " (no run was computed)")
        finally:
            _remove_quietly(probe)
        return None

    def _remove_dead_partials(self) -> None:
        """Remove the partial files of writers that died (killed mid-write); never another name, nor a live one."""
        for folder in (self.path, self.path / RUNS):
            for partial in folder.glob(f"{PARTIAL}*"):
                match = PARTIAL_FILE.fullmatch(partial.name)
                if match and partial.is_file() and not partial.is_symlink() and not _alive(int(match["pid"])):
                    partial.unlink(missing_ok=True)

    def _check(self, manifest: Path) -> None:
        try:
            found = json.loads(manifest.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as error:
            raise StoreError(f"{manifest} is damaged ({error}): give a new folder") from None
        if not isinstance(found, dict) or "format" not in found:
            raise StoreError(f"{manifest} is not a coordkit sweep manifest (format {FORMAT}): give a new folder")
        if found["format"] != FORMAT:
            raise StoreError(
                f"{manifest} is a store of format {found['format']!r}, and this coordkit keeps format {FORMAT}: "
                "give a new folder, or delete this one to start over"
            )
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
