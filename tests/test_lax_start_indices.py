"""`shax.lax.dynamic_slice` and `dynamic_update_slice` take their start indices as JAX's do:
Python and numpy integers, 0-d integer arrays (what `argmax` gives on numpy values) and
traced integer scalars, mixed; a float or a bool is still a ShaxTypeError."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import typeguard

import shax
import shax.lax as lax

X = np.arange(12.0).reshape(3, 4)
STARTS = [(np.array(2, np.int32), 1), (np.int64(1), np.array(3)), (1, 2)]


@pytest.mark.parametrize("starts", STARTS, ids=["0-d i32", "i64 and 0-d", "ints"])
def test_start_indices_as_jax_reads_them(starts: tuple[object, ...]) -> None:
    expected = np.asarray(jax.lax.dynamic_slice(X, starts, (1, 2)))
    np.testing.assert_array_equal(lax.dynamic_slice(X, starts, (1, 2)), expected)
    np.testing.assert_array_equal(shax.jit(lambda x: lax.dynamic_slice(x, starts, (1, 2)))(X), expected)
    update = -np.ones((1, 2))
    expected = np.asarray(jax.lax.dynamic_update_slice(X, update, starts))
    np.testing.assert_array_equal(lax.dynamic_update_slice(X, update, starts), expected)


@typeguard.suppress_type_checks
def test_a_float_start_index_is_a_shax_type_error() -> None:
    with pytest.raises(shax.ShaxTypeError, match="lax.dynamic_slice: a start index must be an int"):
        lax.dynamic_slice(X, (np.array(1.0), 0), (1, 2))
