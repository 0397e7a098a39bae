"""The charts in a notebook's outputs (images, inline SVGs, the panels' live Vega canvases): where they are, how big,
and whether anything is drawn in them."""

from dataclasses import dataclass

# A chart element: an <img> (how JupyterLab shows image/svg+xml and image/png), an inline <svg>, a <canvas> (a
# panel's live chart, drawn by Vega). Each belongs to the innermost output around it (a panel's table slots are
# outputs inside the panel's output).
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
    const found = [];
    const cells = [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
    const panels = [...document.querySelectorAll('.jp-Notebook .coordkit-panel')];
    const outputs = root.querySelectorAll('.jp-OutputArea-output');
    for (const output of outputs) {
        for (const el of output.querySelectorAll('img, svg, canvas')) {
            if (el.closest('.jp-OutputArea-output') !== output) continue;  // an inner output's: counted there
            if (el.tagName.toLowerCase() === 'svg' && el.parentElement.closest('svg')) continue;  // nested svg
            if (el.closest('.jp-InputArea, .widget-slider, .jp-Toolbar')) continue;
            const box = el.getBoundingClientRect();
            const tag = el.tagName.toLowerCase();
            let marks = 0, loaded = true;
            if (tag === 'svg') marks = el.querySelectorAll('path, rect, circle, line, polygon, polyline').length;
            else if (tag === 'img') { loaded = el.complete && el.naturalWidth > 0; marks = loaded ? 1 : 0; }
            else marks = inkedPixels(el);
            // icons (tiny svgs in buttons, toolbars) are not charts
            if (tag === 'svg' && box.width < 40 && box.height < 40) continue;
            found.push({
                tag, width: box.width, height: box.height, marks, loaded,
                cell: cells.indexOf(el.closest('.jp-Cell')),
                panel: panels.indexOf(el.closest('.coordkit-panel')),
            });
        }
    }
    return found;
}
"""


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


def wait_for_charts_loaded(page, timeout: float = 15.0) -> None:
    """Wait until every <img> in the outputs has loaded (decoding a large SVG takes a moment)."""
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-Notebook .jp-OutputArea-output img')]
            .every(img => img.complete && img.naturalWidth > 0)""",
        timeout=timeout * 1000,
    )


def wait_for_live_charts(page, timeout: float = 30.0) -> None:
    """Wait until every live chart (a panel's, drawn by Vega in the page) has drawn and none is drawing; raise
    AssertionError if some are still on their static snapshot after ``timeout`` seconds (Vega never came)."""
    script = """() => [...document.querySelectorAll('.jp-Notebook .coordkit-live-chart')]
        .filter(el => !Number(el.dataset.draws || 0) || el.dataset.pending).length"""
    try:
        page.wait_for_function(f"() => ({script})() === 0", timeout=timeout * 1000)
    except Exception as error:  # playwright's TimeoutError
        waiting = page.evaluate(script)
        raise AssertionError(f"{waiting} live charts not drawn by Vega after {timeout:.0f} s") from error
