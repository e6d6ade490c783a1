"""`where` with numpy masks and number branches, and numpy's `%`, `//`, `divmod` of floats
(issue 28), on tracers: values and dtypes numpy's, gradients JAX's."""

import numpy as np
import pytest

import shax
import shax.numpy as snp

X = np.float32([1.5, -2.0, 3.25])
MASK = np.array([True, False, True])
CAUSAL = np.tril(np.ones((3, 3), bool))


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mask", [MASK, np.True_, np.False_, CAUSAL], ids=["mask", "True_", "False_", "causal"])
@pytest.mark.parametrize("number", [-1e9, 0, 2])
def test_where_numpy_mask_number_branch_jit(mask, number):
    _same(shax.jit(lambda x: snp.where(mask, x, number))(X), np.where(mask, X, number))
    _same(shax.jit(lambda x: snp.where(mask, number, x))(X), np.where(mask, number, X))


def test_where_traced_mask_broadcasts_against_branch():
    # a (3,) mask against a (2, 3) branch and a number: all three broadcast
    x = np.float32([[1, 2, 3], [4, 5, 6]])
    f = shax.jit(lambda m, x: snp.where(m, x, -1.0))
    _same(f(MASK, x), np.where(MASK, x, np.float32(-1.0)))


def test_where_numpy_mask_grad():
    # d Σ where(m, x, c) / dx = m (broadcast rows summed), as JAX gives
    grad = shax.grad(lambda x: snp.where(CAUSAL, x, -1e9).sum())(X)
    _same(grad, CAUSAL.sum(axis=0).astype(np.float32))


def test_where_numpy_mask_vmap():
    xs = np.stack([X, 2 * X])
    _same(shax.vmap(lambda x: snp.where(MASK, x, -1e9))(xs), np.where(MASK, xs, np.float32(-1e9)))
    _same(
        shax.vmap(lambda x: snp.where(CAUSAL, x, 0.5))(xs), np.stack([np.where(CAUSAL, x, np.float32(0.5)) for x in xs])
    )


def test_where_two_number_branches_numpy_mask_traced_in_function():
    # only the mask decides the shape; the numbers take f32 (JAX's weak default) beside a traced mask
    f = shax.jit(lambda x: snp.where(x > 0, 1.0, -1.0) * x)
    _same(f(X), np.where(X > 0, 1.0, -1.0).astype(np.float32) * X)
