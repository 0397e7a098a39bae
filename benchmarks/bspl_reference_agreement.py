"""How far the kit agrees with the reference implementation on its own protocols (issue 47): the agreement table,
aspect by aspect, over the corpus in data/protocols/reference/ (coordkit/bspl/corpus.py), and the time the kit takes
to verify the largest ones.

    .venv/bin/python benchmarks/bspl_reference_agreement.py            # the table
    .venv/bin/python benchmarks/bspl_reference_agreement.py --list     # and every difference
"""

import argparse
import time
from collections import Counter

from coordkit.bspl import corpus, parse_all
from coordkit.bspl.verifier import verify


def _kind(difference: corpus.Difference) -> str:
    if difference.reason.startswith(corpus.UNANSWERED):
        return "unanswered"
    return "explained" if difference.reason else "differ"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", action="store_true", help="print every difference too")
    args = parser.parse_args()
    files = corpus.files()
    reference = corpus.records()["files"]
    parses = Counter()
    for file in files:
        theirs, ours = reference[file]["parses"], corpus.kit_view(file, verdicts=False)["parses"]
        parses[("both" if theirs and ours else "reference only" if theirs else "kit only" if ours else "neither")] += 1
    print(
        f"{len(files)} files; parsed by both {parses['both']}, by the reference only {parses['reference only']}, "
        f"by the kit only {parses['kit only']}, by neither {parses['neither']}"
    )
    both = [f for f in files if reference[f]["parses"] and corpus.kit_view(f, verdicts=False)["parses"]]
    differences = {file: corpus.compare(file) for file in both}
    protocols = sum(len(reference[f]["protocols"]) for f in both)
    kinds = Counter((d.aspect, _kind(d)) for found in differences.values() for d in found)
    print(f"where both parse ({protocols} protocols):")
    for aspect in corpus.ASPECTS[1:]:
        wrong, explained, unanswered = (kinds[(aspect, kind)] for kind in ("differ", "explained", "unanswered"))
        agree = protocols - wrong - explained - unanswered
        print(
            f"  {aspect:11} agree on {agree:4}, differ on {wrong:2} unexplained, {explained:2} explained; "
            f"the reference gave no verdict on {unanswered:2}"
        )
    slowest = []
    for file in both:
        for protocol in parse_all(corpus.text(file)):
            started = time.perf_counter()
            report = verify(protocol)
            slowest.append((time.perf_counter() - started, protocol.name, report.states, report.complete))
    print("the kit's slowest verifications:")
    for seconds, name, states, complete in sorted(slowest, reverse=True)[:5]:
        print(f"  {name:28} {states:7,} states {seconds:6.2f} s" + ("" if complete else " (stopped at the cap)"))
    if args.list:
        for found in differences.values():
            for d in found:
                print(f"{d.file} {d.protocol}: {d.aspect}: kit {d.kit} | reference {d.reference} | {d.reason}")


if __name__ == "__main__":
    main()
