"""The teaching layer: `shax.stats` (bindings, flops, bytes, peak live bytes; per stage
in `explain`), `shax.to_dot` and its SVG, and the descent's history and picture. The
numbers are worked out by hand in the comments."""

from __future__ import annotations

import re
import shutil
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np
import pytest
import typeguard

import shax
import typeclasses as tc
from shax import control as C
from shax import f32
from shax import primitives as P
from shax.optimizers import History, adam, gradient_descent, momentum
from shax.rules import cost_rules
from shax.stages import infer_types, linearize, transpose
from shax.tools.cli import load_function, main
from shax.tracing.measure import nbytes
from typeclasses import cos, sin

ROOT = Path(__file__).resolve().parents[1]
MEDIUM = load_function(f"{ROOT / 'examples' / 'medium.py'}:medium")
BUILT_IN = [p for p in P.all_primitives() if p.__module__.startswith("shax.")]


def typed_medium() -> shax.Definition:
    return infer_types(shax.trace(MEDIUM, f32[6], f32[2, 2]))


def mlp(x, w1, w2):
    return tc.reduce_sum(tc.dot(tc.tanh(tc.dot(x, w1)), w2), [0, 1])


# Accounting ------------------------------------------------------------------------------


def test_every_built_in_primitive_has_a_cost() -> None:
    """Written (dot_general, the reductions, call, ...) or derived (elementwise, shape_only, arg)."""
    assert [p.__name__ for p in BUILT_IN if not cost_rules.covers(p)] == []
    assert not cost_rules.is_registered(P.Sin) and not cost_rules.is_registered(P.Reshape)
    assert cost_rules.is_registered(P.DotGeneral) and cost_rules.is_registered(C.Call)


def test_a_primitive_without_a_cost_is_a_named_error() -> None:
    from test_extend import cumsum  # a primitive declared by a user, without a cost rule

    defn = shax.xpr(lambda x: cumsum(x, 0), f32[3])
    with pytest.raises(shax.ShaxError, match="cumsum: no cost rule"):
        shax.stats(defn)


def test_medium_counts_its_bindings_and_flops() -> None:
    s = shax.stats(typed_medium())
    # x5 :: f32[2, 6] dot x6 :: f32[6, 2]: 2·M·N·K = 2·2·2·6
    assert s.flops_by_primitive["dot_general"] == 48
    # sin, cos, add, exp on f32[2, 6]: 4·12; mul, add, max, min, sub on f32[2, 2]: 5·4;
    # reduce_sum of 4 elements: 4
    assert s.flops == 48 + 48 + 20 + 4 == 120
    assert s.bindings == {
        "broadcast": 1, "sin": 1, "cos": 1, "add": 2, "exp": 1, "transpose": 1, "dot_general": 1,
        "mul": 1, "max": 1, "min": 1, "sub": 1, "reduce_sum": 1,
    }  # fmt: skip
    assert s.num_bindings == 13  # the golden's 15 bindings, its two arguments aside
    assert (s.argument_bytes, s.output_bytes, s.residuals) == (4 * 6 + 4 * 4, 4 * 2, 0)
    # arguments 40; x1, x2, x3 live at x3 (x1 dies at x2): 40 + 3·48 = 184 at x4 (x2, x3, x4)
    assert s.peak_bytes == 184


def test_a_known_mlp_bytes_and_peak() -> None:
    s = shax.stats(shax.xpr(mlp, f32[4, 3], f32[3, 5], f32[5, 2]))
    # arguments: 4·(12 + 15 + 10) = 148 bytes, live throughout
    assert (s.argument_bytes, s.output_bytes) == (148, 4)
    # x2 = dot (80 bytes), x3 = tanh x2 (80): both live at x3, 148 + 160 = 308; then x2
    # dies, x5 = dot x3 w2 (32) makes 260, x6 (4) after x3 died 184
    assert s.peak_bytes == 308
    # 2·4·5·3 + 20 + 2·4·2·5 + 8
    assert s.flops == 120 + 20 + 80 + 8 == 228


def test_a_linearized_definition_counts_both_parts() -> None:
    lin = linearize(shax.xpr(lambda x: sin(x), f32[3]))
    s = shax.stats(lin)
    # primal: sin x, cos x (the residual); linear: dx · cos x
    assert s.bindings == {"sin": 1, "cos": 1, "mul": 1} and s.flops == 9
    assert (s.residuals, s.residual_bytes) == (1, 12)
    # arguments: x and dx; outputs: sin x and its tangent
    assert (s.argument_bytes, s.output_bytes) == (24, 24)
    # primal: x, sin x, cos x = 36; linear: dx, cos x, the product (36) while x and sin x are held (24)
    assert s.peak_bytes == 60


