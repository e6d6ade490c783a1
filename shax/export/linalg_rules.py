"""The export rules of the linear algebra primitives (`shax.primitives.linalg`): each is
`jax.numpy.linalg`'s function, which computes what the eval rule does (JAX's values:
the symmetric part decomposed by cholesky and eigh, NaNs for a matrix it cannot
decompose), batched over leading axes as numpy's.

Imports jax: only `shax.export.lowering` imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp

from shax import primitives as P
from shax.core.types import TensorType
from shax.export.rules import export_rule


@export_rule(P.Inv)
def _inv(prim: P.Inv, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.linalg.inv(operands[0])


# solve: b is a stack of matrices, as numpy 2 and JAX read it when it is not one vector
@export_rule(P.Solve)
def _solve(prim: P.Solve, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.linalg.solve(*operands)


@export_rule(P.Cholesky)
def _cholesky(prim: P.Cholesky, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.linalg.cholesky(operands[0], symmetrize_input=True)


@export_rule(P.SignDet)
def _sign_det(prim: P.SignDet, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.linalg.slogdet(operands[0])[0]


@export_rule(P.LogAbsDet)
def _log_abs_det(prim: P.LogAbsDet, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.linalg.slogdet(operands[0])[1]


@export_rule(P.Eigh)
def _eigh(prim: P.Eigh, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.linalg.eigh(operands[0], symmetrize_input=True)[prim.output]


@export_rule(P.Qr)
def _qr(prim: P.Qr, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.linalg.qr(operands[0], mode="complete" if prim.complete else "reduced")[prim.output]


@export_rule(P.Svd)
def _svd(prim: P.Svd, operands: Sequence[Any], out: TensorType) -> Any:
    u, s, vh = jnp.linalg.svd(operands[0], full_matrices=prim.full_matrices, compute_uv=True)
    return (s, u, vh)[prim.output]
