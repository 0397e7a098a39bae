"""The figure cache (coordkit.figure_cache): a figure computed once is read back exactly, by `coordkit reproduce`
and by the ledger alike; anything else it finds (a damaged file, a planted one, another version's, a folder others
may write) is a miss, computed again, never other data and never a traceback (issue 43)."""

import dataclasses
import errno
import hashlib
import os
import pickle
import random
from contextlib import nullcontext

import numpy as np
import pandas as pd
import pytest

from coordkit import cli, figure_cache, figures

FLIPS = 200  # seeded single-byte changes in the fuzz (benchmarks/fuzz_figure_cache.py plays 1,500)


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COORDKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(figure_cache, "_said", set())  # each test sees its warnings
    return tmp_path / "cache" / "figures"


def exactly(kept: pd.DataFrame, data: pd.DataFrame) -> bool:
    """Whether two frames are the same data: values, dtypes, index, each cell's type, and the CSV they write."""
    pd.testing.assert_frame_equal(kept, data, check_exact=True, check_column_type=True, check_index_type=True)
    for column in (name for name in data.columns if data[name].dtype == object):
        assert [repr(cell) for cell in kept[column]] == [repr(cell) for cell in data[column]], column
        assert [type(cell) for cell in kept[column]] == [type(cell) for cell in data[column]], column
    assert kept.to_csv(index=False) == data.to_csv(index=False)
    return True


def counting(figure_id: str, data: pd.DataFrame | None = None) -> tuple[figures.Figure, list]:
    """The figure, with a compute that counts its calls (and gives ``data``, when given, instead of playing)."""
    figure, calls = figures.get(figure_id), []

    def compute(seeds, base_seed, **keywords):
        calls.append((seeds, base_seed))
        return figure.compute(seeds, base_seed, **keywords) if data is None else data.copy(deep=True)

    return dataclasses.replace(figure, compute=compute), calls


def only_file(cache, figure_id: str):
    (path,) = cache.glob(f"{figure_id}--*")
    return path