def test_a_call_costs_its_callee_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    import shax.tracing.measure

    computed: list[str] = []
    flops = shax.tracing.measure.flops
    monkeypatch.setattr(shax.tracing.measure, "flops", lambda d: computed.append(d.name) or flops(d))

    @shax.subgraph
    def layer(x, w):
        return tc.tanh(tc.dot(x, w)), tc.sin(x)  # two outputs: one call of two bindings

    def model(x, w):
        h, s = layer(x, w)
        h2, s2 = layer(h, w)
        return tc.reduce_sum(h2 + s + s2, [0, 1])

    defn = shax.xpr(model, f32[2, 3], f32[3, 3])
    calls = [b for b in defn.bindings if isinstance(b.prim, C.Call)]
    assert len(calls) == 2  # two calls, each one binding of both outputs
    # layer: 2·2·3·3 + 6 (tanh) + 6 (sin) = 48; model: 2 calls, 2 adds of 6, a sum of 6
    s = shax.stats(defn)
    assert s.flops_by_primitive["call"] == 2 * 48
    assert s.flops == 96 + 12 + 6
    shax.stats(defn)
    assert computed == ["layer"]  # once per callee, however often it is called or counted


def test_stats_prints_a_table() -> None:
    text = str(shax.stats(shax.xpr(mlp, f32[4, 3], f32[3, 5], f32[5, 2])))
    assert re.search(r"dot_general\s+2\s+200", text)
    assert re.search(r"total\s+4\s+228", text)
    assert "arguments 148 bytes, outputs 4 bytes, peak live 308 bytes" in text


def test_stats_of_something_else_is_an_error() -> None:
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxTypeError, match=r"stats: expected.*test_teaching"):
        shax.stats("medium")  # type: ignore[arg-type]
    with pytest.raises(shax.ShaxTypeError, match="untyped"):
        shax.stats(shax.trace(MEDIUM, f32[6], f32[2, 2]))


def test_explain_counts_each_stage_of_medium() -> None:
    e = shax.explain(MEDIUM, f32[6], f32[2, 2], stats=True)
    stages = e.stats().stages
    assert list(stages) == ["tracing", "rewrites", "linearize", "transpose", "zip"]
    counted = {stage: s.num_bindings for stage, s in stages.items()}
    assert counted["tracing"] == 13
    # the rewrites: dot becomes reshape, reshape, dot_general, reshape (+3) and
    # reduce_sum [0] of two rows two slices, an add and a reshape (+3)
    assert counted["rewrites"] == 19
    for stage, lin in (("linearize", e.linearized), ("transpose", e.transposed)):
        parts = lin.primal.bindings + lin.linear.bindings
        assert counted[stage] == sum(1 for b in parts if not isinstance(b.prim, P.Arg))
    assert counted["zip"] == sum(1 for b in e.zipped.bindings if not isinstance(b.prim, P.Arg))
    # the residuals: 5 of f32[2, 6] (or its reshapes, 12 elements) and 6 of f32[2, 2]
    r = e.linearized.num_residuals
    saved = e.linearized.primal.output_types()[-r:]
    assert (stages["linearize"].residuals, stages["linearize"].residual_bytes) == (9, 5 * 48 + 4 * 16)
    assert stages["linearize"].residual_bytes == sum(map(nbytes, saved))
    assert str(e).endswith(str(e.stats()))
    assert "Stats:" not in str(shax.explain(MEDIUM, f32[6], f32[2, 2]))


# Pictures --------------------------------------------------------------------------------

NODE = re.compile(r"^\s+(d\d+_x\d+) \[label=\"(.*)\", fillcolor=\"(#[0-9a-f]{6})\"")
EDGE = re.compile(r"^\s+(d\d+_x\d+) -> (d\d+_x\d+)( \[style=dashed(?:, constraint=false)?\])?;$")


def parse_dot(text: str) -> tuple[dict[str, tuple[str, str]], list[tuple[str, str, bool]]]:
    """node id -> (label, colour); edges (from, to, dashed)."""
    nodes = {m[1]: (m[2], m[3]) for line in text.splitlines() if (m := NODE.match(line))}
    edges = [(m[1], m[2], bool(m[3])) for line in text.splitlines() if (m := EDGE.match(line))]
    return nodes, edges


def test_dot_of_a_definition_has_a_node_per_binding_and_an_edge_per_use() -> None:
    defn = typed_medium()
    nodes, edges = parse_dot(shax.to_dot(defn))
    assert len(nodes) == len(defn.bindings) == 15
    assert len(edges) == sum(len(b.args) for b in defn.bindings)
    assert all(not dashed for *_, dashed in edges)
    assert {label for label, _ in nodes.values()} == {repr(b) for b in defn.bindings}
    colours = [colour for _, colour in nodes.values()]
    assert colours.count(shax.tools.graphviz.COLOURS["argument"]) == 2
    assert colours.count(shax.tools.graphviz.COLOURS["primal"]) == 13


