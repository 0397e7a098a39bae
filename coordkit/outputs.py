"""Writing the kit's output files: checked before any work, written whole or not at all.

A destination is checked before a run starts (and before an LLM run spends anything), so a bad ``--out`` fails
at once with a message naming it. Every file is written to a temporary file beside it and renamed into place
(``os.replace`` is atomic on POSIX and Windows): a reader, or another run writing the same file at the same time,
sees the old file or the new one, never a torn mixture.
"""

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def writable_folder(folder: str | Path, option: str = "--out") -> Path:
    """``folder``, created if needed, once it is sure that files can be written into it; else a ValueError
    naming ``option``, the folder and why."""
    if not str(folder).strip():
        raise ValueError(f"{option} is empty: name a folder for the outputs, e.g. {option} out/")
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise ValueError(f"{option} {folder}: this is a file, not a folder; name a folder") from None
    except OSError as error:
        raise ValueError(f"{option} {folder}: cannot create this folder ({error.strerror}); name another") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {folder}: cannot write into this folder; name another") from None
    return path


def writable_file(file: str | Path, option: str = "--out") -> Path:
    """``file``, once its folder is writable and it is not a folder itself; else a ValueError naming ``option``."""
    if not str(file).strip():
        raise ValueError(f"{option} is empty: name a file")
    path = Path(file)
    if path.is_dir():
        raise ValueError(f"{option} {file}: this is a folder; name a file in it")
    writable_folder(path.parent, option)
    return path


@contextmanager
def atomic(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix) to write to; renamed onto ``path`` when the block succeeds,
    removed when it fails."""
    path = Path(path)
    temporary = path.with_name(f".{path.stem}.{os.getpid()}.{uuid.uuid4().hex}{path.suffix}")
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
