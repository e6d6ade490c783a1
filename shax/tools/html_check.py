"""The exercise checker of the HTML page (`shax.tools.exercise`): the script that evaluates a
binding the learner typed, on the values the page holds, and says whether it is the hidden one.

A blank in an exercise page is a binding whose operation is hidden; the page holds the
exact value of every binding of its definition (`Table`'s `e`: shape and elements). The
learner types the binding as it prints, or an expression nesting several:

    answer     := [name [:: type] =] expression
    expression := operation static* argument*       (as the binding prints: `pad [(1,0)] 0.0 x4`)
    argument   := name | "(" expression ")"          (a binding before the blank, or a nested one)
    static     := a number, or a list [..] / tuple (..) of them, as printed

so `mul x5 x7`, `x8 = mul x5 x7`, `broadcast [1] [2,6] x6`, `mul (cos x1) x6` and
`concatenate 0 x1 (negate x2)` are answers. A parenthesised argument that starts with a
letter is a nested expression; one that starts with a number is a static parameter. The
script computes the result in float64 from the operands' values, with numpy's broadcasting
for the elementwise operations, and compares it with the hidden binding's value: same
shape, and each element within 2·10⁻⁴ of it relatively (the page's values are float32
ones). A different expression giving the same values is as right, as it is the same
binding for every later one. The script evaluates the primitives in `CHECKED`. For any
other (`convert_element_type`, `round`, `erf`, `argmax`, `dynamic_slice`, the window
operations, `conv_general_dilated`, linalg, bitwise ones, and the operations of several
results: cond, scan, while, call, the custom rules) it gives no verdict: it says it cannot check (a `?`,
not a ✗), and a blank whose hidden operation is one of those says so beside its box.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shax.core.ir import Binding

UNARY = (
    "negate sin cos tan exp log tanh sqrt abs sign log1p expm1 sinh cosh logistic floor ceil arcsin arccos arctan "
    "arcsinh arctanh logical_not stop_gradient"
).split()
BINARY = "add sub mul div max min pow arctan2 gt lt ge le eq ne logical_and logical_or rem".split()
STRUCTURAL = (
    "broadcast reshape transpose slice pad reduce_sum reduce_prod reduce_max reduce_min rev dot_general dot select "
    "fromList concatenate gather scatter_add scatter"
).split()
CHECKED = (*UNARY, *BINARY, *STRUCTURAL)


def checked(binding: Binding) -> bool:
    """Whether the script evaluates `binding`'s operation (one result, a primitive in `CHECKED`)."""
    return len(binding.vars) == 1 and binding.prim.name in CHECKED


def exact(value: Any) -> list[Any]:
    """[shape, elements] of a value, for the exercise checker: JSON numbers, and the
    non-finite ones as the strings JavaScript's `Number` reads ("NaN", "Infinity")."""
    array = np.asarray(value, dtype=np.float64)
    elements = [x if math.isfinite(x) else str(x).replace("inf", "Infinity").replace("nan", "NaN")
                for x in array.ravel().tolist()]  # fmt: skip
    return [list(array.shape), elements]


