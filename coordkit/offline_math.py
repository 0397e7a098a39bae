"""Equations in exported HTML that render offline: the TeX of Markdown cells pre-rendered as MathML (issue 48).

``jupyter nbconvert --to html`` leaves a notebook's ``$...$`` and ``$$...$$`` as TeX for MathJax, which the page
loads from a CDN: opened offline, it shows the raw TeX. Here the same parse (nbconvert's own, so code spans, code
cells and ``\\$`` stay as they were) writes each formula as MathML, which Chromium, Firefox and Safari draw natively,
with no script and no network. ``MathMLMarkdown`` replaces nbconvert's ``markdown2html`` filter; the kit's
``jupyter-config/jupyter_config.json``, installed into the environment's ``etc/jupyter``, names it, so that
``jupyter nbconvert --to html`` and JupyterLab's *Save and Export Notebook As → HTML* both use it.
"""

import html
import re

import jinja2
from latex2mathml.converter import convert
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from traitlets.config import LoggingConfigurable

# TeX's escaped specials, which latex2mathml keeps as written inside \text{} (\text{row\_dups} gives "row\_dups")
_ESCAPED_SPECIAL = re.compile(r"\\([_%&#$])")


def tex_to_mathml(tex: str, display: str = "inline") -> str | None:
    """The MathML of ``tex`` (``display`` "inline" or "block"), or None where some of it has no MathML here: a
    command latex2mathml does not know, which it would leave as written (``<mi>\\foo</mi>``)."""
    try:
        mathml = convert(tex, display=display)
    except Exception:  # latex2mathml raises its own errors, and others, on TeX it cannot parse
        return None
    mathml = _ESCAPED_SPECIAL.sub(lambda escaped: html.escape(escaped[1]), mathml)
    return None if "\\" in mathml else mathml


class MathMLRenderer(IPythonRenderer):
    """nbconvert's Markdown renderer, with math written as MathML instead of TeX for MathJax.

    A formula latex2mathml cannot write is left as nbconvert leaves it, for MathJax when online.
    """

    def block_math(self, body: str) -> str:
        return tex_to_mathml(body, "block") or super().block_math(body)

    def inline_math(self, body: str) -> str:
        return tex_to_mathml(body) or super().inline_math(body)

    def latex_environment(self, name: str, body: str) -> str:
        tex = f"\\begin{{{name}}}{body}\\end{{{name}}}"
        return tex_to_mathml(tex, "block") or super().latex_environment(name, body)


@jinja2.pass_context
class MathMLMarkdown(LoggingConfigurable):
    """The ``markdown2html`` filter of an HTML exporter (its ``parent``), with math as MathML.

    As ``HTMLExporter.markdown2html``, which it replaces: the cell's attachments, the notebook's folder and the
    exporter's settings for images, anchors and code highlighting.
    """

    def __call__(self, context, source: str) -> str:
        exporter = self.parent
        renderer = MathMLRenderer(
            escape=False,
            attachments=context.get("cell", {}).get("attachments", {}),
            embed_images=exporter.embed_images,
            path=context.get("resources", {}).get("metadata", {}).get("path", ""),
            anchor_link_text=exporter.anchor_link_text,
            exclude_anchor_links=exporter.exclude_anchor_links,
            **exporter.lexer_options,
        )
        return MarkdownWithMath(renderer=renderer).render(source)
