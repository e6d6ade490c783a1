"""`x.at[i]` updates at traced indices outside [-n, n) are dropped, as JAX's scatters drop
them by default (`mode="drop"`); reads (`x[i]`, `.at[i].get()`) clamp, as JAX's gathers do.
The model is numpy: the in-range indices' updates applied with `np.add.at` / assignment."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import shax
import shax.numpy as jnp

N = 5
indices = st.lists(st.integers(-2 * N, 2 * N), min_size=1, max_size=6).map(lambda i: np.array(i, np.int32))


def _inside(i: np.ndarray, n: int) -> np.ndarray:
    return (i >= -n) & (i < n)


@given(indices)
def test_add_drops_out_of_range_updates(i: np.ndarray) -> None:
    x = np.arange(N, dtype=np.float64)
    u = np.arange(1.0, i.size + 1) * 10
    expected = x.copy()
    np.add.at(expected, i[_inside(i, N)], u[_inside(i, N)])
    got = shax.jit(lambda x, i, u: x.at[i].add(u))(x, i, u)
    np.testing.assert_array_equal(got, expected)


@given(indices)
def test_set_min_max_multiply_drop_out_of_range_updates(i: np.ndarray) -> None:
    x = np.arange(N, dtype=np.float64)
    kept = i[_inside(i, N)] % N
    expected = x.copy()
    expected[kept] = -1.0
    got = shax.jit(lambda x, i: (x.at[i].set(-1.0), x.at[i].min(-1.0), x.at[i].max(9.0), x.at[i].multiply(3.0)))(x, i)
    np.testing.assert_array_equal(got[0], expected)
    np.testing.assert_array_equal(got[1], expected)
    expected_max, expected_mul = x.copy(), x.copy()
    expected_max[kept] = 9.0
    np.multiply.at(expected_mul, kept, 3.0)
    np.testing.assert_array_equal(got[2], expected_max)
    np.testing.assert_array_equal(got[3], expected_mul)


def test_two_axes_drop_where_either_index_is_out_of_range() -> None:
    x = np.zeros((4, 5))
    i, j = np.array([0, 4, -5, 3, -1]), np.array([1, 1, 2, 9, -1])
    got = shax.jit(lambda x, i, j: x.at[i, j].set(7.0))(x, i, j)
    expected = x.copy()
    expected[[0, 3], [1, 4]] = 7.0
    np.testing.assert_array_equal(got, expected)
    assert shax.jit(lambda x, i: x.at[i].add(1.0))(x[0], np.int32(5)).tolist() == [0.0] * 5


def test_dropped_updates_get_zero_gradient_and_reads_still_clamp() -> None:
    x, i = np.arange(N, dtype=np.float64), np.array([1, 7, -6])
    grad = shax.grad(lambda u, x, i: jnp.sum(x.at[i].add(u) ** 2), argnums=0)(np.ones(3), x, i)
    np.testing.assert_array_equal(grad, [4.0, 0.0, 0.0])
    np.testing.assert_array_equal(shax.jit(lambda x, i: x[i])(x, i), [1.0, 4.0, 0.0])
    np.testing.assert_array_equal(shax.jit(lambda x, i: x.at[i].get())(x, i), [1.0, 4.0, 0.0])


def test_batched_updates_drop_per_example() -> None:
    x = np.zeros((3, N))
    i = np.array([0, N, -N - 1])
    got = shax.vmap(lambda x, i: x.at[i].add(1.0))(x, i)
    np.testing.assert_array_equal(got, [[1.0, 0, 0, 0, 0], [0.0] * N, [0.0] * N])


def test_unsigned_indices_into_a_long_axis() -> None:
    """A u8 index into an axis longer than 255 (n - 1 is no u8): read and updated."""
    x = np.arange(300.0)
    i = np.array([1, 255], np.uint8)
    np.testing.assert_array_equal(shax.jit(lambda x, i: x[i])(x, i), [1.0, 255.0])
    np.testing.assert_array_equal(shax.jit(lambda x, i: x.at[i].add(1.0))(x, i)[[1, 255]], [2.0, 256.0])
    np.testing.assert_array_equal(shax.jit(lambda x, i: x.at[i].add(1.0))(x[:5], i), [0.0, 2.0, 2.0, 3.0, 4.0])
