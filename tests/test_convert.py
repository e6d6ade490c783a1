"""Casts: `x.astype(dtype)` / `convert_element_type` are numpy's on values, linear between
float dtypes (the cotangent cast back), and of zero derivative into or out of ints."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
import typeclasses as tc

X = np.array([1.5, -2.7, 0.0, 3.999, -0.5], np.float32)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
def test_a_cast_is_numpys(dtype: Any) -> None:
    expected = X.astype(dtype)
    for got in (tc.convert_element_type(X, dtype), shax.jit(lambda x: x.astype(dtype))(X)):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(shax.vmap(lambda x: x.astype(dtype))(X), expected)


def test_between_floats_the_gradient_is_cast_back() -> None:
    # d/dx Σ (f64(x))² = 2x, in x's dtype
    gradient = shax.grad(lambda x: snp.sum(x.astype(np.float64) ** 2))(X)
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, 2 * X, rtol=1e-7)
    # and down: d/dx Σ 3·f32(x) = 3, as f64
    x64 = X.astype(np.float64)
    np.testing.assert_array_equal(shax.grad(lambda x: snp.sum(3.0 * x.astype(np.float32)))(x64), np.full(5, 3.0))


def test_through_an_integer_the_derivative_is_zero() -> None:
    # x · trunc(x): the truncation is piecewise constant, so d/dx = trunc(x)
    def f(x: Any) -> Any:
        return snp.sum(x * x.astype(np.int32).astype(np.float32))

    np.testing.assert_array_equal(shax.grad(f)(X), X.astype(np.int32).astype(np.float32))
    np.testing.assert_array_equal(shax.grad(shax.grad(lambda x: x.astype(np.float64) ** 3))(np.float32(2.0)), 12.0)


def test_a_cast_to_its_own_dtype_is_x() -> None:
    defn = shax.xpr(lambda x: x.astype(np.float32) * 2.0, X)
    assert "convert_element_type" not in str(defn)
