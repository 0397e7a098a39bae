// A Vega-Lite chart that stays in the page. Each spec the kernel sends is drawn into a new element, which replaces
// the one on screen only once it is drawn: no blank frame, no jump. Vega comes from the kernel, once per page
// (vl-convert's offline bundle: no CDN). Until then, and wherever no kernel answers (a saved notebook reopened),
// the widget shows its static snapshot.

const NO_KERNEL_AFTER_MS = 5000;

function loadVega(model) {
  if (window.vegaEmbed) return Promise.resolve(window.vegaEmbed);
  if (!window.__coordkitVega) {
    window.__coordkitVega = new Promise((resolve, reject) => {
      const giveUp = (error) => {
        model.off("msg:custom", onMessage);
        window.__coordkitVega = null; // the next chart asks again
        reject(error);
      };
      const timer = setTimeout(() => giveUp(new Error("no kernel sent Vega")), NO_KERNEL_AFTER_MS);
      const onMessage = (message) => {
        if (message.type !== "vega-bundle") return;
        clearTimeout(timer);
        model.off("msg:custom", onMessage);
        new Function(message.code)(); // defines window.vegaEmbed, window.vega and window.vegaLite
        resolve(window.vegaEmbed);
      };
      model.on("msg:custom", onMessage);
      try {
        model.send({ type: "need-vega" });
      } catch (error) {
        clearTimeout(timer); // no comm: the widget was restored from a saved notebook
        giveUp(error);
      }
    });
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

function labelSnapshot(el) {
  const snapshot = el.querySelector(".coordkit-live-chart-snapshot");
  if (!snapshot || el.querySelector(".coordkit-live-chart-note")) return;
  const note = document.createElement("p");
  note.className = "coordkit-live-chart-note";
  note.style.cssText = "color: #666; font-style: italic; margin: 0 0 4px";
  note.textContent = "A static view of this chart as first drawn: run the notebook to redraw it.";
  snapshot.before(note);
}

export default {
  render({ model, el }) {
    el.classList.add("coordkit-live-chart");
    let result = null; // the vega-embed result on screen
    let latest = 0; // the latest draw; an earlier one that finishes later is dropped

    const placeholder = snapshotOf(model);
    if (placeholder) el.replaceChildren(placeholder);

    const draw = async () => {
      const spec = model.get("spec");
      if (!spec || !Object.keys(spec).length) return;
      const mine = ++latest;
      let embed;
      try {
        embed = await loadVega(model);
      } catch {
        labelSnapshot(el); // no Vega: the snapshot stays
        return;
      }
      const next = document.createElement("div");
      let drawn;
      try {
        // canvas, not SVG: 20-40 ms sooner on screen for charts with many marks (benchmarks/bench_panels.py)
        drawn = await embed(next, spec, { actions: false, renderer: "canvas" });
      } catch (error) {
        if (mine !== latest) return;
        const message = document.createElement("pre");
        message.className = "coordkit-live-chart-error";
        message.textContent = `The chart could not be drawn: ${error.message}`;
        el.replaceChildren(message);
        return;
      }
      if (mine !== latest) {
        drawn.finalize();
        return;
      }
      el.replaceChildren(next);
      if (result) result.finalize();
      result = drawn;
    };

    model.on("change:spec", draw);
    draw();
    return () => {
      latest++;
      model.off("change:spec", draw);
      if (result) result.finalize();
    };
  },
};
