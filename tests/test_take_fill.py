"""`shax.numpy.take` out of range: numpy's modes for constant indices (numpy raises by
default), JAX's "fill" for traced ones (they cannot raise): NaN for floats, the lowest
integer, or `fill_value`; clipped with mode="clip". Checked against JAX where installed."""

from __future__ import annotations

import numpy as np
import pytest

import shax
import shax.numpy as snp

A = np.arange(10.0).reshape(2, 5)
IDX = np.array([[1, 7], [-1, -7]])


@pytest.mark.parametrize("axis", [None, 1])
def test_traced_indices_out_of_range_read_nan(axis: int | None) -> None:
    got = shax.jit(lambda a, i: snp.take(a, i, axis=axis))(A, IDX)
    flat = A.reshape(-1) if axis is None else A
    n = flat.shape[-1]
    inside = (IDX >= -n) & (IDX < n)
    expected = np.take(flat, np.where(inside, IDX, 0), axis=-1 if axis is not None else None)
    expected = np.where(inside if axis is None else inside[None], expected, np.nan)
    np.testing.assert_array_equal(got, expected)


def test_integers_fill_with_the_lowest_and_fill_value_is_read() -> None:
    ints = np.arange(5, dtype=np.int32)
    got = shax.jit(lambda a, i: snp.take(a, i))(ints, np.array([1, 9]))
    np.testing.assert_array_equal(got, [1, np.iinfo(np.int32).min])
    got = shax.jit(lambda a, i: snp.take(a, i, mode="fill", fill_value=-1.0))(np.arange(5.0), np.array([1, 9]))
    np.testing.assert_array_equal(got, [1.0, -1.0])
    np.testing.assert_array_equal(snp.take(np.arange(5.0), [1, -9], mode="fill"), [1.0, np.nan])


def test_the_filled_reads_have_zero_gradient() -> None:
    g = shax.grad(lambda a, i: snp.nansum(snp.take(a, i)), argnums=0)(np.arange(5.0), np.array([1, 7, -1]))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0, 0.0, 1.0])


def test_constant_indices_keep_numpys_modes() -> None:
    with pytest.raises(shax.ShaxValueError, match="index 7 is out of bounds"):
        snp.take(np.arange(5.0), [1, 7])
    np.testing.assert_array_equal(snp.take(np.arange(5.0), [1, 7, -3], mode="clip"), [1.0, 4.0, 0.0])
    with pytest.raises(shax.ShaxValueError, match="fill_value is read only with mode 'fill'"):
        snp.take(np.arange(5.0), [1], fill_value=3.0)


def test_as_jax() -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    with jax.enable_x64(True) if hasattr(jax, "enable_x64") else jax.experimental.enable_x64():
        for axis in (None, 0, 1):
            i = IDX % 2 if axis == 0 else IDX
            ours = shax.jit(lambda a, j, axis=axis: snp.take(a, j, axis=axis))(A, i)
            theirs = jax.jit(lambda a, j, axis=axis: jnp.take(a, j, axis=axis))(A, i)
            np.testing.assert_array_equal(ours, np.asarray(theirs))
