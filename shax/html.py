"""Definitions, stages and diffs as self-contained HTML, for notebooks and browsers.

    shax.explain(f, f32[3]).to_html()        # also what Jupyter shows (_repr_html_)
    shax explain FILE:FN TYPES --html out.html

Each stage is a collapsible section holding its definitions in the original's format,
types coloured by dtype. Every binding carries its provenance (`Binding.source` and
`origin`): clicking one highlights, in every stage, the bindings of the same provenance
and operation (its copies), more lightly those from the same line of the user's code,
and, in its own definition, its operands and its uses. No network: the style and the
script are inline.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING

from shax.diff import binding_keys
from shax.ir import Binding, Definition, LinearizedDefinition, Var
from shax.printing import called_definitions, show_primitive, show_provenance, shown_names

if TYPE_CHECKING:
    from shax.diff import Diff
    from shax.explain import Explanation

_STYLE = """
.shax { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.shax details { margin: 4px 0; border-left: 3px solid #d0d7de; padding-left: 8px; }
.shax summary { cursor: pointer; font-weight: bold; }
.shax pre { margin: 4px 0; line-height: 1.35; }
.shax .b { cursor: pointer; border-radius: 3px; }
.shax .b:hover { background: #f0f3f6; }
.shax .t-f32 { color: #0550ae; } .shax .t-f64 { color: #6f42c1; } .shax .t-i32, .shax .t-i64,
.shax .t-u8 { color: #116329; } .shax .t-bool { color: #953800; }
.shax .prov { color: #8c959f; }
.shax .selected { background: #ffd33d !important; }
.shax .line { background: #f6f8fa; outline: 1px dotted #d4a72c; } .shax .same { background: #fff5b1; }
.shax .arg { background: #ddf4ff; } .shax .use { background: #dafbe1; }
.shax .add { color: #116329; } .shax .del { color: #82071e; } .shax .chg { color: #953800; }
"""

# A click on a binding: its copies (same data-key) everywhere, its line's bindings, and in
# its definition (same data-defn) its operands and uses.
_SCRIPT = """
(function () {
  const root = document.currentScript.parentElement;
  root.addEventListener("click", function (event) {
    const b = event.target.closest(".b");
    if (!b) return;
    for (const cls of ["selected", "same", "line", "arg", "use"])
      root.querySelectorAll("." + cls).forEach(e => e.classList.remove(cls));
    root.querySelectorAll(".b").forEach(function (other) {
      if (other.dataset.src && other.dataset.src === b.dataset.src) other.classList.add("line");
      if (other.dataset.key === b.dataset.key) other.classList.add("same");
      if (other.dataset.defn === b.dataset.defn) {
        if ((b.dataset.args || "").split(" ").includes(other.dataset.var)) other.classList.add("arg");
        if ((other.dataset.args || "").split(" ").includes(b.dataset.var)) other.classList.add("use");
      }
    });
    b.classList.add("selected");
  });
})();
"""


def page(body: str, title: str = "shax") -> str:
    """A whole HTML document around `body` (a fragment from the functions below)."""
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>\n'
        f"<body>\n{body}\n</body></html>\n"
    )


def _fragment(sections: str) -> str:
    return f'<div class="shax"><style>{_STYLE}</style>{sections}<script>{_SCRIPT}</script></div>'


class _Renderer:
    """Renders definitions, numbering each one it shows (data-defn) so that operands and
    uses are looked up within it."""

    def __init__(self, provenance: bool = False) -> None:
        self.count = itertools.count()
        self.provenance = provenance  # each binding followed by its provenance, as text

    def definitions(self, defns: Iterable[Definition]) -> str:
        return "\n".join(self.definition(d) for d in defns)

    def definition(self, defn: Definition) -> str:
        callees = called_definitions(defn)
        names = shown_names(defn, callees)
        return "\n".join(self._one(d, names[id(d)], names) for d in [*callees, defn])

    def _one(self, defn: Definition, name: str, names: dict[int, str]) -> str:
        number = next(self.count)
        header = f"def {html.escape(name)}("
        indent = " " * len(header)
        args = [f"arg{k} :: {_type(t)}" for k, t in enumerate(defn.arg_types)]
        lines = [header + f", \n{indent}".join(args) + ") ="]
        keys = [f"{provenance}|{name}|{n}" for (provenance, name), n in binding_keys(defn.bindings)]
        for k, (b, key) in enumerate(zip(defn.bindings, keys)):
            lines.append(("  let " if k == 0 else "      ") + self._binding(b, key, number, names))
        outputs = ", ".join(_var(v) for v in defn.outputs)
        lines.append(f"  in [{outputs}]")
        return f'<pre class="defn">{chr(10).join(lines)}</pre>'

    def _binding(self, b: Binding, key: str, number: int, names: dict[int, str]) -> str:
        operation = " ".join([html.escape(show_primitive(b.prim, names)), *(f"x{a.id}" for a in b.args)])
        attributes = {
            "class": "b",
            "data-defn": str(number),
            "data-var": str(b.var.id),
            "data-args": " ".join(str(a.id) for a in b.args),
            "data-key": key,
            "data-src": b.source or "",
            "title": show_provenance(b),
        }
        shown = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attributes.items())
        comment = f'  <span class="prov">-- {html.escape(show_provenance(b))}</span>' if self.provenance else ""
        return f"<span {shown}>{_var(b.var)} = {operation}</span>{comment}"


def _type(t: object) -> str:
    text = str(t)
    dtype = text.split("[")[0]
    return f'<span class="t-{html.escape(dtype)}">{html.escape(text)}</span>'


def _var(v: Var) -> str:
    return f"x{v.id}" if v.type is None else f"x{v.id} :: {_type(v.type)}"


def _section(title: str, content: str, stage: str) -> str:
    return (
        f'<details open class="stage" data-stage="{html.escape(stage)}">'
        f"<summary>{html.escape(title)}</summary>{content}</details>"
    )


def definition_html(defn: Definition | LinearizedDefinition) -> str:
    """One definition (a linearized one: its primal and linear definitions)."""
    parts = [defn.primal, defn.linear] if isinstance(defn, LinearizedDefinition) else [defn]
    return _fragment(_Renderer().definitions(parts))


def diff_html(d: Diff) -> str:
    return _fragment(_diff_lines(d))


def _diff_lines(d: Diff) -> str:
    classes = {"+": "add", "-": "del", "~": "chg", " ": "", ".": "prov"}
    header = html.escape(str(d).split("\n", 2)[0]) + "\n" + html.escape(str(d).split("\n", 2)[1])
    lines = [
        f'<span class="{classes[mark]}">{html.escape(mark if mark != "." else " ")} {html.escape(text)}</span>'
        for mark, text in d.lines
    ]
    return f"<pre>{header}\n" + "\n".join(lines) + "</pre>"


def explanation_html(e: Explanation) -> str:
    """Every stage of `e` (`Explanation.show`'s sections), each collapsible; definitions
    rendered with their provenance, values as text."""
    from shax.diff import diff
    from shax.explain import HEADERS

    renderer = _Renderer(e.provenance)
    definitions: dict[str, list[Definition]] = {
        "trace": [e.traced],
        "types": [e.typed],
        "rewrites": [e.rewritten],
        "linearized": [e.linearized.primal, e.linearized.linear],
        "transposed": [e.transposed.primal, e.transposed.linear],
        "zipped": [e.zipped],
    }
    texts = e.sections()
    sections = []
    for key, title in HEADERS.items():
        if key in definitions:
            content = renderer.definitions(definitions[key])
            if e.as_diffs and key in ("types", "rewrites", "zipped"):
                before = {"types": e.traced, "rewrites": e.typed, "zipped": e.transposed.primal}[key]
                content = _diff_lines(diff(before, definitions[key][0])) + content
        else:
            content = f"<pre>{html.escape(texts[key])}</pre>"
        sections.append(_section(title, content, key))
    return _fragment("\n".join(sections))
