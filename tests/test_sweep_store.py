"""The sweep store never returns a wrong number (issue 29): every stored run is verified as it is read, and a run
that fails is moved aside and computed again; every surprise in the store's layout, and a store it cannot write to,
is a clear StoreError before any run is computed. The tests run as root, which may write anywhere: a read-only or
full filesystem is simulated by making the store's write path (``Path.write_bytes``) raise EROFS, EACCES or
ENOSPC."""

import errno
import hashlib
import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pandas.testing import assert_frame_equal
from sweep_targets import CountingEngine, coin_run, seed_echo_run

from coordkit.sweep_store import (
    DAMAGED,
    FORMAT,
    MANIFEST,
    PARTIAL,
    RUNS,
    DamagedRunWarning,
    StoreError,
    SweepStore,
)
from coordkit.sweeps import sweep

GRID = {"p": [0.3, 0.7], "flips": [10, 20]}
SEEDS = [1, 2]
real_write_bytes = Path.write_bytes


def swept(store, engine=None):
    return sweep(coin_run, GRID, seeds=SEEDS, store=store, engine=engine, progress=False)


@pytest.fixture
def expected():
    return sweep(coin_run, GRID, seeds=SEEDS, progress=False)


@pytest.fixture
def store(tmp_path):
    """A finished store of the 8 runs of ``swept``."""
    swept(tmp_path / "s")
    return tmp_path / "s"


def run_files(store: Path) -> list[Path]:
    return sorted((store / RUNS).glob("*.parquet"))


def opened(store: Path) -> SweepStore:
    return SweepStore(store, coin_run, fixed={}, frame=False)


def forged(store: Path, path: Path, change) -> Path:
    """``path``'s run rewritten by ``change(rows, labels)`` under a name whose checksum matches: only the label
    checks can catch it."""
    table = pq.read_table(path)
    labels = json.loads(table.schema.metadata[b"coordkit"])
    rows, labels = change(table.to_pandas(), labels)
    table = pa.Table.from_pandas(rows, preserve_index=False)
    table = table.replace_schema_metadata({**table.schema.metadata, b"coordkit": json.dumps(labels).encode()})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    data = sink.getvalue().to_pybytes()
    path.unlink()
    target = store / RUNS / f"{path.name[:32]}.{hashlib.sha256(data).hexdigest()}.parquet"
    target.write_bytes(data)
    return target


def test_a_bit_flipped_anywhere_in_a_run_file_is_caught_and_never_read_as_data(store):
    """A dense sample of 3,848 single-bit flips: one in every byte of a stored run file (3,848 bytes; bit i % 8 of
    byte i), each read through the store's own read path. Every flip is caught (moved aside, warned): none is
    returned as data, right or wrong."""
    path = run_files(store)[0]
    data, key = path.read_bytes(), path.name[:32]
    with opened(store) as kept, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        original = kept.read([key])[0]
        returned = []
        for byte in range(len(data)):
            flipped = bytearray(data)
            flipped[byte] ^= 1 << (byte % 8)
            path.write_bytes(bytes(flipped))
            got = kept.read([key])[0]
            if got is not None:
                returned.append((byte, got.equals(original)))
            (store / DAMAGED / path.name).unlink()
    assert original is not None and len(data) > 3000
    assert returned == []
    assert len(caught) == len(data) and all(w.category is DamagedRunWarning for w in caught)


