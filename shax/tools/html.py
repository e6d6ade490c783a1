"""Definitions, stages, diffs and stats as self-contained HTML, for notebooks and browsers.

    shax.explain(f, f32[3]).to_html()        # also what Jupyter shows (_repr_html_)
    shax explain FILE:FN TYPES --html out.html

A page is a header (the function, its types, a colour legend), then each stage as a
collapsible section under a one-line description, the first `OPEN_STAGES` open. The
definitions are not written out as HTML: the page holds one data table (`Table`) of
interned strings and a row of numbers per binding, and the script (`shax.tools.html_assets`)
draws a stage when it is opened; so a page grows by a few dozen bytes per binding, and a
closed stage costs no layout. A small view also holds the definitions as plain text,
shown where no script runs (an untrusted notebook). A click on a binding highlights its
copies in every stage, what the rules made of it on its line, its operands and its uses.
The header toggles the stacked stages with the aligned and stepping views
(`shax.tools.html_views`); under the stages is the memory picture (`shax.tools.memory`); an exercise
page (`shax.tools.exercise`) leaves a rule's bindings blank and checks answers (`shax.tools.html_check`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from shax.core.ir import Binding, Definition, LinearizedDefinition, install_html_view
from shax.core.printing import called_definitions, show_definition, show_primitive, show_provenance, shown_names
from shax.tools.binding_values import all_values, dot_products, linearized_values, summary
from shax.tools.diff import binding_keys
from shax.tools.exercise import ANSWERED
from shax.tools.html_assets import SCRIPT, STYLE
from shax.tools.html_check import CHECKED, checked, exact
from shax.tools.html_check import SCRIPT as CHECK_SCRIPT
from shax.tools.html_views import SCRIPT as VIEWS_SCRIPT
from shax.tools.html_views import STYLE as VIEWS_STYLE
from shax.tools.html_views import VIEWS, steps
from shax.tools.memory import memory_svg

if TYPE_CHECKING:
    from shax.tools.diff import Diff
    from shax.tools.exercise import Exercise
    from shax.tools.explain import Explanation
    from shax.tools.stats import PipelineStats, PolicyStats, Stats

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

    def __init__(self, provenance: bool = False, blanks: Mapping[int, Mapping[int, int]] | None = None) -> None:
        self.strings: dict[str, int] = {}  # string -> its index
        self.ops: dict[tuple[int, int], int] = {}  # (op text, primitive name) -> its index
        self.families: dict[tuple[str | None, str], int] = {}  # (source, the user's primitive) -> its index
        self.defns: list[dict[str, object]] = []
        self.shown: dict[tuple[int, str], int] = {}  # (id(definition), its name) -> its index
        self.provenance = provenance
        self.bindings = 0
        # (source, primitive) -> the primitive whose linearize rule emitted it there (for transposed rules)
        self.linear_roots: dict[tuple[str | None, str], str] = {}
        self.blanks = blanks or {}  # id(definition) -> var id -> how it is blank (an exercise: `shax.tools.exercise`)

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
        roots = {v.id: _root(b, {}) for b in saved.bindings for v in b.vars} if saved is not None else {}
        rows = []
        several: dict[str, list[list[int]]] = {}  # row -> [var, its type] per result, for several results
        blanks = self.blanks.get(id(defn), {})
        for j, (b, ((_, _), rank)) in enumerate(zip(defn.bindings, binding_keys(defn.bindings))):
            provenance = self.string(show_provenance(b, saved_names))
            root = _root(b, roots, self.linear_roots)
            if b.origin is not None and b.origin.startswith("linearize rule of "):
                self.linear_roots[(b.source, b.prim.name)] = root
            op = self.ops.setdefault(
                (self.string(show_primitive(b.prim, names)), self.string(b.prim.name)), len(self.ops)
            )
            family = self.families.setdefault((b.source, root), len(self.families))
            kinds = [-1 if v.type is None else self.string(str(v.type)) for v in b.vars]
            first = b.vars[0].id if b.vars else 0
            if len(b.vars) != 1:
                several[str(j)] = [[v.id, t] for v, t in zip(b.vars, kinds)]
            kind = kinds[0] if kinds else -1
            if first in blanks:  # its operation and operands are the answer: not in the page
                op = self.ops.setdefault((self.string("?"), self.string("?")), len(self.ops))
                rows.append([first, kind, op, provenance, rank, family])
            else:
                rows.append([first, kind, op, provenance, rank, family, *(first - a.id for a in b.args)])
        entry: dict[str, object] = {
            "n": self.string(name),
            "a": [self.string(str(t)) for t in defn.arg_types],
            "b": rows,
            "o": [v.id for v in defn.outputs],
        }
        if several:
            entry["m"] = several
        if var_names:
            entry["v"] = {str(v): self.string(n) for v, n in var_names.items()}
        if values:
            entry["x"] = [self._values(b, values) for b in defn.bindings]
        if blanks:
            hidden = [(k, b.vars[0].id) for k, b in enumerate(defn.bindings) if b.vars and b.vars[0].id in blanks]
            entry["h"] = [[k, blanks[v]] for k, v in hidden]
            # the blanks whose operation the checker cannot evaluate: the page says so beside them
            unchecked = [k for k, _ in hidden if not checked(defn.bindings[k])]
            if unchecked:
                entry["u"] = unchecked
            if values and ANSWERED in blanks.values():  # what the checker evaluates answers with
                entry["e"] = [exact(values[b.vars[0].id]) if len(b.vars) == 1 else None for b in defn.bindings]
        self.bindings += len(rows)
        self.shown[(id(defn), name)] = len(self.defns)
        self.defns.append(entry)
        return len(self.defns) - 1

    def _values(self, b: Binding, values: Mapping[int, Any]) -> int:
        """The string of `b`'s value (its results', `; ` between), or -1 if it has none."""
        shown = [summary(values[v.id]) for v in b.vars if v.id in values]
        return self.string("; ".join(shown)) if shown and len(shown) == len(b.vars) else -1

    def script(self, extra: Mapping[str, object] | None = None) -> str:
        """The table as JSON in a script element (`</` escaped, so no string ends it), with
        the `extra` entries (the views' data)."""
        strings = sorted(self.strings, key=self.strings.__getitem__)
        ops = [list(op) for op in sorted(self.ops, key=self.ops.__getitem__)]
        data = {"s": strings, "ops": ops, "d": self.defns, "provenance": self.provenance, **(extra or {})}
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


def _fragment(
    table: Table, sections: str, scripts: Sequence[str] = (), extra: Mapping[str, object] | None = None
) -> str:
    more = "".join(f"<script>{script}</script>" for script in scripts)
    style = STYLE + (VIEWS_STYLE if scripts else "")
    data = table.script(extra)
    return f'<div class="shax"><style>{style}</style>{sections}{data}<script>{SCRIPT}</script>{more}</div>'


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
    classes = {"+": "add", "-": "del", "~": "chg", " ": "", ".": "prov", ":": "prov"}
    header = html.escape(str(d).split("\n", 2)[0]) + "\n" + html.escape(str(d).split("\n", 2)[1])
    lines = [
        f'<span class="{classes[mark]}">{html.escape(mark if mark not in ".:" else " ")} {html.escape(text)}</span>'
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
    if s.recomputed_flops:
        note += f"; of the flops, {s.recomputed_flops} recompute what a checkpoint policy did not save"
    return f'<div class="shax"><style>{STYLE}</style>{body}<div>{html.escape(note)}</div></div>'


def pipeline_stats_html(p: PipelineStats) -> str:
    return f'<div class="shax"><style>{STYLE}</style>{_pipeline_table(p)}</div>'


def policy_stats_html(p: PolicyStats) -> str:
    return f'<div class="shax"><style>{STYLE}</style>{_table(p.HEADER, p.rows())}</div>'


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


def _header(e: Explanation, task: Exercise | None) -> str:
    arguments = ", ".join(map(str, e.typed.arg_types))
    results = ", ".join(map(str, e.rewritten.output_types()))
    title = f"explain {e.traced.name}({arguments}) -> {results}"
    intro = ""
    if task is not None:
        rules = " and the ".join(sorted(task.origins))
        title = f"exercise: the {rules}, in {title}"
        intro = (
            f'<div class="about">The {task.num_blanks} bindings the {rules} emitted are blank in the linearized '
            "and transposed programs (and ? in the zipped one). Type each as it would print, e.g. "
            "<code>mul x1 x2</code> or <code>x3 = pad [(1,0)] 0.0 x2</code>, and press Enter: the page evaluates "
            "it on the values of the bindings before it (hover one to see its value) and compares it with the "
            "hidden binding's value. An argument may be a nested expression in parentheses, as in "
            "<code>mul (cos x1) x6</code>. It evaluates "
            f"{html.escape(', '.join(CHECKED))}; for another operation it gives no verdict (?). "
            '<b class="score"></b></div>'
        )
    return f'<header><h1>{html.escape(title)}</h1>{intro}{_LEGEND}{VIEWS}<div class="status"></div></header>'


def explanation_html(e: Explanation, task: Exercise | None = None) -> str:
    """Every stage of `e` (`Explanation.show`'s sections), each under its description; the
    definitions drawn by the script, values as text (with the x, dx or ct they came from);
    the aligned and stepping views (`shax.tools.html_views`). With `task`, the bindings of its
    rule are blanks to fill in (`shax.tools.exercise`): the page then holds no text view or diff."""
    from shax.core.printing import show_values
    from shax.tools.diff import diff
    from shax.tools.explain import EVERY_HEADER

    table = Table(e.provenance, task.blanks if task is not None else None)
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
    elif task is not None:  # the checker evaluates answers with the values of the programs with blanks
        x, dx, ct = e.inputs, e.tangents, e.cotangents
        values[id(primal)], values[id(e.linearized.linear)] = linearized_values(e.linearized, x, dx)
        values[id(e.transposed.primal)], values[id(e.transposed.linear)] = linearized_values(e.transposed, x, ct)

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
    views = {"aligned": [of(primal)[-1], of(e.linearized.linear, primal)[-1], definitions["transposed"][-1]],
             "steps": steps(e, lambda d: of(d)[-1])}  # fmt: skip
    as_text = table.bindings <= TEXT_LIMIT and task is None
    texts = e.sections() if as_text else e.sections([k for k in EVERY_HEADER if k not in definitions])
    sections = []
    for k, key in enumerate(e.section_keys()):
        title = EVERY_HEADER[key]
        content = f'<div class="about">{html.escape(ABOUT[key])}</div>'
        if key in definitions:
            if e.as_diffs and key in ("types", "rewrites", "zipped") and task is None:
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
        blank = task is not None and key in ("linearized", "transposed")
        opened = " open" if k < OPEN_STAGES or blank else ""
        sections.append(
            f'<details{opened} class="stage" data-stage="{html.escape(key)}">'
            f"<summary>{html.escape(title)}</summary>{content}</details>"
        )
    if e.with_stats:
        sections.append(f'<details open class="stats"><summary>Stats:</summary>{_pipeline_table(e.stats())}</details>')
    sections.append(
        '<details open class="memory"><summary>Memory over reverse mode:</summary><div class="about memory-about">'
        "The bytes live at each step of the primal program, then of the transposed one (the caller holding x "
        "and f(x)); each residual a bar from the step that saves it to the last that reads it; the peak "
        f"marked (shax.stats' liveness). Hover for values.</div>{memory_svg(e)}</details>"
    )
    body = '<div class="stacked">' + "\n".join(sections) + '</div><div class="aligned" hidden></div>'
    body += '<div class="stepper" hidden></div>'
    scripts = [VIEWS_SCRIPT, *([CHECK_SCRIPT] if task is not None else [])]
    return _fragment(table, _header(e, task) + body, scripts, views)


install_html_view(definition_html)
