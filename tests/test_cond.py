"""Conditionals (`shax.cond`, `shax.switch`): on numpy values only the taken branch runs;
traced, one `cond` operation holding every branch, traced once, that every transform
keeps (grad, jvp, vmap, jit), against hand-derived derivatives and finite differences in
float64; branches that disagree and bad predicates are ShaxErrors at the user's line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax import control as C
from shax import primitives as P
from shax.core.ir import Definition
from shax.passes import cse, dce
from shax.rules.types import result_types
from shax.stages import infer_types
from shax.testing.numeric import check_directional_derivative

HERE = Path(__file__).name
RNG = np.random.default_rng(15)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)


def f_true(x: Any, y: Any) -> Any:
    return snp.sin(x) * y


def f_false(x: Any, y: Any) -> Any:
    return x * x + y


def branchy(x: Any, y: Any) -> Any:
    """sin(x)·y where sum(x) > 0, else x² + y."""
    return shax.cond(snp.sum(x) > 0, f_true, f_false, x, y)


def loss(x: Any, y: Any) -> Any:
    return snp.sum(branchy(x, y))


def expected_grad(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d/dx, d/dy of sum(sin(x)·y) or of sum(x² + y), by hand."""
    if x.sum() > 0:
        return np.cos(x) * y, np.sin(x)
    return 2 * x, np.ones_like(y)


def conds(defn: Definition) -> list[C.Cond]:
    return [b.prim for b in defn.bindings if isinstance(b.prim, C.Cond)]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_values_take_one_branch(sign: float) -> None:
    x = sign * np.abs(X)
    want = np.sin(x) * Y if sign > 0 else x * x + Y
    np.testing.assert_allclose(branchy(x, Y), want)
    np.testing.assert_allclose(shax.jit(branchy)(x, Y), want)


def test_on_values_only_the_taken_branch_runs() -> None:
    ran = []

    def left(x: Any) -> Any:
        ran.append("left")
        return x

    def right(x: Any) -> Any:
        ran.append("right")
        return -x

    assert shax.cond(np.bool_(True), left, right, X) is X
    assert ran == ["left"]


def test_traced_cond_is_one_operation_each_branch_traced_once() -> None:
    traced = []

    def left(x: Any, y: Any) -> Any:
        traced.append("left")
        return {"a": x * y, "b": (x, y)}

    def right(x: Any, y: Any) -> Any:
        traced.append("right")
        return {"a": x + y, "b": (y, x)}

    defn = shax.trace(lambda x, y: shax.cond(x[0] > 0, left, right, x, y), "f64[3]", "f64[3]")
    assert sorted(traced) == ["left", "right"]
    (cond,) = [b for b in defn.bindings if isinstance(b.prim, C.Cond)]
    assert len(cond.vars) == 3  # three outputs of one cond, one binding
    # cond is a switch of (false, true): the false branch first, as in JAX
    assert [b.name for b in cond.prim.branches] == ["right", "left"]
    printed = str(defn)
    assert printed.count("def right(") == 1 and printed.count("def left(") == 1
    assert printed.index("def right(") < printed.index("def left(") < printed.index("cond [right,left]")


def test_printing_names_the_branches() -> None:
    printed = str(shax.trace(branchy, "f64[3]", "f64[3]"))
    assert "= cond [f_false,f_true] x" in printed
    assert printed.count("def f_false(") == 1


def test_grad_against_hand_derivatives() -> None:
    for x in (np.abs(X), -np.abs(X)):
        got = shax.grad(loss, wrt=(0, 1))(x, Y)
        for g, w in zip(got, expected_grad(x, Y)):
            np.testing.assert_allclose(g, w, rtol=1e-12)


def test_gradient_keeps_one_cond_per_direction() -> None:
    defn = infer_types(shax.trace(loss, "f64[3]", "f64[3]"))
    lin = shax.stages.linearize(defn)
    assert {len(op.branches) for op in conds(lin.primal)} == {2}
    assert conds(lin.linear) and all(op.linear for op in conds(lin.linear))
    transposed = shax.stages.transpose(lin).linear
    assert conds(transposed)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_jvp_against_finite_differences(sign: float) -> None:
    x, dx, dy = sign * np.abs(X), RNG.standard_normal(3), RNG.standard_normal(3)
    value, tangent = shax.jvp(branchy, (x, Y), (dx, dy))
    np.testing.assert_allclose(value, branchy(x, Y))
    check_directional_derivative(branchy, [x, Y], [dx, dy], [tangent], what="cond's jvp")


def test_vmap_of_grad_with_a_batched_predicate() -> None:
    xs = np.stack([np.abs(X), -np.abs(X), X])
    ys = np.stack([Y, Y * 2, -Y])
    got = shax.vmap(shax.grad(loss, wrt=(0, 1)))(xs, ys)
    for k in range(3):
        for g, w in zip(got, expected_grad(xs[k], ys[k])):
            np.testing.assert_allclose(g[k], w, rtol=1e-12)


