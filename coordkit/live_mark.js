// The mark of a live panel (snapshot.py): where the panel's widgets are drawn, its snapshot, the output that
// readers without widgets see instead, is hidden, together with the output area's row that holds it.

export default {
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
