// The mark of a live panel (snapshot.py): where the panel's widgets are drawn, its snapshot, the output that
// readers without widgets see instead, is hidden, together with the output area's row that holds it. And its page
// writes each snapshot the kernel gives the mark (`bundle`) into the notebook's model, over the output that holds
// this panel's snapshot, so that the notebook saved next keeps it: the kernel's `update_display` reaches only outputs
// that came in this page, not those of a notebook reloaded, or closed and reopened, while its kernel runs.

// The notebook the mark's model belongs to: JupyterLab's widget manager (jupyterlab_widgets) is made per notebook and
// holds its document's context. Elsewhere (VS Code, Voilà) there is none, and `update_display` alone does the work.
function notebookOf(model) {
  return model.widget_manager?.context?.model ?? null;
}

// Replace the panel's snapshot in the notebook's model, unless it is already this one (then nothing changes, and the
// notebook is not marked as modified).
function writeSnapshot(model) {
  const notebook = notebookOf(model);
  const bundle = model.get("bundle");
  const snapshot = bundle["text/html"];
  if (!notebook || !snapshot) return;
  const marker = `coordkit-static-${model.get("key")}"`; // the last class of the snapshot's element
  for (let c = 0; c < notebook.cells.length; c++) {
    const outputs = notebook.cells.get(c).outputs; // (a code cell's)
    for (let i = 0; i < (outputs?.length ?? 0); i++) {
      const held = outputs.get(i).data["text/html"];
      const text = Array.isArray(held) ? held.join("") : held;
      if (typeof text !== "string" || !text.includes(marker)) continue;
      if (text !== snapshot) outputs.set(i, { output_type: "display_data", data: bundle, metadata: {} });
      return;
    }
  }
}

export default {
  initialize({ model }) {
    model.on("change:bundle", () => writeSnapshot(model));
    model.widget_manager?.context?.ready?.then(() => writeSnapshot(model)); // a page reloaded: the kernel's latest
  },

  render({ model, el }) {
    el.style.display = "none";
    const key = model.get("key");
    el.dataset.coordkitKey = key; // which snapshot is this panel's (for tests: they pair the two)
    const id = `coordkit-static-hidden-${key}`;
    if (!key || document.getElementById(id)) return;
    const selector = `.coordkit-static-${CSS.escape(key)}`;
    const style = document.createElement("style");
    style.id = id;
    style.textContent = `${selector}, .jp-OutputArea-child:has(${selector}) { display: none !important; }`;
    document.head.append(style);
  },
};
