"""A figure's data, computed once per version of the kit and shared by `coordkit reproduce` and `coordkit claims`.

A figure computed at some seeds and base seed is kept in the cache folder (``$COORDKIT_CACHE``, else
``$XDG_CACHE_HOME/coordkit``, else ``~/.cache/coordkit``), under ``figures/``, as one Parquet file::

    <figure>--<seeds>-seeds--base-<base seed>--<code>.<sha256>.parquet

``code`` is a fingerprint of what computed it (every ``.py`` file of the package and every file under ``data/``
that a figure can read), ``sha256`` the SHA-256 of the file's own bytes, as in :mod:`coordkit.sweep_store`. Same
parameters and the same kit give the same data (the kit is deterministic), so a kept figure is what computing it
again would give; a change to any of those files gives a new fingerprint, and the old files of that figure are
removed when the new one is written (an entry that cannot be removed, such as a folder of that name, is left).

Parquet, not pickle, so that reading a file never runs code. A column of Python objects (the Beer Game's tuples, a
column of booleans and NaN) goes in as JSON text, cell by cell, and comes back as the same values; before a frame
is kept, its file is read back and must give exactly that frame (values, dtypes, each cell's type, attrs), or it
is not kept (one warning says so) and is computed each time.

Every read is verified: the file must be a plain file (no link, no folder), the user's, that no one else may
write; its bytes must match the checksum in its name, and its labels (figure, seeds, base seed, code, format) must
be those asked for. Any failure of any kind is a miss, computed again and written anew, never an error and never
other data. The checksum guards against accidents (a flipped bit, a torn file), not against someone who forges a
file and its name: that is what the folder's permissions are for. As ssh does with its keys, the cache is used only
if the cache folder and ``figures/`` are owned by the user and writable by no one else (each is made with mode
700), and read through the folder opened once, so that it cannot be swapped midway; else figures are computed
every time, after one warning (:class:`FigureCacheWarning`) that says why and the fix. A cache that cannot be
written is no error either: the figure was computed all the same.

Only rule-based figures are kept: a figure played by LLM agents or replayed from a recording is never cached.
"""

import hashlib
import json
import os
import re
import stat
import uuid
import warnings
from contextlib import suppress
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from coordkit import figures
from coordkit.paths import DATA
from coordkit.sweep_store import PACKAGE, files_fingerprint

FORMAT = 1
NOT_INPUTS = ("README.md", "notebook_times.csv", "claims.csv", "ledger.csv", "ledger_seeds.csv")  # no figure reads them
FILE = re.compile(r"(?P<stem>.+?--\d+-seeds--base-\d+--(?P<code>[^.]+))\.(?P<sha256>[0-9a-f]{64})\.parquet")
OTHERS_MAY_WRITE = stat.S_IWGRP | stat.S_IWOTH
_said: set[str] = set()  # the warnings given in this process: each once


class FigureCacheWarning(UserWarning):
    """The figure cache is not used (a folder others may write, or one that cannot be made), or a figure is not
    kept: figures are computed every time, which is slower, never wrong."""


class _Refused(Exception):
    """A cache folder that others may write, or that is not the user's."""


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
    labels = {"format": FORMAT, "figure": figure.id, "seeds": seeds, "base_seed": base_seed, "code": fingerprint()}
    cache = _cache_folder()
    try:
        kept = None if fresh or cache is None else _read(cache, labels)
        if kept is not None:
            return kept
        data = figure.compute(seeds, base_seed)
        if cache is not None:
            _keep(cache, labels, data)
        return data
    finally:
        if cache is not None:
            os.close(cache)


def _stem(labels: dict) -> str:
    return f"{labels['figure']}--{labels['seeds']}-seeds--base-{labels['base_seed']}--{labels['code']}"


