"""Linear algebra of stacks of matrices (the last two axes), each computed by numpy.linalg
(`typeclasses.linalg`, which says where its values are JAX's rather than numpy's) and
differentiated as JAX differentiates it (`jax/_src/lax/linalg.py`, `jax/_src/numpy/linalg.py`):

    inv a                X = a⁻¹                        dX = −X da X
    solve a b            x = a⁻¹ b                      dx = solve(a, db − da x)  (linear in b)
    cholesky a           L Lᵀ = sym a                   dL = L φ(L⁻¹ sym(da) L⁻ᵀ)
    sign_det a           sign of det a                  piecewise constant
    log_abs_det a        log |det a|                    d = tr(a⁻¹ da)
    eigh a output        sym a = v diag(w) vᵀ           dw = diag(vᵀ sym(da) v), dv = v (F ∘ vᵀ sym(da) v)
    qr a output complete a = q r                        dq, dr as JAX's (m ≥ n; square when complete)
    svd a output full    a = u diag(s) vh               ds = diag(uᵀ da v), du, dvh as JAX's

where sym a = (a + aᵀ)/2, φ keeps the lower triangle and halves the diagonal, and
F_ij = 1/(w_j − w_i) off the diagonal, 0 on it. eigh and qr have two results, svd three;
a binding reads one (`output`), and the others, which a derivative needs, are bindings of
their own.
Each batches over leading axes, its batch axis moved in front.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, integer
from shax.core.types import TensorType
from shax.rules.batch import batch_rule, batched, batched_at, moveaxis
from shax.rules.cost import cost_rule
from shax.rules.linearize import Tangent, linearize_rule, residual
from shax.rules.transpose import transpose_rule
from shax.rules.types import type_rule
from typeclasses import linalg

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["Cholesky", "Eigh", "Inv", "LogAbsDet", "Qr", "SignDet", "Solve", "Svd"]

N, L, Z = Linearity.NONLINEAR, Linearity.LINEAR, Linearity.NON_DIFFERENTIABLE


@attrs.frozen
class Inv(Primitive):
    name, function = "inv", linalg.inv
    linearity: ClassVar[tuple[Linearity, ...]] = (N,)


@attrs.frozen
class Solve(Primitive):
    name, function = "solve", linalg.solve
    linearity: ClassVar[tuple[Linearity, ...]] = (N, L)


@attrs.frozen
class Cholesky(Primitive):
    name, function = "cholesky", linalg.cholesky
    linearity: ClassVar[tuple[Linearity, ...]] = (N,)


@attrs.frozen
class SignDet(Primitive):
    name, function = "sign_det", linalg.sign_det
    linearity: ClassVar[tuple[Linearity, ...]] = (Z,)


@attrs.frozen
class LogAbsDet(Primitive):
    name, function = "log_abs_det", linalg.log_abs_det
    linearity: ClassVar[tuple[Linearity, ...]] = (N,)


@attrs.frozen
class Eigh(Primitive):
    name, function = "eigh", linalg.eigh
    linearity: ClassVar[tuple[Linearity, ...]] = (N,)
    output: int = attrs.field(converter=integer)  # 0: the eigenvalues (ascending), 1: the eigenvectors


@attrs.frozen
class Qr(Primitive):
    name, function = "qr", linalg.qr
    linearity: ClassVar[tuple[Linearity, ...]] = (N,)
    output: int = attrs.field(converter=integer)  # 0: q, 1: r
    complete: bool = attrs.field(converter=bool)  # numpy's mode "complete": q is m × m


@attrs.frozen
class Svd(Primitive):
    name, function = "svd", linalg.svd
    linearity: ClassVar[tuple[Linearity, ...]] = (N,)
    output: int = attrs.field(converter=integer)  # 0: s (descending), 1: u, 2: vh
    full_matrices: bool = attrs.field(converter=bool)  # u m × m and vh n × n, else k = min(m, n) columns/rows


# Types ----------------------------------------------------------------------------------


def _matrices(prim: Primitive, x: TensorType, square: bool = True) -> tuple[int, int]:
    """The matrix shape of `x`, a float stack of matrices (square ones if `square`)."""
    if not x.dtype.is_float:
        raise prim.fail("needs float matrices", x)
    if x.rank < 2 or (square and x.shape[-1] != x.shape[-2]):
        raise prim.fail(f"needs {'square ' if square else ''}matrices (the last two axes)", x)
    return x.shape[-2], x.shape[-1]


def _output(prim: Eigh | Qr | Svd, x: TensorType, count: int = 2) -> None:
    if not 0 <= prim.output < count:
        raise prim.fail(f"output {prim.output} is not one of {list(range(count))}", x, error=ShaxValueError)


@type_rule(Inv, Cholesky)
def _square_type(prim: Primitive, operands: Sequence[TensorType]) -> TensorType:
    _matrices(prim, operands[0])
    return operands[0]


@type_rule(Solve)
def _solve_type(prim: Solve, operands: Sequence[TensorType]) -> TensorType:
    a, b = operands
    n, _ = _matrices(prim, a)
    if b.dtype != a.dtype or b.rank != a.rank or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != n:
        raise prim.fail("needs b of a's dtype, its stack of matrices with n rows", a, b)
    return b


@type_rule(SignDet, LogAbsDet)
def _det_type(prim: Primitive, operands: Sequence[TensorType]) -> TensorType:
    (a,) = operands
    _matrices(prim, a)
    return a.with_shape(a.shape[:-2])


@type_rule(Eigh)
def _eigh_type(prim: Eigh, operands: Sequence[TensorType]) -> TensorType:
    (a,) = operands
    _matrices(prim, a)
    _output(prim, a)
    return a.with_shape(a.shape[:-1]) if prim.output == 0 else a


@type_rule(Qr)
def _qr_type(prim: Qr, operands: Sequence[TensorType]) -> TensorType:
    (a,) = operands
    m, n = _matrices(prim, a, square=False)
    _output(prim, a)
    k = m if prim.complete else min(m, n)
    return a.with_shape((*a.shape[:-2], m, k) if prim.output == 0 else (*a.shape[:-2], k, n))


@type_rule(Svd)
def _svd_type(prim: Svd, operands: Sequence[TensorType]) -> TensorType:
    (a,) = operands
    m, n = _matrices(prim, a, square=False)
    _output(prim, a, 3)
    k = min(m, n)
    rows, columns = (m, n) if prim.full_matrices else (k, k)
    return a.with_shape((*a.shape[:-2], *((k,), (m, rows), (columns, n))[prim.output]))


# Derivatives, in the EDSL -----------------------------------------------------------------


def _mT(x: Any) -> Any:  # noqa: N802 - numpy's name
    rank = len(tc.shape(x))
    return tc.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _symmetric(dx: Any) -> Any:
    return (dx + _mT(dx)) * 0.5


def _eye(x: Any) -> np.ndarray:
    """The identity of x's matrices, in x's dtype (broadcast over the stack)."""
    return np.eye(tc.shape(x)[-1], dtype=x.dtype)


def _diagonal(x: Any) -> Any:
    """The diagonals of x's square matrices."""
    return tc.reduce_sum(x * _eye(x), [len(tc.shape(x)) - 1])


