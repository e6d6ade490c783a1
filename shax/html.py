"""Definitions, stages, diffs and stats as self-contained HTML, for notebooks and browsers.

    shax.explain(f, f32[3]).to_html()        # also what Jupyter shows (_repr_html_)
    shax explain FILE:FN TYPES --html out.html

A page is a header (the function, its types, a colour legend), then each stage as a
collapsible section under a one-line description, the first `OPEN_STAGES` open. The
definitions are not written out as HTML: the page holds one data table (`Table`) of
interned strings and a row of numbers per binding, and the script (`shax.html_assets`)
draws a stage when it is opened; so a page grows by a few dozen bytes per binding, and a
closed stage costs no layout. A small view also holds the definitions as plain text,
shown where no script runs (an untrusted notebook). A click on a binding highlights its
copies in every stage, what the rules made of it on its line, its operands and its uses.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shax.binding_values import all_values, dot_products, linearized_values, summary
from shax.diff import binding_keys
from shax.html_assets import SCRIPT, STYLE
from shax.ir import Binding, Definition, LinearizedDefinition
from shax.printing import called_definitions, show_definition, show_primitive, show_provenance, shown_names

if TYPE_CHECKING:
    from shax.diff import Diff
    from shax.explain import Explanation
    from shax.stats import PipelineStats, Stats

OPEN_STAGES = 3
TEXT_LIMIT = 2000  # bindings up to which a view also holds its definitions as text
VALUES_LIMIT = 20_000  # bindings up to which the page holds every binding's value (a few dozen bytes each)

# section key -> what the stage does, in one line
ABOUT = {
    "trace": "Running the function on tracers records each operation it performs, in order.",
    "types": "Type inference gives every value its dtype and shape, from the arguments' types.",
    "rewrites": "Passes rewrite the program into fewer primitives: dots become dot_generals, sums become adds.",
    "jvp": "Forward mode (JVP): each binding followed by its tangent's, the derivative rule applied in place.",
    "unzipped": "Unzip pulls the JVP apart: the primal bindings, returning the residuals the policy saves, "
    "and the linear ones (linearize does both steps at once).",
    "linearized": "Linearize splits f into the primal program (values, and residuals saved for later) and "
    "the linear program df (tangent in, tangent out), each rule emitting its derivative.",
    "f": "The primal program evaluated at the inputs x.",
    "df": "The linear program evaluated at the tangents dx: the Jacobian times dx.",
    "transposed": "Transpose turns the linear program around: each linear operation, taken in reverse, sends "
    "its output's cotangent to its inputs.",
    "f_again": "The primal program once more, as reverse mode runs it before the transposed one.",
    "dft": "The transposed program evaluated at the output cotangents ct: the Jacobian transposed times ct.",
    "zipped": "Zip joins the primal and the transposed program into one VJP definition.",
    "vjp": "The VJP definition evaluated at x and ct: f(x), then the cotangents of the inputs.",
}
_RULE_OF = re.compile(r"(\w+) rule of (\w+)$")
_SAVES = re.compile(r"residual: saves x(\d+) of ")


class Table:
    """The data a view's script draws from: interned strings, ops, and each definition
    (each once, however many stages show it) as rows of numbers."""

    def __init__(self, provenance: bool = False) -> None:
        self.strings: dict[str, int] = {}  # string -> its index
        self.ops: dict[tuple[int, int], int] = {}  # (op text, primitive name) -> its index
        self.families: dict[tuple[str | None, str], int] = {}  # (source, the user's primitive) -> its index
        self.defns: list[dict[str, object]] = []
        self.shown: dict[tuple[int, str], int] = {}  # (id(definition), its name) -> its index
        self.provenance = provenance
        self.bindings = 0
        # (source, primitive) -> the primitive whose linearize rule emitted it there (for transposed rules)
        self.linear_roots: dict[tuple[str | None, str], str] = {}

    def string(self, text: str) -> int:
        return self.strings.setdefault(text, len(self.strings))

    def definitions(
        self,
        defn: Definition,
        var_names: Mapping[int, str] | None = None,
        saved: Definition | None = None,
        saved_names: Mapping[int, str] | None = None,
        values: Mapping[int, Any] | None = None,
    ) -> list[int]:
        """The indices of `defn` and the definitions it calls (callees first); `saved` is the
        primal program whose values `defn`'s residual arguments receive; `values` (var id ->
        value) the values of its bindings, where it was evaluated."""
        callees = called_definitions(defn)
        names = shown_names(defn, callees)
        shown = [self._definition(d, names[id(d)], names, None, None, None, None) for d in callees]
        return [*shown, self._definition(defn, names[id(defn)], names, var_names, saved, saved_names, values)]

    def _definition(
        self,
        defn: Definition,
        name: str,
        names: dict[int, str],
        var_names: Mapping[int, str] | None,
        saved: Definition | None,
        saved_names: Mapping[int, str] | None,
        values: Mapping[int, Any] | None,
    ) -> int:
        if (id(defn), name) in self.shown:
            return self.shown[(id(defn), name)]
        roots = {b.var.id: _root(b, {}) for b in saved.bindings} if saved is not None else {}
        rows = []
        for b, ((_, _), rank) in zip(defn.bindings, binding_keys(defn.bindings)):
            provenance = self.string(show_provenance(b, saved_names))
            root = _root(b, roots, self.linear_roots)
            if b.origin is not None and b.origin.startswith("linearize rule of "):
                self.linear_roots[(b.source, b.prim.name)] = root
            op = self.ops.setdefault(
                (self.string(show_primitive(b.prim, names)), self.string(b.prim.name)), len(self.ops)
            )
            family = self.families.setdefault((b.source, root), len(self.families))
            kind = -1 if b.var.type is None else self.string(str(b.var.type))
            rows.append([b.var.id, kind, op, provenance, rank, family, *(b.var.id - a.id for a in b.args)])
        entry: dict[str, object] = {
            "n": self.string(name),
            "a": [self.string(str(t)) for t in defn.arg_types],
            "b": rows,
            "o": [v.id for v in defn.outputs],
        }
        if var_names:
            entry["v"] = {str(v): self.string(n) for v, n in var_names.items()}
        if values:
            entry["x"] = [self.string(summary(values[b.var.id])) if b.var.id in values else -1 for b in defn.bindings]
        self.bindings += len(rows)
        self.shown[(id(defn), name)] = len(self.defns)
        self.defns.append(entry)
        return len(self.defns) - 1

    def script(self) -> str:
        """The table as JSON in a script element (`</` escaped, so no string ends it)."""
        strings = sorted(self.strings, key=self.strings.__getitem__)
        ops = [list(op) for op in sorted(self.ops, key=self.ops.__getitem__)]
        data = {"s": strings, "ops": ops, "d": self.defns, "provenance": self.provenance}
        text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
        return f'<script type="application/json" class="shax-data">{text}</script>'


def _root(
    b: Binding, saved_roots: Mapping[int, str], linear_roots: Mapping[tuple[str | None, str], str] | None = None
) -> str:
    """The user's primitive a binding was made for: its own (the user's operation and its
    copies), the one whose rule emitted it, or, for a residual, that of the value it saves."""
    saves = _SAVES.match(b.origin or "")
    if saves:
        return saved_roots.get(int(saves.group(1)), "residual")
    rule = _RULE_OF.search(b.origin or "")
    if rule is None:
        return b.prim.name
    if rule.group(1) == "transpose":
        return (linear_roots or {}).get((b.source, rule.group(2)), rule.group(2))
    return rule.group(2)


def page(body: str, title: str = "shax") -> str:
    """A whole HTML document around `body` (a fragment from the functions below)."""
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><meta name="color-scheme" content="light dark">'
        f"<title>{html.escape(title)}</title></head>\n<body>\n{body}\n</body></html>\n"
    )


def _fragment(table: Table, sections: str) -> str:
    return f'<div class="shax"><style>{STYLE}</style>{sections}{table.script()}<script>{SCRIPT}</script></div>'


def _defs(indices: Iterable[int], text: str | None) -> str:
    """A box the script fills with definitions; `text` is shown until it does."""
    fallback = f"<pre>{html.escape(text)}</pre>" if text is not None else ""
    return f'<div class="defs" data-defs="{" ".join(map(str, indices))}">{fallback}</div>'


def definition_html(defn: Definition | LinearizedDefinition) -> str:
    """One definition (a linearized one: its primal and linear definitions)."""
    table = Table()
    parts = [defn.primal, defn.linear] if isinstance(defn, LinearizedDefinition) else [defn]
    saved = defn.primal if isinstance(defn, LinearizedDefinition) else None
    indices = [k for part in parts for k in table.definitions(part, saved=saved if part is not saved else None)]
    text = "\n".join(show_definition(p) for p in parts) if table.bindings <= TEXT_LIMIT else None
    return _fragment(table, _defs(indices, text))


def diff_html(d: Diff) -> str:
    return f'<div class="shax"><style>{STYLE}</style>{_diff_lines(d)}</div>'


def _diff_lines(d: Diff) -> str:
    classes = {"+": "add", "-": "del", "~": "chg", " ": "", ".": "prov"}
    header = html.escape(str(d).split("\n", 2)[0]) + "\n" + html.escape(str(d).split("\n", 2)[1])
    lines = [
        f'<span class="{classes[mark]}">{html.escape(mark if mark != "." else " ")} {html.escape(text)}</span>'
        for mark, text in d.lines
    ]
    return f"<pre>{header}\n" + "\n".join(lines) + "</pre>"


def stats_html(s: Stats) -> str:
    """`Stats` as a table: bindings and flops per primitive, then the bytes."""
    rows = [(name, s.bindings[name], s.flops_by_primitive.get(name, 0)) for name in sorted(s.bindings)]
    rows.append(("total", s.num_bindings, s.flops))
    body = _table([s.name, "bindings", "flops"], rows)
    residuals = f", residuals {s.residuals} ({s.residual_bytes} bytes)" if s.residuals else ""
    note = (
        f"arguments {s.argument_bytes} bytes, outputs {s.output_bytes} bytes{residuals}, peak live {s.peak_bytes} bytes"
    )
    return f'<div class="shax"><style>{STYLE}</style>{body}<div>{html.escape(note)}</div></div>'


def pipeline_stats_html(p: PipelineStats) -> str:
    return f'<div class="shax"><style>{STYLE}</style>{_pipeline_table(p)}</div>'


def _pipeline_table(p: PipelineStats) -> str:
    rows = [
        (stage, s.num_bindings, s.flops, f"{s.residuals} ({s.residual_bytes})" if s.residuals else "-", s.peak_bytes)
        for stage, s in p.stages.items()
    ]
    return _table(["stage", "bindings", "flops", "residuals (bytes)", "peak live bytes"], rows)


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


_LEGEND = (
    '<div class="legend">Click any binding: <span class="lg-selected">the binding</span>'
    '<span class="lg-same">its copies in every stage</span><span class="lg-line">what its rules made on its line</span>'
    '<span class="lg-arg">its operands</span><span class="lg-use">its uses</span> · types: '
    '<span class="t-f32">f32</span><span class="t-f64">f64</span><span class="t-i32">ints</span>'
    '<span class="t-bool">bool</span></div>'
)


def _header(e: Explanation) -> str:
    arguments = ", ".join(map(str, e.typed.arg_types))
    results = ", ".join(map(str, e.rewritten.output_types()))
    title = f"explain {e.traced.name}({arguments}) -> {results}"
    return f'<header><h1>{html.escape(title)}</h1>{_LEGEND}<div class="status"></div></header>'


def explanation_html(e: Explanation) -> str:
    """Every stage of `e` (`Explanation.show`'s sections), each under its description; the
    definitions drawn by the script, values as text (with the x, dx or ct they came from)."""
    from shax.diff import diff
    from shax.explain import EVERY_HEADER
    from shax.printing import show_values

    table = Table(e.provenance)
    names = e.var_names
    primal = e.linearized.primal
    shown = (e.traced, e.typed, e.rewritten, primal, e.linearized.linear, e.transposed.linear, e.zipped)
    values: dict[int, Mapping[int, Any]] = {}  # id(definition) -> var id -> value
    if sum(len(d.bindings) for d in shown) <= VALUES_LIMIT:
        x, dx, ct = e.inputs, e.tangents, e.cotangents
        typed = all_values(e.typed, x)
        values = {id(e.traced): typed, id(e.typed): typed, id(e.rewritten): all_values(e.rewritten, x)}
        values[id(primal)], values[id(e.linearized.linear)] = linearized_values(e.linearized, x, dx)
        values[id(e.transposed.primal)], values[id(e.transposed.linear)] = linearized_values(e.transposed, x, ct)
        values[id(e.zipped)] = all_values(e.zipped, [*x, *ct])

    def of(defn: Definition, saved: Definition | None = None) -> list[int]:
        saved_names = names.get(id(saved)) if saved is not None else None
        return table.definitions(defn, names.get(id(defn)), saved, saved_names, values.get(id(defn)))

    definitions = {
        "trace": of(e.traced),
        "types": of(e.typed),
        "rewrites": of(e.rewritten),
        **({} if e.jvp is None else {"jvp": of(e.jvp)}),
        **(
            {}
            if e.unzipped is None
            else {"unzipped": [*of(e.unzipped.primal), *of(e.unzipped.linear, e.unzipped.primal)]}
        ),
        "linearized": [*of(primal), *of(e.linearized.linear, primal)],
        "transposed": [*of(e.transposed.primal), *of(e.transposed.linear, e.transposed.primal)],
        "zipped": of(e.zipped),
    }
    given = {"f": ("x", e.inputs), "df": ("dx", e.tangents), "f_again": ("x", e.inputs), "dft": ("ct", e.cotangents)}
    texts = (
        e.sections() if table.bindings <= TEXT_LIMIT else e.sections([k for k in EVERY_HEADER if k not in definitions])
    )
    sections = []
    for k, key in enumerate(e.section_keys()):
        title = EVERY_HEADER[key]
        content = f'<div class="about">{html.escape(ABOUT[key])}</div>'
        if key in definitions:
            if e.as_diffs and key in ("types", "rewrites", "zipped"):
                before = {"types": e.traced, "rewrites": e.typed, "zipped": e.transposed.primal}[key]
                after = {"types": e.typed, "rewrites": e.rewritten, "zipped": e.zipped}[key]
                content += _diff_lines(diff(before, after))
            content += _defs(definitions[key], texts.get(key))
        else:
            if key in given:
                symbol, arrays = given[key]
                content += f'<pre class="given">{symbol} = {html.escape(show_values(arrays))}</pre>'
            content += f"<pre>{html.escape(texts[key])}</pre>"
            if key == "dft":
                forward, backward = dot_products(e)
                content += (
                    '<div class="about dot-test">The dot-product test: ⟨ct, J·dx⟩ = ⟨ct, df(dx)⟩ = '
                    f"{forward:.8g} and ⟨Jᵀ·ct, dx⟩ = ⟨dft(ct), dx⟩ = {backward:.8g}: equal, since "
                    "the transposed program applies the transpose of the linear one.</div>"
                )
        opened = " open" if k < OPEN_STAGES else ""
        sections.append(
            f'<details{opened} class="stage" data-stage="{html.escape(key)}">'
            f"<summary>{html.escape(title)}</summary>{content}</details>"
        )
    if e.with_stats:
        sections.append(f'<details open class="stats"><summary>Stats:</summary>{_pipeline_table(e.stats())}</details>')
    return _fragment(table, _header(e) + "\n".join(sections))