def test_a_bit_flipped_in_a_run_files_name_never_returns_its_rows(store):
    """Every single-bit flip of a run file's name (105 characters: 840 flips, less those that give '/' or NUL).
    The name then names no run (its key is computed again), or a run whose checksum or labels fail: neither the
    file's own key nor the key its name now spells returns rows."""
    path = run_files(store)[0]
    flips, returned = 0, []
    with opened(store) as kept, warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        for bit in range(len(path.name) * 8):
            name = bytearray(path.name.encode())
            name[bit // 8] ^= 1 << (bit % 8)
            if b"/" in name or 0 in name:
                continue
            flips += 1
            moved = path.with_name(name.decode("latin-1"))
            path.rename(moved)
            if kept.read([path.name[:32], moved.name[:32]]) != [None, None]:
                returned.append(bit)
            (moved if moved.exists() else next((store / DAMAGED).iterdir())).rename(path)
    assert flips > 800 and returned == []


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda s, a, b: a.write_bytes(a.read_bytes()[:-100]), "do not match the SHA-256 in its name"),
        (lambda s, a, b: a.write_bytes(b""), "do not match the SHA-256 in its name"),
        (lambda s, a, b: (a.unlink(), a.mkdir()), "it is a folder, not a file the store wrote"),
        (
            lambda s, a, b: (shutil.copy(b, s.parent / "elsewhere"), a.unlink(), a.symlink_to(s.parent / "elsewhere")),
            "it is a symbolic link .*elsewhere",
        ),  # fmt: skip
        (lambda s, a, b: (a.rename(s / "x"), b.rename(a), (s / "x").rename(b)), "do not match the SHA-256"),
        (
            lambda s, a, b: (
                a.rename(s / "x"),
                b.rename(a.with_name(a.name[:32] + b.name[32:])),
                (s / "x").rename(b.with_name(b.name[:32] + a.name[32:])),
            ),
            "are another run's",
        ),  # fmt: skip
        (
            lambda s, a, b: forged(s, a, lambda rows, labels: (rows.assign(p=-1.0), labels)),
            "rows' p are not its labels",
        ),
        (lambda s, a, b: forged(s, a, lambda rows, labels: (rows, {**labels, "code": "0ther"})), "another sweep"),
        (lambda s, a, b: forged(s, a, lambda rows, labels: (rows, [labels])), "not a run file a store writes"),
    ],
    ids=["torn", "empty", "a-folder", "a-symlink", "names-swapped", "keys-swapped", "row-labels", "code", "labels"],
)
def test_a_damaged_run_is_moved_aside_named_and_computed_again(store, expected, damage, reason):
    first, second = run_files(store)[:2]
    damage(store, first, second)
    counting = CountingEngine()
    with pytest.warns(DamagedRunWarning, match=f"(?s){str(store)!r}: .* moved to its damaged/ folder .*{reason}"):
        assert_frame_equal(swept(store, counting), expected)
    recomputed = counting.runs
    assert recomputed in (1, 2) and len(list((store / DAMAGED).iterdir())) == recomputed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_frame_equal(swept(store, counting), expected)  # now whole: nothing to warn of, nothing to run
    assert counting.runs == recomputed


def test_runs_with_their_own_seed_column_and_all_plain_parameter_kinds_read_back_unwarned(tmp_path):
    grid = {"flag": [True, None], "name": ["a"], "x": [2.5]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = sweep(labelled_run, grid, seeds=[3], store=tmp_path, progress=False)
        assert_frame_equal(sweep(labelled_run, grid, seeds=[3], store=tmp_path, progress=False), first)
        echoed = sweep(seed_echo_run, seeds=[4], store=tmp_path / "echo", progress=False)
        assert_frame_equal(sweep(seed_echo_run, seeds=[4], store=tmp_path / "echo", progress=False), echoed)
    assert echoed["seed"].tolist() == [-4]


def labelled_run(flag, name, x, seed):
    """One row for every kind of plain parameter value."""
    return {"value": x * seed}


def test_the_same_sweep_stores_byte_identical_files(tmp_path):
    swept(tmp_path / "a")
    swept(tmp_path / "b")
    assert [path.name for path in run_files(tmp_path / "a")] == [path.name for path in run_files(tmp_path / "b")]


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        (lambda s: ((s / MANIFEST).unlink(), (s / MANIFEST).mkdir()), "coordkit-sweep.json is a folder, not a store's"),
        (lambda s: ((s / MANIFEST).rename(s / "m"), (s / MANIFEST).symlink_to(s / "m")), "json is a symbolic link"),
        (lambda s: (shutil.rmtree(s / RUNS), (s / RUNS).write_text("x")), "runs is a file, not the store's folder"),
        (lambda s: (s / DAMAGED).write_text("x"), "damaged is a file, not the store's folder of damaged runs"),
    ],
    ids=["manifest-a-folder", "manifest-a-symlink", "runs-a-file", "damaged-a-file"],
)
def test_a_store_whose_files_are_not_what_a_store_keeps_is_refused_before_any_run(store, layout, message):
    layout(store)
    counting = CountingEngine()
    with pytest.raises(StoreError, match=message):
        swept(store, counting)
    assert counting.runs == 0