def test_dot_of_a_linearized_definition_marks_residuals() -> None:
    lin = transpose(linearize(typed_medium()))
    r = lin.num_residuals
    nodes, edges = parse_dot(shax.to_dot(lin, transposed=True))
    assert len(nodes) == len(lin.primal.bindings) + len(lin.linear.bindings)
    uses = sum(len(b.args) for b in lin.primal.bindings + lin.linear.bindings)
    assert len(edges) == uses + r  # and a dashed edge from each residual output to its argument
    colours = [colour for _, colour in nodes.values()]
    assert colours.count(shax.tools.graphviz.COLOURS["residual"]) == 2 * r  # distinct vars in medium
    assert shax.tools.graphviz.COLOURS["transposed"] in colours and shax.tools.graphviz.COLOURS["linear"] not in colours


def test_dot_draws_a_callee_once_with_an_edge_per_call() -> None:
    @shax.subgraph
    def layer(x):
        return tc.tanh(x) * 2.0

    defn = shax.xpr(lambda x: layer(layer(x)), f32[3])
    callee = defn.bindings[1].prim.defn
    text = shax.to_dot(defn)
    nodes, edges = parse_dot(text)
    assert text.count("subgraph cluster_") == 2
    assert len(nodes) == len(defn.bindings) + len(callee.bindings)
    assert len(edges) == sum(len(b.args) for b in defn.bindings + callee.bindings) + 2
    assert sum(dashed for *_, dashed in edges) == 2


def test_dot_of_something_else_is_an_error() -> None:
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxTypeError, match="to_dot: expected a Definition"):
        shax.to_dot(3)  # type: ignore[arg-type]
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxTypeError, match="transposed must be a bool"):
        shax.to_dot(typed_medium(), transposed="yes")  # type: ignore[arg-type]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_the_svg_has_the_graph_s_nodes_and_edges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg, dot = tmp_path / "medium.svg", tmp_path / "medium.dot"
    args = ["explain", f"{ROOT / 'examples' / 'medium.py'}:medium", "f32[6]", "f32[2,2]", "--stages", "f"]
    assert main([*args, "--svg", str(svg), "--dot", str(dot)]) == 0
    nodes, edges = parse_dot(dot.read_text())
    groups = ElementTree.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}g")
    classes = [g.get("class") for g in groups]
    assert (classes.count("node"), classes.count("edge")) == (len(nodes), len(edges))
    assert classes.count("cluster") == 3  # primal, linear, transposed


# Descent -------------------------------------------------------------------------------------


def f(x, y):
    z = x + y
    return sin(z) * cos(z)


def test_descent_history_holds_the_logged_values_and_the_path(capsys: pytest.CaptureFixture[str]) -> None:
    logged: list[str] = []
    h = gradient_descent(f, [0.5, -0.75], lr=0.05, iters=39, log=logged.append, keep_params=True)
    assert isinstance(h, History)
    assert [
        f"Iteration {k + 1}: {shax.core.printing.show_float(np.float32(v))}" for k, v in enumerate(h.values)
    ] == logged
    assert len(logged) == 40
    assert h.path is not None and len(h.path) == 40
    assert h.path[0] == [0.5, -0.75] and h.path[-1] == h.params
    # each step: p ← p - lr·∇f(p), ∂f/∂x = ∂f/∂y = cos(2(x + y))
    x, y = h.path[0]
    assert np.allclose(h.path[1], [x - 0.05 * np.cos(2 * (x + y)), y - 0.05 * np.cos(2 * (x + y))], atol=1e-6)
    params, value = h  # unpacks as the plain result
    assert params == h.params and value == h.values[-1]
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("optimizer", [gradient_descent, momentum, adam])
def test_history_without_params_and_the_plain_result(optimizer, capsys: pytest.CaptureFixture[str]) -> None:
    h = optimizer(f, [0.5, -0.75], lr=0.05, iters=3, log=None, history=True)
    assert isinstance(h, History) and h.path is None and len(h.values) == 4
    params, value = optimizer(f, [0.5, -0.75], lr=0.05, iters=3, log=None)
    assert np.allclose(params, h.params) and value == h.value
    assert capsys.readouterr().out == ""
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxTypeError, match="history must be a bool"):
        optimizer(f, [0.5, -0.75], lr=0.05, iters=3, history="yes")


def test_plot_needs_matplotlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from shax.tools.plot import plot_descent

    h = gradient_descent(f, [0.5, -0.75], lr=0.05, iters=2, log=None, keep_params=True)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib fails
    with pytest.raises(shax.ShaxValueError, match=r"matplotlib.*shax\[plot\]"):
        plot_descent(f, h, tmp_path / "out.png")
    assert main(["demo", "--plot", str(tmp_path / "out.png")]) == 1
    assert not (tmp_path / "out.png").exists()


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from shax.tools.plot import plot_descent

    h = gradient_descent(f, [0.5, -0.75], lr=0.05, iters=5, log=None, keep_params=True)
    plot_descent(f, h, tmp_path / "descent.png")
    assert (tmp_path / "descent.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(shax.ShaxValueError, match="keep_params=True"):
        plot_descent(f, gradient_descent(f, [0.5, -0.75], lr=0.05, iters=1, log=None, history=True), "x.png")
