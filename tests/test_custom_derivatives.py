"""`shax.custom_jvp` and `shax.custom_vjp` (JAX's API): the rule is what grad, jvp, vjp,
vmap of them, jit and higher derivatives use, and printed programs show where it entered."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from typeclasses import cos, exp, log, reduce_sum, sin


@shax.custom_jvp
def log1pexp(x):
    return log(1.0 + exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return log1pexp(x), dx * (1.0 - 1.0 / (1.0 + exp(x)))


# e^1000 overflows f64: log(1 + e^x) is ∞ there, as numpy computes it.
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in exp:RuntimeWarning")
X = np.array([-1000.0, -1.0, 0.0, 2.0, 1000.0])
with np.errstate(over="ignore"):
    SIGMOID = 1.0 / (1.0 + np.exp(-X))


def total(f):
    return lambda x: reduce_sum(f(x), [0])


def test_a_safe_log1pexp_has_finite_gradients_where_the_naive_one_has_none() -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        naive = shax.grad(total(lambda x: log(1.0 + exp(x))))(X)
    assert np.isnan(naive[-1])  # ∞ / ∞
    np.testing.assert_allclose(shax.grad(total(log1pexp))(X), SIGMOID, rtol=1e-15)
    np.testing.assert_allclose(log1pexp(X)[:-1], np.log1p(np.exp(X[:-1])))


def test_every_transform_uses_the_rule() -> None:
    out, tangent = shax.jvp(log1pexp, (X,), (np.full(5, 2.0),))
    np.testing.assert_allclose(tangent, 2.0 * SIGMOID, rtol=1e-15)
    _, vjp_fn = shax.vjp(log1pexp, X)
    np.testing.assert_allclose(vjp_fn(np.ones(5))[0], SIGMOID, rtol=1e-15)
    np.testing.assert_allclose(shax.vmap(shax.grad(log1pexp))(X), SIGMOID, rtol=1e-15)
    np.testing.assert_allclose(shax.grad(total(shax.vmap(log1pexp)))(X), SIGMOID, rtol=1e-15)
    np.testing.assert_allclose(shax.jit(shax.grad(total(log1pexp)))(X), SIGMOID, rtol=1e-15)


def test_a_rule_written_with_typeclass_functions_differentiates_again() -> None:
    second = shax.vmap(shax.grad(shax.grad(log1pexp)))(X[1:4])
    np.testing.assert_allclose(second, SIGMOID[1:4] * (1 - SIGMOID[1:4]), rtol=1e-12)


def test_the_rule_not_the_function_is_differentiated() -> None:
    @shax.custom_jvp
    def f(x):
        return sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):  # deliberately not cos: the rule wins
        (x,), (dx,) = primals, tangents
        return f(x), 3.0 * dx

    np.testing.assert_allclose(shax.grad(total(f))(X), np.full(5, 3.0))
    assert re.search(r"= custom_jvp f\w* f_jvp x0", str(shax.xpr(total(f), X)))
    # The rule's definitions are called where it entered.
    assert "call dlog1pexp_jvpt" in str(shax.xpr(shax.grad(total(log1pexp)), X))


def test_nondiff_argnums_pass_python_values_to_the_function_and_first_to_the_rule() -> None:
    def scaled(k, x):
        return x * k

    scaled = shax.custom_jvp(scaled, nondiff_argnums=(0,))

    @scaled.defjvp
    def scaled_jvp(k, primals, tangents):
        (x,), (dx,) = primals, tangents
        return scaled(k, x), dx * (2.0 * k)  # twice the true derivative

    np.testing.assert_allclose(shax.grad(lambda x: reduce_sum(scaled(3.0, x), [0]))(X), np.full(5, 6.0))
    np.testing.assert_allclose(scaled(3.0, X), 3.0 * X)


@shax.custom_vjp
def clip_gradient(x, lo, hi):
    return x


def clip_fwd(x, lo, hi):
    return x, (lo, hi)


def clip_bwd(res, g):
    lo, hi = res
    return (snp.clip(g, lo, hi), None, None)


clip_gradient.defvjp(clip_fwd, clip_bwd)


def test_gradient_clipping_with_custom_vjp() -> None:
    def f(x):
        return reduce_sum(sin(clip_gradient(x, -1.0, 1.0)) * 10.0, [0])  # the cotangent at x is 10 cos x

    expected = np.clip(10.0 * np.cos(X), -1.0, 1.0)
    np.testing.assert_allclose(shax.grad(f)(X), expected)
    np.testing.assert_allclose(shax.vmap(shax.grad(lambda x: sin(clip_gradient(x, -1.0, 1.0)) * 10.0))(X), expected)
    np.testing.assert_allclose(shax.jit(shax.grad(f))(X), expected)
    assert "custom_vjp clip_gradient" in str(shax.xpr(f, X))
    assert "call clip_bwd" in str(shax.xpr(shax.grad(f), X))
    with pytest.raises(shax.ShaxError, match="bwd is not linear in the cotangents"):
        shax.jvp(lambda x: clip_gradient(x, -1.0, 1.0), (X,), (X,))


@shax.custom_vjp
def pair(x, y):
    s = sin(x)
    return {"prod": s * y, "diff": s - y}


def pair_fwd(x, y):
    return pair(x, y), (cos(x), sin(x), y)


def pair_bwd(res, cts):
    c, s, y = res
    return (c * (y * cts["prod"] + cts["diff"]), s * cts["prod"] - cts["diff"])


pair.defvjp(pair_fwd, pair_bwd)


def plain_pair(x, y):
    s = sin(x)
    return {"prod": s * y, "diff": s - y}


def test_a_linear_bwd_with_pytree_outputs_agrees_with_autodiff_in_every_mode() -> None:
    x, y = np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 1.0, 4)

    def loss(f):
        return lambda x, y: reduce_sum(f(x, y)["prod"] * 2.0 + f(x, y)["diff"] ** 2, [0])

    for got, want in zip(shax.grad(loss(pair), wrt=(0, 1))(x, y), shax.grad(loss(plain_pair), wrt=(0, 1))(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    # Forward mode through bwd's transpose, since this bwd is linear in the cotangents.
    got = shax.jvp(pair, (x, y), (y, x))[1]
    want = shax.jvp(plain_pair, (x, y), (y, x))[1]
    np.testing.assert_allclose(got["prod"], want["prod"], rtol=1e-14)
    batched = shax.vmap(shax.grad(loss(pair)))(np.stack([x, 2 * x]), np.stack([y, y]))
    want_x, want_y = shax.grad(loss(plain_pair))(2 * x, y)
    np.testing.assert_allclose(batched[0][1], want_x, rtol=1e-14)
    np.testing.assert_allclose(batched[1][1], want_y, rtol=1e-14)
    xs, ys = np.stack([x, 2 * x]), np.stack([y, y])
    grad_of_vmap = shax.grad(lambda xs, ys: reduce_sum(shax.vmap(lambda a, b: pair(a, b)["prod"])(xs, ys), [0, 1]))
    np.testing.assert_allclose(grad_of_vmap(xs, ys)[0], np.cos(xs) * ys, rtol=1e-14)  # d Σ sin x · y / dx


@typeguard.suppress_type_checks  # as users run shax: the front end's own checks
def test_errors_name_the_function() -> None:
    @shax.custom_jvp
    def no_rule(x):
        return x

    with pytest.raises(shax.ShaxError, match="custom_jvp no_rule: no rule; define one with no_rule.defjvp"):
        shax.grad(total(no_rule))(X)

    @shax.custom_vjp
    def wrong(x):
        return x * 2.0

    wrong.defvjp(lambda x: (wrong(x), ()), lambda res, g: (g, g))  # two cotangents for one argument
    with pytest.raises(shax.ShaxError, match="custom_vjp wrong: its bwd must return a tuple of 1 cotangent"):
        shax.grad(total(wrong))(X)

    @shax.custom_vjp
    def badly_typed(x):
        return x * 2.0

    badly_typed.defvjp(lambda x: (badly_typed(x), ()), lambda res, g: (reduce_sum(g, [0]),))
    with pytest.raises(shax.ShaxError, match=r"its bwd's cotangent 0 is f64\[\], but argument 0 is f64\[5\]"):
        shax.grad(total(badly_typed))(X)
    with pytest.raises(shax.ShaxError, match="nondiff_argnums must be non-negative ints"):
        shax.custom_jvp(lambda x: x, nondiff_argnums=(-1,))


def test_on_numpy_values_the_function_just_runs() -> None:
    np.testing.assert_allclose(log1pexp(np.array([1.0, 2.0])), np.log1p(np.exp([1.0, 2.0])))
    assert clip_gradient(np.float64(3.0), -1.0, 1.0) == 3.0
    program = shax.xpr(total(log1pexp), X[:-1])
    np.testing.assert_allclose(shax.evaluate(program, X[:-1])[0], np.sum(np.log1p(np.exp(X[:-1]))))


# JAX 0.10.2's jax.grad of its documented log1pexp (f32) at these points, for comparison.
X100 = np.array([-100.0, -1.0, 0.0, 2.0, 100.0], np.float32)
JAX_GRAD_AT_X100 = [0.0, 0.26894140243530273, 0.5, 0.8807970881462097, 1.0]


def test_in_f32_at_plus_minus_100_the_safe_gradient_is_finite_and_matches_jax() -> None:
    with np.errstate(over="ignore", invalid="ignore"):
        naive = shax.grad(total(lambda x: log(1.0 + exp(x))))(X100)
    assert np.isnan(naive[-1])  # e^100 overflows f32: ∞ / ∞
    safe = shax.grad(total(log1pexp))(X100)
    assert safe.dtype == np.float32 and np.all(np.isfinite(safe))
    np.testing.assert_array_equal(safe, np.array(JAX_GRAD_AT_X100, np.float32))
    np.testing.assert_array_equal(shax.jit(shax.grad(total(log1pexp)))(X100), safe)


def test_nondiff_argnums_of_custom_vjp_give_bwd_the_python_value_first() -> None:
    def clip(threshold, x):
        return x

    clip = shax.custom_vjp(clip, nondiff_argnums=(0,))
    seen = []

    def clip_bwd(threshold, res, g):
        seen.append(threshold)  # a Python float, not a traced value
        return (snp.clip(g, -threshold, threshold),)

    clip.defvjp(lambda threshold, x: (x, ()), clip_bwd)
    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(shax.grad(lambda x: reduce_sum(clip(0.5, x) * 3.0, [0]))(x), np.full(3, 0.5))
    np.testing.assert_allclose(shax.grad(lambda x: reduce_sum(clip(4.0, x) * 3.0, [0]))(x), np.full(3, 3.0))
    np.testing.assert_allclose(shax.vmap(shax.grad(lambda x: clip(0.5, x) * 3.0))(x), np.full(3, 0.5))
    assert seen and all(type(t) is float for t in seen)
    np.testing.assert_allclose(clip(0.5, x), x)


def test_second_order_through_a_bwd_written_with_typeclass_functions() -> None:
    @shax.custom_vjp
    def f(x):
        return sin(x)

    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * x * x,))  # deliberately x², not cos x
    x = np.array([-1.0, 0.5, 2.0])
    np.testing.assert_allclose(shax.vmap(shax.grad(f))(x), x * x)
    np.testing.assert_allclose(shax.vmap(shax.grad(shax.grad(f)))(x), 2.0 * x)  # d/dx of the bwd's x²


@shax.custom_jvp
def scaled_pair(p):
    return {"s": sin(p["a"]) * p["b"][0], "t": p["b"][1]}


@scaled_pair.defjvp
def scaled_pair_jvp(primals, tangents):
    (p,), (dp,) = primals, tangents
    ds = cos(p["a"]) * dp["a"] * p["b"][0] + sin(p["a"]) * dp["b"][0]
    return scaled_pair(p), {"s": ds, "t": dp["b"][1] * 5.0}  # deliberately 5×, not the identity, for "t"


def test_pytree_arguments_and_outputs_of_custom_jvp() -> None:
    x = np.array([-1.0, 0.5, 2.0])
    p = {"a": x, "b": (2.0 * x, 3.0 * x)}
    got = shax.grad(lambda p: reduce_sum(scaled_pair(p)["s"] + scaled_pair(p)["t"], [0]))(p)
    np.testing.assert_allclose(got["a"], np.cos(x) * 2.0 * x)
    np.testing.assert_allclose(got["b"][0], np.sin(x))
    np.testing.assert_allclose(got["b"][1], np.full(3, 5.0))
    out = shax.jit(scaled_pair)(p)
    np.testing.assert_allclose(out["s"], np.sin(x) * 2.0 * x)
    np.testing.assert_allclose(out["t"], 3.0 * x)
    xs = np.stack([x, -x])
    batched = shax.vmap(shax.grad(lambda p: reduce_sum(scaled_pair(p)["s"] + scaled_pair(p)["t"], [0])))(
        {"a": xs, "b": (2.0 * xs, 3.0 * xs)}
    )
    np.testing.assert_allclose(batched["a"], np.cos(xs) * 2.0 * xs)
    np.testing.assert_allclose(batched["b"][1], np.full((2, 3), 5.0))


@typeguard.suppress_type_checks
def test_errors_carry_the_users_line() -> None:
    @shax.custom_vjp
    def no_bwd(x):
        return x

    line = sys._getframe().f_lineno + 2  # the grad call's
    with pytest.raises(shax.ShaxError, match=rf"custom_vjp no_bwd: no rule.*test_custom_derivatives.py:{line}"):
        shax.grad(lambda x: reduce_sum(no_bwd(x), [0]))(X)

    @shax.custom_vjp
    def badly_typed(x):
        return x * 2.0

    badly_typed.defvjp(lambda x: (badly_typed(x), ()), lambda res, g: (reduce_sum(g, [0]),))
    line = sys._getframe().f_lineno + 3  # the grad call's
    pattern = rf"badly_typed: its bwd's cotangent 0 is f64\[\], but argument 0 is f64\[5\].*derivatives.py:{line}"
    with pytest.raises(shax.ShaxError, match=pattern):
        shax.grad(lambda x: reduce_sum(badly_typed(x), [0]))(X)


@typeguard.suppress_type_checks
def test_a_rule_giving_the_wrong_types_is_an_error_naming_the_function() -> None:
    @shax.custom_jvp
    def summed_tangent(x):
        return sin(x)

    summed_tangent.defjvp(lambda p, t: (summed_tangent(p[0]), reduce_sum(t[0], [0])))
    pattern = (
        r"custom_jvp summed_tangent: its rule's output tangent 0 is f64\[\], but the function's output 0 is f64\[5\]"
    )
    with pytest.raises(shax.ShaxError, match=pattern):
        shax.grad(total(summed_tangent))(X)

    @shax.custom_vjp
    def text(x):
        return x

    line = sys._getframe().f_lineno + 1  # the bwd's
    text.defvjp(lambda x: (x, ()), lambda res, g: ("not a tensor",))
    with pytest.raises(shax.ShaxError, match=rf"custom_vjp text: its bwd: .*str.*derivatives.py:{line}\)"):
        shax.grad(total(text))(X)
