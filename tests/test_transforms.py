"""The function transforms: grad, value_and_grad, vjp, jvp, linearize and xpr — their
conventions (JAX's), nesting without perturbation confusion, pytrees, wrt, errors,
caching, and properties over generated programs against finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from reverse_mode import CT, DFT_CT, F_X, X, assert_f32_close, inner, medium, rejecting_rough_points, scale

import shax
from shax import f32, f64, passes
from shax.core.ir import Definition
from shax.testing.numeric import check_directional_derivative
from shax.testing.strategies import Program, programs
from typeclasses import cos, dot, exp, reduce_sum, sin, tanh


def f(x: Any, y: Any) -> Any:
    z = x + y
    return sin(z) * cos(z)


def foo(x: Any) -> Any:
    return x * (x + 3.0)


def derivative(fn: Any, x: Any) -> Any:
    """autodidax2's derivative, through jvp."""
    return shax.jvp(fn, (x,), (1.0,))[1]


# The numbers -----------------------------------------------------------------------


def test_grad_of_the_descent_function() -> None:
    dx, dy = shax.grad(f)(0.5, -0.75)
    np.testing.assert_allclose([dx, dy], [np.cos(-0.5)] * 2, rtol=1e-6)
    assert np.asarray(dx).dtype == np.float32


def test_grad_of_grad_of_sin() -> None:
    np.testing.assert_allclose(shax.grad(shax.grad(sin))(1.0), -np.sin(1.0), rtol=1e-6)


def test_nested_grads_give_every_derivative_of_foo() -> None:
    fn, got = foo, []
    for _ in range(5):
        got.append(float(fn(2.0)))
        fn = shax.grad(fn)
    assert got == [10.0, 7.0, 2.0, 0.0, 0.0]


def test_nested_jvps_give_every_derivative_of_foo() -> None:
    def nth_order_derivative(n: int, fn: Any, x: Any) -> Any:
        return fn(x) if n == 0 else derivative(lambda x: nth_order_derivative(n - 1, fn, x), x)

    assert [float(nth_order_derivative(n, foo, 2.0)) for n in range(5)] == [10.0, 7.0, 2.0, 0.0, 0.0]


@pytest.mark.parametrize("inner_derivative", ["jvp", "grad"])
def test_no_perturbation_confusion(inner_derivative: str) -> None:
    """A closed-over outer tracer is a constant of the inner transform."""

    def d(fn: Any, x: Any) -> Any:
        return derivative(fn, x) if inner_derivative == "jvp" else shax.grad(fn)(x)

    def outer(x: Any) -> Any:
        def g(y: Any) -> Any:
            return x

        return x * d(g, 0.0)

    assert float(d(outer, 0.0)) == 0.0
    # And a closure that does use the outer variable: d/dx (x * d/dy (x * y)) = 2x.
    assert float(d(lambda x: x * d(lambda y: x * y, 1.0), 3.0)) == 6.0


# Conventions -----------------------------------------------------------------------------


def test_wrt_picks_parameters_by_index_and_name() -> None:
    def h(a: Any, b: Any, c: Any) -> Any:
        return a * b * exp(c)

    args = (2.0, 3.0, 0.0)
    assert shax.grad(h, wrt=1)(*args) == 2.0
    assert shax.grad(h, wrt="c")(*args) == 6.0
    assert shax.grad(h, wrt=("c", 0))(*args) == (6.0, 3.0)
    assert shax.grad(h, wrt=[2])(*args) == (6.0,)
    assert shax.grad(h)(*args) == (3.0, 2.0, 6.0)


def test_default_wrt_is_every_float_parameter() -> None:
    def h(x: Any, n: Any) -> Any:
        return reduce_sum(x * x, axes=[0]) * 2.0

    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_array_equal(shax.grad(h)(x, np.int32(3)), 4 * x)  # one float parameter: bare


def test_pytree_arguments_get_pytree_gradients() -> None:
    def loss(params: Any, xs: Any) -> Any:
        hidden = tanh(dot(xs, params["w"]) + params["b"])
        return reduce_sum(hidden * hidden, axes=[0, 1]) + params["extra"][0] * params["extra"][1][0]

    rng = np.random.default_rng(0)
    params = {
        "w": rng.standard_normal((3, 2)),
        "b": rng.standard_normal(2),
        "extra": [np.float64(2.0), (np.float64(5.0), np.int32(1))],
    }
    xs = rng.standard_normal((4, 3))
    grads = shax.grad(loss, wrt=0)(params, xs)
    assert set(grads) == {"w", "b", "extra"} and isinstance(grads["extra"], list)
    assert grads["extra"][0] == 5.0 and grads["extra"][1][0] == 2.0
    assert grads["extra"][1][1] == 0 and np.asarray(grads["extra"][1][1]).dtype == np.int32
    hidden = np.tanh(xs @ params["w"] + params["b"])
    dpre = 2 * hidden * (1 - hidden**2)
    np.testing.assert_allclose(grads["w"], xs.T @ dpre, rtol=1e-12)
    np.testing.assert_allclose(grads["b"], dpre.sum(0), rtol=1e-12)


