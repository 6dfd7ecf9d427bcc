// Layout probe of the Snakemake HTML report, run by headless Chromium in
// tests/test_workflow.py (test_report_layout_in_a_browser). The test inserts this script
// at the end of a copy of report.html, with the report app's instance exposed as
// window.rollmuxApp and extra figures (name -> data URI) as window.rollmuxExtraFigures;
// the probe measures the landing page and every figure view and writes what it found as
// JSON into the hidden pre element #rollmux-layout, read from --dump-dom.
(function () {
  "use strict";
  const out = { viewport: [window.innerWidth, window.innerHeight], figures: [] };
  const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  function write() {
    let pre = document.getElementById("rollmux-layout");
    if (!pre) {
      pre = document.createElement("pre");
      pre.id = "rollmux-layout";
      pre.style.display = "none";
      document.body.appendChild(pre);
    }
    pre.textContent = JSON.stringify(out);
  }

  function describe(el) {
    if (el === document.scrollingElement) return "the page";
    const cls = typeof el.className === "string" ? el.className.trim().split(/\s+/).join(".") : "";
    return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (cls ? "." + cls : "");
  }

  function scrolls(el, axis) {
    const style = getComputedStyle(el);
    const overflow = axis === "x" ? style.overflowX : style.overflowY;
    return overflow === "auto" || overflow === "scroll";
  }

  // Every box that scrolls sideways: its content is wider than it.
  function horizontalScrollers() {
    const found = [];
    const page = document.scrollingElement;
    if (page.scrollWidth > window.innerWidth + 1) found.push("the page");
    for (const el of document.querySelectorAll("#app *")) {
      if (scrolls(el, "x") && el.scrollWidth > el.clientWidth + 1) {
        found.push(describe(el) + " (" + el.scrollWidth + " px in " + el.clientWidth + ": " +
                   widest(el) + ")");
      }
    }
    return found;
  }

  // The innermost element that reaches furthest right in a box: what makes it too wide.
  function widest(box) {
    const right = box.getBoundingClientRect().left + box.clientWidth;
    let worst = null;
    for (const el of box.querySelectorAll("*")) {
      const r = el.getBoundingClientRect();
      if (r.right > right + 1 && (!worst || r.right >= worst.getBoundingClientRect().right)) {
        worst = el;
      }
    }
    return worst ? describe(worst) + " '" + worst.textContent.trim().slice(0, 40) + "'" : "?";
  }

  // Whether a cell is narrower than one of its words: the word is broken across lines.
  const canvas = document.createElement("canvas").getContext("2d");
  function brokenWord(cell) {
    const style = getComputedStyle(cell);
    canvas.font = style.font;
    const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    // a line may break after a hyphen: "paper-" and "reference" are the pieces
    const words = cell.textContent.trim().split(/\s+|(?<=-)/).filter(Boolean);
    return words.some((word) => canvas.measureText(word).width > room + 1);
  }

  function pane() {
    return document.querySelector("#app div.grow.h-screen.overflow-auto");
  }

  function visible(el) {
    for (let node = el; node && node !== document.body; node = node.parentElement) {
      const style = getComputedStyle(node);
      if (style.display === "none" || style.visibility === "hidden") return false;
    }
    return true;
  }

  async function landing() {
    let table = null;
    for (let i = 0; i < 100 && !(table = document.getElementById("rollmux-claims")); i++) {
      await wait(100);
    }
    out.claims_table = Boolean(table);
    out.landing_horizontal_scroll = horizontalScrollers();
    if (!table) return;
    const headers = Array.from(table.querySelectorAll("th"));
    out.headers = headers.map((th) => th.textContent.trim());
    const evidence = headers.find((th) => th.textContent.trim().toLowerCase() === "evidence");
    if (evidence) {
      const r = evidence.getBoundingClientRect();
      out.evidence = { left: r.left, right: r.right, width: r.width, visible: visible(evidence) };
    }
    out.broken_headers = headers.filter(brokenWord).map((th) => th.textContent.trim());
    const first = Array.from(table.querySelectorAll("tr td:first-child"));
    out.broken_ids = first.filter(brokenWord).map((td) => td.textContent.trim()).slice(0, 5);
    const cell = table.querySelector("td");
    out.cell_font_px = cell ? parseFloat(getComputedStyle(cell).fontSize) : null;
    out.table_right = table.getBoundingClientRect().right;
    const boxes = [];
    const content = pane();
    for (let node = table.parentElement; node && node !== content; node = node.parentElement) {
      if (scrolls(node, "x") || scrolls(node, "y")) boxes.push(describe(node));
    }
    out.table_scroll_boxes = boxes;
  }

  async function figure(name, uri, resultPath) {
    window.rollmuxApp.setView({ content: "img", contentPath: uri, resultPath: resultPath });
    let img = null;
    for (let i = 0; i < 50; i++) {
      await wait(100);
      img = pane() && pane().querySelector("img");
      if (img && img.getAttribute("src") === uri && img.complete && img.naturalWidth) break;
    }
    const content = pane();
    if (!img || !content) {
      out.figures.push({ name: name, shown: false });
      return;
    }
    content.scrollTop = 0;
    content.scrollLeft = 0;
    await wait(50);
    const p = content.getBoundingClientRect();
    const top = img.getBoundingClientRect();
    content.scrollTop = content.scrollHeight;
    await wait(50);
    const bottom = img.getBoundingClientRect();
    const paneBottom = content.getBoundingClientRect().bottom;
    content.scrollTop = 0;
    out.figures.push({
      name: name,
      shown: true,
      natural: [img.naturalWidth, img.naturalHeight],
      drawn: [top.width, top.height],
      // at scroll 0 the figure's top and left edges are in the pane ...
      top_gap: top.top - p.top,
      left_gap: top.left - p.left,
      right_gap: p.right - top.right,
      // ... and scrolled to the end its bottom edge is too
      bottom_gap: paneBottom - bottom.bottom,
      horizontal_scroll: horizontalScrollers(),
    });
  }

  async function run() {
    await landing();
    if (!window.rollmuxApp) {
      out.error = "the report app was not exposed";
      return;
    }
    const images = Object.keys(results).filter((p) => /^image\//.test(results[p].mime_type));
    for (const path of images) await figure(path, results[path].data_uri, path);
    const extra = window.rollmuxExtraFigures || {};
    for (const name of Object.keys(extra)) await figure(name, extra[name], images[0]);
  }

  window.addEventListener("load", () => {
    run()
      .catch((error) => { out.error = String(error && error.stack || error); })
      .finally(write);
  });
})();
