"""Altair imports jsonschema, which built an IRI grammar at import (coordkit/iri_grammar.py): the kit defers it to
the first IRI checked, and jsonschema's answers stay what they were."""

import json
import subprocess
import sys

IRIS = ["http://example.com/ä", "not an iri", "#fragment", "urn:isbn:0451450523", "http://[::1]:80/", "a b"]
CHECK = f"""
import json, sys
import jsonschema
checker = jsonschema.FormatChecker()
answers = [[checker.conforms(iri, form) for form in ("iri", "iri-reference")] for iri in {IRIS!r}]
print(json.dumps({{"answers": answers, "built_at_import": BUILT}}))
"""


def run(prelude: str) -> dict:
    """What a fresh interpreter answers after ``prelude``: jsonschema's IRI checks, and whether the grammar had been
    built before the first check."""
    measure = "'rfc3987_syntax.syntax_helpers' in sys.modules"
    code = f"{prelude}\nimport sys, altair\nBUILT = {measure}\n{CHECK}"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(done.stdout)


def test_the_grammar_waits_for_the_first_iri_and_answers_as_before():
    deferred, plain = run("import coordkit"), run("")
    assert not deferred["built_at_import"] and plain["built_at_import"]
    assert deferred["answers"] == plain["answers"]
    assert [False, False] in plain["answers"] and [True, True] in plain["answers"]  # both kinds of answer are asked


def test_a_grammar_already_loaded_is_left_as_it_is():
    found = run("import sys, rfc3987_syntax as loaded, coordkit\nassert sys.modules['rfc3987_syntax'] is loaded")
    assert found["built_at_import"]
