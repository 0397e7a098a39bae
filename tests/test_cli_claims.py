"""`coordkit claims`: one paper's ledger printed and written as a report; what it refuses, before any figure plays;
and the notebooks' views of the kept ledger."""

import pytest

from coordkit import cli
from coordkit.replication import claims, ledger, report


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COORDKIT_CACHE", str(tmp_path / "cache"))


def test_one_papers_claims_are_printed_and_written_as_markdown(tmp_path, capsys):
    out = tmp_path / "claims.md"
    assert cli.main(["claims", "--paper", "ahoy", "--markdown", str(out)]) == 0
    printed = capsys.readouterr().out
    for claim in claims.of_paper("ahoy"):
        assert f"{claim.id} · " in printed
    assert "rep-beer-cost" not in printed
    written = out.read_text(encoding="utf-8")
    assert written.startswith("# The replication ledger") and "`coordkit claims --paper ahoy --markdown" in written
    assert "| claim | paper | kit | verdict | reason |" in written


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["claims", "--seeds", "0"], "--seeds 0: use 1 to"),
        (["claims", "--paper", "ahoy", "--write"], "--write keeps the whole ledger at the defaults"),
        (["claims", "--seeds", "2", "--write"], "--write keeps the whole ledger at the defaults"),
    ],
)
def test_a_bad_request_is_refused_before_any_figure_plays(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(ledger, "compute", lambda *a, **k: pytest.fail("a figure played"))
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_an_unknown_paper_is_refused_by_name(capsys):
    with pytest.raises(SystemExit):
        cli.main(["claims", "--paper", "bspl"])
    assert "invalid choice: 'bspl'" in capsys.readouterr().err


def test_fewer_seeds_play_every_figure_at_that_count(monkeypatch):
    played = []
    monkeypatch.setattr(
        "coordkit.figure_cache.computed", lambda figure, seeds, base_seed, fresh=False: played.append(seeds)
    )
    monkeypatch.setattr(ledger, "_entry", lambda claim, figures, at_defaults: None)
    ledger.compute("rep", seeds=2, progress=False)
    assert played and set(played) == {2}


def test_a_notebook_shows_its_papers_claims_and_the_start_notebook_the_summary():
    shown = report.show("rep", ("rep-beer-fig1",)).frame
    beer = [c for c in claims.of_paper("rep") if c.figure == "rep-beer-fig1"]
    assert len(shown) == len(beer) and list(shown.columns) == ["claim", "paper", "kit", "verdict", "why"]
    summary = report.summary().frame
    assert list(summary["paper"]) == list(report.PAPER_NAMES.values())
    assert summary["claims"].sum() == len(claims.claims())
