"""The figure cache (coordkit.figure_cache): a figure computed once is read back exactly, by `coordkit reproduce`
and by the ledger alike; a damaged file or a new version of the kit computes it again."""

import dataclasses

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from coordkit import cli, figure_cache, figures


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COORDKIT_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / "figures"


def counting(figure_id: str) -> tuple[figures.Figure, list]:
    """The figure, with a compute that counts its calls."""
    figure, calls = figures.get(figure_id), []

    def compute(seeds, base_seed, **keywords):
        calls.append((seeds, base_seed))
        return figure.compute(seeds, base_seed, **keywords)

    return dataclasses.replace(figure, compute=compute), calls


def test_a_figure_is_computed_once_and_read_back_exactly(cache):
    figure, calls = counting("rep-beer-fig1")  # its frame holds tuples, which Parquet would turn into arrays
    first = figure_cache.computed(figure, 2, 0)
    second = figure_cache.computed(figure, 2, 0)
    assert calls == [(2, 0)]
    assert_frame_equal(first, second)
    assert first.to_csv(index=False) == second.to_csv(index=False)
    assert len(list(cache.glob("rep-beer-fig1--2-seeds--base-0--*.pickle"))) == 1


def test_other_seeds_or_fresh_compute_again(cache):
    figure, calls = counting("delay-fig4")
    figure_cache.computed(figure, 2, 0)
    figure_cache.computed(figure, 3, 0)
    figure_cache.computed(figure, 2, 1)
    figure_cache.computed(figure, 2, 0, fresh=True)
    assert calls == [(2, 0), (3, 0), (2, 1), (2, 0)]


def test_a_damaged_file_is_computed_again_and_replaced(cache):
    figure, calls = counting("delay-fig4")
    kept = figure_cache.computed(figure, 2, 0)
    (path,) = cache.glob("delay-fig4--*.pickle")
    path.write_bytes(b"not a pickle")
    assert_frame_equal(figure_cache.computed(figure, 2, 0), kept)
    assert len(calls) == 2 and pd.read_pickle(path).equals(kept)


def test_a_new_version_of_the_kit_replaces_the_old_files(cache, monkeypatch):
    figure, _ = counting("delay-fig4")
    figure_cache.computed(figure, 2, 0)
    monkeypatch.setattr(figure_cache, "fingerprint", lambda: "another-version")
    figure_cache.computed(figure, 2, 0)
    assert [p.name for p in cache.glob("delay-fig4--*")] == ["delay-fig4--2-seeds--base-0--another-version.pickle"]


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("COORDKIT_CACHE", str(blocked))
    figure, calls = counting("delay-fig4")
    assert len(figure_cache.computed(figure, 2, 0)) > 0
    assert len(figure_cache.computed(figure, 2, 0)) > 0 and len(calls) == 2


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
    (path,) = cache.glob("delay-fig4--2-seeds--*.pickle")
    stamp = path.stat().st_mtime_ns
    assert cli.main(["reproduce", "delay-fig4", "--seeds", "2", "--out", str(out)]) == 0
    assert path.stat().st_mtime_ns == stamp and (out / "delay-fig4.csv").read_bytes() == written
    assert cli.main(["reproduce", "delay-fig4", "--seeds", "2", "--out", str(out), "--fresh"]) == 0
    assert path.stat().st_mtime_ns != stamp and (out / "delay-fig4.csv").read_bytes() == written
