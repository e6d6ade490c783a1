"""The derivative of `det` is the cofactor matrix (JAX's tr(adj(a) da)), at singular
matrices too, where it was NaN (det was differentiated through log |det|)."""

from __future__ import annotations

import numpy as np
import pytest

import shax
import shax.numpy as snp


def _cofactors(a: np.ndarray) -> np.ndarray:
    """C_ij = (−1)^(i+j) det(a without row i and column j), by numpy: the exact gradient."""
    n = a.shape[0]
    c = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, i, 0), j, 1)
            c[i, j] = (-1) ** (i + j) * (np.linalg.det(minor) if minor.size else 1.0)
    return c


SINGULAR = [
    np.array([[1.0, 2.0], [2.0, 4.0]]),
    np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 3.0]]),
    np.zeros((3, 3)),
    np.array([[0.0]]),
]


@pytest.mark.parametrize("a", [*SINGULAR, np.random.default_rng(0).normal(size=(4, 4))])
def test_det_gradient_is_the_cofactor_matrix(a: np.ndarray) -> None:
    expected = _cofactors(a)
    np.testing.assert_allclose(shax.grad(snp.linalg.det)(a), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(shax.jit(shax.grad(snp.linalg.det))(a), expected, rtol=1e-10, atol=1e-12)


def test_batched_and_second_derivatives() -> None:
    stack = np.stack(SINGULAR[:1] + [np.eye(2)])
    grads = shax.vmap(shax.grad(snp.linalg.det))(stack)
    np.testing.assert_allclose(grads, [_cofactors(m) for m in stack], atol=1e-12)
    # d²det/da_ij da_kl at the identity: 1 where (i, j), (k, l) are two distinct diagonal
    # entries, −1 for a transposed off-diagonal pair, else 0
    hessian = np.asarray(shax.hessian(snp.linalg.det)(np.eye(2))).reshape(4, 4)
    np.testing.assert_allclose(hessian, [[0, 0, 0, 1], [0, 0, -1, 0], [0, -1, 0, 0], [1, 0, 0, 0]], atol=1e-12)