def test_a_store_path_inside_a_file_or_through_a_broken_link_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(StoreError, match=r"/f/store' is inside .*/f, which is a file: give a folder"):
        swept(tmp_path / "f" / "store")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises(StoreError, match="link' is a symbolic link: give a folder"):
        swept(tmp_path / "link")


def test_a_store_of_an_older_format_is_refused(store):
    manifest = json.loads((store / MANIFEST).read_text())
    (store / MANIFEST).write_text(json.dumps({**manifest, "format": FORMAT - 1}))
    with pytest.raises(StoreError, match=f"a store of format {FORMAT - 1}, and this coordkit keeps format {FORMAT}"):
        swept(store)


def refusing(code: int, after: int = 0):
    """A ``Path.write_bytes`` that writes ``after`` files, then writes half of each and raises ``code``."""
    writes = iter(range(10**6))

    def write_bytes(path, data):
        if next(writes) < after:
            return real_write_bytes(path, data)
        real_write_bytes(path, data[: len(data) // 2])
        raise OSError(code, os.strerror(code), str(path))

    return write_bytes


def read_only(code: int):
    """A ``Path`` method that refuses every change with ``code``, as a read-only filesystem does."""

    def refuse(path, *args, **kwargs):
        raise OSError(code, os.strerror(code), str(path))

    return refuse


@pytest.mark.parametrize("code", [errno.EROFS, errno.EACCES])
@pytest.mark.parametrize("new", [True, False], ids=["new-store", "half-done-store"])
def test_a_store_that_cannot_be_written_is_refused_when_it_opens_before_any_run(tmp_path, monkeypatch, code, new):
    if not new:
        sweep(coin_run, {"p": [0.3], "flips": [10]}, seeds=SEEDS, store=tmp_path / "s", progress=False)
    for method in ("write_bytes", "unlink"):
        monkeypatch.setattr(Path, method, read_only(code))
    counting = CountingEngine()
    doing = "cannot be created" if new else "cannot be written to"
    with pytest.raises(StoreError, match=rf"/s': it {doing} \(.* \[{errno.errorcode[code]}\]\).*no run was computed"):
        swept(tmp_path / "s", counting)
    assert counting.runs == 0


def test_a_finished_store_on_read_only_media_is_still_read(tmp_path, monkeypatch, expected):
    swept(tmp_path / "s")
    for method in ("write_bytes", "unlink"):
        monkeypatch.setattr(Path, method, read_only(errno.EROFS))
    counting = CountingEngine()
    assert_frame_equal(swept(tmp_path / "s", counting), expected)
    assert counting.runs == 0


def test_a_full_disk_is_a_clear_error_that_keeps_the_finished_runs(tmp_path, monkeypatch, expected):
    monkeypatch.setattr(Path, "write_bytes", refusing(errno.ENOSPC, after=2 + 3))  # manifest, probe, 3 runs
    with pytest.raises(StoreError, match=r"could not be written \(No space left .*\[ENOSPC\]\): free some space"):
        swept(tmp_path / "s")
    assert len(run_files(tmp_path / "s")) == 3 and not list(tmp_path.rglob(f"{PARTIAL}*"))
    monkeypatch.undo()
    counting = CountingEngine()
    assert_frame_equal(swept(tmp_path / "s", counting), expected)
    assert counting.runs == 8 - 3


def test_only_the_partial_files_of_dead_writers_are_removed(store):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    kept = [
        store / RUNS / "my-notes.tmp",
        store / RUNS / f"{PARTIAL}notes",
        store / RUNS / f"{PARTIAL}{os.getpid()}-7",  # a live writer's
    ]
    removed = [store / RUNS / f"{PARTIAL}{int(dead.stdout)}-0", store / f"{PARTIAL}{int(dead.stdout)}-1"]
    for path in kept + removed:
        path.write_text("mine")
    swept(store)
    assert [path.exists() for path in kept + removed] == [True] * len(kept) + [False] * len(removed)
