"""The charts in a notebook's outputs (images, inline SVGs, the panels' live Vega canvases): where they are, how big,
whether anything is drawn in them, and whether their text shows whole (not cut by an ellipsis, not clipped)."""

from dataclasses import dataclass

# The chart elements under `root`: an <img> (how JupyterLab shows image/svg+xml and image/png), an inline <svg>, a
# <canvas> (a panel's live chart, drawn by Vega), with the output each belongs to (the innermost around it: a panel's
# table slots are outputs inside the panel's output) and the cell and panel it is in. Icons are not charts.
_JS_CHART_ELEMENTS = r"""
(root) => {
    const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
    const panels = [...document.querySelectorAll('.jp-Notebook .coordkit-panel')];
    const found = [];
    const own = root.closest('.jp-OutputArea-output');  // a panel's own output holds its live charts
    for (const output of [...(own ? [own] : []), ...root.querySelectorAll('.jp-OutputArea-output')]) {
        for (const el of output.querySelectorAll('img, svg, canvas')) {
            if (el.closest('.jp-OutputArea-output') !== output) continue;  // an inner output's: counted there
            if (el.tagName.toLowerCase() === 'svg' && el.parentElement.closest('svg')) continue;  // nested svg
            if (el.closest('.jp-InputArea, .widget-slider, .jp-Toolbar')) continue;
            if (el.closest('.coordkit-static-view') && !el.getClientRects().length) continue;  // hidden: live panel
            const box = el.getBoundingClientRect();
            if (el.tagName.toLowerCase() === 'svg' && box.width < 40 && box.height < 40) continue;  // an icon
            found.push({
                el, box, tag: el.tagName.toLowerCase(),
                cell: cells.indexOf(el.closest('.jp-Cell')),
                panel: panels.indexOf(el.closest('.coordkit-panel')),
            });
        }
    }
    return found;
}
"""

_JS_CHARTS = r"""
(root) => {
    // a canvas's marks: its pixels that are neither blank nor white (every 4th row and column)
    const inkedPixels = canvas => {
        if (!canvas.width || !canvas.height) return 0;
        const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let inked = 0;
        for (let y = 0; y < canvas.height; y += 4) {
            for (let x = 0; x < canvas.width; x += 4) {
                const i = 4 * (y * canvas.width + x);
                if (pixels[i + 3] > 0 && (pixels[i] < 250 || pixels[i + 1] < 250 || pixels[i + 2] < 250)) inked++;
            }
        }
        return inked;
    };
    return (ELEMENTS)(root).map(({el, box, tag, cell, panel}) => {
        let marks = 0, loaded = true;
        if (tag === 'svg') marks = el.querySelectorAll('path, rect, circle, line, polygon, polyline').length;
        else if (tag === 'img') { loaded = el.complete && el.naturalWidth > 0; marks = loaded ? 1 : 0; }
        else marks = inkedPixels(el);
        return {tag, width: box.width, height: box.height, marks, loaded, cell, panel};
    });
}
""".replace("ELEMENTS", _JS_CHART_ELEMENTS.strip())

# An <img>'s SVG source (a data URI, base64 in UTF-8 or percent-encoded), or null (a PNG, a file).
JS_SVG_OF_IMAGE = r"""
(img) => {
    const src = img.getAttribute('src') || '';
    if (src.startsWith('data:image/svg+xml;base64,')) {
        const bytes = Uint8Array.from(atob(src.slice(src.indexOf(',') + 1)), c => c.charCodeAt(0));
        return new TextDecoder().decode(bytes);
    }
    if (src.startsWith('data:image/svg+xml,')) return decodeURIComponent(src.slice(src.indexOf(',') + 1));
    return null;
}
""".strip()

# A chart element as an SVG element: an inline SVG as it is, an image's SVG source or a live chart's view (as SVG,
# `view.toSVG()`, laid out as on its canvas) drawn into `scratch`, an element off screen; null for a PNG or a live
# chart Vega has not drawn.
_JS_SVG_OF_CHART = r"""
async (el, tag, scratch) => {
    if (tag === 'svg') return el;
    const view = tag === 'canvas' ? el.closest('.coordkit-live-chart')?.vegaView : null;
    const source = tag === 'img' ? (SVG_OF_IMAGE)(el) : view ? await view.toSVG() : null;
    if (source === null) return null;
    scratch.innerHTML = source;
    return scratch.querySelector('svg');
}
""".strip().replace("SVG_OF_IMAGE", JS_SVG_OF_IMAGE)

