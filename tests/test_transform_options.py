"""JAX's transform options: `argnums` and `has_aux` (grad, value_and_grad, vjp, jvp,
linearize), `jit`'s static arguments, keyword arguments, `jacfwd` / `jacrev` / `hessian`
against hand-derived matrices and JAX's layout, and `stop_gradient` in every transform."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from typeguard import suppress_type_checks

import shax
from shax import f64
from typeclasses import dot, dot_general, reduce_sum, sin, tanh

RNG = np.random.default_rng(0)
A = RNG.standard_normal((2, 3))
M = RNG.standard_normal((3, 3))
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)


def assert_tree_close(got: Any, want: Any, rtol: float = 1e-12) -> None:
    """The same nesting (containers and their keys), and the leaves close with equal shapes."""
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), (got, want)
        for k in want:
            assert_tree_close(got[k], want[k], rtol)
    elif isinstance(want, (tuple, list)):
        assert type(got) is type(want) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            assert_tree_close(g, w, rtol)
    else:
        assert np.shape(got) == np.shape(want), (np.shape(got), np.shape(want))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-13)


# Jacobians and Hessians --------------------------------------------------------------------


def a_tanh(x: Any) -> Any:
    return dot(A, tanh(x))


def quadratic_and_sines(x: Any) -> Any:
    return reduce_sum(x * dot(M, x), [0]) + reduce_sum(sin(x), [0])


@pytest.mark.parametrize("jacobian", [shax.jacfwd, shax.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobian_of_a_matrix_times_tanh(jacobian: Any) -> None:
    # d(A tanh x)/dx = A diag(1 − tanh² x)
    assert_tree_close(jacobian(a_tanh)(X), A * (1 - np.tanh(X) ** 2))


def test_hessian_of_a_quadratic_form_plus_sines() -> None:
    # ∇²(x·Mx + Σ sin x) = M + Mᵀ − diag(sin x)
    assert_tree_close(shax.hessian(quadratic_and_sines)(X), M + M.T - np.diag(np.sin(X)))


def test_jacobian_of_a_scalar_function_of_a_scalar() -> None:
    assert shax.jacfwd(lambda x: x * x * x)(2.0) == shax.jacrev(lambda x: x * x * x)(2.0) == 12.0
    assert np.shape(shax.hessian(lambda x: x * x * x)(2.0)) == ()
    assert shax.hessian(lambda x: x * x * x)(2.0) == 12.0


def outer(x: Any) -> Any:
    return dot_general(x, x, ((), (), (), ()))


def test_the_layout_is_output_shape_then_input_shape() -> None:
    # d(x xᵀ)_ij / dx_k = δ_ik x_j + x_i δ_jk
    eye = np.eye(3)
    want = np.einsum("ik,j->ijk", eye, X) + np.einsum("i,jk->ijk", X, eye)
    assert_tree_close(shax.jacfwd(outer)(X), want)
    assert_tree_close(shax.jacrev(outer)(X), want)


def pytree_function(p: dict[str, Any], y: Any) -> dict[str, Any]:
    w, (b, c) = p["w"], p["b"]
    return {"u": w * sin(b) * y, "v": (dot(w, c) * reduce_sum(y, [0]), b * b)}


P = {"w": X, "b": (Y, RNG.standard_normal(3))}


@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 1), (1,)])
def test_jacfwd_equals_jacrev_on_pytrees(argnums: Any) -> None:
    forward = shax.jacfwd(pytree_function, argnums=argnums)(P, Y)
    assert_tree_close(shax.jacrev(pytree_function, argnums=argnums)(P, Y), forward)


def test_pytree_jacobians_nest_outputs_then_arguments() -> None:
    jac = shax.jacrev(pytree_function)(P, Y)
    # ∂u/∂w = diag(sin b · y), ∂u/∂b = diag(w cos b · y), ∂u/∂c = 0
    assert_tree_close(jac["u"]["w"], np.diag(np.sin(Y) * Y))
    assert_tree_close(jac["u"]["b"], (np.diag(X * np.cos(Y) * Y), np.zeros((3, 3))))
    # ∂(w·c Σy)/∂w = c Σy, a scalar output: the input's shape
    assert_tree_close(jac["v"][0]["w"], P["b"][1] * Y.sum())
    jac = shax.jacfwd(pytree_function, argnums=(0, 1))(P, Y)
    assert isinstance(jac["v"][1], tuple) and len(jac["v"][1]) == 2
    assert_tree_close(jac["v"][1][1], np.zeros((3, 3)))  # ∂(b²)/∂y
    assert_tree_close(jac["v"][1][0]["b"][0], np.diag(2 * Y))  # ∂(b²)/∂b


def test_hessian_of_pytree_arguments() -> None:
    def f(p: dict[str, Any], y: Any) -> Any:
        return reduce_sum(p["w"] * p["w"] * y, [0]) + reduce_sum(sin(p["b"]), [0])

    h = shax.hessian(f)({"w": X, "b": Y}, Y)
    assert_tree_close(h["w"]["w"], np.diag(2 * Y))
    assert_tree_close(h["b"]["b"], -np.diag(np.sin(Y)))
    assert_tree_close(h["w"]["b"], np.zeros((3, 3)))
    # argnums a tuple: for each argument's leaf, a tuple over the arguments (JAX's nesting)
    h = shax.hessian(f, argnums=(0, 1))({"w": X, "b": Y}, Y)
    assert_tree_close(h[0]["w"][1], np.diag(2 * X))  # ∂²/∂w∂y of w²·y
    assert_tree_close(h[1][0]["w"], np.diag(2 * X))
    assert_tree_close(h[1][1], np.zeros((3, 3)))


def test_the_jacobian_is_one_batched_program() -> None:
    # n tangents, one program: tanh appears once, not once per input element
    text = str(shax.xpr(shax.jacfwd(a_tanh), X))
    assert text.count(" tanh ") == 1
    text = str(shax.xpr(shax.hessian(quadratic_and_sines), X))
    assert text.count(" sin ") == 1


def test_jacobian_errors() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"jacfwd: argnums names parameter x \(i32\[3\]\) of .* no float"):
        shax.jacfwd(lambda x: x * 2)(np.arange(3, dtype=np.int32))
    with pytest.raises(shax.ShaxTypeError, match="jacrev: .* returns a int32 value"):
        shax.jacrev(lambda x: np.arange(3, dtype=np.int32) + 0 * x.shape[0])(X)
    with pytest.raises(shax.ShaxValueError, match="hessian: argnums=3 is out of range"):
        shax.hessian(quadratic_and_sines, argnums=3)(X)
    with pytest.raises(shax.ShaxTypeError, match="jacrev: argnums must be an int or a tuple of ints"):
        shax.jacrev(a_tanh, argnums="x")


def test_jacobians_with_aux() -> None:
    jac, aux = shax.jacfwd(lambda x: (a_tanh(x), {"x": x}), has_aux=True)(X)
    assert_tree_close(jac, A * (1 - np.tanh(X) ** 2))
    assert_tree_close(aux, {"x": X})
    h, aux = shax.hessian(lambda x: (quadratic_and_sines(x), (x * 2.0,)), has_aux=True)(X)
    assert_tree_close(h, M + M.T - np.diag(np.sin(X)))
    assert_tree_close(aux, (2 * X,))


# argnums ----------------------------------------------------------------------------------


def three(x: Any, y: Any, z: Any) -> Any:
    return reduce_sum(x * y * y * sin(z), [0])


def test_argnums_an_int_gives_one_gradient_a_tuple_a_tuple() -> None:
    g = shax.grad(three, argnums=1)(X, Y, X)
    assert_tree_close(g, 2 * X * Y * np.sin(X))
    gs = shax.grad(three, argnums=(2, 0))(X, Y, X)
    assert_tree_close(gs, (X * Y * Y * np.cos(X), Y * Y * np.sin(X)))
    one = shax.grad(three, argnums=(1,))(X, Y, X)
    assert isinstance(one, tuple) and len(one) == 1


def test_negative_argnums_count_from_the_end() -> None:
    assert_tree_close(shax.grad(three, argnums=-1)(X, Y, X), shax.grad(three, argnums=2)(X, Y, X))
    value, grads = shax.value_and_grad(three, argnums=(-3, -2))(X, Y, X)
    assert_tree_close(grads, shax.grad(three, argnums=(0, 1))(X, Y, X))
    assert np.isclose(value, np.sum(X * Y * Y * np.sin(X)))


def test_argnums_errors() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"grad: argnums=3 is out of range: three was called with 3"):
        shax.grad(three, argnums=3)(X, Y, X)
    with pytest.raises(shax.ShaxValueError, match="argnums=-4 is out of range"):
        shax.grad(three, argnums=-4)(X, Y, X)
    with pytest.raises(shax.ShaxValueError, match=r"argnums=\(0, -3\) names a parameter twice"):
        shax.grad(three, argnums=(0, -3))(X, Y, X)
    with pytest.raises(shax.ShaxValueError, match="grad: give wrt or argnums, not both"):
        shax.grad(three, wrt=0, argnums=0)
    with pytest.raises(shax.ShaxTypeError, match="argnums must be an int or a tuple of ints, got 'x'"):
        shax.value_and_grad(three, argnums="x")
    with pytest.raises(shax.ShaxTypeError, match="argnums must be an int or a tuple of ints, got True"):
        shax.grad(three, argnums=True)
    with pytest.raises(shax.ShaxTypeError, match=r"argnums names parameter n \(i32\[3\]\) of .*no float"):
        shax.grad(lambda x, n: reduce_sum(x, [0]), argnums=1)(X, np.arange(3, dtype=np.int32))


def test_wrt_is_unchanged() -> None:
    assert_tree_close(shax.grad(three, wrt="y")(X, Y, X), shax.grad(three, argnums=1)(X, Y, X))
    assert len(shax.grad(three)(X, Y, X)) == 3  # every float parameter by default
    with pytest.raises(shax.ShaxValueError, match="wrt=-1 is out of range"):
        shax.grad(three, wrt=-1)(X, Y, X)


# has_aux -----------------------------------------------------------------------------------


def with_aux(x: Any, y: Any) -> tuple[Any, Any]:
    loss = reduce_sum(sin(x) * y, [0])
    return loss, {"pred": sin(x), "stats": (loss * 2.0, y), "count": np.int32(3)}


def expected_aux(x: Any, y: Any) -> dict[str, Any]:
    loss = np.sum(np.sin(x) * y)
    return {"pred": np.sin(x), "stats": (loss * 2.0, y), "count": 3}


def test_grad_with_aux() -> None:
    g, aux = shax.grad(with_aux, argnums=0, has_aux=True)(X, Y)
    assert_tree_close(g, np.cos(X) * Y)
    assert_tree_close(aux, expected_aux(X, Y))
    assert aux["count"].dtype == np.int32
    grads, aux = shax.grad(with_aux, has_aux=True)(X, Y)
    assert_tree_close(grads, (np.cos(X) * Y, np.sin(X)))


def test_value_and_grad_with_aux_nests_as_jax() -> None:
    (value, aux), g = shax.value_and_grad(with_aux, argnums=1, has_aux=True)(X, Y)
    assert np.isclose(value, np.sum(np.sin(X) * Y))
    assert_tree_close(aux, expected_aux(X, Y))
    assert_tree_close(g, np.sin(X))


def test_vjp_jvp_and_linearize_with_aux() -> None:
    out, vjp_fn, aux = shax.vjp(with_aux, X, Y, has_aux=True)
    assert np.isclose(out, np.sum(np.sin(X) * Y))
    assert_tree_close(aux, expected_aux(X, Y))
    assert_tree_close(vjp_fn(2.0), (2 * np.cos(X) * Y, 2 * np.sin(X)))
    out, tangent, aux = shax.jvp(with_aux, (X, Y), (Y, X), has_aux=True)
    assert np.isclose(tangent, np.sum(np.cos(X) * Y * Y + np.sin(X) * X))
    assert_tree_close(aux, expected_aux(X, Y))
    out, f_jvp, aux = shax.linearize(with_aux, X, Y, has_aux=True)
    assert np.isclose(f_jvp(Y, X), tangent)
    assert_tree_close(aux, expected_aux(X, Y))


def test_aux_is_computed_with_the_gradient_in_one_program() -> None:
    # sin x serves the loss, the aux and (as cos's partner) nothing else: computed once
    text = str(shax.xpr(shax.grad(with_aux, has_aux=True), X, Y))
    assert text.count(" sin ") == 1


def test_has_aux_errors() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"grad: has_aux=True requires .* to return a pair"):
        shax.grad(lambda x: reduce_sum(x, [0]), has_aux=True)(X)
    with pytest.raises(shax.ShaxTypeError, match="vjp: has_aux must be True or False, got 1"), suppress_type_checks():
        shax.vjp(with_aux, X, Y, has_aux=1)
    with pytest.raises(shax.ShaxTypeError, match="must return a scalar float"):
        shax.grad(lambda x: (x, x), has_aux=True)(X)


# jit's static arguments and keyword arguments -------------------------------------------------


def doubling(x: Any, n: int, *, scale: float = 1.0) -> Any:
    TRACED.append((n, scale))
    for _ in range(n):
        x = x * 2.0
    return x * scale


TRACED: list[tuple[int, float]] = []


def test_a_static_int_picks_the_loop_count_and_is_cached() -> None:
    TRACED.clear()
    fast = shax.jit(doubling, static_argnums=1)
    assert fast(1.5, 3) == 12.0
    assert fast(1.5, 3) == 12.0 and fast(2.5, 3) == 20.0
    assert TRACED == [(3, 1.0)]  # the same static value: no retrace
    assert fast(1.5, 2) == 6.0
    assert TRACED == [(3, 1.0), (2, 1.0)]
    assert fast.source(1.5, 3).count("* c") == 3 and fast.source(1.5, 2).count("* c") == 2
    assert fast(1.5, n=2) == 6.0 and len(TRACED) == 2  # by keyword: the same static argument


def test_static_argnames_and_keyword_only_statics() -> None:
    TRACED.clear()
    fast = shax.jit(doubling, static_argnames=("n", "scale"))
    assert fast(1.0, 2, scale=0.5) == 2.0
    assert fast(1.0, n=2, scale=0.5) == 2.0
    assert fast(np.ones(2), 2, scale=0.5).tolist() == [2.0, 2.0]
    assert TRACED == [(2, 0.5), (2, 0.5)]  # a second argument type, not a second value
    assert fast(1.0, 2) == 4.0 and fast(1.0, -1) == 1.0  # negative static_argnums: counted from the end
    assert shax.jit(doubling, static_argnums=-1)(1.0, 1) == 2.0


def test_static_values_are_told_apart_by_type() -> None:
    fast = shax.jit(lambda x, c: x * c, static_argnums=1)
    assert type(fast(np.float32(2.0), 2)) is np.float32
    assert fast(np.float32(2.0), 2.5) == 5.0


def test_unhashable_static_values_are_errors() -> None:
    fast = shax.jit(lambda x, shape: x, static_argnums=1)
    with pytest.raises(shax.ShaxValueError, match="static argument 1 of .* is a list, which is not hashable"):
        fast(1.0, [1, 2])
    with pytest.raises(shax.ShaxValueError, match="static argument 1 .* ndarray"):
        fast(1.0, np.ones(2))
    assert fast(1.0, (1, 2)) == 1.0


def test_static_option_errors() -> None:
    with pytest.raises(shax.ShaxTypeError, match="static_argnums must be an int or a tuple of ints"):
        shax.jit(doubling, static_argnums="n")
    with pytest.raises(shax.ShaxTypeError, match="static_argnames must be a parameter name"):
        shax.jit(doubling, static_argnames=1)
    with pytest.raises(shax.ShaxValueError, match="static_argnames names 'm', which is not a parameter"):
        shax.jit(doubling, static_argnames="m")


def test_keyword_arguments_are_traced_at_their_positions() -> None:
    def f(x: Any, y: Any, z: Any = 2.0) -> Any:
        return reduce_sum(x * y * z, [0])

    assert_tree_close(shax.grad(f)(X, y=Y), shax.grad(f)(X, Y))
    assert_tree_close(shax.grad(f, argnums=1)(X, z=3.0, y=Y), 3.0 * X)
    assert_tree_close(shax.grad(f, wrt="z")(X, Y, z=3.0), np.sum(X * Y))
    fast = shax.jit(f)
    assert np.isclose(fast(X, y=Y), fast(X, Y))
    assert_tree_close(
        shax.vmap(lambda x, w: x * w)(np.ones((2, 3)), w=np.arange(6.0).reshape(2, 3)), np.arange(6.0).reshape(2, 3)
    )
    with pytest.raises(shax.ShaxTypeError, match="grad: f got two values for its parameter x"):
        shax.grad(f)(X, x=Y)
    with pytest.raises(shax.ShaxTypeError, match="jit: f is missing its argument y"):
        fast(X, z=1.0)
    with pytest.raises(shax.ShaxTypeError, match="no parameter w that can be given by position"):
        fast(X, Y, w=1.0)
    with pytest.raises(shax.ShaxTypeError, match="no parameter scale that can be given by position"):
        shax.jit(doubling)(1.0, 2, scale=2.0)  # keyword-only: static_argnames


# stop_gradient -------------------------------------------------------------------------------


def half_square(x: Any) -> Any:
    # Σ stop(x) · x: the gradient is stop(x) = x, half that of Σ x²
    return reduce_sum(shax.stop_gradient(x) * x, [0])


def test_stop_gradient_in_grad_and_jvp() -> None:
    assert_tree_close(shax.grad(half_square)(X), X)
    _, tangent = shax.jvp(half_square, (X,), (Y,))
    assert np.isclose(tangent, np.sum(X * Y))
    assert shax.grad(lambda x: shax.stop_gradient(x * x))(3.0) == 0.0


def test_stop_gradient_in_vmap_and_jit() -> None:
    xs = RNG.standard_normal((4, 3))
    assert_tree_close(shax.vmap(shax.grad(half_square))(xs), xs)
    assert_tree_close(shax.vmap(shax.stop_gradient)(xs), xs)
    assert_tree_close(shax.jit(shax.grad(half_square))(X), X)
    assert_tree_close(shax.grad(shax.jit(half_square))(X), X)  # kept by the jitted program's cleanup
    assert "stop_gradient" not in shax.jit(half_square).source(X)


def test_stop_gradient_inside_hessian() -> None:
    # ∇²Σ stop(x) x² = diag(2 stop(x)) = diag(2x), a third of ∇²Σ x³ = diag(6x)
    h = shax.hessian(lambda x: reduce_sum(shax.stop_gradient(x) * x * x, [0]))(X)
    assert_tree_close(h, np.diag(2 * X))


def test_stop_gradient_on_pytrees_and_other_dtypes() -> None:
    tree = {"a": X, "b": (np.arange(3, dtype=np.int32), 2.0)}
    assert_tree_close(shax.stop_gradient(tree), tree)

    def f(p: dict[str, Any]) -> Any:
        q = shax.stop_gradient(p)
        return reduce_sum(q["w"] * p["w"] + p["b"] * q["b"], [0])

    assert_tree_close(shax.grad(f)({"w": X, "b": Y}), {"w": X, "b": Y})
    text = str(shax.xpr(lambda n: shax.stop_gradient(n) + 1, np.arange(3, dtype=np.int32)))
    assert "stop_gradient" in text
    assert shax.xpr(lambda x: shax.stop_gradient(x), f64[3]).output_types() == (f64[3],)
    with pytest.raises(shax.ShaxError, match="stop_gradient"), suppress_type_checks():
        shax.stop_gradient("not an array")
