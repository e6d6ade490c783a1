"""The aligned and the stepping views of the explain page (`shax.tools.html`), beside its stacked one.

**Aligned**: the primal, linear and transposed programs in three columns, one row per
family (a line of the user's code and the user's primitive there: the operation, what its
linearize rule made, its residuals, what the transpose rule made of those), rows in
primal order. The transposed program runs from the last row to the first, so its column
numbers each binding by its place in that program: the numbers fall down the page.

**Steps** (Compiler Explorer's pass view): a list of the stages and passes; the selected
one shows its program as a diff from the one before (`shax.tools.diff.matched`: kept, changed,
removed, added), runs of kept bindings folded to a line that unfolds on a click, a stage
that changed nothing marked so. The up and down (or left and right) arrow keys move
through the list. The linear and transposed programs are new ones: shown whole.

Both are drawn by the script from the page's one data table when first chosen; the data
they add is a definition per pass beyond the first and a few numbers per diff.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from shax.core.ir import Definition
from shax.passes import apply_passes
from shax.tools.diff import held_changes, matched

if TYPE_CHECKING:
    from shax.tools.explain import Explanation

KEPT, CHANGED, REMOVED, ADDED = 0, 1, 2, 3


def steps(e: Explanation, index_of: Callable[[Definition], int]) -> list[dict[str, object]]:
    """Each step: its title `t`, the index of its program `d` (and of the one before, `p`),
    and its diff `m` as numbers (see `compact`), absent for a new program."""
    from shax.tools.explain import REWRITES

    found: list[dict[str, object]] = [{"t": "tracing", "d": index_of(e.traced)}]
    memo: dict[object, object] = {}  # what `matched` found of each definition, for the next step

    def step(title: str, before: Definition, after: Definition) -> Definition:
        """The step from `before` to `after`; what follows it (`before` when nothing changed,
        which the page then holds once)."""
        pairs = matched(before, after, memo)
        same = all(mark == " " for mark, _, _ in pairs)
        found.append({"t": title, "d": index_of(before if same else after), "p": index_of(before), "m": compact(pairs)})
        inside(title, before, after, pairs)
        return before if same else after

    def inside(title: str, before: Definition, after: Definition, pairs: list[tuple[str, int, int]]) -> None:
        """A step after `title`'s for each definition held in it that changed (a branch, a
        body: a pass rewrites those too), at any depth (as deep as operations nest)."""
        for mark, i, j in pairs:
            if mark != "~":
                continue
            for old, new in held_changes(before.bindings[i], after.bindings[j], memo):
                held = matched(old, new, memo)
                titled = f"{title}: inside {new.name}"
                found.append({"t": titled, "d": index_of(new), "p": index_of(old), "m": compact(held)})
                inside(titled, old, new, held)

    step("type inference", e.traced, e.typed)
    current = e.typed
    for k, name in enumerate(REWRITES):
        after = e.rewritten if k == len(REWRITES) - 1 else apply_passes(current, [name])
        current = step(f"pass {name}", current, after)
    step("linearize: the primal program", e.rewritten, e.linearized.primal)
    found.append({"t": "linearize: the linear program", "d": index_of(e.linearized.linear)})
    found.append({"t": "transpose: the transposed program", "d": index_of(e.transposed.linear)})
    step("zip: primal and transposed in one", e.transposed.primal, e.zipped)
    return found


def compact(pairs: Sequence[tuple[str, int, int]]) -> list[int]:
    """`matched`'s pairs as flat numbers: a run of n kept bindings from (i, j) as KEPT n i j,
    a changed one CHANGED i j, a removed one REMOVED i, an added one ADDED j."""
    out: list[int] = []
    run_at = -1  # where the current run of kept bindings starts in `out`
    for mark, i, j in pairs:
        if mark == " ":
            if run_at >= 0:
                out[run_at + 1] += 1
            else:
                run_at = len(out)
                out += [KEPT, 1, i, j]
            continue
        run_at = -1
        out += [CHANGED, i, j] if mark == "~" else [REMOVED, i] if mark == "-" else [ADDED, j]
    return out


VIEWS = (
    '<div class="views">view: <button data-view="stacked" class="on">stacked</button>'
    '<button data-view="aligned">aligned</button><button data-view="steps">steps (↑↓)</button></div>'
)

STYLE = """
.shax .views button { font: inherit; margin: 0 2px; padding: 0 6px; border: 1px solid var(--rule);
  background: none; color: var(--fg); border-radius: 3px; cursor: pointer; }