def test_value_and_grad() -> None:
    value, grads = shax.value_and_grad(f)(0.5, -0.75)
    np.testing.assert_allclose(value, np.sin(-0.25) * np.cos(-0.25), rtol=1e-6)
    np.testing.assert_allclose(grads, [np.cos(-0.5)] * 2, rtol=1e-6)
    value, g = shax.value_and_grad(foo)(2.0)
    assert (value, g) == (10.0, 7.0)


def test_vjp_reproduces_the_original_numbers() -> None:
    out, vjp_fn = shax.vjp(medium, *X)
    assert_f32_close(out, F_X)
    cts = vjp_fn(CT[0])
    assert isinstance(cts, tuple) and len(cts) == 2
    assert_f32_close(cts, DFT_CT)


def test_vjp_jvp_linearize_on_pytrees() -> None:
    def h(p: Any) -> Any:
        return {"s": sin(p[0]) * p[1], "c": cos(p[0])}

    p = [np.array([0.1, 0.2]), np.array([3.0, 4.0])]
    dp = [np.array([1.0, 0.5]), np.array([0.25, -1.0])]
    out, tangent = shax.jvp(h, (p,), (dp,))
    expected_s = np.cos(p[0]) * dp[0] * p[1] + np.sin(p[0]) * dp[1]
    np.testing.assert_allclose(tangent["s"], expected_s)
    np.testing.assert_allclose(tangent["c"], -np.sin(p[0]) * dp[0])
    out2, f_jvp = shax.linearize(h, p)
    np.testing.assert_allclose(out2["s"], out["s"])
    np.testing.assert_allclose(f_jvp(dp)["s"], expected_s)
    _, vjp_fn = shax.vjp(h, p)
    ct = {"s": np.array([1.0, 2.0]), "c": np.array([-1.0, 0.5])}
    (ct_p,) = vjp_fn(ct)
    assert isinstance(ct_p, list)
    np.testing.assert_allclose(inner(ct_p, dp), inner([ct["c"], ct["s"]], [tangent["c"], tangent["s"]]))


def test_inputs_that_do_not_reach_the_output_get_zeros() -> None:
    assert shax.grad(lambda x, y: x * 2.0)(1.0, np.float64(3.0)) == (2.0, 0.0)
    _, vjp_fn = shax.vjp(lambda x, y: x, np.ones(2), np.ones(3))
    np.testing.assert_array_equal(vjp_fn(np.ones(2))[1], np.zeros(3))


def test_transforms_work_inside_traces() -> None:
    """grad inside a traced function inlines its definition into the outer trace."""
    defn = shax.xpr(lambda x: shax.grad(sin)(x) * 2.0, f32[()])
    assert [b.prim.name for b in defn.bindings if b.args] == ["cos", "mul"]


# xpr ---------------------------------------------------------------------------------


def assert_clean(defn: Definition) -> None:
    assert passes.dce(defn) == defn, "dead bindings"
    assert len(passes.cse(defn).bindings) == len(defn.bindings), "duplicated bindings"
    shax.stages.check_types(defn)


@pytest.mark.parametrize(
    ("fn", "arg_types"),
    [
        (shax.grad(f), [f32[()]] * 2),
        (shax.grad(shax.grad(sin)), [f32[()]]),
        (shax.grad(shax.grad(shax.grad(foo))), [f32[()]]),
        (shax.value_and_grad(f), [f32[()]] * 2),
        (lambda x, y: shax.jvp(f, (x, y), (1.0, 0.0)), [f32[()]] * 2),
        (lambda x, y: shax.vjp(f, x, y)[1](1.0), [f32[()]] * 2),
        (shax.grad(lambda x: reduce_sum(tanh(dot(x, x)), axes=[0, 1])), [f32[3, 3]]),
    ],
    ids=["grad", "grad2", "grad3", "value_and_grad", "jvp", "vjp", "matrix"],
)
def test_xpr_of_transformed_functions_is_clean(fn: Any, arg_types: list[shax.TensorType]) -> None:
    assert_clean(shax.xpr(fn, *arg_types))


