"""Equations in exported HTML drawn as math offline (issue 48): a notebook exported both ways a user exports it,
``jupyter nbconvert --to html`` from the repository's root and JupyterLab's File → Save and Export Notebook As →
HTML, opened in Chromium with every network request aborted, with JavaScript and without.

Each formula of its Markdown must be a ``math`` element that Chromium lays out as MathML (display "math" or "block
math") with a size, and no Markdown cell may show ``$$`` or a TeX command. Without the kit's Jupyter config in the
environment (``pip install -e .``, which ``make lab`` and ``make test`` run, puts it in ``.venv/etc/jupyter``), the
page shows the raw TeX, as MathJax from its CDN never comes.
"""

import subprocess
import sys

import lab
import lab_saved
import pytest
from test_offline_math import formulas_in, markdown_sources

NOTEBOOK = "03_pressure_fields.ipynb"  # a $$ block and some fifty inline formulas

# In the page: the Markdown's math elements, those Chromium lays out as MathML with a size, and the Markdown cells'
# visible texts that still hold TeX.
JS_MATH_SHOWN = r"""
() => {
    const formulas = [...document.querySelectorAll('.jp-RenderedMarkdown math')];
    const drawn = formulas.filter(math => {
        const box = math.getBoundingClientRect();
        return getComputedStyle(math).display.includes('math') && box.width > 0 && box.height > 0;
    });
    const cells = [...document.querySelectorAll('.jp-RenderedMarkdown')].map(cell => cell.innerText);
    return {
        formulas: formulas.length,
        drawn: drawn.length,
        tex: cells.filter(text => text.includes('$$') || /\\[A-Za-z_%&#{}]/.test(text)),
    };
}
"""


@pytest.fixture(scope="module")
def expected_formulas() -> int:
    return sum(len(formulas_in(source)) for source in markdown_sources(lab.NOTEBOOKS / NOTEBOOK))


def nbconvert_from_the_root(folder) -> object:
    """``jupyter nbconvert --to html notebooks/NN.ipynb`` run from the repository's root, as the README says."""
    command = [sys.executable, "-m", "jupyter", "nbconvert", "--to", "html", "--output-dir", str(folder)]
    subprocess.run([*command, f"notebooks/{NOTEBOOK}"], cwd=lab.REPO, check=True, capture_output=True, timeout=600)
    return folder / NOTEBOOK.replace(".ipynb", ".html")


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
@pytest.mark.parametrize("export", ["nbconvert", "lab"])
def test_exported_equations_render_offline(export, javascript, chromium, jupyter_lab, expected_formulas, tmp_path):
    if export == "nbconvert":
        html = nbconvert_from_the_root(tmp_path)
    else:
        html = lab_saved.lab_exported_html(jupyter_lab, NOTEBOOK, tmp_path)
    page = lab_saved.open_offline(chromium, html, javascript=javascript)
    try:
        shown = page.evaluate(JS_MATH_SHOWN)
    finally:
        page.context.close()
    unconfigured = "is the kit's Jupyter config in the environment? make venv reinstalls the kit"
    assert shown["tex"] == [], f"raw TeX in the {export} export, offline ({unconfigured}): {shown['tex'][:2]}"
    assert shown["formulas"] == expected_formulas, shown
    assert shown["drawn"] == expected_formulas, f"{expected_formulas - shown['drawn']} formulas not drawn as MathML"
