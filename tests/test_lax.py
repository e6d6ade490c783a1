"""shax.lax: jax.lax's names and signatures, with JAX's values (stored, computed once with
jax 0.10): dynamic slices (negative starts from the end, then clamped), traced-start
slicing `x[i:i + k]`, top_k, and some of the structural and elementwise names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax import lax

X = np.arange(20.0).reshape(4, 5)


@pytest.mark.parametrize(
    "starts, expected",
    [
        ((1, 2), [[7.0, 8.0], [12.0, 13.0]]),
        ((9, 9), [[13.0, 14.0], [18.0, 19.0]]),  # clamped into range
        ((-1, -2), [[13.0, 14.0], [18.0, 19.0]]),  # from the end, then clamped
        ((-9, 0), [[0.0, 1.0], [5.0, 6.0]]),
    ],
)
def test_dynamic_slice_is_jaxs_on_numpy_and_traced(starts: tuple[int, int], expected: list[Any]) -> None:
    np.testing.assert_array_equal(lax.dynamic_slice(X, starts, (2, 2)), expected)
    jitted = shax.jit(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)))
    np.testing.assert_array_equal(jitted(X, np.int32(starts[0]), np.int32(starts[1])), expected)


def test_dynamic_update_slice_is_jaxs_and_differentiates() -> None:
    expected = X.copy()
    expected[2:, 3:] = -1.0
    update = -np.ones((2, 2))
    np.testing.assert_array_equal(lax.dynamic_update_slice(X, update, (3, -1)), expected)
    f = shax.jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(-1))))
    np.testing.assert_array_equal(f(X, update, np.int32(3)), expected)

    def loss(x: Any, u: Any) -> Any:
        return snp.sum(lax.dynamic_update_slice(x, u, (1, 2)) ** 2)

    gx, gu = shax.grad(loss)(X, update)
    kept = np.ones_like(X)
    kept[1:3, 2:4] = 0.0
    np.testing.assert_array_equal(gx, 2 * X * kept)
    np.testing.assert_array_equal(gu, 2 * update)


def test_traced_start_slicing_reads_the_block() -> None:
    f = shax.jit(lambda x, i: x[1:3, i : i + 2])
    np.testing.assert_array_equal(f(X, np.int32(2)), X[1:3, 2:4])
    np.testing.assert_array_equal(f(X, np.int32(9)), X[1:3, 3:5])  # clamped, as dynamic_slice
    grad = shax.grad(lambda x, i: snp.sum(x[..., i : i + 2] ** 2), argnums=0)(X, np.int32(1))
    expected = np.zeros_like(X)
    expected[:, 1:3] = 2 * X[:, 1:3]
    np.testing.assert_array_equal(grad, expected)
    rows = shax.vmap(lambda x, i: x[i : i + 2], in_axes=(None, 0))(np.arange(6.0), np.array([0, 3], np.int32))
    np.testing.assert_array_equal(rows, [[0.0, 1.0], [3.0, 4.0]])
    defn = shax.xpr(lambda x, i: x[i : i + 2], X, np.int32(0))
    assert "dynamic_slice [2,5]" in str(defn)


def test_a_traced_slice_needs_a_constant_width() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"indexing: a slice with a traced bound must be x\[i:i \+ k\]"):
        shax.jit(lambda x, i: x[i:])(X, np.int32(1))


def test_top_k_is_jaxs_and_its_gradient_a_gather() -> None:
    ints = np.array([[3, 1, 3, -5, 7], [0, 2, 2, 9, -1]], np.int32)
    values, indices = lax.top_k(ints, 3)
    np.testing.assert_array_equal(values, [[7, 3, 3], [9, 2, 2]])
    np.testing.assert_array_equal(indices, [[4, 0, 2], [3, 1, 2]])
    assert indices.dtype == np.int32
    floats = ints.astype(np.float64)
    grad = shax.grad(lambda x: snp.sum(lax.top_k(x, 2)[0] * np.array([1.0, 10.0])))(floats)
    np.testing.assert_array_equal(grad, [[10.0, 0.0, 0.0, 0.0, 1.0], [0.0, 10.0, 0.0, 1.0, 0.0]])


def test_structural_and_elementwise_names_are_jaxs() -> None:
    np.testing.assert_allclose(lax.integer_pow(np.array([1.5, -2.0]), 5), [7.59375, -32.0])
    np.testing.assert_allclose(lax.integer_pow(np.array([1.5, -2.0]), -3), [0.2962962962962963, -0.125])
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(lax.pad(a, -1.0, [(1, 0, 0), (0, -1, 0)]), [[-1.0, -1.0], [0.0, 1.0], [3.0, 4.0]])
    np.testing.assert_array_equal(lax.dot_general(a, a, (((1,), (1,)), ((), ()))), a @ a.T)
    np.testing.assert_array_equal(lax.broadcast_in_dim(a[0], (2, 3), (1,)), [a[0], a[0]])
    np.testing.assert_array_equal(lax.slice(a, (0, 0), (2, 3), (1, 2)), a[:, ::2])
    np.testing.assert_array_equal(lax.map(lambda r: r * 2.0, a), a * 2.0)
    assert lax.argmax(a, 1, np.int64).dtype == np.int64
    with pytest.raises(shax.ShaxValueError, match="lax.pad: interior padding is not supported"):
        lax.pad(a, 0.0, [(0, 0, 1), (0, 0, 0)])
    with pytest.raises(shax.ShaxValueError, match="lax.dot: precision="):
        lax.dot(a, a.T, precision="highest")