.shax .views button.on { background: var(--hover); font-weight: bold; }
.shax .aligned .row { display: grid; grid-template-columns: 13em repeat(3, minmax(0, 1fr)); gap: 0 10px;
  border-top: 1px solid var(--rule); }
.shax .aligned .head { font-weight: bold; font-family: system-ui, sans-serif; }
.shax .aligned pre { margin: 1px 0; overflow-x: auto; }
.shax .aligned .where { color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.shax .aligned .step { color: var(--muted); }
.shax .stepper { display: grid; grid-template-columns: 19em minmax(0, 1fr); gap: 10px; }
.shax .steplist { margin: 0; padding-left: 1.6em; font-family: system-ui, sans-serif; }
.shax .steplist li { cursor: pointer; padding: 1px 4px; border-radius: 3px; }
.shax .steplist li.current { background: var(--sel-bg); color: var(--sel-fg); }
.shax .steplist li.unchanged { color: var(--muted); font-style: italic; }
.shax .fold { color: var(--muted); cursor: pointer; }
.shax .hidden { border-bottom: 1px dashed var(--muted); }
.shax .verdict.right { color: var(--add); } .shax .verdict.wrong { color: var(--del); }
.shax .verdict.unchecked { color: var(--muted); }
"""

SCRIPT = r"""
(function () {
  const root = document.currentScript.parentElement, V = root.shax, D = V.D, S = V.S;
  const stacked = root.querySelector(".stacked"), aligned = root.querySelector(".aligned");
  const stepper = root.querySelector(".stepper"), STEPS = V.data.steps, FOLD = 3;
  let current = 0;
  function alignedView() {
    const cols = V.data.aligned.map(k => D[k]), byFamily = new Map(), order = [];
    const key = r => r[3] + " " + V.OPS[r[2]][1], count = cols.map(() => new Map()), runs = new Map();
    cols.forEach((d, c) => d.b.forEach(r => count[c].set(key(r), (count[c].get(key(r)) || 0) + 1)));
    for (const r of cols[0].b) {  // how many times the user's code ran the family's operation (a loop's line)
      if (S[r[3]].endsWith("traced")) runs.set(r[5], Math.max(runs.get(r[5]) || 1, count[0].get(key(r))));
    }
    // A family run n times gets a row per run: a binding that is the k-th of the m with its
    // key in its program belongs to run k·n/m; the transposed program counts from the end.
    const rowOf = function (r, c) {
      const n = runs.get(r[5]) || 1;
      if (n === 1) return r[5];
      const run = Math.floor((r[4] * n) / count[c].get(key(r)));
      return r[5] + ":" + (c === 2 ? n - 1 - run : run);
    };
    cols.forEach((d, c) => d.b.forEach(function (r, j) {
      const row = rowOf(r, c);
      if (!byFamily.has(row)) { byFamily.set(row, [[], [], []]); order.push(row); }
      byFamily.get(row)[c].push(j);
    }));
    const rows = order.map(function (f) {
      const cells = byFamily.get(f), first = cols.findIndex((_, c) => cells[c].length);
      const r = cols[first].b[cells[first][0]], where = S[r[3]].split(", ")[0].split("/").pop();
      const label = where === "argument" ? "arguments" : where + " " + (first === 0 ? S[V.OPS[r[2]][1]] : "");
      return '<div class="row"><div class="where" title="' + V.esc(S[r[3]]) + '">' + V.esc(label) + "</div>"
        + cells.map((js, c) => "<pre>" + js.map(j => (c === 2 ? '<span class="step">' + (j + 1) + "</span> " : "")
          + V.line(cols[c], j, true)).join("\n") + "</pre>").join("") + "</div>";
    });
    const blocks = [];
    for (let k = 0; k < order.length; k += 100) {  // blocks laid out only near the screen, as the stacked view's
      const lines = order.slice(k, k + 100).reduce((n, f) => n + Math.max(...byFamily.get(f).map(c => c.length)), 0);
      blocks.push('<div class="chunk" style="contain-intrinsic-size: auto ' + (lines * 1.4).toFixed(1) + 'em">'
        + rows.slice(k, k + 100).join("") + "</div>");
    }
    aligned.innerHTML = '<div class="row head"><div>line</div><div>primal</div><div>linear (tangents, forward)</div>'
      + "<div>transposed (cotangents, backward: runs ↑ from the last row, numbered in its order)</div></div>"
      + blocks.join("");
    V.attach(aligned);
  }
  function marks(step) {  // the step's diff: [mark, position before, position after]
    const out = [], m = step.m;
    for (let k = 0; k < m.length;) {
      if (m[k] === 0) { out.push(["=", m[k + 2], m[k + 3], m[k + 1]]); k += 4; }
      else if (m[k] === 1) { out.push(["~", m[k + 1], m[k + 2]]); k += 3; }
      else if (m[k] === 2) { out.push(["-", m[k + 1], -1]); k += 2; }
      else { out.push(["+", -1, m[k + 1]]); k += 2; }
    }
    return out;
  }
  const CLASS = { "~": "chg", "-": "del", "+": "add", " ": "" };
  function diffLines(step) {
    const after = D[step.d], before = D[step.p], lines = [];
    const one = (mark, d, j) => '<span class="' + CLASS[mark] + '">' + mark + " </span>" + V.line(d, j);
    for (const [mark, i, j, n] of marks(step)) {
      if (mark === "~") lines.push(one(mark, after, j) + '  <span class="prov">(was: ' + V.line(before, i, true)
        .replace(/<[^>]*>/g, "") + ")</span>");
      if (mark === "-" || mark === "+") lines.push(one(mark, mark === "-" ? before : after, mark === "-" ? i : j));
      if (mark !== "=") continue;
      const kept = [];
      for (let k = 0; k < n; k++) kept.push(one(" ", after, j + k));
      if (n <= FOLD) lines.push(...kept);
      else lines.push('<span class="fold">... ' + n + " unchanged (click to unfold)</span>"
        + '<span hidden class="folded">' + kept.join("\n") + "</span>");
    }
    return lines;
  }
  function counts(step) {
    if (!step.m) return "new";
    const c = { "~": 0, "-": 0, "+": 0 };
    for (const [mark] of marks(step)) if (mark !== "=") c[mark]++;
    return c["+"] + c["-"] + c["~"] ? "+" + c["+"] + " −" + c["-"] + " ~" + c["~"] : "unchanged";
  }
  function stepperView() {
    stepper.innerHTML = '<ol class="steplist">' + STEPS.map(function (s, k) {
      const c = counts(s);
      return '<li data-k="' + k + '"' + (c === "unchanged" ? ' class="unchanged"' : "") + ">" + V.esc(s.t)
        + " <small>(" + c + ")</small></li>";
    }).join("") + '</ol><div class="stepdiff"></div>';
    go(current);
  }
  function go(k) {
    current = Math.max(0, Math.min(STEPS.length - 1, k));
    const step = STEPS[current], d = D[step.d], pane = stepper.querySelector(".stepdiff");
    for (const li of stepper.querySelectorAll("li")) li.classList.toggle("current", +li.dataset.k === current);
    const head = '<p class="about">' + V.esc(step.t) + ": " + (step.m ? "as a diff from " + V.esc(S[D[step.p].n])
      + " (+ added, − removed, ~ changed)" : "the whole program") + "</p>";
    const lines = step.m ? diffLines(step) : d.b.map((_, j) => "  " + V.line(d, j));
    if (step.m && counts(step) === "unchanged") lines.unshift("(this step changed nothing)");
    V.detach(pane);
    pane.innerHTML = head + '<pre class="defn">' + V.chunked(lines) + "</pre>";
    V.attach(pane);
  }
  function choose(view) {
    for (const b of root.querySelectorAll(".views button")) b.classList.toggle("on", b.dataset.view === view);
    stacked.hidden = view !== "stacked"; aligned.hidden = view !== "aligned"; stepper.hidden = view !== "steps";
    if (view === "aligned" && !aligned.dataset.done) { aligned.dataset.done = "1"; alignedView(); }
    if (view === "steps" && !stepper.dataset.done) { stepper.dataset.done = "1"; stepperView(); }
    if (root.getBoundingClientRect().top < 0) root.scrollIntoView();  // the view's start, not the old one's middle
  }
  root.addEventListener("click", function (event) {
    const t = event.target;
    if (t.matches(".views button")) choose(t.dataset.view);
    const li = t.closest(".steplist li");
    if (li && root.contains(li)) go(+li.dataset.k);
    if (t.matches(".fold")) {
      const folded = t.nextElementSibling;
      folded.hidden = false; t.remove();
    }
  });
  document.addEventListener("keydown", function (event) {
    if (stepper.hidden || (event.target.matches && event.target.matches("input, textarea"))) return;
    const move = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
    if (move) { event.preventDefault(); go(current + move); }
  });
})();
"""
