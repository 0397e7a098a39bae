"""A saved notebook as its readers see it without a kernel, panel by panel.

The readers: JupyterLab reopening the notebook with no kernel (with its widget state, as ``make lab`` saves it, and
without), ``jupyter nbconvert --to html`` opened offline, and the same page with no JavaScript at all (as GitHub and
nbviewer show a notebook). Each shows a panel either as its widgets (restored from the widget state: controls, and
each chart's last snapshot) or as the panel's snapshot (coordkit/snapshot.py). ``panels_shown`` reads either the same
way: the settings (label → value as the panel writes it) and, for each chart or table, the texts it shows; the tests
compare that with what the live panels showed when the notebook was saved.
"""

import json
import time
import urllib.request
from pathlib import Path

import nbformat
from lab_charts import JS_SVG_OF_IMAGE
from lab_notebook import go_to
from lab_server import JupyterLab
from nbconvert import HTMLExporter
from nbconvert.nbconvertapp import NbConvertApp

# In the page: [{key, how, settings, parts}] for every panel, in order; `how` is "widgets" (drawn: its controls and
# charts read) or "snapshot" (its saved HTML read). A part's texts: a chart's <text> elements (a live chart's
# view drawn as SVG, or its snapshot), a table's or other output's visible text (null for a hidden one). With
# `staticOnly`, every snapshot, shown or hidden (a live panel's, which the notebook keeps), and nothing else.
JS_PANELS_SHOWN = r"""
async (staticOnly) => {
    const shown = el => el.getClientRects().length > 0;
    const svgTexts = svg => [...svg.querySelectorAll('text')].map(t => t.textContent.trim()).filter(Boolean);
    const scratch = document.createElement('div');
    const svgOf = async chart => {
        if (chart.vegaView) {
            scratch.innerHTML = await chart.vegaView.toSVG();
            return scratch.querySelector('svg');
        }
        return chart.querySelector('.coordkit-live-chart-snapshot svg');
    };
    const imageSvg = img => {  // an <img> of an SVG data URI, parsed
        const source = (SVG_OF_IMAGE)(img);
        return source && new DOMParser().parseFromString(source, 'image/svg+xml').documentElement;
    };
    const partTexts = async el => {
        if (el.matches('svg')) return svgTexts(el);
        const img = el.matches('img') ? el : el.querySelector(':scope > img');
        if (img && imageSvg(img)) return svgTexts(imageSvg(img));
        const chart = el.matches('.coordkit-live-chart') ? el : el.querySelector('.coordkit-live-chart');
        if (chart) {
            const svg = await svgOf(chart);
            return svg ? svgTexts(svg) : ['(no chart drawn)'];
        }
        const inner = el.querySelector(':scope > svg');
        if (inner) return svgTexts(inner);
        // a hidden element's innerText is its raw text (a table's <style> too): not comparable with a shown one's
        return shown(el) ? el.innerText.split('\n').map(line => line.trim()).filter(Boolean) : null;
    };
    // as the panel writes it: ipywidgets shows an option's spaces as no-break spaces and a minus as "−"
    const plain = text => text.replace(/\u00a0/g, ' ').replace(/\u2212/g, '-').trim();
    const controlValue = control => {
        const box = control.querySelector('input[type=checkbox]');
        if (box) return box.checked ? 'on' : 'off';
        const select = control.querySelector('select');
        if (select) return plain(select.options[select.selectedIndex]?.text ?? '');
        const readout = control.querySelector('.widget-readout');
        return readout ? plain(readout.innerText) : '';
    };
    const panels = [];
    const keyOf = view => [...view.classList]
        .find(name => name.startsWith('coordkit-static-') && name !== 'coordkit-static-view')
        .slice('coordkit-static-'.length);
    const settingsOf = view => Object.fromEntries([...view.querySelectorAll('.coordkit-setting')].map(setting => [
        setting.querySelector('.coordkit-setting-label').textContent,
        setting.querySelector('.coordkit-setting-value').textContent,
    ]));
    const statics = new Map([...document.querySelectorAll('.coordkit-static-view')].map(view => [keyOf(view), view]));
    const drawn = new Set();
    for (const panel of staticOnly ? [] : document.querySelectorAll('.coordkit-panel')) {
        const key = panel.querySelector('[data-coordkit-key]')?.dataset.coordkitKey ?? '';
        if (!shown(panel)) continue;
        drawn.add(key);
        const settings = {};
        for (const control of panel.querySelectorAll(
            '.coordkit-panel-controls > .widget-slider, .coordkit-panel-controls > .widget-dropdown,' +
            ' .coordkit-panel-controls > .widget-checkbox')) {
            // (a checkbox's first label is a hidden zero-width space; its description sits beside the box)
            const labels = [...control.querySelectorAll('label')].map(l => plain(l.innerText.replace(/\u200b/g, '')))
                .filter(Boolean);
            settings[labels[0] ?? ''] = controlValue(control);
        }
        const parts = [];
        for (const slot of panel.querySelector('.coordkit-panel-chart').children) parts.push(await partTexts(slot));
        panels.push({key, how: 'widgets', settings, parts, order: panel});
    }
    for (const [key, view] of statics) {
        if (!staticOnly && (drawn.has(key) || !shown(view))) continue;
        const parts = [];
        for (const part of [...view.children].slice(1)) parts.push(await partTexts(part));
        panels.push({key, how: 'snapshot', settings: settingsOf(view), parts, order: view});
    }
    const ordered = panels.sort((a, b) =>
        a.order.compareDocumentPosition(b.order) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
    return ordered.map(({key, how, settings, parts}) => ({key, how, settings, parts}));
}
""".replace("SVG_OF_IMAGE", JS_SVG_OF_IMAGE)


