"""Provenance: every binding knows the user's line that wrote it and what emitted it (the
user's code, a stage's rule, a pass, or, for a residual, the primal binding it saves),
through every stage, pass and transform; `explain(..., provenance=True)` prints it."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import typeguard

import shax
from shax import f32, f64
from shax.core.ir import Definition
from shax.core.printing import show_definition
from shax.passes import materialize_broadcasts
from shax.primitives import Arg
from shax.stages import infer_types, linearize, transpose, zip_definitions
from typeclasses import cos, exp, reduce_sum, sin, tanh

FILE = __file__


def f(x, y):
    z = sin(x) * y  # line A
    return reduce_sum(exp(z) + cos(y), axes=[0])  # line B


LINE_A = inspect.getsourcelines(f)[1] + 1
LINE_B = LINE_A + 1


def typed_f() -> Definition:
    return infer_types(shax.trace(f, f64[3], f64[3]))


def origins(defn: Definition) -> list[str | None]:
    return [b.origin for b in defn.bindings if not isinstance(b.prim, Arg)]


def test_traced_bindings_name_the_users_line_and_no_rule() -> None:
    defn = typed_f()
    lines = {b.prim.name: b.source for b in defn.bindings if not isinstance(b.prim, Arg)}
    assert lines["sin"] == f"{FILE}:{LINE_A}" and lines["mul"] == f"{FILE}:{LINE_A}"
    assert lines["exp"] == f"{FILE}:{LINE_B}" and lines["reduce_sum"] == f"{FILE}:{LINE_B}"
    assert origins(defn) == [None] * len(origins(defn))


def test_linearize_names_its_rules_and_marks_each_residual_with_the_binding_it_saves() -> None:
    lin = linearize(typed_f())
    primal, linear = lin.primal, lin.linear
    # The primal program's copies of the user's operations come from the user's code; what
    # the rules add to it (sin's derivative, cos x) from the rules.
    assert {b.prim.name for b in primal.bindings if b.origin is None} >= {"sin", "mul", "exp", "cos", "add"}
    added = [o for o in origins(primal) if o is not None]
    assert added and all(o.startswith("linearize rule of ") for o in added)
    tangents = len(linear.arg_types) - lin.num_residuals
    residual_outputs = primal.outputs[len(primal.outputs) - lin.num_residuals :]
    by_id = {b.var.id: b for b in primal.bindings}
    marked = 0
    for b in linear.bindings:
        if isinstance(b.prim, Arg) and b.prim.index >= tangents:
            saved = by_id[residual_outputs[b.prim.index - tangents].id]
            assert b.origin == f"residual: saves x{saved.var.id} of f"
            assert b.source == saved.source
            marked += 1
        elif not isinstance(b.prim, Arg):
            assert b.origin is not None and b.origin.startswith("linearize rule of "), b
    assert marked == lin.num_residuals > 0
    # sin's derivative, cos x, is computed by sin's rule, at sin's line.
    cos_x = next(b for b in primal.bindings if b.prim.name == "cos" and b.origin == "linearize rule of sin")
    assert cos_x.source == f"{FILE}:{LINE_A}"


def test_transpose_names_its_rules_and_keeps_the_residual_marks() -> None:
    lin = transpose(linearize(typed_f()))
    linear = lin.linear
    cotangents = len(linear.arg_types) - lin.num_residuals
    for b in linear.bindings:
        if isinstance(b.prim, Arg):
            expected = "residual: saves" if b.prim.index >= cotangents else None
            assert (b.origin or "").startswith(expected or "") and (expected or b.origin is None)
        else:
            assert b.origin is not None and b.origin.startswith("transpose rule of "), b
    assert any(b.origin == "transpose rule of reduce_sum" for b in linear.bindings)  # a broadcast


def test_zip_and_cleanup_keep_each_bindings_provenance() -> None:
    lin = transpose(linearize(typed_f()))
    zipped = zip_definitions(lin)
    kinds = {(o or "traced").split(" rule of ")[0] for o in origins(zipped)}
    assert kinds == {"traced", "linearize", "transpose"}


def test_a_pass_names_itself_on_the_bindings_it_adds_and_keeps_the_others() -> None:
    def g(x, y):
        return x * y  # f32[3] times f32[2, 3]: numpy broadcasting

    typed = infer_types(shax.trace(g, f32[3], f32[2, 3]))
    explicit = materialize_broadcasts(typed)
    by_prim = {b.prim.name: b for b in explicit.bindings}
    assert by_prim["broadcast"].origin == "materialize_broadcasts"
    assert by_prim["broadcast"].source == by_prim["mul"].source
    assert by_prim["mul"].origin is None


def test_provenance_survives_transforms_inlined_into_an_outer_trace() -> None:
    program = shax.xpr(shax.grad(lambda x, y: reduce_sum(f(x, y), axes=[])), np.ones(3), np.ones(3))
    kinds = {(o or "traced").split(" rule of ")[0] for o in origins(program)}
    assert "transpose" in kinds and "linearize" in kinds
    lines = {b.source for b in program.bindings if b.origin and b.origin.startswith("transpose")}
    assert f"{FILE}:{LINE_A}" in lines and lines <= {f"{FILE}:{LINE_A}", f"{FILE}:{LINE_B}"}


def test_batch_names_its_rules() -> None:
    program = shax.xpr(shax.vmap(lambda x, y: f(x, y)), np.ones((4, 3)), np.ones((4, 3)))
    assert {o.split(" rule of ")[0] for o in origins(program) if o} == {"batch"}


def test_explain_prints_provenance_beside_each_binding_only_when_asked() -> None:
    plain = shax.explain(f, f64[3], f64[3])
    shown = shax.explain(f, f64[3], f64[3], provenance=True)
    assert " -- " not in str(plain)
    text = shown.show(["trace", "linearized", "transposed"])
    bindings = [line for line in text.splitlines() if " = " in line]
    assert bindings and all(" -- " in line for line in bindings)
    assert "test_provenance.py:" in text and "linearize rule of sin" in text and "residual: saves x" in text
    assert "transpose rule of mul" in text and "-- argument" in text


@typeguard.suppress_type_checks  # as users run shax: explain's own check, not the annotation's
def test_explain_refuses_a_provenance_that_is_not_a_bool() -> None:
    with pytest.raises(shax.ShaxError, match="provenance must be a bool"):
        shax.explain(f, f64[3], f64[3], provenance="yes")  # type: ignore[arg-type]


def layer(h, w):
    pre = h * w
    return tanh(pre)


def named(x, y):
    z = sin(x) * y
    hidden = layer(z, x)
    total = reduce_sum(exp(hidden), axes=[0])
    return total


def test_names_from_source_name_the_users_variables_in_every_stage() -> None:
    shown = shax.explain(named, f64[3], f64[3], names="source")
    traced = shown.show(["trace"])
    for line in ("x = arg0", "y = arg1", "z = mul x1 y", "pre = mul z x", "hidden = tanh pre", "in [total]"):
        assert line in traced, (line, traced)
    assert "h = " not in traced and "w = " not in traced  # a helper's parameters name the caller's values
    primal = show_definition(shown.linearized.primal, var_names=shown.var_names[id(shown.linearized.primal)])
    assert "hidden :: f64[3] = tanh pre" in primal
    linear = shown.show(["linearized"]).split("def dnamed")[1]
    assert "hidden :: f64[3] = arg" in linear or "z :: f64[3] = arg" in linear  # residuals saving named values
    assert "x0" not in shown.show(["zipped"]).split("\n")[2]  # the zipped program's first argument is x
    plain = shax.explain(named, f64[3], f64[3])
    assert "hidden" not in str(plain)


def test_a_name_held_twice_or_naming_another_binding_is_not_used() -> None:
    def g(x):
        a = sin(x)
        b = a  # two names for one value
        x3 = cos(x)  # the name of another binding (x3 is not this one's number)
        return b * x3

    traced = shax.explain(g, f64[2], names="source").show(["trace"])
    assert "a = " not in traced and "b = " not in traced
    assert "x3 = " not in traced.replace("x3 = cos", "") or "x3 = cos" not in traced


@typeguard.suppress_type_checks
def test_explain_refuses_unknown_names() -> None:
    with pytest.raises(shax.ShaxError, match="names must be None"):
        shax.explain(f, f64[3], f64[3], names="user")
