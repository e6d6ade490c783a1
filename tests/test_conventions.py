"""Numerical conventions at the edges follow JAX: `pow` at zero bases, zero and integral
exponents, negative bases, infinities and NaN; `max`/`min` at ties (±∞ too) and NaN.
Values, first and second derivatives, through grad, grad(grad), jvp, linearize, jit and
vmap, against numbers measured with JAX 0.10 (float64, `jax_enable_x64`), as written above
each table.

Where shax's convention is not JAX's float `lax.pow`, it is JAX's for an integer exponent:
the derivative of x⁰ at x = 0 is 0 (JAX's float pow gives 0 · 0⁻¹ = NaN), and so are the
second derivatives there, which JAX's integer pow has too (`x ** 0`, `x ** 1`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import shax
from shax.core.types import DType, f32, f64
from typeclasses import max, min, reduce_sum

# numpy warns where these points divide by zero or make a NaN; that is what they are for.
pytestmark = pytest.mark.filterwarnings("ignore:(divide by zero|invalid value|overflow):RuntimeWarning")

inf, nan = np.inf, np.nan

# (x, y, x ** y, ∂x, ∂y, ∂x∂x, ∂x∂y, ∂y∂x, ∂y∂y), where ∂x∂y is jax.grad(jax.grad(f, 0), 1):
#   f = jax.lax.pow; [f(x, y), jax.grad(f, 0)(x, y), jax.grad(f, 1)(x, y),
#   jax.grad(jax.grad(f, 0), 0)(x, y), jax.grad(jax.grad(f, 0), 1)(x, y), ...] at jnp.float64s,
# except the rows marked `integer`: there JAX's float pow gives NaN, from 0 · 0⁻¹ in ∂x at
# x = y = 0, and shax gives JAX's integer-exponent numbers, jax.grad(lambda x: x ** 0)(0.0) = 0
# and jax.grad(jax.grad(lambda x: x ** k))(0.0) = 0 for k = 0, 1; at x = y = 0 the mixed
# derivatives, which an integer exponent does not have, are 0 too.
POW = [
    (2.0, 3.0, 8.0, 12.0, 5.545177444479562, 12.0, 12.317766166719343, 12.317766166719343, 3.843624111345611),
    (0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),  # integer
    (-0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),  # integer
    (0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0),  # integer (∂x∂x: JAX's float pow gives NaN)
    (0.0, 2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0),
    (0.0, 0.5, 0.0, inf, 0.0, -inf, nan, nan, 0.0),
    (0.0, 1.5, 0.0, 0.0, 0.0, inf, 0.0, 0.0, 0.0),
    (0.0, 3.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    (0.0, -1.0, inf, -inf, nan, inf, nan, nan, nan),
    (0.0, -0.5, inf, -inf, nan, inf, nan, nan, nan),
    (2.0, 0.0, 1.0, 0.0, 0.6931471805599453, -0.0, 0.5, 0.5, 0.4804530139182014),
    (1.0, 0.0, 1.0, 0.0, 0.0, -0.0, 1.0, 1.0, 0.0),
    (-2.0, 3.0, -8.0, 12.0, nan, -12.0, nan, nan, nan),
    (-2.0, 0.0, 1.0, -0.0, nan, -0.0, nan, nan, nan),
    (-2.0, 2.0, 4.0, -4.0, nan, 2.0, nan, nan, nan),
    (-2.0, 0.5, nan, nan, nan, nan, nan, nan, nan),
    (inf, 0.0, 1.0, 0.0, inf, -0.0, nan, nan, inf),
    (inf, 2.0, inf, inf, inf, 2.0, inf, nan, inf),
    (nan, 0.0, 1.0, nan, nan, nan, nan, nan, nan),
    (0.0, nan, nan, nan, nan, nan, nan, nan, nan),
    (0.5, inf, 0.0, nan, -0.0, nan, nan, nan, 0.0),
]

# A constant exponent: (k, x, x ** k, d/dx, d²/dx²) from f = lambda x: x ** k with JAX's
# [f(x), jax.grad(f)(x), jax.grad(jax.grad(f))(x)] at jnp.float64(x): a Python int k is JAX's
# integer pow, a float k its float pow. shax's x ** 2 and x ** 2.0 are one operation.
CONSTANT_POW = [
    (0, 0.0, 1.0, 0.0, 0.0),
    (0, -2.0, 1.0, 0.0, 0.0),
    (0, 1.5, 1.0, 0.0, 0.0),
    (0, inf, 1.0, 0.0, 0.0),
    (1, 0.0, 0.0, 1.0, 0.0),
    (1, -2.0, -2.0, 1.0, 0.0),
    (1, inf, inf, 1.0, 0.0),
    (2, 0.0, 0.0, 0.0, 2.0),
    (2, -2.0, 4.0, -4.0, 2.0),
    (2, inf, inf, inf, 2.0),
    (3, 0.0, 0.0, 0.0, 0.0),
    (3, -2.0, -8.0, 12.0, -12.0),
    (3, 1.5, 3.375, 6.75, 9.0),
    (-1, 0.0, inf, -inf, inf),
    (-1, -2.0, -0.5, -0.25, -0.25),
    (-1, inf, 0.0, -0.0, 0.0),
    (0.5, 0.0, 0.0, inf, -inf),
    (0.5, 2.0, 1.4142135623730951, 0.3535533905932738, -0.08838834764831845),
    (1.5, 0.0, 0.0, 0.0, inf),
    (-0.5, 0.0, inf, -inf, inf),
    (2.5, 0.0, 0.0, 0.0, 0.0),
]

# (x, y, f(x, y), ∂x, ∂y) for f = jax.lax.max and jax.lax.min (JAX's `_balanced_eq`): ties
# split ½–½, ±∞ ties too, and a NaN operand gives 0 to both; every second derivative,
# jax.grad(jax.grad(f, i), j), is 0 at these points. (XLA's max(0.0, -0.0) is 0.0 and numpy's
# -0.0; the two compare equal, and shax evaluates with numpy.)
MAX = [
    (1.0, 2.0, 2.0, 0.0, 1.0),
    (2.0, 1.0, 2.0, 1.0, 0.0),
    (1.0, 1.0, 1.0, 0.5, 0.5),
    (inf, inf, inf, 0.5, 0.5),
    (-inf, -inf, -inf, 0.5, 0.5),
    (inf, -inf, inf, 1.0, 0.0),
    (-inf, inf, inf, 0.0, 1.0),
    (inf, 1.0, inf, 1.0, 0.0),
    (nan, 1.0, nan, 0.0, 0.0),
    (1.0, nan, nan, 0.0, 0.0),
    (nan, nan, nan, 0.0, 0.0),
    (nan, inf, nan, 0.0, 0.0),
    (-0.0, 0.0, 0.0, 0.5, 0.5),
]
MIN = [
    (1.0, 2.0, 1.0, 1.0, 0.0),
    (2.0, 1.0, 1.0, 0.0, 1.0),
    (1.0, 1.0, 1.0, 0.5, 0.5),
    (inf, inf, inf, 0.5, 0.5),
    (-inf, -inf, -inf, 0.5, 0.5),
    (inf, -inf, -inf, 0.0, 1.0),
    (-inf, inf, -inf, 1.0, 0.0),
    (inf, 1.0, 1.0, 0.0, 1.0),
    (nan, 1.0, nan, 0.0, 0.0),
    (1.0, nan, nan, 0.0, 0.0),
    (nan, nan, nan, 0.0, 0.0),
    (nan, inf, nan, 0.0, 0.0),
    (-0.0, 0.0, -0.0, 0.5, 0.5),
]


def column(table: list[tuple[float, ...]], k: int, dtype: DType = f64) -> np.ndarray:
    return np.array([row[k] for row in table], dtype.numpy)


def assert_numbers(got: Any, expected: np.ndarray) -> None:
    """Equal, NaN for NaN and ∞ for ∞ of the same sign; the sign of a zero is not compared."""
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    rtol = 1e-6 if got.dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=0.0)


def total(f: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """Σᵢ f(xᵢ, yᵢ): f is elementwise, so its gradient is the vector of f's partials."""
    return lambda x, y: reduce_sum(f(x, y), [0])


