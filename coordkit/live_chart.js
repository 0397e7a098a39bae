// A Vega-Lite chart that stays in the page. A spec the kernel sends that differs from the one on screen only in its
// data, its titles and its size updates the view in place (new data, title and size signals); any other is drawn
// into a new element, which replaces the one on screen only once it is drawn: no blank frame, no jump. Vega comes
// from the kernel (vl-convert's offline bundle: no CDN), at the first answer to any chart's request: a kernel busy
// with Run All answers late, one restored from a saved notebook never does. Until then the widget shows its static
// snapshot, labelled as static after a few seconds. Once a spec is drawn and the chart has rested a moment, the page
// sends it back as SVG (the `snapshot` of that spec's `serial`): the panel's snapshot, which a saved notebook
// keeps, then shows what the reader saw.

const LABEL_SNAPSHOT_AFTER_MS = 5000;
const SEND_SNAPSHOT_AFTER_MS = 1000; // once the reader has paused: not between the changes of a burst
const asked = new WeakSet(); // the models that have asked their kernel for Vega

function loadVega(model) {
  if (window.vegaEmbed) return Promise.resolve(window.vegaEmbed);
  if (!window.__coordkitVega) {
    window.__coordkitVega = new Promise((resolve) => {
      window.__coordkitVegaArrived = resolve;
    });
  }
  if (asked.has(model)) return window.__coordkitVega;
  asked.add(model);
  const onMessage = (message) => {
    if (message.type !== "vega-bundle") return;
    model.off("msg:custom", onMessage);
    if (!window.vegaEmbed) new Function(message.code)(); // defines window.vegaEmbed, window.vega, window.vegaLite
    window.__coordkitVegaArrived(window.vegaEmbed);
  };
  model.on("msg:custom", onMessage);
  try {
    model.send({ type: "need-vega" });
  } catch {
    // no comm: a widget restored from a saved notebook; another chart's kernel may still answer
  }
  return window.__coordkitVega;
}

function snapshotOf(model) {
  const snapshot = model.get("snapshot");
  if (!snapshot) return null;
  const div = document.createElement("div");
  div.className = "coordkit-live-chart-snapshot";
  div.innerHTML = snapshot;
  return div;
}

// Views (not axes or legends) whose titles become variables, so that a new title needs no new view.
const VIEW_KEYS = ["mark", "layer", "hconcat", "vconcat", "concat", "facet", "repeat", "spec"];

// The spec made ready for updates in place: datasets named by position (Altair names them by a hash of their
// values), each view title read from a variable ("ck_title_<i>"), and the size of a single or layered view set
// apart (a sequence diagram grows with its messages). `shape` is what must stay the same.
function prepare(spec) {
  let text = JSON.stringify(spec);
  Object.keys(spec.datasets || {}).forEach((name, i) => {
    text = text.split(JSON.stringify(name)).join(JSON.stringify(`ck-data-${i}`));
  });
  const ready = JSON.parse(text);
  const titles = [];
  const visit = (node, top) => {
    if (Array.isArray(node)) return node.forEach((item) => visit(item, false));
    if (!node || typeof node !== "object") return;
    const isView = top || VIEW_KEYS.some((key) => key in node);
    if (isView && node.title !== undefined) {
      const title = typeof node.title === "object" && !Array.isArray(node.title) ? node.title : { text: node.title };
      if (typeof title.text === "string" || Array.isArray(title.text)) {
        const name = `ck_title_${titles.length}`;
        titles.push({ name, value: title.text });
        node.title = { ...title, text: { expr: name } };
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key !== "datasets" && key !== "encoding" && key !== "data") visit(value, false);
    }
  };
  visit(ready, true);
  ready.params = [...(ready.params || []), ...titles];
  const datasets = ready.datasets || {};
  const size = {};
  for (const key of ["width", "height"]) if (typeof ready[key] === "number") size[key] = ready[key];
  const shape = JSON.stringify({
    ...ready,
    datasets: Object.keys(datasets),
    params: ready.params.map((param) => param.name),
    ...Object.fromEntries(Object.keys(size).map((key) => [key, "in place"])),
  });
  return { spec: ready, shape, datasets, titles, size };
}

// The whole pixels that the view's marks cover (its root's bounds, from the view's origin).
function extent(view) {
  const bounds = view.scenegraph().root.bounds;
  return [Math.floor(bounds.x1), Math.floor(bounds.y1), Math.ceil(bounds.x2), Math.ceil(bounds.y2)].join();
}

