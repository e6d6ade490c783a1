"""The inline style and script of the HTML views (`shax.tools.html`): no network.

The script reads the page's one data table (`<script type="application/json">`, built by
`shax.tools.html`): interned strings, and per definition a row per binding. It renders a stage's
definitions when the stage is first opened (a closed stage costs its data only), and on a
click highlights, from indexes built once: the binding's copies in every stage (same
provenance, primitive and rank among those), the bindings its rules made from the same
line (same family; dropped when more than `FAMILY_LIMIT` share it: a loop's line), and in
its own definition its operands and its uses. A click touches only the bindings it lights
and the ones it unlights. It leaves on its root element (`root.shax`) what the views'
and the exercise checker's scripts draw with: the table, `line` (a binding as printed, or
a blank to fill), `chunked`, `attach` (a drawn box's spans, lit as the selection says).
"""

from __future__ import annotations

# The light palette, the dark one for `prefers-color-scheme: dark` and for JupyterLab's dark
# themes (`data-jp-theme-light="false"` on the body); each highlight sets its text colour too,
# so a dark theme's light text never sits on a light highlight.
STYLE = """
.shax { --fg: #1f2328; --muted: #6e7781; --rule: #d0d7de; --hover: #eaeef2;
  --f32: #0550ae; --f64: #6f42c1; --int: #116329; --bool: #953800;
  --sel-bg: #ffd33d; --sel-fg: #1f2328; --same-bg: #fff1a8; --same-fg: #1f2328;
  --line-bg: #f1e8ff; --line-fg: #1f2328; --arg-bg: #cde9ff; --arg-fg: #1f2328;
  --use-bg: #c8f2d0; --use-fg: #1f2328; --add: #116329; --del: #82071e; --chg: #953800;
  color: var(--fg); font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
@media (prefers-color-scheme: dark) { .shax { --fg: #e6edf3; --muted: #9198a1; --rule: #3d444d; --hover: #262c36;
  --f32: #79c0ff; --f64: #d2a8ff; --int: #7ee787; --bool: #ffa657;
  --sel-bg: #9e6a03; --sel-fg: #ffffff; --same-bg: #5c4a00; --same-fg: #ffffff; --line-bg: #3c2a5c; --line-fg: #ffffff;
  --arg-bg: #0c3d73; --arg-fg: #ffffff; --use-bg: #0f4a22; --use-fg: #ffffff;
  --add: #7ee787; --del: #ff7b72; --chg: #ffa657; } }
body[data-jp-theme-light="false"] .shax { --fg: var(--jp-content-font-color1, #e6edf3); --muted: #9198a1;
  --rule: #3d444d; --hover: #262c36; --f32: #79c0ff; --f64: #d2a8ff; --int: #7ee787; --bool: #ffa657;
  --sel-bg: #9e6a03; --sel-fg: #ffffff; --same-bg: #5c4a00; --same-fg: #ffffff; --line-bg: #3c2a5c; --line-fg: #ffffff;
  --arg-bg: #0c3d73; --arg-fg: #ffffff; --use-bg: #0f4a22; --use-fg: #ffffff;
  --add: #7ee787; --del: #ff7b72; --chg: #ffa657; }
.shax details { margin: 4px 0; border-left: 3px solid var(--rule); padding-left: 8px; }
.shax summary { cursor: pointer; font-weight: bold; }
.shax .about { color: var(--muted); margin: 2px 0 4px; font-family: system-ui, sans-serif; }
.shax header { margin-bottom: 8px; } .shax header h1 { font-size: 16px; margin: 0 0 4px; }
.shax .legend span { padding: 0 4px; margin-right: 6px; border-radius: 3px; }
.shax pre { margin: 4px 0; line-height: 1.35; }
.shax .b { cursor: pointer; border-radius: 3px; }
.shax .b:hover { background: var(--hover); }
.shax .t-f32 { color: var(--f32); } .shax .t-f64 { color: var(--f64); }
.shax .t-i32, .shax .t-i64, .shax .t-u8 { color: var(--int); } .shax .t-bool { color: var(--bool); }
.shax .prov { color: var(--muted); }
.shax .line { background: var(--line-bg); color: var(--line-fg); }
.shax .same { background: var(--same-bg); color: var(--same-fg); }
.shax .arg { background: var(--arg-bg); color: var(--arg-fg); }
.shax .use { background: var(--use-bg); color: var(--use-fg); }
.shax .lg-selected { background: var(--sel-bg); color: var(--sel-fg); }
.shax .lg-same { background: var(--same-bg); color: var(--same-fg); }
.shax .lg-line { background: var(--line-bg); color: var(--line-fg); }
.shax .lg-arg { background: var(--arg-bg); color: var(--arg-fg); }
.shax .lg-use { background: var(--use-bg); color: var(--use-fg); }
.shax .selected { background: var(--sel-bg) !important; color: var(--sel-fg) !important; }
.shax .selected span, .shax .same span, .shax .line span, .shax .arg span, .shax .use span { color: inherit; }
.shax .chunk { content-visibility: auto; }
.shax .status { position: sticky; top: 0; z-index: 1; background: var(--hover); padding: 2px 6px; height: 1.4em;
  overflow: hidden; white-space: nowrap; contain: strict; }
.shax .add { color: var(--add); } .shax .del { color: var(--del); } .shax .chg { color: var(--chg); }
.shax table { border-collapse: collapse; margin: 4px 0; }
.shax td, .shax th { border: 1px solid var(--rule); padding: 1px 6px; text-align: right; }
.shax td:first-child, .shax th:first-child { text-align: left; }
"""

