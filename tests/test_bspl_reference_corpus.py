"""The kit against the reference implementation (issue 47): every protocol of the ``shcv/bspl`` repository, parsed
and checked by the kit, compared with what ``bspl`` 1.1 recorded of it (coordkit/bspl/corpus.py). A difference is a
failure unless data/protocols/reference/disagreements.csv explains it with a citation; an explanation that no
longer matches a difference fails too, so that the file stays true."""

import pytest

from coordkit.bspl import corpus

FILES = corpus.files()


def test_the_corpus_is_the_recorded_one():
    copied = sorted(str(path.relative_to(corpus.CORPUS)) for path in corpus.CORPUS.rglob("*.bspl"))
    assert copied == FILES and len(FILES) >= 134
    assert corpus.records()["source"]["reference"].startswith("bspl 1.1")
    assert (corpus.REFERENCE / "LICENSE").read_text(encoding="utf-8").startswith("MIT")


@pytest.mark.parametrize("file", FILES)
def test_the_kit_reads_and_judges_a_protocol_as_the_reference_does(file):
    differences = corpus.compare(file)
    unexplained = [d for d in differences if not d.reason]
    assert not unexplained, "\n".join(
        f"{d.protocol or file}: {d.aspect}: kit {d.kit}, reference {d.reference}" for d in unexplained
    )


def test_every_explained_disagreement_is_still_one_and_cites_a_source():
    found = {
        (d.file, d.protocol, d.aspect) for file in {key[0] for key in corpus.explained()} for d in corpus.compare(file)
    }
    for key, row in corpus.explained().items():
        assert key in found, f"{key} is explained in disagreements.csv but the kit and the reference now agree"
        assert row["reason"] and row["citation"], f"{key}: a disagreement needs a reason and a citation"


def test_where_the_reference_ran_out_of_time_the_comparison_says_how_long_it_had():
    """Every file's record gives the time its verifications had; a verdict missing for lack of it is no agreement and
    no disagreement, and says so with the limit."""
    records = corpus.records()["files"]
    limits = [record["limit_seconds"] for record in records.values()]
    assert all(isinstance(limit, int) and limit >= 30 for limit in limits)
    file = "samples/trade-finance/negotiation/expanded-negotiation.bspl"
    (unanswered,) = [d for d in corpus.compare(file) if d.aspect == "safe"]
    assert records[file]["limit_seconds"] == 300
    assert unanswered.reason == f"{corpus.UNANSWERED} no answer within 300 s"