# inv: d(a⁻¹) = −a⁻¹ da a⁻¹
@linearize_rule(Inv)
def _inv_jvp(prim: Inv, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    x = residual(out)
    return -tc.matmul(tc.matmul(x, tangents[0]), x)


# solve: d(a⁻¹ b) = a⁻¹ (db − da x), x = a⁻¹ b
@linearize_rule(Solve)
def _solve_jvp(prim: Solve, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (a, _), (da, db) = primals, tangents
    return linalg.solve(residual(a), db - tc.matmul(da, residual(out)))


# solve, linear in b: (a⁻¹ db)ᵀ ct = a⁻ᵀ ct
@transpose_rule(Solve)
def _solve_transpose(prim: Solve, ct: Tracer, operands: Sequence[Any]) -> tuple[Any, Any]:
    return None, linalg.solve(_mT(operands[0]), ct)


# cholesky: dL = L φ(L⁻¹ sym(da) L⁻ᵀ), φ the lower triangle with its diagonal halved
@linearize_rule(Cholesky)
def _cholesky_jvp(prim: Cholesky, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    lower = residual(out)
    n = tc.shape(out)[-1]
    phi = np.tril(np.ones((n, n), out.dtype)) - 0.5 * np.eye(n, dtype=out.dtype)
    inner = _mT(linalg.solve(lower, _mT(linalg.solve(lower, _symmetric(tangents[0])))))
    return tc.matmul(lower, inner * phi)


# log |det a|: d = tr(a⁻¹ da)
@linearize_rule(LogAbsDet)
def _log_abs_det_jvp(prim: LogAbsDet, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    return tc.reduce_sum(_diagonal(linalg.solve(residual(primals[0]), tangents[0])), [len(tc.shape(out))])


# eigh: with m = vᵀ sym(da) v, dw = diag m and dv = v (F ∘ m), F_ij = 1/(w_j − w_i) (i ≠ j), F_ii = 0
@linearize_rule(Eigh)
def _eigh_jvp(prim: Eigh, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (a,), (da,) = primals, tangents
    vectors = linalg.eigh(a, 1)
    # vᵀ is a primal value too: it crosses (as unzip(jvp) has it), not recomputed in the linear program
    v = residual(vectors)
    m = tc.matmul(tc.matmul(residual(_mT(vectors)), _symmetric(da)), v)
    if prim.output == 0:
        return _diagonal(m)
    w = linalg.eigh(a, 0)
    rows, columns = (tc.broadcast_to(tc.reshape(w, s), tc.shape(a)) for s in _row_and_column(tc.shape(w)))
    eye = _eye(a)
    spread = 1.0 / (eye + columns - rows) - eye
    return tc.matmul(v, residual(spread) * m)


def _row_and_column(shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Shapes reading w (…, n) as (…, n, 1) and as (…, 1, n)."""
    *stack, n = shape
    return (*stack, n, 1), (*stack, 1, n)


# qr (m ≥ n): with e = da r⁻¹, c = qᵀ e, o = tril(c, −1) − tril(c, −1)ᵀ:
# dq = q (o − c) + e, dr = (c − o) r
@linearize_rule(Qr)
def _qr_jvp(prim: Qr, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (a,), (da,) = primals, tangents
    *_, m, n = tc.shape(a)
    if m < n or (prim.complete and m != n):
        shape = "square" if prim.complete else "with at least as many rows as columns"
        raise prim.fail(f"is differentiated only on matrices {shape} (as JAX)", a.type, error=ShaxValueError)
    q, r = linalg.qr(a, 0, prim.complete), linalg.qr(a, 1, prim.complete)
    # rᵀ and qᵀ cross as residuals (primal values, as unzip(jvp) has them)
    e = _mT(linalg.solve(residual(_mT(r)), _mT(da)))
    c = tc.matmul(residual(_mT(q)), e)
    below = c * np.tril(np.ones((n, n), a.dtype), -1)
    o = below - _mT(below)
    return tc.matmul(residual(q), o - c) + e if prim.output == 0 else tc.matmul(c - o, residual(r))


# svd (JAX's): with the reduced u, s, v and dS = uᵀ da v: ds = diag dS,
# du = u (F ∘ (dS s + (dS s)ᵀ) + ½(dS − dSᵀ) s⁻¹) + (1 − u uᵀ) da v s⁻¹ (m > n),
# dv = v (F ∘ (s dS + (s dS)ᵀ)) + (1 − v vᵀ) daᵀ u s⁻¹ (n > m), F_ij = 1/(s_j² − s_i²), F_ii = 0
@linearize_rule(Svd)
def _svd_jvp(prim: Svd, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (a,), (da,) = primals, tangents
    *_, m, n = tc.shape(a)
    if prim.output and prim.full_matrices and m != n:
        raise prim.fail("is differentiated only with full_matrices=False (as JAX)", a.type, error=ShaxValueError)
    # uᵀ and v = vhᵀ cross as residuals (primal values, as unzip(jvp) has them)
    u_primal, vh_primal = linalg.svd(a, 1, False), linalg.svd(a, 2, False)
    ut, v = residual(_mT(u_primal)), residual(_mT(vh_primal))
    ds_matrix = tc.matmul(tc.matmul(ut, da), v)
    if prim.output == 0:
        return _diagonal(ds_matrix)
    s = linalg.svd(a, 0, False)
    stack, k = tc.shape(s)[:-1], tc.shape(s)[-1]
    rows, columns = (tc.broadcast_to(tc.reshape(s, r), (*stack, k, k)) for r in _row_and_column(tc.shape(s)))
    eye = _eye(rows)
    spread = residual(1.0 / ((columns + rows) * (columns - rows) + eye) - eye)
    if prim.output == 1:
        zero = tc.convert_element_type(tc.eq(s, 0.0), np.dtype(s.dtype))
        # ½ diag(s⁻¹), 0 where s is 0
        halved_inverse = residual(eye * _as_rows(0.5 / (s + zero) - 0.5 * zero, (*stack, k, k)))
        scaled = ds_matrix * residual(columns)
        u = residual(u_primal)
        du = tc.matmul(u, spread * (scaled + _mT(scaled)) + (ds_matrix - _mT(ds_matrix)) * halved_inverse)
        if m > n:
            dav = tc.matmul(da, v)
            du = du + (dav - tc.matmul(u, tc.matmul(ut, dav))) * residual(_as_rows(1.0 / s, (*stack, m, k)))
        return du
    scaled = ds_matrix * residual(rows)
    dv = tc.matmul(v, spread * (scaled + _mT(scaled)))
    if n > m:
        dau = tc.matmul(_mT(da), residual(u_primal))
        dv = dv + (dau - tc.matmul(v, tc.matmul(residual(vh_primal), dau))) * residual(
            _as_rows(1.0 / s, (*stack, n, k))
        )
    return _mT(dv)


def _as_rows(w: Any, shape: tuple[int, ...]) -> Any:
    """w (…, k) read as (…, 1, k), broadcast to `shape`: each row a copy of w."""
    return tc.broadcast_to(tc.reshape(w, _row_and_column(tc.shape(w))[1]), shape)


# Batching: numpy.linalg batches over leading axes; the batch axis moves in front ------------


# f of a stack: the batch axis in front, one more stacked axis
@batch_rule(Inv, Cholesky, SignDet, LogAbsDet, Eigh, Qr, Svd)
def _stacked_batch(prim: Primitive, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int]:
    (x,), (d,) = operands, dims
    return prim.apply(moveaxis(x, batched(d), 0)), 0


# solve a b: both batched in front (an unbatched one broadcast along the batch)
@batch_rule(Solve)
def _solve_batch(prim: Solve, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int]:
    size = next(tc.shape(x)[d] for x, d in zip(operands, dims) if d is not None)
    return prim.apply(*(batched_at(x, d, 0, size) for x, d in zip(operands, dims))), 0


# Costs: LAPACK's flop counts per n × n matrix (LU ⅔n³, Cholesky ⅓n³, QR 2mn² − ⅔n³,
# symmetric eigenproblem about 9n³), times the stack -----------------------------------------


def _stack(x: TensorType) -> int:
    return x.size // max(x.shape[-1] * x.shape[-2], 1)


# inv: an LU and n solves, 2n³
@cost_rule(Inv)
def _inv_cost(prim: Inv, operands: Sequence[TensorType], out: TensorType) -> int:
    return _stack(operands[0]) * 2 * operands[0].shape[-1] ** 3


# solve: an LU (⅔n³) and k pairs of triangular solves (2n²k)
@cost_rule(Solve)
def _solve_cost(prim: Solve, operands: Sequence[TensorType], out: TensorType) -> int:
    a, b = operands
    n, k = b.shape[-2], b.shape[-1]
    return _stack(a) * (2 * n**3 // 3 + 2 * n * n * k)


# cholesky: ⅓n³
@cost_rule(Cholesky)
def _cholesky_cost(prim: Cholesky, operands: Sequence[TensorType], out: TensorType) -> int:
    return _stack(operands[0]) * operands[0].shape[-1] ** 3 // 3


# sign_det, log_abs_det: an LU, ⅔n³
@cost_rule(SignDet, LogAbsDet)
def _det_cost(prim: Primitive, operands: Sequence[TensorType], out: TensorType) -> int:
    return _stack(operands[0]) * 2 * operands[0].shape[-1] ** 3 // 3


# eigh: about 9n³ (tridiagonalization and QR iterations with vectors)
@cost_rule(Eigh)
def _eigh_cost(prim: Eigh, operands: Sequence[TensorType], out: TensorType) -> int:
    return _stack(operands[0]) * 9 * operands[0].shape[-1] ** 3


# qr: Householder, 2mk² − ⅔k³ with k = min(m, n), and as much again to form q
@cost_rule(Qr)
def _qr_cost(prim: Qr, operands: Sequence[TensorType], out: TensorType) -> int:
    m, n = operands[0].shape[-2:]
    k = min(m, n)
    return _stack(operands[0]) * 2 * (2 * m * k * k - 2 * k**3 // 3)


# svd: Golub–Kahan bidiagonalization and its vectors, about 4mn² + 8n³ for m ≥ n
@cost_rule(Svd)
def _svd_cost(prim: Svd, operands: Sequence[TensorType], out: TensorType) -> int:
    m, n = operands[0].shape[-2:]
    short, long = min(m, n), max(m, n)
    return _stack(operands[0]) * (4 * long * short * short + 8 * short**3)