def panels_shown(page) -> list[dict]:
    """Every panel the page shows, in order: {"key", "how", "settings", "parts"} (see JS_PANELS_SHOWN)."""
    return page.evaluate(JS_PANELS_SHOWN, False)


def wait_for_snapshots(page, live: list[dict], timeout: float = 120.0) -> None:
    """Wait until each live panel's snapshot (hidden, in the notebook) holds the settings its controls show and the
    texts of the charts it draws: the page sends each chart's picture a moment after drawing it (after a player's
    last frame, too), then the kernel replaces the view. Raises TimeoutError naming the panels still behind."""
    deadline = time.monotonic() + timeout
    while True:
        statics = {view["key"]: view for view in page.evaluate(JS_PANELS_SHOWN, True)}
        behind = [panel["key"] for panel in live if not _holds(statics.get(panel["key"]), panel)]
        if not behind:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"snapshots behind their panels after {timeout:.0f} s: {behind}")
        page.wait_for_timeout(250)


def _holds(view: dict | None, panel: dict) -> bool:
    """Whether a hidden snapshot holds a live panel's settings and the texts of its charts (its tables' texts
    cannot be read while hidden: the saved notebook's readers compare those)."""
    if view is None or view["settings"] != panel["settings"] or len(view["parts"]) != len(panel["parts"]):
        return False
    return all(held is None or held == shown for held, shown in zip(view["parts"], panel["parts"], strict=True))


def without_widget_state(saved: dict) -> dict:
    """The notebook as JupyterLab saves it with widget-state saving off (the default outside ``make lab``)."""
    metadata = {key: value for key, value in saved["metadata"].items() if key != "widgets"}
    return {**saved, "metadata": metadata}


def open_without_kernel(page, reader: JupyterLab, name: str, panel_count: int, timeout: float = 300.0) -> None:
    """Open ``name`` in a JupyterLab whose notebooks start no kernel, and wait until it shows ``panel_count`` panels,
    each as its widgets or as its snapshot. A page that already shows that JupyterLab opens the notebook in it, in
    place of what it showed (loading JupyterLab again costs seconds of Chromium's time); any other page loads it."""
    go_to(page, reader, name)
    page.wait_for_function(
        f"""() => {{
            const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
            return panel && panel.context && panel.context.isReady && panel.context.path.endsWith({json.dumps(name)});
        }}""",
        timeout=timeout * 1000,
        polling=200,
    )
    page.wait_for_function(
        """(count) => [...document.querySelectorAll('.jp-Notebook .coordkit-static-view')]
            .filter(view => view.getClientRects().length > 0).length
            + document.querySelectorAll('.jp-Notebook .coordkit-panel').length >= count""",
        arg=panel_count,
        timeout=timeout * 1000,
    )


def exported_html(saved: dict, folder: Path, stem: str) -> Path:
    """``jupyter nbconvert --to html`` of the saved notebook (the lab template, its default), written to a file, with
    the Jupyter config nbconvert reads (the kit's, coordkit/offline_math.py, writes the math as MathML)."""
    app = NbConvertApp()
    app.load_config_file()
    body, _ = HTMLExporter(config=app.config).from_notebook_node(nbformat.reads(json.dumps(saved), as_version=4))
    path = folder / f"{stem}.html"
    path.write_text(body, encoding="utf-8")
    return path


def lab_exported_html(server: JupyterLab, name: str, folder: Path) -> Path:
    """The notebook ``name`` as JupyterLab's File → Save and Export Notebook As → HTML downloads it from ``server``
    (its nbconvert handler, with the server's Jupyter config), written to a file."""
    request = urllib.request.Request(
        f"{server.base_url}/nbconvert/html/{name}?download=true", headers={"Authorization": f"token {server.token}"}
    )
    with urllib.request.urlopen(request, timeout=300) as reply:
        path = folder / f"{Path(name).stem}-lab.html"
        path.write_bytes(reply.read())
    return path


def open_offline(chromium, path: Path, javascript: bool = True):
    """A page showing ``path`` with nothing from the network (the export's scripts from a CDN fail, as offline), and
    with no JavaScript at all if ``javascript`` is False (as GitHub and nbviewer show a notebook)."""
    context = chromium.new_context(viewport={"width": 1400, "height": 1000}, java_script_enabled=javascript)
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
    page = context.new_page()
    page.goto(path.as_uri(), wait_until="load")
    return page
