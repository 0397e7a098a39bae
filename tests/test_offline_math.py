"""Equations in exported HTML as MathML (coordkit.offline_math): every notebook's formulas convert, code and escaped
dollars stay as written, and the kit's Jupyter config puts the filter in ``nbconvert --to html``'s exporter."""

import json
import re
import tomllib
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from traitlets.config import Config

from coordkit.offline_math import MathMLRenderer, tex_to_mathml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(ROOT.glob("notebooks/**/*.ipynb"))
JUPYTER_CONFIG = ROOT / "jupyter-config/jupyter_config.json"


class FormulaRecorder(IPythonRenderer):
    """nbconvert's own renderer, noting each formula its parser finds (TeX, and "inline" or "block")."""

    def __init__(self):
        super().__init__(escape=False)
        self.formulas = []

    def block_math(self, body):
        self.formulas.append((body, "block"))
        return super().block_math(body)

    def inline_math(self, body):
        self.formulas.append((body, "inline"))
        return super().inline_math(body)

    def latex_environment(self, name, body):
        self.formulas.append((f"\\begin{{{name}}}{body}\\end{{{name}}}", "block"))
        return super().latex_environment(name, body)


def markdown_sources(path: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown"]


def formulas_in(source: str) -> list[tuple[str, str]]:
    recorder = FormulaRecorder()
    MarkdownWithMath(renderer=recorder).render(source)
    return recorder.formulas


def as_mathml(source: str) -> str:
    return MarkdownWithMath(renderer=MathMLRenderer(escape=False)).render(source)


def test_the_notebooks_have_display_and_inline_math():
    found = [formula for path in NOTEBOOKS for source in markdown_sources(path) for formula in formulas_in(source)]
    kinds = {display for _, display in found}
    assert kinds == {"inline", "block"}, kinds


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.stem)
def test_every_formula_of_the_notebook_converts_without_raw_tex(path):
    for source in markdown_sources(path):
        formulas = formulas_in(source)
        failed = [tex for tex, display in formulas if tex_to_mathml(tex, display) is None]
        assert not failed, f"{path.name}: latex2mathml cannot write {failed}"
        html = as_mathml(source)
        assert html.count("<math ") == len(formulas), source


def test_code_and_escaped_dollars_are_left_as_written():
    source = "Costs \\$5 or \\$6, `$x$` in code, and $a^2$.\n\n```python\ns = '$$x$$'\n```\n\n    $y$ indented\n"
    html = as_mathml(source)
    assert html.count("<math ") == 1
    assert "Costs $5 or $6, <code>$x$</code> in code" in html
    assert "'$$x$$'" in html and "<code>$y$ indented</code>" in html


def test_escaped_specials_in_text_lose_their_backslash():
    assert "<mtext>row_dups</mtext>" in tex_to_mathml(r"\text{row\_dups}_i")
    assert "<mtext>5&#x000A0;&amp;&#x000A0;6%</mtext>" in tex_to_mathml(r"\text{5 \& 6\%}")


def test_a_command_without_mathml_is_left_for_mathjax():
    assert tex_to_mathml(r"\unknowncommand{x}") is None
    assert as_mathml("$\\unknowncommand{x}$ and $y$") == "<p>$\\unknowncommand{x}$ and " + tex_to_mathml("y") + "</p>\n"


def exporter(**settings) -> HTMLExporter:
    """The HTML exporter as ``jupyter nbconvert --to html`` makes it with the kit's Jupyter config installed."""
    config = Config(json.loads(JUPYTER_CONFIG.read_text(encoding="utf-8")))
    config.HTMLExporter.update(settings)
    return HTMLExporter(config=config)


def test_the_kit_config_gives_nbconvert_mathml_and_keeps_the_exporter_settings():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Rounds\n\n$$U_j = \\alpha$$")])
    body, _ = exporter().from_notebook_node(notebook)
    assert re.search(r'<math [^>]*display="block"', body)
    assert "$$U_j" not in body
    assert 'class="anchor-link"' in body
    plain, _ = exporter(exclude_anchor_links=True).from_notebook_node(notebook)
    assert 'class="anchor-link"' not in plain and "<math " in plain


def test_the_wheel_installs_the_config_where_jupyter_reads_it():
    """``pip install`` (``make lab``'s editable one too) puts it in the environment's ``etc/jupyter``, read by every
    Jupyter command run there: nbconvert, and the lab server whose exporter *Save and Export As → HTML* uses."""
    wheel = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["hatch"]["build"]["targets"]
    shared = wheel["wheel"]["shared-data"]
    assert shared == {"jupyter-config/jupyter_config.json": "etc/jupyter/jupyter_config.json"}