FAMILY_LIMIT = 24

# A binding row: [var, type, op, provenance, rank, family, ...var - operand]; an op is
# [its text, its primitive's name]; all strings are indices into `s`. A binding of several
# results (or none) has its [var, type] pairs in its definition's `m`, by row; its row's
# var is its first (operands are counted from it).
SCRIPT = """
(function () {
  const root = document.currentScript.parentElement;
  const data = JSON.parse(root.querySelector("script.shax-data").textContent);
  const S = data.s, D = data.d, OPS = data.ops, LIMIT = LIMIT_VALUE, CHUNK = 200;
  const rows = [], defnOf = [];
  D.forEach(function (d, k) {
    d.start = rows.length;
    for (const r of d.b) { rows.push(r); defnOf.push(k); }
    if (d.h) d.hidden = new Map(d.h);  // position -> 1 (the learner answers it) or 2 (only hidden)
  });
  const elements = new Map();  // binding -> its spans (a definition shown in two stages has two)
  let lit = new Map(), selectedSpan = null, byKey = null, byFamily = null;
  const esc = t => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const key = r => r[3] + " " + OPS[r[2]][1] + " " + r[4];
  function indexes() {
    if (byKey) return;
    byKey = new Map(); byFamily = new Map();
    rows.forEach(function (r, i) {
      const k = key(r);
      if (!byKey.has(k)) byKey.set(k, []);
      byKey.get(k).push(i);
      if (!byFamily.has(r[5])) byFamily.set(r[5], []);
      byFamily.get(r[5]).push(i);
    });
  }
  function uses(d) {  // var -> the bindings of d reading it, built once per definition
    if (d.uses) return d.uses;
    d.uses = new Map(); d.vars = new Map();
    d.b.forEach(function (r, j) {
      for (const v of defined(d, r, j)) d.vars.set(v[0], d.start + j);
      for (let a = 6; a < r.length; a++) {
        const v = r[0] - r[a];
        if (!d.uses.has(v)) d.uses.set(v, []);
        d.uses.get(v).push(d.start + j);
      }
    });
    return d.uses;
  }
  const name = (d, v) => (d.v && d.v[v] !== undefined ? S[d.v[v]] : "x" + v);
  // [var, type] per result of row r, the j-th of d
  const defined = (d, r, j) => (d.m && d.m[j] ? d.m[j] : [[r[0], r[1]]]);
  function lhs(d, r, j, html) {  // `x5 :: f32[]`, or `(x5 :: f32[], x6 :: f32[2])`
    const vs = defined(d, r, j);
    const shown = vs.map(v => (html ? esc(name(d, v[0])) + typed(v[1]) : name(d, v[0])));
    return vs.length === 1 ? shown[0] : "(" + shown.join(", ") + ")";
  }
  function typed(t) {
    if (t < 0) return "";
    const text = S[t];
    return ' :: <span class="t-' + text.split("[")[0] + '">' + esc(text) + "</span>";
  }
  function line(d, j, bare) {  // binding j of d, as printed (bare: without provenance); a blank to fill in an exercise
    const r = d.b[j], i = d.start + j, mode = d.hidden ? d.hidden.get(j) : undefined;
    const head = '<span class="b' + (mode ? " hidden" : "") + '" data-i="' + i + '">' + lhs(d, r, j, true) + " = ";
    const prov = data.provenance && !bare ? '  <span class="prov">-- ' + esc(S[r[3]]) + "</span>" : "";
    if (mode === 1) return head + '</span><input class="answer" data-i="' + i + '" size="36" spellcheck="false"'
      + ' placeholder="type this binding, e.g. mul x1 x2"><button class="check" data-i="' + i + '">check</button>'
      + '<span class="verdict" data-i="' + i + '"></span>' + (d.u && d.u.includes(j) ? '<span class="prov unchecked">'
      + " (its operation is one the checker does not evaluate: an answer may get no verdict)</span>" : "") + prov;
    if (mode === 2) return head + "?</span>" + prov;
    const operands = [];
    for (let a = 6; a < r.length; a++) operands.push(name(d, r[0] - r[a]));
    return head + esc([S[OPS[r[2]][0]], ...operands].join(" ")) + "</span>" + prov;
  }
  function chunked(lines) {
    // Blocks of CHUNK lines, each drawn only when scrolled near (content-visibility): a click
    // or an opened stage then lays out and paints what is on screen, not the whole program.
    const blocks = [];
    for (let k = 0; k < lines.length; k += CHUNK) {
      const n = Math.min(CHUNK, lines.length - k);
      blocks.push('<div class="chunk" style="contain-intrinsic-size: auto ' + (n * 1.35).toFixed(2) + 'em">'
        + lines.slice(k, k + n).join("\\n") + "</div>");
    }
    return blocks.join("");
  }
  function show(d) {
    const head = "def " + esc(S[d.n]) + "(", pad = " ".repeat(S[d.n].length + 5);
    const args = d.a.map((t, k) => "arg" + k + typed(t));
    const lines = [head + args.join(", \\n" + pad) + ") ="];
    d.b.forEach((r, j) => lines.push((j ? "      " : "  let ") + line(d, j)));
    lines.push("  in [" + d.o.map(v => esc(name(d, v))).join(", ") + "]");
    return '<pre class="defn">' + chunked(lines) + "</pre>";
  }
  function attach(box) {  // the binding spans in box, lit as the current selection says
    for (const span of box.querySelectorAll(".b")) {
      const i = +span.dataset.i;
      if (!elements.has(i)) elements.set(i, []);
      elements.get(i).push(span);
      if (lit.has(i)) span.classList.add(...lit.get(i));
    }
  }
  function detach(box) {  // forget the spans of a box about to be drawn again
    for (const span of box.querySelectorAll(".b")) {
      const spans = elements.get(+span.dataset.i) || [], k = spans.indexOf(span);
      if (k >= 0) spans.splice(k, 1);
    }
  }
  function render(box) {
    if (box.dataset.done) return;
    box.dataset.done = "1";
    box.innerHTML = box.dataset.defs.split(" ").map(k => show(D[+k])).join("\\n");
    attach(box);
  }
  function select(span) {
    indexes();
    const i = +span.dataset.i, r = rows[i], d = D[defnOf[i]], next = new Map();
    const mark = (j, c) => { if (!next.has(j)) next.set(j, []); next.get(j).push(c); };
    const family = byFamily.get(r[5]);
    if (family.length <= LIMIT) for (const j of family) mark(j, "line");
    for (const j of byKey.get(key(r))) mark(j, "same");
    const vars = (uses(d), d.vars);
    for (let a = 6; a < r.length; a++) if (vars.has(r[0] - r[a])) mark(vars.get(r[0] - r[a]), "arg");
    for (const v of defined(d, r, i - d.start)) for (const j of d.uses.get(v[0]) || []) mark(j, "use");
    for (const [j, cs] of lit) for (const e of elements.get(j) || []) e.classList.remove(...cs);
    if (selectedSpan) selectedSpan.classList.remove("selected");
    for (const [j, cs] of next) for (const e of elements.get(j) || []) e.classList.add(...cs);
    span.classList.add("selected");
    lit = next; selectedSpan = span;
    const status = root.querySelector(".status");
    const operands = [];
    for (let a = 6; a < r.length; a++) operands.push(name(d, r[0] - r[a]));
    const lit_line = family.length <= LIMIT ? family.length + "" : family.length + " (too many to light)";
    if (status) status.textContent = [lhs(d, r, i - d.start, false), "=", S[OPS[r[2]][0]], ...operands].join(" ")
      + "  -- " + S[r[3]] + "; " + byKey.get(key(r)).length + " with its provenance, "
      + lit_line + " from its line's rule" + (d.x && d.x[i - d.start] >= 0 ? "; value " + S[d.x[i - d.start]] : "");
  }
  root.addEventListener("mouseover", function (event) {  // a binding's value, as its tooltip
    const span = event.target.closest(".b");
    if (!span || span.title) return;
    const i = +span.dataset.i, d = D[defnOf[i]];
    if (d.x && d.x[i - d.start] >= 0) span.title = S[d.x[i - d.start]];
  });
  root.addEventListener("click", function (event) {
    const span = event.target.closest(".b");
    if (span && root.contains(span)) select(span);
  });
  root.addEventListener("toggle", function (event) {
    const stage = event.target;
    if (stage.open) for (const box of stage.querySelectorAll(":scope > .defs")) render(box);
  }, true);
  for (const box of root.querySelectorAll(".defs")) {
    const stage = box.closest("details");
    if (!stage || stage.open) render(box);
  }
  setTimeout(indexes, 0);
  // What the views (`shax.tools.html_views`) and the exercise checker (`shax.tools.html_check`) draw with.
  root.shax = { data, S, D, OPS, rows, defnOf, esc, name, typed, line, chunked, attach, detach, select, render };
})();
""".replace("LIMIT_VALUE", str(FAMILY_LIMIT))
