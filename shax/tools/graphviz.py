"""`shax.to_dot`: a definition as a Graphviz graph, to look at its data flow.

    Path("f.dot").write_text(shax.to_dot(shax.xpr(f, x)))      # dot -Tsvg f.dot > f.svg

A node per binding, labelled as the binding prints (`x3 :: f32[6] = sin x2`), an edge
from each operand to each use, the outputs drawn with a double border. Every definition
is a cluster (`def name`); a called definition is drawn once, in a cluster of its own,
with a dashed edge from the callee's output to each call binding reading it. A node's
colour says where its value comes from, known from the kind of definition given:

    argument    an `arg` binding (a linear program's tangent or cotangent arguments too)
    primal      a binding of a Definition, or of a LinearizedDefinition's primal part
    residual    a primal output beyond the original outputs (the last `num_residuals`),
                and the linear part's arguments receiving them, joined by a dashed edge
    linear      a binding of a LinearizedDefinition's linear part
    transposed  the same, for a transposed one (`to_dot(lin, transposed=True)`)

A callee's bindings take the colour of the part that first calls it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Sequence

import attrs

from shax.control import Call
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.location import current_source
from shax.core.printing import called_definitions, show_binding, shown_names
from shax.primitives import Arg

# origin -> fill colour
COLOURS = {
    "argument": "#e0e0e0",
    "primal": "#cfe2ff",
    "residual": "#ffe08a",
    "linear": "#c8f0c8",
    "transposed": "#f8c8d8",
}


@attrs.frozen
class Part:
    """A definition to draw, the colour of its bindings, and how many of its outputs
    (primal part) or arguments (linear part) are residuals."""

    defn: Definition
    kind: str
    residual_outputs: int = 0
    residual_args: int = 0


def to_dot(defn: Definition | LinearizedDefinition, *, transposed: bool = False) -> str:
    """The Graphviz DOT text of `defn` (both parts of a LinearizedDefinition, the linear one
    coloured `transposed` when `transposed` says it is)."""
    if not isinstance(transposed, bool):
        raise at(ShaxTypeError(f"to_dot: transposed must be a bool, got {transposed!r}"), current_source())
    if isinstance(defn, LinearizedDefinition):
        return graph(defn.primal.name, linearized_parts(defn, "transposed" if transposed else "linear"))
    if isinstance(defn, Definition):
        return graph(defn.name, [Part(defn, "primal")])
    message = f"to_dot: expected a Definition or LinearizedDefinition, got {type(defn).__name__}"
    raise at(ShaxTypeError(message), current_source())


def linearized_parts(lin: LinearizedDefinition, kind: str) -> list[Part]:
    """The primal part, then the linear one, their residuals marked."""
    r = lin.num_residuals
    return [Part(lin.primal, "primal", residual_outputs=r), Part(lin.linear, kind, residual_args=r)]


def graph(name: str, parts: Sequence[Part]) -> str:
    """One digraph of `parts`, each a cluster, after the definitions they call. A part with
    residual arguments receives them from the residual outputs of the last part before it
    that has some (the primal), by dashed edges."""
    drawn: dict[int, int] = {}  # id(definition) -> its cluster number
    order: list[tuple[Definition, str, Part | None]] = []
    for part in parts:
        for callee in called_definitions(part.defn):
            if id(callee) not in drawn:
                drawn[id(callee)] = len(order)
                order.append((callee, part.kind, None))
        drawn[id(part.defn)] = len(order)
        order.append((part.defn, part.kind, part))
    names: dict[int, str] = {}
    for part in parts:
        names.update(shown_names(part.defn, called_definitions(part.defn)))
    lines = [
        f"digraph {_quote(name)} {{",
        "  compound=true; newrank=true; labelloc=t;",
        f"  label=<{_legend([part.kind for part in parts])}>;",
        '  node [shape=box, style=filled, fontname="monospace"];',
    ]
    firsts: list[str] = []  # the first node of each part, to place the parts left to right in order
    edges: list[str] = []
    residual_sources: list[str] = []  # the node ids of the latest primal part's residual outputs
    # cluster -> var id -> the node of the binding defining it (named by its first var)
    nodes = [_nodes(k, defn) for k, (defn, _, _) in enumerate(order)]
    for k, (defn, kind, drawing) in enumerate(order):
        node = nodes[k].__getitem__
        r_out = drawing.residual_outputs if drawing else 0
        r_args = drawing.residual_args if drawing else 0
        residual_vars = {v.id for v in defn.outputs[len(defn.outputs) - r_out :]} if r_out else set()
        outputs = {v.id for v in defn.outputs}
        first_residual_arg = len(defn.arg_types) - r_args
        lines.append(f"  subgraph cluster_{k} {{")
        title = f"def {names.get(id(defn), defn.name)}" + (f" ({kind})" if drawing and len(parts) > 1 else "")
        lines.append(f"    label={_quote(title)};")
        for i, b in enumerate(defn.bindings):
            here = nodes[k][b.vars[0].id] if b.vars else f"d{k}_e{i}"
            saved = b.prim.index - first_residual_arg if isinstance(b.prim, Arg) else -1  # which residual
            if r_args and saved >= 0:
                origin = "residual"
                if saved < len(residual_sources):  # not laid out by: it would pull the programs together
                    edges.append(f"  {residual_sources[saved]} -> {here} [style=dashed, constraint=false];")
            elif any(v.id in residual_vars for v in b.vars):
                origin = "residual"
            else:
                origin = "argument" if b.prim.structural else kind
            border = ", peripheries=2" if any(v.id in outputs for v in b.vars) else ""
            label = _quote(show_binding(b, names))
            lines.append(f'    {here} [label={label}, fillcolor="{COLOURS[origin]}"{border}];')
            edges += [f"  {node(a.id)} -> {here};" for a in dict.fromkeys(b.args)]
            if isinstance(b.prim, Call):  # from each callee output the call defines
                cluster = drawn[id(b.prim.defn)]
                sources = dict.fromkeys(nodes[cluster][v.id] for v in b.prim.defn.outputs)
                edges += [f"  {source} -> {here} [style=dashed];" for source in sources]
            else:  # a cond's branches, a loop's body: from the cluster to the operation running it
                for body in b.prim.subdefinitions():
                    cluster = drawn[id(body)]
                    source = (
                        nodes[cluster][body.outputs[0].id] if body.outputs else f"d{cluster}_e{len(body.bindings) - 1}"
                    )
                    link = f"[style=dotted, ltail=cluster_{cluster}, label=runs]"
                    edges.append(f"  {source} -> {here} {link};")
        lines.append("  }")
        if drawing is not None and defn.bindings:
            first = defn.bindings[0]
            firsts.append(nodes[k][first.vars[0].id] if first.vars else f"d{k}_e0")
        if r_out:
            residual_sources = [node(v.id) for v in defn.outputs[len(defn.outputs) - r_out :]]
    if len(firsts) > 1:  # forward left of backward: the parts' first nodes on one rank, in order
        lines.append(f"  {{rank=same; {'; '.join(firsts)};}}")
        edges.append(f"  {' -> '.join(firsts)} [style=invis];")
    return "\n".join([*lines, *edges, "}"]) + "\n"


def _nodes(k: int, defn: Definition) -> dict[int, str]:
    """var id -> the node of the binding of cluster `k` defining it, named by the binding's first var."""
    return {v.id: f"d{k}_x{b.vars[0].id}" for b in defn.bindings for v in b.vars}