// Put the new data, titles and size into the view on screen; false if it cannot take them (then draw anew).
async function update(result, prepared) {
  try {
    const view = result.view;
    const before = extent(view);
    for (const [name, values] of Object.entries(prepared.datasets)) view.data(name, values);
    for (const { name, value } of prepared.titles) view.signal(name, value);
    if (prepared.size.width !== undefined) view.width(prepared.size.width);
    if (prepared.size.height !== undefined) view.height(prepared.size.height);
    await view.runAsync();
    // Marks that now cover other pixels (wider axis labels, a longer title) get a canvas laid out anew for them, or
    // they would be clipped at its edge: Vega's autosize lays out an updated view only when asked. Asked only
    // then, since a canvas laid out anew costs the notebook's page a reflow (some 20 ms).
    if (extent(view) !== before) await view.resize().runAsync();
    return true;
  } catch {
    return false;
  }
}

function labelSnapshot(el) {
  const snapshot = el.querySelector(".coordkit-live-chart-snapshot");
  if (!snapshot || el.querySelector(".coordkit-live-chart-note")) return;
  const note = document.createElement("p");
  note.className = "coordkit-live-chart-note";
  note.style.cssText = "color: #666; font-style: italic; margin: 0 0 4px";
  note.textContent =
    "A snapshot of this chart as last drawn; it comes alive when the kernel answers " +
    "(run the notebook if it does not).";
  snapshot.before(note);
}

export default {
  render({ model, el }) {
    el.classList.add("coordkit-live-chart");
    let result = null; // the vega-embed result on screen
    let shape = null; // the shape of its spec (see prepare)
    let latest = 0; // the latest draw; an earlier one that finishes later is dropped
    let sending = null; // the timer that sends the chart on screen back as SVG

    const placeholder = snapshotOf(model);
    if (placeholder) el.replaceChildren(placeholder);

    // `data-pending` while a draw is under way, `data-draws` counts the draws done (for tests and benchmarks:
    // a canvas redrawn in place changes no element)
    const countDraw = () => {
      el.dataset.draws = String(Number(el.dataset.draws || 0) + 1);
    };
    const draw = async () => {
      const spec = model.get("spec");
      if (!spec || !Object.keys(spec).length) return;
      const serial = model.get("serial");
      const mine = ++latest;
      el.dataset.pending = "1";
      try {
        await drawSpec(spec, mine);
      } finally {
        if (mine === latest) {
          delete el.dataset.pending;
          sendSnapshot(serial, mine);
        }
      }
    };
    // the chart on screen as SVG, once it has rested (a slider held down draws many), unless the kernel has it
    const sendSnapshot = (serial, mine) => {
      clearTimeout(sending);
      sending = setTimeout(async () => {
        if (!result || mine !== latest || model.get("snapshot_serial") === serial) return;
        const svg = await result.view.toSVG();
        if (mine !== latest) return;
        model.set({ snapshot: svg, snapshot_serial: serial }); // in the page's widget state, which a save keeps
        try {
          model.send({ type: "snapshot", serial, svg }); // to the kernel, which (unlike a synced change) echoes nothing
        } catch {
          // no kernel (a saved notebook reopened)
        }
      }, SEND_SNAPSHOT_AFTER_MS);
    };
    const drawSpec = async (spec, mine) => {
      const label = setTimeout(() => labelSnapshot(el), LABEL_SNAPSHOT_AFTER_MS);
      const embed = await loadVega(model);
      clearTimeout(label);
      const prepared = prepare(spec);
      if (result && prepared.shape === shape && (await update(result, prepared))) {
        countDraw();
        return;
      }
      const next = document.createElement("div");
      let embedded;
      try {
        // canvas, not SVG: 17-31 ms sooner on screen for 03's and 04's charts (benchmarks/bench_panels.py)
        embedded = await embed(next, prepared.spec, { actions: false, renderer: "canvas" });
      } catch (error) {
        if (mine !== latest) return;
        const message = document.createElement("pre");
        message.className = "coordkit-live-chart-error";
        message.textContent = `The chart could not be drawn: ${error.message}`;
        el.replaceChildren(message);
        return;
      }
      if (mine !== latest) {
        embedded.finalize();
        return;
      }
      el.replaceChildren(next);
      if (result) result.finalize();
      result = embedded;
      el.vegaView = embedded.view; // for tests: the view on screen (its scenegraph, `toSVG()`)
      shape = prepared.shape;
      countDraw();
    };

    model.on("change:spec", draw);
    draw();
    return () => {
      latest++;
      clearTimeout(sending);
      model.off("change:spec", draw);
      if (result) result.finalize();
    };
  },
};