def test_xpr_of_grad_of_sin_is_cos() -> None:
    assert str(shax.xpr(shax.grad(sin), 1.0)).splitlines()[1:] == [
        "  let x0 :: f32[] = arg0",
        "      x1 :: f32[] = cos x0",
        "  in [x1]",
    ]


def test_xpr_inside_a_trace_refuses_closed_over_tracers() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"uses 1 value\(s\) traced by an enclosing trace"):
        shax.grad(lambda x: shax.xpr(lambda y: x * y, f32[()]).bindings and x)(1.0)


def test_xpr_takes_values_types_and_pytrees() -> None:
    defn = shax.xpr(lambda p: p["a"] * p["b"], {"a": np.ones(3), "b": f64[3]})
    assert defn.arg_types == (f64[3], f64[3])


# Caching ------------------------------------------------------------------------------


def test_a_transformed_function_is_traced_once_per_argument_structure() -> None:
    calls = []

    def h(x: Any, y: Any) -> Any:
        calls.append(1)
        return reduce_sum(x * y, axes=[0])

    g = shax.grad(h)
    for k in range(3):
        g(np.ones(3, np.float32) * k, np.ones(3, np.float32))
    assert len(calls) == 1
    g(np.ones(4, np.float32), np.ones(4, np.float32))  # new types: traced again
    assert len(calls) == 2
    g(np.ones(4), np.ones(4))  # new dtype
    assert len(calls) == 3
    shax.grad(h)(np.ones(4), np.ones(4))  # the cache is per function, not per grad object
    assert len(calls) == 3
    for k in range(3):
        shax.jvp(h, (np.ones(2), np.ones(2)), (np.ones(2), np.ones(2) * k))
        shax.vjp(h, np.ones(2), np.ones(2) * k)
    assert len(calls) == 5


def test_a_rebound_closure_variable_is_seen() -> None:
    scale_ = 2.0

    def h(x: Any) -> Any:
        return x * scale_

    g = shax.grad(h)
    assert g(1.0) == 2.0
    scale_ = 3.0  # noqa: F841 - read by h through its closure
    assert g(1.0) == 3.0


# Errors -------------------------------------------------------------------------------


def test_grad_of_a_non_scalar_output() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"grad: f must return a scalar float.*f32\[3\].*reduce_sum"):
        shax.grad(lambda x: x * 2.0)(np.ones(3, np.float32))
    with pytest.raises(shax.ShaxTypeError, match=r"returns tuple \(f32\[\], f32\[\]\)"):
        shax.grad(lambda x: (x, x))(1.0)
    with pytest.raises(shax.ShaxTypeError, match=r"returns i32\[\]"):
        shax.grad(lambda x, n: n, wrt=0)(1.0, 2)


def test_wrt_naming_a_missing_parameter_lists_them() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"f has no parameter 'z' \(parameters: 0: x, 1: y\)"):
        shax.grad(f, wrt="z")(1.0, 2.0)
    with pytest.raises(shax.ShaxValueError, match=r"wrt=2 is out of range"):
        shax.grad(f, wrt=2)(1.0, 2.0)
    with pytest.raises(shax.ShaxValueError, match="names a parameter twice"):
        shax.grad(f, wrt=(0, "x"))(1.0, 2.0)
    with pytest.raises(shax.ShaxTypeError, match="wrt must be an int"):
        shax.grad(f, wrt=1.5)


def test_wrt_naming_an_integer_parameter_says_why() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"parameter n \(i32\[\]\).*only f32 and f64.*2\.0, not 2"):
        shax.grad(lambda x, n: x * 2.0, wrt="n")(1.0, 2)
    with pytest.raises(shax.ShaxTypeError, match="no float parameter"):
        shax.grad(lambda n: n * 2)(2)


def test_tangents_must_match_the_primals() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"jvp: the tangents must have the structure.*expected \(\*, \*\)"):
        shax.jvp(f, (1.0, 2.0), (1.0,))
    with pytest.raises(shax.ShaxTypeError, match="primals and tangents must be tuples"):
        shax.jvp(f, 1.0, 1.0)
    _, vjp_fn = shax.vjp(f, 1.0, 2.0)
    with pytest.raises(shax.ShaxTypeError, match=r"has type f32\[2\], but f32\[\] was declared"):
        vjp_fn(np.ones(2, np.float32))


def test_arguments_by_keyword_take_their_positions() -> None:
    assert shax.grad(f)(1.0, y=2.0) == shax.grad(f)(1.0, 2.0)
    with pytest.raises(shax.ShaxTypeError, match=r"grad: f got two values for its parameter x"):
        shax.grad(f)(1.0, x=2.0)