def _cache_folder() -> int | None:
    """The figures folder, opened (made if needed); None, after a warning, when it cannot be used."""
    try:
        return _private_folder(folder())
    except _Refused as error:
        _warn(f"the figure cache is not used, so figures are computed every time: {error}")
    except OSError as error:
        _warn(f"the figure cache {folder()} cannot be used ({error.strerror}), so figures are computed every time")
    return None


def _private_folder(figures_folder: Path) -> int:
    """A descriptor of ``figures_folder``, once it and the cache folder above it are the user's alone."""
    root = figures_folder.parent
    root.parent.mkdir(parents=True, exist_ok=True)
    with suppress(FileExistsError):
        os.mkdir(root, 0o700)
    parent = _opened_private(str(root), root)
    try:
        with suppress(FileExistsError):
            os.mkdir(figures_folder.name, 0o700, dir_fd=parent)
        return _opened_private(figures_folder.name, figures_folder, parent)
    finally:
        os.close(parent)


def _opened_private(name: str, path: Path, parent: int | None = None) -> int:
    """A descriptor of the folder ``name`` (in ``parent``), checked to be the user's alone (it is ``path``)."""
    descriptor = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=parent)
    try:
        _check_private(os.fstat(descriptor), path)
    except _Refused:
        os.close(descriptor)
        raise
    return descriptor


def _check_private(status: os.stat_result, path: Path) -> None:
    """Refuse a file or folder that is not the user's, or that others may write."""
    if status.st_uid != os.geteuid():
        raise _Refused(
            f"{path} belongs to another user (uid {status.st_uid}, you are {os.geteuid()}). Set COORDKIT_CACHE to a "
            "folder of your own"
        )
    if status.st_mode & OTHERS_MAY_WRITE:
        raise _Refused(
            f"{path} may be written by others (mode {stat.S_IMODE(status.st_mode):o}). Make it yours alone "
            f"(chmod 700 {path}), or set COORDKIT_CACHE to a folder only you can write"
        )


def _warn(message: str) -> None:
    """Warn once per process with ``message``."""
    if message not in _said:
        _said.add(message)
        warnings.warn(message, FigureCacheWarning, skip_file_prefixes=(str(PACKAGE),))


def _read(cache: int, labels: dict) -> pd.DataFrame | None:
    """The kept frame for ``labels``, verified; None if there is none that passes every check."""
    stem = _stem(labels)
    try:
        names = sorted(name for name in os.listdir(cache) if (match := FILE.fullmatch(name)) and match["stem"] == stem)
    except OSError:
        return None
    for name in names:
        with suppress(Exception):  # any failure to read is a miss: the figure is computed again
            return _frame(_file_bytes(cache, name), labels, FILE.fullmatch(name)["sha256"])
    return None


def _file_bytes(cache: int, name: str) -> bytes:
    """The bytes of the plain file ``name`` in ``cache``, never through a link, once it is the user's alone."""
    descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=cache)
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise ValueError(f"{name} is not a plain file")
        _check_private(status, Path(name))
        return file.read()


def _frame(data: bytes, labels: dict, sha256: str) -> pd.DataFrame:
    """The frame in a file's bytes, once they match their SHA-256 and its labels are ``labels``."""
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError("its bytes do not match the SHA-256 in its name")
    table = pq.read_table(pa.BufferReader(data), page_checksum_verification=True)
    theirs = json.loads(table.schema.metadata[b"coordkit"])
    if {key: theirs[key] for key in labels} != labels:
        raise ValueError(f"its labels {theirs} are not {labels}")
    frame = table.to_pandas()
    for column in theirs["json_columns"]:
        cells = [json.loads(cell, object_hook=_tuple) for cell in frame[column]]
        frame[column] = pd.Series(cells, index=frame.index, dtype=object)
    return frame