def _legend(kinds: Sequence[str]) -> str:
    """The picture's legend, an HTML-like table: a cell per colour the picture uses."""
    shown = ["argument", "primal", "residual", *dict.fromkeys(k for k in kinds if k not in ("argument", "primal"))]
    cells = "".join(f'<td bgcolor="{COLOURS[k]}">{k}</td>' for k in shown)
    return f'<table border="0" cellborder="1" cellspacing="0"><tr>{cells}</tr></table>'


def _quote(text: str) -> str:
    """`text` as a DOT string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


SVG_LIMIT = 150  # nodes beyond which `shax explain --svg` refuses: dot's layout took minutes at 100 to 200
_NODE = re.compile(r"\s+d\d+_[xe]\d+ \[label=")


def nodes_of(dot: str) -> int:
    """How many bindings the DOT text `graph` made draws."""
    return sum(1 for line in dot.splitlines() if _NODE.match(line))


def render_svg(dot: str, timeout: float = 120) -> str:
    """The SVG picture of the DOT text `dot`, drawn by Graphviz's `dot` program (a
    ShaxValueError when it takes more than `timeout` seconds)."""
    program = shutil.which("dot")
    if program is None:
        raise ShaxValueError(
            "drawing an SVG needs Graphviz's dot program, which is not installed (apt-get install graphviz)"
        )
    try:
        done = subprocess.run(
            [program, "-Tsvg"], input=dot, capture_output=True, text=True, check=False, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise ShaxValueError(f"Graphviz's dot did not lay out {nodes_of(dot)} nodes in {timeout:g} s") from None
    if done.returncode != 0:
        raise ShaxValueError(f"Graphviz's dot failed: {done.stderr.strip()}")
    return done.stdout
