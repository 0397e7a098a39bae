"""The claims as data (data/papers/claims.csv): every row names a registered figure, a measure it declares and a
notebook section that exists, and a malformed row is refused with what to write instead."""

import json
import re

import pytest

from coordkit import figures
from coordkit.paths import DATA
from coordkit.replication import PAPERS, claims
from coordkit.replication.claims import SECTION

CLAIMS = claims.claims()
NOTEBOOKS = DATA.parent / "notebooks"
GOOD_ROW = {
    "paper": "rep",
    "id": "rep-test",
    "section": "§5",
    "claim": "REP is cheaper",
    "paper_value": "41.8%",
    "figure": "rep-beer-fig1",
    "measure": "cost_reduction",
    "test": "greater",
    "reference": "0",
    "band": "27.9..62.7",
    "notebook": "01_rep_beer_game.ipynb §3",
    "llm_run": "",
    "kit_only": "",
    "expected": "holds",
    "note": "",
}


def test_every_paper_has_five_to_twenty_five_claims_and_some_only_llm_agents_can_test():
    for paper in PAPERS:
        of_paper = claims.of_paper(paper)
        assert 5 <= len(of_paper) <= 25, (paper, len(of_paper))  # REP: three domains, three readings
    assert any(c.needs_llm for c in CLAIMS) and any(not c.needs_llm for c in CLAIMS)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_a_claim_names_a_registered_figure_and_a_measure_it_declares(claim):
    figure = figures.get(claim.figure)
    if claim.needs_llm:
        assert figure.llm_agents, f"{claim.id}: a claim only LLM agents can test names a figure with LLM agents"
        assert claim.llm_run and not claim.measure
    else:
        assert claim.measure in figure.measures, f"{claim.id}: {claim.figure} declares {sorted(figure.measures)}"


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_a_claim_points_at_a_section_of_its_papers_notebook(claim):
    match = SECTION.fullmatch(claim.notebook)
    notebook = NOTEBOOKS / match["notebook"]
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    headings = [
        line
        for cell in cells
        if cell["cell_type"] == "markdown"
        for line in "".join(cell["source"]).splitlines()
        if re.fullmatch(rf"#+ {re.escape(match['section'])} · .+", line.strip())
    ]
    assert headings, f"{claim.id}: {notebook.name} has no section {match['section']}"


def _write(tmp_path, monkeypatch, **changes):
    path = tmp_path / "claims.csv"
    row = {**GOOD_ROW, **changes}
    path.write_text(",".join(claims.COLUMNS) + "\n" + ",".join(f'"{row[c]}"' for c in claims.COLUMNS) + "\n")
    monkeypatch.setattr(claims, "FILE", path)
    claims.claims.cache_clear()


@pytest.fixture
def fresh_cache():
    yield
    claims.claims.cache_clear()


def test_a_good_row_is_read_with_its_band_and_reference(tmp_path, monkeypatch, fresh_cache):
    _write(tmp_path, monkeypatch)
    (claim,) = claims.claims()
    assert claim.reference == 0 and claim.band.low == 27.9 and claim.band.high == 62.7


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"paper": "kiko"}, "paper 'kiko' is not one of"),
        ({"test": "bigger"}, "test 'bigger' is not one of"),
        ({"expected": "sort of"}, "expected 'sort of' is not one of"),
        ({"reference": ""}, "reference must be given"),
        ({"test": "within", "band": ""}, "band must be given"),
        ({"measure": ""}, "measure must be given"),
        ({"test": "llm", "measure": ""}, "llm_run must be given"),
        ({"test": "llm", "measure": "", "llm_run": "a run", "kit_only": "why"}, "a test 'llm' measures nothing"),
        ({"notebook": "01_rep_beer_game.ipynb"}, "NOTEBOOK.ipynb §NUMBER"),
        ({"band": "62.7..27.9"}, "backwards"),
        ({"reference": "inf"}, "finite"),
    ],
)
def test_a_malformed_row_is_refused_naming_the_claim_and_the_fix(tmp_path, monkeypatch, fresh_cache, changes, message):
    _write(tmp_path, monkeypatch, **changes)
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        claims.claims()
    assert "claim rep-test" in str(error.value)


def test_a_paper_the_kit_does_not_rebuild_is_refused():
    with pytest.raises(ValueError, match="is not one of the kit's papers"):
        claims.of_paper("bspl")
