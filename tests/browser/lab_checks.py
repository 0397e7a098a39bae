"""What a learner must not see in a notebook: tracebacks (in the outputs, as the model holds them, and as the page
shows them), widgets that could not be displayed, outputs wider than the column, and dollar signs drawn as math.
"""

import re
from dataclasses import dataclass

from lab_notebook import JS_NOTEBOOK


@dataclass
class Problem:
    """An error found in a cell's output."""

    cell: int
    kind: str  # "error" (a traceback) or "stderr" (text on stderr that looks like one)
    text: str

    def __str__(self) -> str:
        return f"cell {self.cell} ({self.kind}): {self.text[:600]}"


def _strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def errors_in_outputs(cells: list[dict]) -> list[Problem]:
    """Tracebacks in the outputs (error outputs, or stderr with a Traceback), and warnings that a chart hides what it
    shows (coordkit.chart_checks); other stderr is left alone."""
    problems = []
    for cell in cells:
        for output in cell["outputs"]:
            kind = output.get("output_type")
            if kind == "error":
                trace = _strip_ansi("\n".join(output.get("traceback", [])))
                problems.append(Problem(cell["index"], "error", f"{output['ename']}: {output['evalue']}\n{trace}"))
            elif kind == "stream" and output.get("name") == "stderr":
                text = _strip_ansi("".join(output.get("text", "")))
                traceback = "Traceback (most recent call last)" in text or re.search(
                    r"^\w+(Error|Exception): ", text, re.M
                )
                if traceback or "ChartWarning" in text:
                    problems.append(Problem(cell["index"], "stderr", text))
    return problems


def error_outputs_in_page(page) -> list[str]:
    """Texts of the rendered outputs that show a traceback (in cells or inside widgets), and of live charts that
    Vega could not draw."""
    return page.evaluate(
        r"""() => [
            ...[...document.querySelectorAll(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"], ' +
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')]
                .map(el => el.innerText)
                .filter(text => /Traceback \(most recent call last\)|^\w+(Error|Exception): /m.test(text)),
            ...[...document.querySelectorAll('.coordkit-live-chart-error')].map(el => el.innerText),
        ]"""
    )


def scroll_to_first_error(page) -> bool:
    """Scroll the first output showing a traceback into view (for a screenshot); False if there is none."""
    return page.evaluate(
        r"""() => {
            const outputs = [...document.querySelectorAll(
                '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')];
            const first = outputs.find(el => /Traceback \(most recent call last\)|^\w+(Error|Exception): /m
                .test(el.innerText));
            if (first) first.scrollIntoView({block: "center"});
            return !!first;
        }"""
    )


def widget_errors(page) -> list[str]:
    """Texts of widgets that JupyterLab could not show ("Error displaying widget: model not found")."""
    return page.evaluate(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')]
            .filter(el => !el.querySelector('.jp-OutputArea-output') && /Error displaying widget/.test(el.innerText))
            .map(el => el.innerText.trim().slice(0, 200))"""
    )


# Every output wider than its output area: it scrolls sideways, or a table or chart sticks out of it.
_JS_TOO_WIDE = r"""
() => {
    const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
    const found = [];
    for (const output of document.querySelectorAll('.jp-Notebook .jp-OutputArea-output')) {
        const column = output.getBoundingClientRect();
        const wide = [...output.querySelectorAll('table, svg, img, canvas')]
            .filter(el => el.closest('.jp-OutputArea-output') === output && !el.parentElement.closest('svg'))
            .map(el => el.getBoundingClientRect())
            .filter(box => box.right > column.right + 1);
        if (output.scrollWidth > output.clientWidth + 1 || wide.length) {
            found.push({
                cell: cells.indexOf(output.closest('.jp-Cell')),
                column: Math.round(column.width),
                width: Math.round(Math.max(output.scrollWidth, ...wide.map(box => box.right - column.left))),
            });
        }
    }
    return found;
}
"""


def too_wide(page) -> list[str]:
    """Outputs wider than the notebook's column (at the test window, 1400 px wide with the file browser open)."""
    return [
        f"cell {found['cell']}: {found['width']} px in a {found['column']} px column"
        for found in page.evaluate(_JS_TOO_WIDE)
    ]


def dollars_shown_as_math(page) -> list[str]:
    """Markdown cells that escape a dollar sign (``\\$``) but show fewer dollar signs than they escape, and outputs
    typeset as math (no output of the kit's means to show math): JupyterLab drew the text between two dollar signs
    as math ("7,300underA2A"), in a Markdown cell or in an HTML output such as a table of dollar amounts."""
    cells = page.evaluate(
        f"""() => {JS_NOTEBOOK}().content.widgets
            .map((cell, index) => ({{index, type: cell.model.type, source: cell.model.sharedModel.getSource(),
                                     text: (cell.node.querySelector('.jp-RenderedMarkdown') || {{}}).innerText,
                                     maths: [...cell.node.querySelectorAll('.jp-OutputArea-output')]
                                         .map((output, at) => output.querySelector('mjx-container, .MathJax') ? at : -1)
                                         .filter(at => at >= 0)}}))"""
    )
    problems = []
    for cell in cells:
        escaped = len(re.findall(r"\\\$", cell["source"]))
        shown = (cell["text"] or "").count("$")
        if cell["type"] == "markdown" and shown < escaped:
            problems.append(f"cell {cell['index']}: {escaped} escaped dollar signs, {shown} shown")
        problems += [f"cell {cell['index']}, output {at}: drawn as math" for at in cell["maths"]]
    return problems
