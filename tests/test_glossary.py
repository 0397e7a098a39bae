"""The glossary covers every term a notebook uses (CONTRIBUTING.md, step 5): in the notebooks' Markdown, bold marks a
term, defined where it stands or linked to its glossary heading, and a bold run-in heading ("**The question.**") is
the one other use of bold."""

import re

import pytest
from test_notebook_conventions import NOTEBOOKS, markdown

GLOSSARY = NOTEBOOKS / "glossary.ipynb"
USERS = sorted(path for path in NOTEBOOKS.rglob("*.ipynb") if path != GLOSSARY)
CODE = re.compile(r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", re.DOTALL)  # code and math, where ** is not bold
BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
GLOSSARY_LINK = re.compile(r"\[[^\]]*\]\((?:\.\./)?glossary\.ipynb#([^()\s]+(?:\([^)\s]*\))?[^)\s]*)\)")
LESSON_PLAN = "Lesson plan"  # the lesson-plan cell's heading, as test_notebook_conventions finds it


def is_run_in_heading(bold: str) -> bool:
    return bold.endswith((".", ":", "?")) or bold == LESSON_PLAN


def terms(text: str) -> set[str]:
    """The glossary anchors a notebook's Markdown links to, and the terms it bolds (a bold link names its anchor)."""
    text = CODE.sub("", text)
    linked = set(GLOSSARY_LINK.findall(text))
    text = GLOSSARY_LINK.sub(lambda link: link[1], text)
    bold = {" ".join(run.split()) for run in BOLD.findall(text)}
    return linked | {run for run in bold if not is_run_in_heading(run)}


def singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "'s")):
        return word[:-1]
    return word


def keys(name: str) -> set[str]:
    """The forms a name matches by: case, hyphens and plurals ignored; "X (Y)" also matches X and Y alone."""
    names = {name}
    if spelled_out := re.fullmatch(r"(.+?)\s*\((.+)\)", name):
        names |= {spelled_out[1], spelled_out[2]}
    return {" ".join(singular(word) for word in name.lower().replace("-", " ").split()) for name in names}


def entries() -> dict[str, list[str]]:
    """Each glossary heading, with the other names its entry's "Also:" line gives it."""
    found = {}
    for section in re.split(r"^## ", markdown(GLOSSARY), flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        also = re.search(r"^Also: (.+?)\.?$", body, flags=re.MULTILINE)
        found[heading.strip()] = also[1].split(", ") if also else []
    return found


def glossary_keys() -> set[str]:
    return {key for heading, aliases in entries().items() for name in [heading, *aliases] for key in keys(name)}


def missing_terms(text: str, known: set[str]) -> list[str]:
    return sorted(term for term in terms(text) if not keys(term) & known)


@pytest.mark.parametrize("notebook", USERS, ids=lambda path: str(path.relative_to(NOTEBOOKS)))
def test_the_glossary_has_every_term_a_notebook_bolds_or_links(notebook):
    missing = missing_terms(markdown(notebook), glossary_keys())
    assert not missing, (
        f"{notebook.relative_to(NOTEBOOKS)}: no glossary entry for {missing}; add one to glossary.ipynb (or the "
        "name to an entry's 'Also:' line), or write the words in *italics* if they are emphasis, not a term"
    )


def test_an_unknown_term_is_reported_and_a_run_in_heading_is_not():
    text = (
        "> **Lesson plan** (for instructors)\n\n**The question.** Do **sensitivities** of the **Ripple Effect Protocol "
        "(REP)** help? A **flux capacitor** is no [warp drive](glossary.ipynb#Warp-drive); `f(**kwargs)` is code."
    )
    known = {key for name in ["Sensitivity", "REP"] for key in keys(name)}
    assert missing_terms(text, known) == ["Warp-drive", "flux capacitor"]


@pytest.mark.parametrize(
    ("term", "entry", "found"),
    [
        ("bullwhip ratios", "Bullwhip ratio", True),
        ("Ripple Effect Protocol", "Ripple Effect Protocol (REP)", True),
        ("REP", "Ripple Effect Protocol (REP)", True),
        ("anchor-and-adjust", "Anchor and adjust", True),
        ("bullwhip effect", "Bullwhip ratio", False),
    ],
)
def test_terms_match_entries_whatever_their_case_number_or_abbreviation(term, entry, found):
    assert bool(keys(term) & keys(entry)) is found


def test_the_index_lists_every_entry():
    index = next(line for line in markdown(GLOSSARY).splitlines() if line.startswith("**Index:**"))
    listed = set(re.findall(r"\]\(#([^()\s]+(?:\([^)\s]*\))?[^)\s]*)\)", index))
    anchors = {heading.replace(" ", "-") for heading in entries()}
    assert listed == anchors, f"glossary index: missing {sorted(anchors - listed)}, stale {sorted(listed - anchors)}"
