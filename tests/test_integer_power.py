"""`x ** n` of a traced integer x and a constant n >= 0 (`counts ** 2`): numpy's integer
power (JAX's integer_pow), the same dtype and wrapping values as numpy computes, where it
was refused; and `**` promotes as numpy does (`x32 ** np.float64(2)` is f64)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shax
import shax.numpy as snp


@given(
    hnp.arrays(st.sampled_from([np.int32, np.int64, np.uint8]), 4, elements=st.integers(0, 100)),
    st.integers(0, 9),
    st.booleans(),
)
def test_integer_power_is_numpys(x: np.ndarray, n: int, negate: bool) -> None:
    if negate and x.dtype != np.uint8:
        x = -x
    expected = x**n
    for backend in ("numpy", "xla"):
        got = shax.jit(lambda x: (x**n, snp.power(x, n)), backend=backend)(x)
        for g in got:
            assert g.dtype == expected.dtype
            np.testing.assert_array_equal(g, expected)


def test_power_promotes_as_numpy() -> None:
    x32, i = np.array([1.5, 2.0], np.float32), np.array([-3, 2], np.int32)
    got = shax.jit(lambda x, i: (x ** np.float64(2.0), i**2.0, 2.0**i, i ** np.int64(2), x**2))(x32, i)
    expected = (x32 ** np.float64(2.0), i**2.0, 2.0**i, i ** np.int64(2), x32**2)
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


def test_a_negative_or_traced_integer_exponent_is_still_refused() -> None:
    i = np.array([-3, 2], np.int32)
    with pytest.raises(shax.ShaxError, match="pow"):
        shax.jit(lambda i: i**-1)(i)
    with pytest.raises(shax.ShaxError, match="pow"):
        shax.jit(lambda i, n: i**n)(i, np.int32(2))