def partial(f: Callable[[Any, Any], Any], wrt: int) -> Callable[[Any, Any], Any]:
    """(x, y) -> the vector of ∂f/∂(x or y) at each (xᵢ, yᵢ), by reverse mode."""
    return shax.grad(total(f), wrt=wrt)


def check_derivatives(
    f: Callable[[Any, Any], Any], table: list[tuple[float, ...]], second: list[np.ndarray], dtype: DType = f64
) -> None:
    """f's values and partials at the table's points by every route, and its second
    derivatives (∂x∂x, ∂x∂y, ∂y∂x, ∂y∂y) through grad(grad), jit and vmap."""
    x, y = column(table, 0, dtype), column(table, 1, dtype)
    assert_numbers(f(x, y), column(table, 2, dtype))
    for wrt in (0, 1):
        expected = column(table, 3 + wrt, dtype)
        derivative = partial(f, wrt)
        assert_numbers(derivative(x, y), expected)
        assert_numbers(shax.jit(derivative)(x, y), expected)
        assert_numbers(shax.vmap(shax.grad(f, wrt=wrt))(x, y), expected)
        # Forward mode, the other operand a constant (its tangent a symbolic zero, as in JAX).
        along: Callable[[Any], Any] = (lambda v: f(v, y)) if wrt == 0 else (lambda v: f(x, v))
        ones = np.ones_like(x)
        assert_numbers(shax.jvp(along, ((x, y)[wrt],), (ones,))[1], expected)
        _, f_jvp = shax.linearize(along, (x, y)[wrt])
        assert_numbers(f_jvp(ones), expected)
    for k, (first, then) in enumerate([(0, 0), (0, 1), (1, 0), (1, 1)]):
        twice = shax.grad(total(partial(f, first)), wrt=then)
        assert_numbers(twice(x, y), second[k])
        assert_numbers(shax.jit(twice)(x, y), second[k])
        assert_numbers(shax.vmap(shax.grad(shax.grad(f, wrt=first), wrt=then))(x, y), second[k])