def test_errors_point_at_the_caller() -> None:
    with pytest.raises(shax.ShaxError, match=r"test_transforms\.py:\d+"):
        shax.grad(f, wrt="z")(1.0, 2.0)


# Properties over generated programs ------------------------------------------------------


def scalar_loss(program: Program, rng: np.random.Generator) -> Any:
    """A scalar function of the program's arguments: its outputs weighted at random."""
    weights = None

    def loss(*args: Any) -> Any:
        nonlocal weights
        result = program.fn(*args)
        outputs = result if isinstance(result, tuple) else (result,)
        if weights is None:
            weights = [rng.standard_normal(np.shape(o)) for o in outputs]
        terms = [reduce_sum(o * w, axes=list(range(np.ndim(w)))) for o, w in zip(outputs, weights)]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    loss(*program.args)  # fix the weights
    return loss


def as_tuple(gradients: Any, count: int) -> tuple[Any, ...]:
    return gradients if count > 1 else (gradients,)


@given(programs(dtype=f64, smooth=True))
def test_grad_agrees_with_finite_differences(program: Program) -> None:
    rng = np.random.default_rng(0)
    loss = scalar_loss(program, rng)
    grads = as_tuple(shax.grad(loss)(*program.args), len(program.args))
    u = [rng.standard_normal(np.shape(a)) for a in program.args]
    with rejecting_rough_points():
        check_directional_derivative(loss, program.args, u, [inner(grads, u)], what="⟨grad, u⟩")


@given(programs(dtype=f64))
def test_vjp_is_the_transpose_of_jvp(program: Program) -> None:
    rng = np.random.default_rng(1)
    tangents = tuple(rng.standard_normal(np.shape(a)) for a in program.args)
    out, tangent_out = shax.jvp(program.fn, program.args, tangents)
    out2, vjp_fn = shax.vjp(program.fn, *program.args)
    outs, touts = (out, tangent_out) if isinstance(out, tuple) else ((out,), (tangent_out,))
    cts = tuple(rng.standard_normal(np.shape(o)) for o in outs)
    pulled = vjp_fn(cts if isinstance(out, tuple) else cts[0])
    lhs, rhs = inner(pulled, tangents), inner(cts, touts)
    np.testing.assert_allclose(lhs, rhs, rtol=1e-9, atol=1e-9 * scale([*pulled, *touts, *cts, *tangents]))
    for a, b in zip(out2 if isinstance(out, tuple) else (out2,), outs):
        np.testing.assert_array_equal(a, b)


@given(programs(dtype=f64, smooth=True, max_steps=8))
def test_grad_of_grad_agrees_with_finite_differences_of_grad(program: Program) -> None:
    """⟨∇⟨∇loss, v⟩, u⟩ (grad of grad: a Hessian-vector product) = d/dh ⟨∇loss(x + h·u), v⟩."""
    rng = np.random.default_rng(2)
    loss = scalar_loss(program, rng)
    count = len(program.args)
    gradient = shax.grad(loss)
    v = [rng.standard_normal(np.shape(a)) for a in program.args]

    def along_v(*args: Any) -> Any:
        terms = [reduce_sum(g * w, axes=list(range(np.ndim(w)))) for g, w in zip(as_tuple(gradient(*args), count), v)]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total

    hv = as_tuple(shax.grad(along_v)(*program.args), count)
    u = [rng.standard_normal(np.shape(a)) for a in program.args]
    with rejecting_rough_points():
        check_directional_derivative(along_v, program.args, u, [inner(hv, u)], what="⟨∇⟨∇loss, v⟩, u⟩")


def test_a_python_float_argument_is_weakly_typed() -> None:
    # JAX's convention: beside f64 arrays, 2.0 is f64; with nothing else to decide, f32.
    def f(x: Any, c: Any) -> Any:
        return x * c

    x64 = np.array([1.5, -0.5])
    gx, gc = shax.grad(lambda x, c: reduce_sum(f(x, c), [0]))(x64, 2.0)
    assert gx.dtype == np.float64 and np.asarray(gc).dtype == np.float64
    np.testing.assert_array_equal(gx, [2.0, 2.0])
    assert shax.jit(f)(x64, 2.0).dtype == np.float64
    assert shax.vmap(f, in_axes=(0, None))(x64, 2.0).dtype == np.float64
    assert np.asarray(shax.jit(f)(np.float32(1.5), 2.0)).dtype == np.float32
    assert np.asarray(shax.grad(f)(1.5, 2.0)[1]).dtype == np.float32
