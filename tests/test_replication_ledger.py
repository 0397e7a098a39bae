"""The ledger kept current: computed afresh at the defaults (every figure at its default seeds, as `coordkit
claims` and the notebooks show it), every verdict must be the one data/papers/claims.csv expects, and
data/ledger.csv must be what was computed. A change in a model that flips a claim fails here until the expected
column is updated, with its reason, in the same commit.

The whole ledger plays every figure a claim names, under a minute on two cores; a smaller seed count would give
other intervals, hence other verdicts, than the ones `coordkit claims` and the notebooks' tables show, so it is
played at the defaults. The verdicts from other base seeds (data/ledger_seeds.csv) are too dear to play here: they
are kept by benchmarks/bench_ledger_seeds.py --write, and base seed 0's column must be what is computed now.
"""

import pytest
from pandas.testing import assert_frame_equal

from coordkit.replication import claims, ledger, report
from coordkit.replication.verdicts import INCONCLUSIVE, NEEDS_LLM


@pytest.fixture(scope="module")
def computed(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COORDKIT_CACHE", str(tmp_path_factory.mktemp("cache")))  # computed now, not read back
        yield ledger.compute(progress=False)


def test_every_verdict_is_the_one_the_claims_file_expects(computed):
    changed = [
        f"{e.claim.id}: expected {e.claim.expected!r}, computed {e.decision.verdict!r} ({e.decision.reason})"
        for e in computed
        if e.decision.verdict != e.claim.expected
    ]
    assert not changed, (
        "verdicts changed; if the change is right, update the expected column of data/papers/claims.csv and say why "
        "in the commit, then run `coordkit claims --write`:\n" + "\n".join(changed)
    )


def test_the_kept_ledger_is_the_one_computed_now(computed):
    kept, now = ledger.read(), ledger.kept(computed).astype(str)
    assert_frame_equal(kept, now, obj="data/ledger.csv (run `coordkit claims --write` to refresh it)")


def test_the_ledger_decides_every_claim_and_only_llm_claims_go_unmeasured(computed):
    assert [e.claim.id for e in computed] == [c.id for c in claims.claims()]
    for entry in computed:
        assert (entry.measured is None) == (entry.decision.verdict == NEEDS_LLM) == entry.claim.needs_llm


def test_the_report_links_every_reason_to_its_notebook_section(computed, tmp_path):
    where = tmp_path / "reports" / "claims.md"
    text = report.markdown(computed, "coordkit claims --markdown reports/claims.md", where)
    assert "](../" in text and "notebooks/01_rep_beer_game.ipynb#3-·-The-paper's-Figure-1,-reproduced" in text
    for entry in computed:
        assert entry.claim.id in text and entry.claim.id in report.text(computed)


def test_the_kept_verdicts_by_base_seed_start_from_the_ones_computed_now(computed):
    kept = ledger.by_base_seed()
    assert sorted(kept) == sorted(e.claim.id for e in computed), "run benchmarks/bench_ledger_seeds.py --write"
    stale = [
        f"{e.claim.id}: kept {kept[e.claim.id]['base 0']!r}, computed {e.tested.verdict!r}"
        for e in computed
        if kept[e.claim.id]["base 0"] != e.tested.verdict
    ]
    assert not stale, "run benchmarks/bench_ledger_seeds.py --write:\n" + "\n".join(stale)


def test_a_claim_whose_verdict_changes_with_the_base_seed_is_inconclusive(computed):
    for entry in computed:
        flips = len(set(ledger.by_base_seed()[entry.claim.id].values())) > 1
        if flips:
            assert entry.decision.verdict == INCONCLUSIVE and "changes with the base seed" in entry.decision.reason
        else:
            assert entry.decision == entry.tested