def _parquet(data: pd.DataFrame, labels: dict) -> bytes:
    """``data`` as Parquet bytes labelled with ``labels``; columns of Python objects as JSON text."""
    json_columns = [column for column in data.columns if data[column].dtype == object]
    encoded = data.copy()
    for column in json_columns:
        encoded[column] = data[column].map(_json)
    table = pa.Table.from_pandas(encoded)
    metadata = json.dumps({**labels, "json_columns": json_columns}).encode()
    table = table.replace_schema_metadata({**table.schema.metadata, b"coordkit": metadata})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, write_page_checksum=True)
    return sink.getvalue().to_pybytes()


def _json(value) -> str:
    """One cell as JSON text, a tuple marked as one (JSON has lists only)."""
    return json.dumps(_tagged(value))


def _tagged(value):
    return {"tuple": [_tagged(item) for item in value]} if isinstance(value, tuple) else value


def _tuple(obj: dict):
    return tuple(obj["tuple"]) if obj.keys() == {"tuple"} else obj


def _keep(cache: int, labels: dict, data: pd.DataFrame) -> None:
    """Write ``data`` whole, if its file gives it back exactly, and remove the figure's other files."""
    try:
        content = _parquet(data, labels)
        sha256 = hashlib.sha256(content).hexdigest()
        differs = difference(_frame(content, labels, sha256), data)
    except Exception as error:  # a cell JSON cannot hold (a numpy scalar, an object): not kept
        differs = f"it cannot be written as Parquet ({type(error).__name__}: {error})"
    if differs:
        _warn(f"figure {labels['figure']} is not kept in the figure cache, so it is computed every time: {differs}")
        return
    name = f"{_stem(labels)}.{sha256}.parquet"
    try:
        _write(cache, name, content)
    except OSError as error:
        _warn(f"the figure cache {folder()} cannot be written ({error.strerror}), so figures are computed every time")
        return
    _remove_others(cache, labels["figure"], name)


def difference(kept: pd.DataFrame, data: pd.DataFrame) -> str | None:
    """How ``kept`` differs from ``data`` (values, dtypes, index, each cell's type, attrs), or None."""
    try:
        pd.testing.assert_frame_equal(kept, data, check_exact=True, check_column_type=True, check_index_type=True)
    except AssertionError as error:
        return f"it comes back from Parquet otherwise ({str(error).strip().splitlines()[0]})"
    for column in data.columns:
        if data[column].dtype == object and list(map(_types, kept[column])) != list(map(_types, data[column])):
            return f"its column {column!r} comes back from Parquet with cells of other types"
    if kept.attrs != data.attrs:
        return "it comes back from Parquet without its attrs"
    return None


def _types(value):
    """``value``'s type, and its items' types if it holds items (a tuple of floats is not a list of ints)."""
    return (type(value), *map(_types, value)) if isinstance(value, tuple | list) else type(value)


def _write(cache: int, name: str, content: bytes) -> None:
    """Write ``name`` in ``cache`` whole, for the user alone: to a partial file, then renamed."""
    partial = f".{name}.{os.getpid()}.{uuid.uuid4().hex}"
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=cache)
        with os.fdopen(descriptor, "wb") as file:
            file.write(content)
        os.replace(partial, name, src_dir_fd=cache, dst_dir_fd=cache)
    except BaseException:
        with suppress(OSError):
            os.unlink(partial, dir_fd=cache)
        raise


def _remove_others(cache: int, figure_id: str, name: str) -> None:
    """Remove the files of ``figure_id`` made by other versions of the kit, and other copies of ``name``; an entry
    that cannot be removed (a folder, no permission) is left."""
    with suppress(OSError):
        for other in os.listdir(cache):
            if other.startswith(f"{figure_id}--") and other != name and not _beside(other, name):
                with suppress(OSError):
                    os.unlink(other, dir_fd=cache)


def _beside(other: str, name: str) -> bool:
    """Whether ``other`` is a file this kit keeps beside ``name`` (the same figure at other seeds)."""
    theirs, ours = FILE.fullmatch(other), FILE.fullmatch(name)
    return theirs is not None and theirs["code"] == ours["code"] and theirs["stem"] != ours["stem"]