# Each chart's texts as the page draws them, in its own fonts: an image's SVG source and a live chart's view (as SVG,
# `view.toSVG()`, laid out as on its canvas) are drawn into a scratch element off screen, an inline SVG is read where
# it is. A text is cut if a line of it ends in "…" that its data did not hold (Vega cuts a label longer than its
# limit), clipped if its box reaches more than a pixel past the chart's edge.
_JS_CUT_TEXT = r"""
async (root) => {
    const svgOfChart = SVG_OF_CHART;
    const textsInData = (item, kept) => {  // a live chart's texts that end in "…" before Vega draws them
        const lines = item.text === undefined ? [] : [item.text].flat().map(String);
        lines.filter(line => line.trim().endsWith('…')).forEach(line => kept.add(line.trim()));
        for (const child of item.items || []) textsInData(child, kept);
        return kept;
    };
    const scratch = document.createElement('div');
    scratch.style.cssText = 'position: absolute; left: -20000px; top: 0';
    document.body.append(scratch);
    const found = [];
    try {
        for (const {el, tag, cell, panel} of (ELEMENTS)(root)) {
            const svg = await svgOfChart(el, tag, scratch);
            if (!svg) continue;
            const kind = tag === 'canvas' ? 'live chart' : tag === 'img' ? 'image' : 'inline SVG';
            const kept = tag === 'canvas' ? textsInData(el.closest('.coordkit-live-chart').vegaView.scenegraph().root,
                new Set()) : new Set();
            const frame = svg.getBoundingClientRect();
            for (const text of svg.querySelectorAll('text')) {
                const spans = [...text.querySelectorAll('tspan')];
                const lines = (spans.length ? spans : [text]).map(line => line.textContent.trim());
                const where = {cell, panel, kind};
                for (const line of lines) {
                    if (line.endsWith('…') && !kept.has(line)) found.push({...where, text: line, problem: 'cut'});
                }
                const box = text.getBoundingClientRect();
                if (!box.width || !lines.join('')) continue;
                const past = {
                    left: frame.left - box.left, right: box.right - frame.right,
                    top: frame.top - box.top, bottom: box.bottom - frame.bottom,
                };
                const [side, px] = Object.entries(past).sort((a, b) => b[1] - a[1])[0];
                const problem = `clipped ${Math.ceil(px)} px past the ${side} edge`;
                if (px > 1) found.push({...where, text: lines.join(' / '), problem});
            }
        }
    } finally {
        scratch.remove();
    }
    return found;
}
""".replace("ELEMENTS", _JS_CHART_ELEMENTS.strip()).replace("SVG_OF_CHART", _JS_SVG_OF_CHART)


@dataclass
class Chart:
    """A chart in the outputs: its element, size and marks, and the cell (and panel) it is in."""

    tag: str
    width: float
    height: float
    marks: int
    loaded: bool
    cell: int  # index of the notebook cell
    panel: int  # index of the panel it is in, -1 if none

    @property
    def rendered(self) -> bool:
        return self.width > 0 and self.height > 0 and self.marks > 0 and self.loaded


def charts(page) -> list[Chart]:
    """Every chart in the notebook's outputs (panels included)."""
    return [Chart(**found) for found in page.evaluate(f"() => ({_JS_CHARTS})(document.querySelector('.jp-Notebook'))")]


def cut_text(page_or_element) -> list[str]:
    """The texts of the charts in the notebook (or in one element of it, such as a panel) that are cut by an
    ellipsis or clipped at the chart's edge, each as "cell 12 (panel 0, live chart): 'fully connecte…' cut"."""
    if hasattr(page_or_element, "element_handle"):
        found = page_or_element.element_handle().evaluate(_JS_CUT_TEXT)
    else:
        found = page_or_element.evaluate(f"() => ({_JS_CUT_TEXT})(document.querySelector('.jp-Notebook'))")
    return [f"cell {f['cell']} ({_where(f)}): {f['text']!r} {f['problem']}" for f in found]