def test_batched_predicate_selects_per_member() -> None:
    xs = np.stack([np.abs(X), -np.abs(X)])
    got = shax.vmap(branchy)(xs, np.stack([Y, Y]))
    np.testing.assert_allclose(got[0], np.sin(xs[0]) * Y)
    np.testing.assert_allclose(got[1], xs[1] ** 2 + Y)
    defn = shax.trace(shax.vmap(branchy), "f64[2, 3]", "f64[2, 3]")
    assert not conds(defn) and any(isinstance(b.prim, P.Select) for b in defn.bindings)


def test_vmap_with_an_unbatched_predicate_is_a_cond_of_batched_branches() -> None:
    f = shax.vmap(lambda y, x: branchy(x, y), in_axes=(0, None))
    ys = np.stack([Y, 2 * Y])
    np.testing.assert_allclose(f(ys, np.abs(X)), np.sin(np.abs(X)) * ys)
    defn = shax.trace(f, "f64[2, 3]", "f64[3]")
    assert len(conds(defn)) == 1


def test_jit_of_grad() -> None:
    g = shax.jit(shax.grad(loss, wrt=0))
    for x in (np.abs(X), -np.abs(X)):
        np.testing.assert_allclose(g(x, Y), expected_grad(x, Y)[0], rtol=1e-12)


def three(i: Any, x: Any) -> Any:
    return shax.switch(i, [lambda x: x * 2.0, snp.sin, lambda x: x * x * x], x)


@pytest.mark.parametrize("i, branch", [(-3, 0), (0, 0), (1, 1), (2, 2), (9, 2)])
def test_switch_clamps_its_index(i: int, branch: int) -> None:
    want = [X * 2.0, np.sin(X), X**3][branch]
    dwant = [np.full(3, 2.0), np.cos(X), 3 * X**2][branch]
    np.testing.assert_allclose(three(i, X), want)
    np.testing.assert_allclose(shax.jit(three)(np.int32(i), X), want)
    np.testing.assert_allclose(shax.grad(lambda i, x: snp.sum(three(i, x)), wrt=1)(np.int32(i), X), dwant)
    check_directional_derivative(lambda x: three(np.int32(i), x), [X], [Y], [Y * dwant], what="switch's derivative")


def test_switch_under_vmap_with_a_batched_index() -> None:
    index = np.array([-1, 1, 2, 5], np.int32)
    xs = RNG.standard_normal((4, 3))
    got = shax.vmap(three)(index, xs)
    for k, i in enumerate(index):
        np.testing.assert_allclose(got[k], three(int(i), xs[k]))


def test_codegen_is_a_python_if() -> None:
    from shax.codegen import compile_definition

    defn = infer_types(shax.trace(three, "i32[]", "f64[3]"))
    source = compile_definition(defn).source
    assert "if x" in source and "elif" in source and "else:" in source


def test_dce_and_cse_keep_a_cond_sound() -> None:
    def two_conds(x: Any, y: Any) -> Any:
        a = shax.cond(x[0] > 0, lambda x, y: (x * y, x), lambda x, y: (x + y, y), x, y)
        b = shax.cond(x[0] > 0, lambda x, y: (x * y, x), lambda x, y: (x + y, y), x, y)
        return a[0] + b[0]

    defn = infer_types(shax.trace(two_conds, "f64[3]", "f64[3]"))
    cleaned = cse(dce(defn))
    for x in (np.abs(X), -np.abs(X)):
        np.testing.assert_allclose(shax.evaluate(cleaned, x, Y)[0], shax.evaluate(defn, x, Y)[0])
        np.testing.assert_allclose(shax.jit(two_conds)(x, Y), two_conds(x, Y))


def test_branches_returning_different_types_name_the_leaf() -> None:
    def left(x: Any) -> Any:
        return {"a": x, "b": (x, x)}

    def right(x: Any) -> Any:
        return {"a": x, "b": (x, x[:2])}

    match = rf"cond: the branches' output\['b'\]\[1\] differs: f64\[2\] in right, f64\[3\] in left \(at .*{HERE}:\d+\)"
    with pytest.raises(shax.ShaxTypeError, match=match):
        shax.jit(lambda x: shax.cond(x[0] > 0, left, right, x))(X)


def test_branches_returning_different_structures() -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"cond: the branches return different structures.*{HERE}"):
        shax.jit(lambda x: shax.cond(x[0] > 0, lambda x: (x, x), lambda x: x, x))(X)


