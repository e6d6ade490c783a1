"""Linear algebra of (stacks of) matrices, the last two axes being the matrix: the HNP
functions `inv solve cholesky sign_det log_abs_det eigh qr svd` with their numpy instance
(`numpy.linalg`, which batches over the leading axes).

Where numpy and JAX differ, the values are JAX's, so that a program means the same
evaluated, compiled and exported:
- `cholesky` and `eigh` decompose the symmetric part (a + aᵀ) / 2 (JAX's
  `symmetrize_input=True`; numpy reads one triangle);
- a matrix `inv`, `solve` or `cholesky` cannot decompose (singular, not positive
  definite) gives NaNs in its place in the stack, as JAX's, not numpy's LinAlgError.
`eigh`, `qr` and `svd` give all their results, a tuple, from one decomposition:
(eigenvalues, eigenvectors), (q, r) and (s, u, vh) (s descending; JAX's order), or (s,)
alone without `compute_uv`; `complete` asks numpy's mode "complete" of qr (q square)
rather than "reduced", `full_matrices` svd's square u and vh. An SVD that does not
converge (NaNs in the matrix) gives NaNs, as JAX's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from typeclasses.define import define_function
from typeclasses.dispatch import HNP

__all__ = ["cholesky", "eigh", "inv", "log_abs_det", "qr", "sign_det", "solve", "svd"]


def _mT(a: Any) -> Any:  # noqa: N802 - numpy's name
    return np.swapaxes(a, -1, -2)


def _symmetric(a: Any) -> Any:
    return (a + _mT(a)) * a.dtype.type(0.5)


def _per_matrix(decompose: Callable[..., Any], *operands: Any) -> Any:
    """`decompose` of the stacked matrices; one it cannot decompose is NaNs, as in JAX."""
    try:
        return decompose(*operands)
    except np.linalg.LinAlgError:
        stack = np.broadcast_shapes(*(np.shape(o)[:-2] for o in operands))
        results = [
            _or_nans(decompose, *(np.broadcast_to(o, (*stack, *np.shape(o)[-2:]))[index] for o in operands))
            for index in np.ndindex(*stack)
        ]
        return np.stack(results).reshape(*stack, *np.shape(results[0])) if stack else results[0]


def _or_nans(decompose: Callable[..., Any], *operands: Any) -> Any:
    try:
        return decompose(*operands)
    except np.linalg.LinAlgError:
        return np.full(np.shape(operands[-1]), np.nan, operands[-1].dtype)


def _inv(a: Any) -> Any:
    return _per_matrix(np.linalg.inv, a)


def _solve(a: Any, b: Any) -> Any:
    return _per_matrix(np.linalg.solve, a, b)


def _cholesky(a: Any) -> Any:
    return _per_matrix(np.linalg.cholesky, _symmetric(np.asarray(a)))


def _sign_det(a: Any) -> Any:
    return np.linalg.slogdet(a)[0]


def _log_abs_det(a: Any) -> Any:
    return np.linalg.slogdet(a)[1]


def _eigh(a: Any) -> tuple[Any, Any]:
    w, v = np.linalg.eigh(_symmetric(np.asarray(a)))
    return w, v


def _qr(a: Any, complete: bool) -> tuple[Any, Any]:
    q, r = np.linalg.qr(a, "complete" if complete else "reduced")
    return q, r


def _svd(a: Any, full_matrices: bool, compute_uv: bool) -> tuple[Any, ...]:
    a = np.asarray(a)
    try:
        if not compute_uv:
            return (np.linalg.svd(a, compute_uv=False),)
        u, s, vh = np.linalg.svd(a, full_matrices=full_matrices, compute_uv=True)
        return s, u, vh
    except np.linalg.LinAlgError:
        *stack, m, n = a.shape
        k = min(m, n)
        rows, columns = (m, n) if full_matrices else (k, k)
        shapes = ((*stack, k), (*stack, m, rows), (*stack, columns, n))
        return tuple(np.full(shape, np.nan, a.dtype) for shape in shapes[: 3 if compute_uv else 1])


inv = define_function("inv", _inv, typeclass=HNP)
solve = define_function("solve", _solve, typeclass=HNP)
cholesky = define_function("cholesky", _cholesky, typeclass=HNP)
sign_det = define_function("sign_det", _sign_det, typeclass=HNP)
log_abs_det = define_function("log_abs_det", _log_abs_det, typeclass=HNP)
eigh = define_function("eigh", _eigh, operands=1, typeclass=HNP)
qr = define_function("qr", _qr, operands=1, typeclass=HNP)
svd = define_function("svd", _svd, operands=1, typeclass=HNP)