def _where(found: dict) -> str:
    return found["kind"] if found["panel"] < 0 else f"panel {found['panel']}, {found['kind']}"


def wait_for_charts_loaded(page, timeout: float = 90.0) -> None:
    """Wait until every <img> in the outputs has loaded (decoding a large SVG takes a moment)."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img')]
            .every(img => img.complete && img.naturalWidth > 0)""",
        timeout=timeout * 1000,
    )


def wait_for_live_charts(page, timeout: float = 120.0) -> None:
    """Wait until every live chart (a panel's, drawn by Vega in the page) has drawn and none is drawing; raise
    AssertionError if some are still on their static snapshot after ``timeout`` seconds (Vega never came)."""
    script = """() => [...document.querySelectorAll('.jp-Notebook .coordkit-live-chart')]
        .filter(el => !Number(el.dataset.draws || 0) || el.dataset.pending).length"""
    try:
        page.wait_for_function(f"() => ({script})() === 0", timeout=timeout * 1000)
    except Exception as error:  # playwright's TimeoutError
        waiting = page.evaluate(script)
        raise AssertionError(f"{waiting} live charts not drawn by Vega after {timeout:.0f} s") from error


# What a chart hides (CONTRIBUTING.md, step 5): a line squashed flat by another on the same axis (its values span
# under a tenth of the plot's height while another line spans over half: two scales on one axis). Read from each
# chart drawn as SVG (an image's source, a live chart's view, an inline SVG) in a scratch element, where Vega's marks
# keep their names (`layer_0_marks`) and roles. (A mark in a legend's colour that is not in the legend is a warning
# of the kernel's, coordkit.chart_checks, which the checks of the outputs catch.)
_JS_HIDDEN_SHAPES = r"""
async (root) => {
    const svgOfChart = SVG_OF_CHART;
    const scratch = document.createElement('div');
    scratch.style.cssText = 'position: absolute; left: -20000px; top: 0';
    document.body.append(scratch);
    const found = [];
    try {
        for (const {el, tag, cell, panel} of (ELEMENTS)(root)) {
            const svg = await svgOfChart(el, tag, scratch);
            if (!svg) continue;
            const where = {cell, panel, kind: tag === 'canvas' ? 'live chart' : tag === 'img' ? 'image' : 'inline SVG'};
            // squashed lines: each line (a path of a line or area mark) against the plot it is drawn in
            for (const plot of svg.querySelectorAll('g.mark-group.role-frame, g.mark-group.role-scope')) {
                const background = plot.querySelector(':scope > g > path.background');
                const height = background ? background.getBBox().height : 0;
                if (!height) continue;
                const lines = [...plot.querySelectorAll(':scope > g > g > g:is(.mark-line, .mark-area) > path')];
                const spans = lines.map(line => line.getBBox().height / height);
                const tallest = Math.max(0, ...spans);
                spans.forEach((span, i) => {
                    if (tallest > 0.5 && span > 0.002 && span < 0.1) {
                        const name = [...lines[i].parentElement.classList].find(c => c.endsWith('_marks')) || 'a line';
                        const problem = `${name}: a line spans ${(100 * span).toFixed(1)}% of its plot's height beside `
                            + `one spanning ${(100 * tallest).toFixed(0)}%: two scales on one axis`;
                        found.push({...where, problem});
                    }
                });
            }
        }
    } finally {
        scratch.remove();
    }
    return found;
}
""".replace("ELEMENTS", _JS_CHART_ELEMENTS.strip()).replace("SVG_OF_CHART", _JS_SVG_OF_CHART)


def hidden_shapes(page_or_element) -> list[str]:
    """What the charts in the notebook (or in one element, such as a panel) hide: lines squashed flat by another on
    the same axis; each as "cell 4 (image): ..."."""
    if hasattr(page_or_element, "element_handle"):
        found = page_or_element.element_handle().evaluate(_JS_HIDDEN_SHAPES)
    else:
        found = page_or_element.evaluate(f"() => ({_JS_HIDDEN_SHAPES})(document.querySelector('.jp-Notebook'))")
    return [f"cell {f['cell']} ({_where(f)}): {f['problem']}" for f in found]
