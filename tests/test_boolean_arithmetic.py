"""Arithmetic on booleans as numpy's (issue 31): `mask + mask` is a logical or, `mask * mask`
an and, `mask < mask` orders False before True, `sum(mask)` counts, `-mask` is refused, on
tracers under jit, vmap and grad, equal to numpy's values and dtypes (where numpy computes in
int8, which shax lacks, i32, as JAX does) and to jax.numpy's values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import shax
import shax.numpy as snp

A = np.array([True, False, True, False])
B = np.array([True, True, False, False])
X = np.array([1.5, -2.0, 0.5, 3.0], np.float32)

# (function of two masks a, b and a float array x, works on numpy, shax.numpy and jax.numpy as np)
FORMS: dict[str, Callable[[Any, Any, Any, Any], Any]] = {
    "a + b": lambda np_, a, b, x: a + b,
    "a * b": lambda np_, a, b, x: a * b,
    "a + True": lambda np_, a, b, x: a + True,
    "False * a": lambda np_, a, b, x: False * a,
    "a & b": lambda np_, a, b, x: a & b,
    "a | b": lambda np_, a, b, x: a | b,
    "a ^ b": lambda np_, a, b, x: a ^ b,
    "~a": lambda np_, a, b, x: ~a,
    "a < b": lambda np_, a, b, x: a < b,
    "a <= b": lambda np_, a, b, x: a <= b,
    "a > b": lambda np_, a, b, x: a > b,
    "a >= b": lambda np_, a, b, x: a >= b,
    "abs(a)": lambda np_, a, b, x: abs(a),
    "maximum": lambda np_, a, b, x: np_.maximum(a, b),
    "minimum": lambda np_, a, b, x: np_.minimum(a, b),
    "add": lambda np_, a, b, x: np_.add(a, b),
    "multiply": lambda np_, a, b, x: np_.multiply(a, b),
    "a @ b": lambda np_, a, b, x: a @ b,
    "outer @": lambda np_, a, b, x: a.reshape(4, 1) @ b.reshape(1, 4),
    "dot": lambda np_, a, b, x: np_.dot(a, b),
    "sum(a)": lambda np_, a, b, x: np_.sum(a),
    "builtin sum": lambda np_, a, b, x: sum(a),
    "a.sum()": lambda np_, a, b, x: a.sum(),
    "mean": lambda np_, a, b, x: np_.mean(a),
    "a.max()": lambda np_, a, b, x: a.max(),
    "min axis": lambda np_, a, b, x: np_.min(np_.stack([a, b]), axis=0),
    "cumsum": lambda np_, a, b, x: np_.cumsum(a),
    "astype(int)": lambda np_, a, b, x: a.astype(int),
    "astype(f32)": lambda np_, a, b, x: a.astype(np.float32),
    "a * 1.5": lambda np_, a, b, x: a * 1.5,
    "a + 1": lambda np_, a, b, x: a + 1,
    "1 - a": lambda np_, a, b, x: 1 - a,
    "a * x": lambda np_, a, b, x: a * x,
    "x * (a + b)": lambda np_, a, b, x: x * (a + b),
    "a / b": lambda np_, a, b, x: a / (b | True),
    "a // (b | True)": lambda np_, a, b, x: a // (b | True),
    "a % (b | True)": lambda np_, a, b, x: a % (b | True),
    "square": lambda np_, a, b, x: np_.square(a),
}

# numpy computes these in int8, which shax lacks; shax (and JAX) in i32.
IN_I32 = {"a // (b | True)", "a % (b | True)", "square"}


def _want_dtype(name: str, want: np.ndarray) -> np.dtype[Any]:
    return np.dtype(np.int32) if name in IN_I32 else want.dtype


@pytest.mark.parametrize("name", FORMS)
def test_traced_boolean_arithmetic_is_numpys(name: str) -> None:
    f = FORMS[name]
    want = np.asarray(f(np, A, B, X))
    got = np.asarray(shax.jit(lambda a, b, x: f(snp, a, b, x))(A, B, X))
    assert got.dtype == _want_dtype(name, want), (got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want)
    # shax.numpy on numpy values: numpy's own answer
    untraced = np.asarray(f(snp, A, B, X))
    assert untraced.dtype == want.dtype
    np.testing.assert_array_equal(untraced, want)
    # JAX agrees on the values (its ints are i32, its floats f32 without x64)
    np.testing.assert_allclose(np.asarray(f(jnp, jnp.asarray(A), jnp.asarray(B), jnp.asarray(X))), want, rtol=1e-6)


@pytest.mark.parametrize("name", ["a + b", "a * b", "a < b", "abs(a)", "a @ b", "a.max()", "cumsum", "x * (a + b)"])
def test_vmapped_boolean_arithmetic_is_per_example(name: str) -> None:
    f = FORMS[name]
    masks = np.array([A, B, ~A])
    got = shax.vmap(lambda a: f(snp, a, B, X))(masks)
    want = np.stack([np.asarray(f(np, m, B, X)) for m in masks])
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_grad_through_masks_built_by_boolean_arithmetic() -> None:
    # a loss that counts with masks: the masks carry no derivative, the floats they select do
    def loss(x: Any, np_: Any = snp) -> Any:
        both = (x > 0) * (x < 2)  # an and
        either = (x > 2) + (x < -1)  # an or
        return np_.sum(x * x * both + 3.0 * x * either) / (np_.sum(both) + 1)

    got = shax.grad(loss)(X)
    want = jax.grad(lambda x: loss(x, jnp))(jnp.asarray(X))
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(shax.jit(shax.grad(loss))(X), want, rtol=1e-6)


def test_boolean_or_is_a_logical_binding_in_the_program() -> None:
    program = str(shax.xpr(lambda a, b: a + b, A, B))
    assert "or" in program and "add" not in program


@pytest.mark.parametrize(
    ("f", "message"),
    [
        (lambda a: -a, r"negate: numpy has no negate of booleans .*bool\[4\].*use ~"),
        (lambda a: a - a, r"sub: numpy has no sub of booleans .*use \^"),
        (lambda a: snp.negative(a), r"negative: numpy has no negative of booleans"),
        (lambda a: snp.subtract(a, True), r"subtract: numpy has no subtract of booleans"),
    ],
)
def test_negating_or_subtracting_booleans_is_refused_as_numpy_does(f: Callable[[Any], Any], message: str) -> None:
    with pytest.raises(TypeError):  # on numpy values too: numpy's TypeError, or shax.numpy's
        f(A)
    with pytest.raises(shax.ShaxTypeError, match=message) as raised:
        shax.jit(f)(A)
    assert "test_boolean_arithmetic.py:" in str(raised.value)