def test_a_figure_is_computed_once_and_read_back_exactly(cache):
    figure, calls = counting("rep-beer-fig1")  # its frame holds tuples of floats, which Parquet has not
    first = figure_cache.computed(figure, 2, 0)
    second = figure_cache.computed(figure, 2, 0)
    assert calls == [(2, 0)] and exactly(second, first)
    path = only_file(cache, "rep-beer-fig1")
    assert figure_cache.FILE.fullmatch(path.name)["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert path.stat().st_mode & 0o777 == 0o600 and cache.stat().st_mode & 0o777 == 0o700


def test_other_seeds_or_fresh_compute_again(cache):
    figure, calls = counting("delay-fig4")
    figure_cache.computed(figure, 2, 0)
    figure_cache.computed(figure, 3, 0)
    figure_cache.computed(figure, 2, 1)
    figure_cache.computed(figure, 2, 0, fresh=True)
    assert calls == [(2, 0), (3, 0), (2, 1), (2, 0)]
    assert len(list(cache.iterdir())) == 3


def fuzzed(cache, monkeypatch, figure_id: str, reseal: bool) -> list[str]:
    """What each of :data:`FLIPS` seeded single-byte changes to the kept file gives: "hit" (the exact frame, read)
    or "miss" (computed again); a different frame fails, as does any exception. With ``reseal``, each damaged file
    is renamed to its new SHA-256, so that the damage reaches the Parquet reader."""
    monkeypatch.setattr(figure_cache, "fingerprint", lambda: "0123456789abcdef")  # not hashed again at each read
    data = figures.get(figure_id).compute(2, 0)
    figure, calls = counting(figure_id, data)
    figure_cache.computed(figure, 2, 0)
    path = only_file(cache, figure_id)
    original, rng, outcomes = path.read_bytes(), random.Random(43), []
    for _ in range(FLIPS):
        damaged = bytearray(original)
        damaged[rng.randrange(len(damaged))] ^= rng.randrange(1, 256)
        for entry in cache.iterdir():
            entry.unlink()
        sha256 = hashlib.sha256(damaged).hexdigest() if reseal else figure_cache.FILE.fullmatch(path.name)["sha256"]
        planted = path.with_name(path.name.replace(figure_cache.FILE.fullmatch(path.name)["sha256"], sha256))
        planted.write_bytes(bytes(damaged))
        planted.chmod(0o600)
        before = len(calls)
        got = figure_cache.computed(figure, 2, 0)
        outcomes.append("miss" if len(calls) > before else "hit")
        if not reseal:
            assert exactly(got, data)
    return outcomes


def test_a_byte_flip_in_a_kept_file_is_a_miss_never_other_data(cache, monkeypatch):
    assert fuzzed(cache, monkeypatch, "delay-fig4", reseal=False) == ["miss"] * FLIPS


def test_a_damaged_file_that_matches_its_checksum_is_read_or_missed_never_a_traceback(cache, monkeypatch):
    """Past the checksum (a forged name), the reader still never raises: every failure is a miss."""
    outcomes = fuzzed(cache, monkeypatch, "delay-fig4", reseal=True)
    assert outcomes.count("miss") > FLIPS / 2


def test_a_damaged_file_is_computed_again_and_replaced(cache):
    figure, calls = counting("delay-fig4")
    kept = figure_cache.computed(figure, 2, 0)
    path = only_file(cache, "delay-fig4")
    written = path.read_bytes()
    path.write_bytes(b"not parquet")
    assert exactly(figure_cache.computed(figure, 2, 0), kept)
    assert len(calls) == 2 and path.read_bytes() == written


def test_a_planted_pickle_never_runs(cache, tmp_path):
    """A pickle that would run code, under the old cache's name and under the new one's (with its checksum)."""
    figure, calls = counting("delay-fig4")
    kept = figure_cache.computed(figure, 2, 0)
    marker = tmp_path / "ran"
    evil = pickle.dumps(Planted(str(marker)))
    name = only_file(cache, "delay-fig4").name
    stem = figure_cache.FILE.fullmatch(name)["stem"]
    for entry in cache.iterdir():
        entry.unlink()
    (cache / f"{stem}.pickle").write_bytes(evil)
    (cache / f"{stem}.{hashlib.sha256(evil).hexdigest()}.parquet").write_bytes(evil)
    for entry in cache.iterdir():
        entry.chmod(0o600)
    assert exactly(figure_cache.computed(figure, 2, 0), kept)
    assert len(calls) == 2 and not marker.exists()
    assert [entry.name for entry in cache.iterdir()] == [name]  # the planted files are removed with the old


class Planted:
    """Unpickled, it would create the file ``marker``."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize(("where", "mode"), [("figures", 0o777), ("figures", 0o770), ("root", 0o1777), ("root", 0o720)])
def test_a_cache_folder_others_may_write_is_refused_with_one_warning(cache, where, mode):
    figure, calls = counting("delay-fig4")
    kept = figure_cache.computed(figure, 2, 0)
    folder = cache if where == "figures" else cache.parent
    folder.chmod(mode)
    with pytest.warns(figure_cache.FigureCacheWarning, match=f"may be written by others \\(mode {mode:o}\\)") as said:
        for _ in range(3):
            assert exactly(figure_cache.computed(figure, 2, 0), kept)
    assert len(said) == 1 and f"chmod 700 {folder}" in str(said[0].message)
    assert len(calls) == 4  # the file there, sound as it is, was not read


def test_a_cache_folder_of_another_user_is_refused(cache, monkeypatch):
    figure, calls = counting("delay-fig4")
    figure_cache.computed(figure, 2, 0)
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    with pytest.warns(figure_cache.FigureCacheWarning, match="belongs to another user"):
        figure_cache.computed(figure, 2, 0)
    assert len(calls) == 2


@pytest.mark.parametrize("kind", ["link", "fifo", "folder", "group-writable"])
def test_an_entry_that_is_not_a_plain_file_of_the_users_is_a_miss(cache, tmp_path, kind):
    figure, calls = counting("delay-fig4")
    kept = figure_cache.computed(figure, 2, 0)
    path = only_file(cache, "delay-fig4")
    if kind == "group-writable":
        path.chmod(0o620)
    else:
        moved = path.rename(tmp_path / "elsewhere")
        {"link": lambda: path.symlink_to(moved), "fifo": lambda: os.mkfifo(path), "folder": path.mkdir}[kind]()
    in_the_way = pytest.warns(figure_cache.FigureCacheWarning, match="Is a directory")  # the new file cannot go there
    with in_the_way if kind == "folder" else nullcontext():
        assert exactly(figure_cache.computed(figure, 2, 0), kept)
    assert len(calls) == 2


def test_a_new_version_of_the_kit_replaces_the_old_files_and_steps_round_what_it_cannot_remove(cache, monkeypatch):
    figure, calls = counting("delay-fig4")
    kept = figure_cache.computed(figure, 2, 0)
    figure_cache.computed(figure, 3, 0)
    (cache / "delay-fig4--2-seeds--base-0--0123456789abcdef.pickle").write_bytes(b"an old version's")
    (cache / "delay-fig4--2-seeds--base-0--fedcba9876543210.pickle").mkdir()  # in the way: cannot be unlinked
    monkeypatch.setattr(figure_cache, "fingerprint", lambda: "another-version")
    assert exactly(figure_cache.computed(figure, 2, 0), kept)
    left = sorted(path.name.split(".")[0] for path in cache.iterdir())
    assert left == ["delay-fig4--2-seeds--base-0--another-version", "delay-fig4--2-seeds--base-0--fedcba9876543210"]
    assert len(calls) == 3


def test_a_cache_that_cannot_be_made_is_no_error(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("COORDKIT_CACHE", str(blocked))
    figure, calls = counting("delay-fig4")
    with pytest.warns(figure_cache.FigureCacheWarning, match="cannot be used"):
        assert len(figure_cache.computed(figure, 2, 0)) > 0
        assert len(figure_cache.computed(figure, 2, 0)) > 0 and len(calls) == 2


def test_a_cache_that_cannot_be_written_is_no_error(cache, monkeypatch):
    def full(cache, name, content):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(figure_cache, "_write", full)
    figure, calls = counting("delay-fig4")
    with pytest.warns(figure_cache.FigureCacheWarning, match="cannot be written \\(No space left on device\\)"):
        assert len(figure_cache.computed(figure, 2, 0)) > 0
    assert len(calls) == 1 and list(cache.iterdir()) == []


def test_a_frame_that_would_not_come_back_exactly_is_not_kept(cache):
    data = pd.DataFrame({"round": [0, 1], "note": pd.Series([np.int64(3), "x"], dtype=object)})
    figure, calls = counting("delay-fig4", data)
    with pytest.warns(figure_cache.FigureCacheWarning, match="figure delay-fig4 is not kept"):
        figure_cache.computed(figure, 2, 0)
    figure_cache.computed(figure, 2, 0)
    assert len(calls) == 2 and list(cache.iterdir()) == []


def test_the_fingerprint_covers_the_data_a_figure_reads(monkeypatch, tmp_path):
    before = figure_cache.fingerprint()
    data = tmp_path / "data"
    data.mkdir()
    (data / "protocol.bspl").write_text("Purchase {}")
    monkeypatch.setattr(figure_cache, "DATA", data)
    figure_cache.files_fingerprint.cache_clear()
    assert figure_cache.fingerprint() != before


def test_reproduce_shares_the_cache_and_fresh_computes_again(tmp_path, cache, capsys):
    out = tmp_path / "out"
    assert cli.main(["reproduce", "delay-fig4", "--seeds", "2", "--out", str(out)]) == 0
    written = (out / "delay-fig4.csv").read_bytes()
    path = only_file(cache, "delay-fig4")
    stamp = path.stat().st_mtime_ns
    assert cli.main(["reproduce", "delay-fig4", "--seeds", "2", "--out", str(out)]) == 0
    assert path.stat().st_mtime_ns == stamp and (out / "delay-fig4.csv").read_bytes() == written
    assert cli.main(["reproduce", "delay-fig4", "--seeds", "2", "--out", str(out), "--fresh"]) == 0
    assert path.stat().st_mtime_ns != stamp and (out / "delay-fig4.csv").read_bytes() == written