SCRIPT = r"""
(function () {
  const root = document.currentScript.parentElement, V = root.shax;
  const UNARY = { negate: x => -x, sin: Math.sin, cos: Math.cos, tan: Math.tan, exp: Math.exp, log: Math.log,
    tanh: Math.tanh, sqrt: Math.sqrt, abs: Math.abs, sign: Math.sign, log1p: Math.log1p, expm1: Math.expm1,
    sinh: Math.sinh, cosh: Math.cosh, logistic: x => 1 / (1 + Math.exp(-x)), floor: Math.floor, ceil: Math.ceil,
    arcsin: Math.asin, arccos: Math.acos, arctan: Math.atan, arcsinh: Math.asinh, arctanh: Math.atanh,
    logical_not: x => +!x, stop_gradient: x => x };
  const BINARY = { add: (a, b) => a + b, sub: (a, b) => a - b, mul: (a, b) => a * b, div: (a, b) => a / b,
    max: Math.max, min: Math.min, pow: Math.pow, arctan2: Math.atan2, gt: (a, b) => +(a > b),
    lt: (a, b) => +(a < b), ge: (a, b) => +(a >= b), le: (a, b) => +(a <= b), eq: (a, b) => +(a === b),
    ne: (a, b) => +(a !== b), logical_and: (a, b) => +(a && b), logical_or: (a, b) => +(a || b),
    rem: (a, b) => a % b };  // C's fmod, as lax.rem: the sign of a
  const count = shape => shape.reduce((a, b) => a * b, 1);
  const fmt = shape => "[" + shape.join(", ") + "]";
  function array(shape, data) {  // row-major elements, with each axis' stride
    const st = [];
    for (let a = shape.length - 1, k = 1; a >= 0; a--) { st[a] = k; k *= shape[a]; }
    return { shape, data, st };
  }
  function build(shape, f) {  // the array whose element at each index idx is f(idx)
    const n = count(shape), out = new Float64Array(n), idx = shape.map(() => 0);
    for (let k = 0; k < n; k++) {
      out[k] = f(idx);
      for (let a = shape.length - 1; a >= 0; a--) { if (++idx[a] < shape[a]) break; idx[a] = 0; }
    }
    return array(shape, out);
  }
  const get = (x, idx) => { let k = 0; for (let a = 0; a < idx.length; a++) k += idx[a] * x.st[a]; return x.data[k]; };
  function elementwise(f, xs) {  // numpy's broadcasting: axes aligned from the right, size 1 stretches
    const rank = Math.max(...xs.map(x => x.shape.length)), shape = [];
    for (let a = 0; a < rank; a++) {
      let n = 1;
      for (const x of xs) {
        const m = x.shape[a - rank + x.shape.length];
        if (m === undefined || m === 1) continue;
        if (n !== 1 && n !== m) throw new Error("shapes " + xs.map(x => fmt(x.shape)).join(" and ") + " differ");
        n = m;
      }
      shape.push(n);
    }
    return build(shape, idx => f(...xs.map(function (x) {
      let k = 0;
      const off = rank - x.shape.length;
      for (let a = 0; a < x.shape.length; a++) if (x.shape[a] !== 1) k += idx[a + off] * x.st[a];
      return x.data[k];
    })));
  }
  function dotGeneral(x, y, lc, rc, lb, rb) {  // XLA's: batch axes, then lhs free, then rhs free
    const lf = x.shape.map((_, a) => a).filter(a => !lc.includes(a) && !lb.includes(a));
    const rf = y.shape.map((_, a) => a).filter(a => !rc.includes(a) && !rb.includes(a));
    const shape = [...lb.map(a => x.shape[a]), ...lf.map(a => x.shape[a]), ...rf.map(a => y.shape[a])];
    const sums = [];
    build(lc.map(a => x.shape[a]), c => { sums.push([...c]); return 0; });
    return build(shape, function (idx) {
      const xi = [], yi = [];
      lb.forEach((a, k) => { xi[a] = idx[k]; yi[rb[k]] = idx[k]; });
      lf.forEach((a, k) => { xi[a] = idx[lb.length + k]; });
      rf.forEach((a, k) => { yi[a] = idx[lb.length + lf.length + k]; });
      let s = 0;
      for (const c of sums) { c.forEach((v, k) => { xi[lc[k]] = v; yi[rc[k]] = v; }); s += get(x, xi) * get(y, yi); }
      return s;
    });
  }
  const STRUCTURAL = {
    broadcast: (p, x) => build(p[1], idx => get(x, p[0].map((d, i) => (x.shape[i] === 1 ? 0 : idx[d])))),
    reshape: function (p, x) {
      if (count(p[0]) !== x.data.length) throw new Error("reshape " + fmt(p[0]) + " of " + fmt(x.shape));
      return array(p[0], x.data);
    },
    transpose: (p, x) => build(p[0].map(a => x.shape[a]), function (idx) {
      const src = []; p[0].forEach((a, i) => { src[a] = idx[i]; }); return get(x, src);
    }),
    slice: (p, x) => build(p[1].map((e, a) => e - p[0][a]), idx => get(x, idx.map((v, a) => v + p[0][a]))),
    pad: (p, x) => build(x.shape.map((n, a) => n + p[0][a][0] + p[0][a][1]), function (idx) {
      const src = idx.map((v, a) => v - p[0][a][0]);
      return src.every((v, a) => v >= 0 && v < x.shape[a]) ? get(x, src) : p[1];
    }),
    reduce_sum: (p, x) => reduce(p, x, 0, (a, b) => a + b),
    reduce_prod: (p, x) => reduce(p, x, 1, (a, b) => a * b),
    reduce_max: (p, x) => reduce(p, x, -Infinity, Math.max),
    reduce_min: (p, x) => reduce(p, x, Infinity, Math.min),
    rev: (p, x) => build(x.shape, idx => get(x, idx.map((v, a) => (p[0].includes(a) ? x.shape[a] - 1 - v : v)))),
    dot_general: (p, x, y) => dotGeneral(x, y, p[0], p[1], p[2], p[3]),
    dot: (p, x, y) => dotGeneral(x, y, [x.shape.length - 1], [0], [], []),
    select: (p, c, a, b) => elementwise((q, u, v) => (q ? u : v), [c, a, b]),
    fromList: p => array(p[0], Float64Array.from(p[1])),
    concatenate: function (p, ...xs) {  // along axis p[0]: each operand's part at its offset there
      const a = p[0], starts = [0];
      for (const x of xs) {
        if (x.shape.length !== xs[0].shape.length || x.shape.some((n, b) => b !== a && n !== xs[0].shape[b]))
          throw new Error("concatenate " + a + " of " + xs.map(x => fmt(x.shape)).join(" and "));
        starts.push(starts[starts.length - 1] + x.shape[a]);
      }
      const shape = xs[0].shape.map((n, b) => (b === a ? starts[xs.length] : n));
      return build(shape, function (idx) {
        let k = 0;
        while (idx[a] >= starts[k + 1]) k++;
        return get(xs[k], idx.map((v, b) => (b === a ? v - starts[k] : v)));
      });
    },
    gather: (p, x, i) => build(gathered(p, x, i), idx => get(x, position(p, x, i, idx))),
    scatter_add: (p, x, i, u) => scattered(p, x, i, u, (old, v) => old + v),
    scatter: (p, x, i, u) => scattered(p, x, i, u, (old, v) => v),
  };
  function reduce(p, x, start, combine) {  // x combined over the axes p[0], which leave the shape
    const kept = x.shape.map((_, a) => a).filter(a => !p[0].includes(a));
    const out = array(kept.map(a => x.shape[a]), new Float64Array(count(kept.map(a => x.shape[a]))).fill(start));
    const at = idx => kept.reduce((k, a, i) => k + idx[a] * out.st[i], 0);
    build(x.shape, idx => { out.data[at(idx)] = combine(out.data[at(idx)], get(x, idx)); return 0; });
    return out;
  }
  // gather axis batch x i = x[b..., p..., i[b..., j...], q...], its axes (b..., p..., j..., q...): b the first
  // `batch` axes, p x's axes before `axis`, q after; an index k < 0 means k + n, beyond it is clamped into [0, n).
  function gathered(p, x, i) {
    const [a, b] = p;
    if (!(b <= a && a < x.shape.length && b <= i.shape.length)) throw new Error("gather " + a + " " + b + " of "
      + fmt(x.shape) + " at " + fmt(i.shape));
    return [...x.shape.slice(0, a), ...i.shape.slice(b), ...x.shape.slice(a + 1)];
  }
  function position(p, x, i, idx) {  // the position in x that element idx of the gathered array reads
    const [a, b] = p, j = i.shape.length - b, n = x.shape[a];
    let k = get(i, [...idx.slice(0, b), ...idx.slice(a, a + j)]);
    k = Math.min(Math.max(k < 0 ? k + n : k, 0), n - 1);
    return [...idx.slice(0, a), k, ...idx.slice(a + j)];
  }
  function scattered(p, x, i, u, combine) {  // x with each update combined into the position gather reads it from
    const shape = gathered(p, x, i);
    if (fmt(shape) !== fmt(u.shape)) throw new Error("updates of shape " + fmt(u.shape) + ", not " + fmt(shape));
    const out = array(x.shape, Float64Array.from(x.data));
    build(u.shape, function (idx) {
      const k = position(p, x, i, idx).reduce((s, v, c) => s + v * out.st[c], 0);
      out.data[k] = combine(out.data[k], get(u, idx));
      return 0;
    });
    return out;
  }
  const ARITY = { dot_general: 2, dot: 2, select: 3, fromList: 0, gather: 2, scatter_add: 3, scatter: 3 };
  const known = [...Object.keys(UNARY), ...Object.keys(BINARY), ...Object.keys(STRUCTURAL)];
  function tokens(text) {  // split at spaces outside brackets
    const out = []; let depth = 0, current = "";
    for (const ch of text) {
      if ("[(".includes(ch)) depth++;
      if ("])".includes(ch)) depth--;
      if (/\s/.test(ch) && depth === 0) { if (current) out.push(current); current = ""; } else current += ch;
    }
    if (current) out.push(current);
    return out;
  }
  class Unchecked extends Error {}  // what the checker cannot evaluate: no verdict, right or wrong
  function evaluate(d, j, text) {
    const own = V.name(d, d.b[j][0]);
    const lhs = /^\s*([\w.]+)\s*(::[^=]*)?=\s*/.exec(text);
    if (lhs && lhs[1] !== own) throw new Error("this blank is " + own + ", not " + lhs[1]);
    if (!d.byName) { d.byName = new Map(); d.b.forEach((r, k) => d.byName.set(V.name(d, r[0]), k)); }
    return expression(d, j, own, tokens(lhs ? text.slice(lhs[0].length) : text));
  }
  function expression(d, j, own, parts) {  // operation static* argument*, an argument a name or (expression)
    if (!parts.length) throw new Error("type the binding's operation and operands, e.g. mul x1 x2");
    const op = parts[0], statics = [], operands = [];
    if (!known.includes(op)) throw new Unchecked("the checker does not evaluate " + op + " (it evaluates "
      + known.join(", ") + ")");
    for (const t of parts.slice(1)) {
      if (/^\(\s*[A-Za-z_]/.test(t)) {
        if (!t.endsWith(")")) throw new Error("unbalanced parentheses in " + t);
        operands.push(expression(d, j, own, tokens(t.slice(1, -1))));
      } else if (/^[\[(\-\d.]/.test(t)) {
        try { statics.push(JSON.parse(t.replace(/\(/g, "[").replace(/\)/g, "]"))); } catch (e) {
          throw new Error("cannot read the parameter " + t);
        }
      } else {
        const k = d.byName.get(t);
        if (k === undefined || k >= j) throw new Error("no value named " + t + " before " + own);
        if (!d.e[k]) throw new Unchecked("the checker cannot read " + t + ", a result of an operation of several");
        const [shape, elements] = d.e[k];
        operands.push(array(shape, Float64Array.from(elements)));
      }
    }
    const arity = UNARY[op] ? 1 : BINARY[op] ? 2 : ARITY[op] === undefined ? 1 : ARITY[op];
    if (op === "concatenate" ? operands.length < 2 : operands.length !== arity)
      throw new Error(op + " takes " + (op === "concatenate" ? "2 or more" : arity) + " operand(s), got "
        + operands.length);
    if (UNARY[op]) return elementwise(UNARY[op], operands);
    if (BINARY[op]) return elementwise(BINARY[op], operands);
    return STRUCTURAL[op](statics, ...operands);
  }
  function verdict(d, j, got) {  // "" when got is the hidden binding's value, else why not
    const [shape, elements] = d.e[j], scale = Math.max(1, ...elements.map(Math.abs));
    if (fmt(shape) !== fmt(got.shape)) return "its shape is " + fmt(got.shape) + ", the binding's " + fmt(shape);
    for (let k = 0; k < elements.length; k++) {
      const want = elements[k], have = got.data[k];
      if (Number.isNaN(want) && Number.isNaN(have)) continue;
      if (!(Math.abs(want - have) <= 2e-4 * Math.abs(want) + 1e-6 * scale))
        return "its element " + k + " is " + have.toPrecision(6) + ", the binding's " + want.toPrecision(6);
    }
    return "";
  }
  function check(input) {  // input: a blank's box (a definition shown in two stages has two)
    const i = +input.dataset.i, d = V.D[V.defnOf[i]], j = i - d.start;
    const shown = input.nextElementSibling.nextElementSibling;
    let why, unchecked = false;
    try { why = verdict(d, j, evaluate(d, j, input.value)); } catch (e) {
      why = e.message; unchecked = e instanceof Unchecked;
    }
    shown.textContent = unchecked ? " ? cannot check: " + why : why ? " ✗ not yet: " + why : " ✓ right";
    shown.className = "verdict " + (unchecked ? "unchecked" : why ? "wrong" : "right");
    const score = root.querySelector(".score"), ids = es => new Set([...es].map(e => e.dataset.i)).size;
    if (score) score.textContent = ids(root.querySelectorAll(".verdict.right")) + " of "
      + ids(root.querySelectorAll("input.answer")) + " blanks right";
  }
  root.addEventListener("click", function (event) {
    if (event.target.matches("button.check")) check(event.target.previousElementSibling);
  });
  root.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.target.matches("input.answer")) check(event.target);
  });
})();
"""
