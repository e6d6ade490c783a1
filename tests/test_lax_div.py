"""`lax.div` of integers rounds toward zero (XLA's integer division, jax.lax.div), on numpy
values as traced; of floats it is `/`. Before, numpy integers got numpy's true division."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shax
from shax import lax

ints = hnp.arrays(np.int32, 6, elements=st.integers(-50, 50))


@given(ints, ints.map(lambda y: np.where(y == 0, 3, y).astype(np.int32)))
def test_integer_div_truncates_on_numpy_values_and_traced(x: np.ndarray, y: np.ndarray) -> None:
    expected = (np.trunc(x / y)).astype(np.int32)
    for got in (lax.div(x, y), shax.jit(lax.div)(x, y)):
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(got * y + lax.rem(x, y), x)  # lax's identity with rem


def test_float_div_is_true_division_with_its_derivative() -> None:
    np.testing.assert_array_equal(lax.div(np.array([-7.0, 7.0]), np.array([2.0, -2.0])), [-3.5, -3.5])
    assert shax.grad(lambda x: lax.div(x, 4.0))(np.float64(3.0)) == 0.25
    assert lax.div(-7, 2) == -3