def test_a_non_scalar_predicate_is_an_error() -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"cond: the predicate must be a scalar, got bool\[3\] .*{HERE}"):
        shax.jit(lambda x: shax.cond(x > 0, f_true, f_false, x, x))(X)
    with pytest.raises(shax.ShaxTypeError, match=rf"cond: the predicate must be a scalar, got bool\[3\] .*{HERE}"):
        shax.cond(X > 0, f_true, f_false, X, X)
    with pytest.raises(
        shax.ShaxTypeError, match=rf"cond: the predicate must be a bool or int scalar, got f64\[\] .*{HERE}"
    ):
        shax.cond(np.float64(1.0), f_true, f_false, X, X)


def test_bad_switch_arguments() -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"switch: the index must be an int scalar, got bool\[\] .*{HERE}"):
        shax.switch(True, [f_true], X, X)
    with pytest.raises(shax.ShaxTypeError, match=rf"switch: branches must be a non-empty sequence.*{HERE}"):
        shax.switch(0, [], X)
    with pytest.raises(shax.ShaxTypeError, match=rf"switch: expected a function, got int .*{HERE}"):
        shax.switch(0, [f_true, 3], X, X)


def test_the_type_rule_rejects_a_float_or_non_scalar_index() -> None:
    (cond,) = conds(infer_types(shax.trace(branchy, "f64[3]", "f64[3]")))
    x = shax.TensorType(shax.f64, (3,))
    for index in (shax.TensorType(shax.f64, ()), shax.TensorType(shax.i32, (2,))):
        with pytest.raises(
            shax.ShaxTypeError, match=f"cond: the index must be an int or bool scalar, not {re.escape(str(index))}"
        ):
            result_types(cond, index, x, x)


def test_the_type_rule_rejects_branches_of_different_outputs() -> None:
    (cond,) = conds(infer_types(shax.trace(branchy, "f64[3]", "f64[3]")))
    other = infer_types(shax.trace(lambda x, y: x[:2], "f64[3]", "f64[3]"))
    x = shax.TensorType(shax.f64, (3,))
    with pytest.raises(shax.ShaxTypeError, match=r"cond: .* returns \(f64\[2\]\)"):
        result_types(C.Cond((cond.branches[0], other)), shax.TensorType(shax.i32, ()), x, x)


W = np.array([0.5, 1.5, -0.7])


def test_branches_closing_over_an_outer_tracer() -> None:
    def f(w: Any) -> Any:
        return snp.sum(shax.cond(w[0] > 0, lambda x: snp.sin(x * w), lambda x: x + w * w, X))

    for w in (W, -W):
        want = np.cos(X * w) * X if w[0] > 0 else 2 * w
        np.testing.assert_allclose(shax.grad(f)(w), want, rtol=1e-12)
        np.testing.assert_allclose(shax.jit(shax.grad(f))(w), want, rtol=1e-12)
    np.testing.assert_allclose(shax.vmap(shax.grad(f))(np.stack([W, -W]))[1], -2 * W)
    np.testing.assert_allclose(shax.grad(lambda w: snp.sum(shax.cond(w[0] > 0, lambda: w * w, lambda: w)))(W), 2 * W)


def test_int_operands_and_outputs_pass_through() -> None:
    def h(x: Any, n: Any) -> Any:
        out = shax.cond(x[0] > 0, lambda x, n: (x * 2.0, n + 1), lambda x, n: (x * x, n), x, n)
        return snp.sum(out[0])

    np.testing.assert_allclose(shax.grad(h, wrt=0)(W, np.int32(3)), np.full(3, 2.0))
    np.testing.assert_allclose(shax.grad(h, wrt=0)(-W, np.int32(3)), -2 * W)
    assert shax.jit(lambda n: shax.cond(n > 2, lambda n: n + 1, lambda n: n, n))(np.int32(3)) == 4


def nested(x: Any) -> Any:
    inner = lambda x: shax.cond(x[1] > 0, snp.sin, snp.cos, x)  # noqa: E731
    return snp.sum(shax.cond(x[0] > 0, inner, lambda x: x**3, x))


@pytest.mark.parametrize("x", [W, -W, np.array([1.0, -1.0, 0.5])], ids=["sin", "cube", "cos"])
def test_nested_conds_first_and_second_derivatives(x: np.ndarray) -> None:
    t = RNG.standard_normal(3)
    check_directional_derivative(nested, [x], [t], [np.dot(shax.grad(nested)(x), t)], what="nested cond's grad")

    def total(x: Any) -> Any:
        return snp.sum(shax.grad(nested)(x))

    second = shax.grad(total)(x)
    check_directional_derivative(total, [x], [t], [np.dot(second, t)], what="nested cond's second derivative")
    np.testing.assert_allclose(shax.jit(shax.vmap(shax.grad(nested)))(x[None]), shax.grad(nested)(x)[None])