def power(x: Any, y: Any) -> Any:
    return x**y


def test_pow_follows_jax() -> None:
    check_derivatives(power, POW, [column(POW, k) for k in range(5, 9)])


@pytest.mark.parametrize("dtype", [f32, f64], ids=lambda d: d.name)
def test_pow_of_a_constant_exponent_follows_jax(dtype: DType) -> None:
    """x ** k with k a constant (an array of them: one exponent per point)."""
    x, k = column(CONSTANT_POW, 1, dtype), column(CONSTANT_POW, 0, dtype)
    value, first, second = (column(CONSTANT_POW, c, dtype) for c in (2, 3, 4))

    def of_x(v: Any) -> Any:
        return v**k

    def derivative(v: Any) -> Any:
        return shax.grad(lambda u: reduce_sum(of_x(u), [0]))(v)

    assert_numbers(shax.jit(of_x)(x), value)
    assert_numbers(derivative(x), first)
    assert_numbers(shax.jvp(of_x, (x,), (np.ones_like(x),))[1], first)
    assert_numbers(shax.grad(lambda u: reduce_sum(derivative(u), [0]))(x), second)
    assert_numbers(shax.jvp(derivative, (x,), (np.ones_like(x),))[1], second)
    assert_numbers(shax.jit(shax.grad(lambda u: reduce_sum(derivative(u), [0])))(x), second)


@pytest.mark.parametrize(("f", "table"), [(max, MAX), (min, MIN)], ids=["max", "min"])
@pytest.mark.parametrize("dtype", [f32, f64], ids=lambda d: d.name)
def test_max_and_min_follow_jax(f: Callable[[Any, Any], Any], table: list[tuple[float, ...]], dtype: DType) -> None:
    zeros = np.zeros(len(table), dtype.numpy)
    check_derivatives(f, table, [zeros] * 4, dtype)


# The derivatives of x ** k at 0, of orders 0 to 4: with g = lambda x: x ** k, JAX's
# [g(0.0), jax.grad(g)(0.0), jax.grad(jax.grad(g))(0.0), ...] (its integer pow).
NESTED_AT_ZERO = [
    (0, [1.0, 0.0, 0.0, 0.0, 0.0]),
    (1, [0.0, 1.0, 0.0, 0.0, 0.0]),
    (2, [0.0, 0.0, 2.0, 0.0, 0.0]),
    (3, [0.0, 0.0, 0.0, 6.0, 0.0]),
    (4, [0.0, 0.0, 0.0, 0.0, 24.0]),
]


@pytest.mark.parametrize(("k", "expected"), NESTED_AT_ZERO, ids=[f"k={k}" for k, _ in NESTED_AT_ZERO])
def test_nested_grads_of_an_integral_power_at_zero_follow_jax(k: int, expected: list[float]) -> None:
    g: Callable[[Any], Any] = lambda x: x**k  # noqa: E731
    got = []
    for _ in expected:
        got.append(float(g(np.float64(0.0))))
        g = shax.grad(g)
    assert got == expected
