"""`shax.numpy.linalg`: numpy.linalg's names and signatures (JAX's where numpy has none),
on numpy values and tracers alike, over the primitives of `shax.primitives.linalg`.

Matrices are the last two axes, stacked over the leading ones (broadcast against each
other in `solve`). Integer and bool operands are read as f64 (numpy's). As JAX's:
`cholesky` and `eigh` decompose the symmetric part of their operand, and a matrix that
cannot be inverted or decomposed gives NaNs rather than numpy's LinAlgError.
`pinv` is JAX's (its cutoff, its derivative), `matrix_rank` counts singular values
above JAX's tolerance, `cond` is numpy's ratio of norms.
Compositions: `det` is sign · e^(log |det|), its derivative JAX's tr(adj(a) da) (the
cofactor matrix, at a singular matrix too), `eigvalsh` eigh's values, `matrix_power` a
product of squarings, and `norm` numpy's formulas over abs, sums and extremes.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.numpy._arrays import _int, moveaxis, normalize_axis
from shax.numpy._elementwise import as_array
from shax.tracing.tracer import Tracer
from shax.transforms.custom import custom_jvp
from shax.transforms.stop_gradient import stop_gradient
from typeclasses import linalg

__all__ = [
    "cholesky", "cond", "det", "eigh", "eigvalsh", "inv", "matrix_power", "matrix_rank", "norm", "pinv", "qr",
    "slogdet", "solve", "svd",
]  # fmt: skip


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class SVDResult(NamedTuple):
    U: Any  # noqa: N815 - numpy's field names
    S: Any  # noqa: N815
    Vh: Any  # noqa: N815


class QRResult(NamedTuple):
    Q: Any  # noqa: N815 - numpy's field names
    R: Any  # noqa: N815


def _fail(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"linalg.{op}: {message}"), current_source())


def _matrices(op: str, a: Any) -> Any:
    """`a` as a float stack of matrices: an integer or bool one as f64, as numpy reads it."""
    a = as_array(a, f"linalg.{op}")
    if not isinstance(a, Tracer):
        a = np.asarray(a)
        if a.dtype.kind not in "biuf":
            raise _fail(op, f"needs an array of numbers, got {a.dtype}", ShaxTypeError)
    if np.ndim(a) < 2:
        raise _fail(op, f"needs a stack of matrices (two axes or more), got shape {tuple(np.shape(a))}")
    return _inexact(a)


def _inexact(a: Any) -> Any:
    dtype = np.dtype(a.dtype)
    return a if dtype.kind == "f" else tc.convert_element_type(a, np.float64)


def _square(op: str, a: Any) -> Any:
    a = _matrices(op, a)
    if np.shape(a)[-1] != np.shape(a)[-2]:
        raise _fail(op, f"needs square matrices (the last two axes), got shape {tuple(np.shape(a))}")
    return a


def _mT(a: Any) -> Any:  # noqa: N802 - numpy's name
    rank = np.ndim(a)
    return tc.transpose(a, [*range(rank - 2), rank - 1, rank - 2])


def inv(a: Any) -> Any:
    """a⁻¹ of each matrix."""
    return linalg.inv(_square("inv", a))


def solve(a: Any, b: Any) -> Any:
    """x with a x = b; b is one vector when it has one axis (numpy 2's rule), otherwise a
    stack of matrices, its stack broadcast against a's."""
    a = _square("solve", a)
    b = as_array(b, "linalg.solve")
    b = b if isinstance(b, Tracer) else np.asarray(b)
    if np.ndim(b) == 0:
        raise _fail("solve", "needs b with at least one axis, got a scalar")
    b = _inexact(b)
    if np.dtype(a.dtype) != np.dtype(b.dtype):  # f32 with f64: f64, as numpy
        a, b = (tc.convert_element_type(v, np.float64) for v in (a, b))
    n = np.shape(a)[-1]
    vector = np.ndim(b) == 1
    if np.shape(b)[0 if vector else -2] != n:
        raise _fail("solve", f"b's shape {tuple(np.shape(b))} does not fit a's {tuple(np.shape(a))}")
    matrix = tc.reshape(b, (n, 1)) if vector else b
    try:
        stack = np.broadcast_shapes(np.shape(a)[:-2], np.shape(matrix)[:-2])
    except ValueError:
        shapes = f"a {tuple(np.shape(a))} and b {tuple(np.shape(b))}"
        raise _fail("solve", f"the stacks of {shapes} do not broadcast") from None
    a = tc.broadcast_to(a, (*stack, n, n))
    x = linalg.solve(a, tc.broadcast_to(matrix, (*stack, *np.shape(matrix)[-2:])))
    return tc.reshape(x, (*stack, n)) if vector else x


def cholesky(a: Any, /, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """L, lower triangular with L Lᵀ = (a + aᵀ)/2 (JAX's `symmetrize_input`); Lᵀ if `upper`."""
    if symmetrize_input is not True:
        raise _fail("cholesky", "decomposes the symmetric part only (symmetrize_input=True, JAX's default)")
    lower = linalg.cholesky(_square("cholesky", a))
    return _mT(lower) if _flag("cholesky", "upper", upper) else lower


def slogdet(a: Any) -> SlogdetResult:
    """(sign, log |det a|) of each matrix: sign 0 and −inf for a singular one."""
    a = _square("slogdet", a)
    return SlogdetResult(linalg.sign_det(a), linalg.log_abs_det(a))


def det(a: Any) -> Any:
    """det a = sign · e^(log |det a|), differentiated as JAX does: d det = tr(adj(a) da),
    at a singular matrix too (where log |det| has no derivative)."""
    return _det(_square("det", a))


def _det_value(a: Any) -> Any:
    return linalg.sign_det(a) * tc.exp(linalg.log_abs_det(a))


def _det_jvp(primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    d = _det_value(a)
    n = np.shape(a)[-1]
    rank = np.ndim(a)
    stacked = tc.broadcast_to(tc.reshape(d, (*np.shape(d), 1, 1)), np.shape(a))
    # adj a = det(a) a⁻¹ where det a ≠ 0; at a singular a, the SVD's (which carries no
    # derivative, so a second derivative is d(det(a) a⁻¹)'s where that is defined).
    singular = tc.eq(stacked, np.zeros((), np.dtype(d.dtype)))
    adjugate = tc.select(singular, _singular_adjugate(stop_gradient(a), n), stacked * linalg.inv(a))
    return d, tc.reduce_sum(_mT(adjugate) * da, [rank - 2, rank - 1])


def _singular_adjugate(a: Any, n: int) -> Any:
    """adj a from a = u diag(s) vh: det(u) det(vh) · vhᵀ diag(∏_{j≠i} s_j) uᵀ (each product
    of the others, so no division by a zero singular value; zero below rank n − 1)."""
    s, u, vh = linalg.svd(a, False, True)
    *stack, _ = np.shape(s)
    shape = (*stack, n, n)
    dtype = np.dtype(s.dtype)
    # row i holds s with its i-th entry made 1: its product is ∏_{j≠i} s_j
    rows = tc.broadcast_to(tc.reshape(s, (*stack, 1, n)), shape)
    diagonal = np.broadcast_to(np.eye(n, dtype=bool), shape)
    others = tc.reduce_prod(tc.select(diagonal, np.ones(shape, dtype), rows), [len(stack) + 1])
    signs = linalg.sign_det(u) * linalg.sign_det(vh)
    scaled = _mT(vh) * tc.broadcast_to(tc.reshape(others, (*stack, 1, n)), shape)
    return tc.matmul(scaled, _mT(u)) * tc.broadcast_to(tc.reshape(signs, (*stack, 1, 1)), shape)


_det = custom_jvp(_det_value)
_det.defjvp(_det_jvp)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:  # noqa: N803 - numpy's name
    """(w ascending, v) with (a + aᵀ)/2 = v diag(w) vᵀ: JAX's symmetrized input, so `UPLO`
    (either triangle) does not change the result on symmetric a."""
    _uplo("eigh", UPLO)
    if symmetrize_input is not True:
        raise _fail("eigh", "decomposes the symmetric part only (symmetrize_input=True, JAX's default)")
    a = _square("eigh", a)
    return EighResult(*linalg.eigh(a))


def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803 - numpy's name
    """The eigenvalues of eigh, ascending."""
    _uplo("eigvalsh", UPLO)
    return linalg.eigh(_square("eigvalsh", a))[0]


def _uplo(op: str, uplo: Any) -> None:
    if uplo not in (None, "L", "U"):
        raise _fail(op, f"UPLO must be 'L' or 'U', got {uplo!r}")


def _flag(op: str, name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise _fail(op, f"{name} must be a bool, got {value!r}", ShaxTypeError)
    return bool(value)


def qr(a: Any, mode: str = "reduced") -> Any:
    """a = Q R, Q with orthonormal columns, R upper triangular: numpy's modes "reduced"
    (Q m × k, R k × n, k = min(m, n)), "complete" (Q m × m) and "r" (R only)."""
    if mode not in ("reduced", "complete", "r"):
        raise _fail("qr", f"mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    a = _matrices("qr", a)
    complete = mode == "complete"
    q, r = linalg.qr(a, complete)
    return r if mode == "r" else QRResult(q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False) -> Any:
    """a = U diag(S) Vh, S descending (numpy's SVDResult), or S alone if not `compute_uv`;
    U m × m and Vh n × n if `full_matrices`, else k = min(m, n) columns of U and rows of Vh."""
    a = _matrices("svd", a)
    full = _flag("svd", "full_matrices", full_matrices)
    if _flag("svd", "hermitian", hermitian) and _flag("svd", "compute_uv", compute_uv):
        raise _fail("svd", "hermitian=True with compute_uv=True is not supported (numpy's vectors come from eigh)")
    if not _flag("svd", "compute_uv", compute_uv):
        return linalg.svd(a, False, False)[0]
    s, u, vh = linalg.svd(a, full, True)
    return SVDResult(u, s, vh)


def _singular_values(op: str, a: Any) -> Any:
    return linalg.svd(_matrices(op, a), False, False)[0]


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore–Penrose pseudo-inverse (n × m), JAX's: the singular values at most
    rtol · the largest dropped, rtol by default 10 · max(m, n) · eps (numpy's rcond is 1e-15);
    its derivative Golub and Pereyra's, defined at rank-deficient matrices too."""
    if rcond is not None:
        if rtol is not None:
            raise _fail("pinv", "only one of rtol and rcond may be given")
        rtol = rcond
    if rtol is not None and not isinstance(rtol, (int, float, np.integer, np.floating)):
        raise _fail("pinv", f"rtol must be a number, got {type(rtol).__name__}", ShaxTypeError)
    _flag("pinv", "hermitian", hermitian)
    a = _matrices("pinv", a)
    if rtol is None:
        rtol = 10.0 * max(np.shape(a)[-2:]) * float(np.finfo(np.dtype(a.dtype)).eps)
    return _pinv(a, float(rtol))


def _pinv_value(a: Any, rtol: float) -> Any:
    """vh.T diag(1/s) u.T, with s at most rtol · s_max read as ∞ (so dropped)."""
    s, u, vh = linalg.svd(a, False, True)
    *stack, k = np.shape(s)
    largest = tc.broadcast_to(tc.slice(s, [0] * len(np.shape(s)), [*stack, 1]), np.shape(s))
    s = tc.select(tc.gt(s, largest * rtol), s, np.full(np.shape(s), np.inf, np.dtype(s.dtype)))
    return tc.matmul(_mT(vh), _mT(u) / tc.broadcast_to(tc.reshape(s, (*stack, k, 1)), (*stack, k, np.shape(u)[-2])))


# pinv (Golub–Pereyra): dp = −p da p + p pᵀ daᵀ (1 − a p) + (1 − p a) daᵀ pᵀ p
def _pinv_jvp(rtol: float, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    (a,), (da,) = primals, tangents
    p = _pinv(a, rtol)
    s = tc.matmul(tc.matmul(p, _mT(p)), _mT(da))
    t = tc.matmul(tc.matmul(_mT(da), _mT(p)), p)
    dp = -tc.matmul(tc.matmul(p, da), p) + s - tc.matmul(tc.matmul(s, a), p) + t - tc.matmul(tc.matmul(p, a), t)
    return p, dp


_pinv = custom_jvp(_pinv_value, nondiff_argnums=(1,))
_pinv.defjvp(_pinv_jvp)


def matrix_rank(M: Any, rtol: Any = None, *, tol: Any = None) -> Any:  # noqa: N803 - numpy's name
    """The number of singular values above rtol · s_max, rtol by default max(m, n) · eps
    (JAX's; numpy's `tol` is an absolute cutoff, JAX's an alias of rtol, as here); of a
    vector, 1 unless it is all zeros. An int32, as JAX's."""
    if tol is not None:
        if rtol is not None:
            raise _fail("matrix_rank", "only one of rtol and tol may be given")
        rtol = tol
    m = as_array(M, "linalg.matrix_rank")
    m = _inexact(m if isinstance(m, Tracer) else np.asarray(m))
    if np.ndim(m) < 2:
        nonzero = tc.reduce_max(tc.convert_element_type(tc.ne(m, 0.0), np.int32), list(range(np.ndim(m))))
        return nonzero
    s = _singular_values("matrix_rank", m)
    *stack, k = np.shape(s)
    largest = tc.reduce_max(s, [len(stack)])
    if rtol is None:
        rtol = float(max(np.shape(m)[-2:]) * np.finfo(np.dtype(s.dtype)).eps)
    cutoff = tc.broadcast_to(tc.reshape(largest * rtol, (*stack, 1)), np.shape(s))
    return tc.reduce_sum(tc.convert_element_type(tc.gt(s, cutoff), np.int32), [len(stack)])


def cond(x: Any, p: Any = None) -> Any:
    """numpy's condition number: s_max / s_min (p None or 2), s_min / s_max (−2), or
    norm(x, p) · norm(x⁻¹, p) for the other matrix norms; NaN where x⁻¹ is NaN."""
    x = _matrices("cond", x)
    if p is None or _is(p, 2) or _is(p, -2):
        s = linalg.svd(x, False, False)[0]
        last = len(np.shape(s)) - 1
        largest, smallest = tc.reduce_max(s, [last]), tc.reduce_min(s, [last])
        return smallest / largest if _is(p, -2) else largest / smallest
    if np.shape(x)[-1] != np.shape(x)[-2]:
        raise _fail("cond", f"needs square matrices for p={p!r}, got shape {tuple(np.shape(x))}")
    return norm(x, p, axis=(-2, -1)) * norm(inv(x), p, axis=(-2, -1))


def matrix_power(a: Any, n: int) -> Any:
    """a multiplied by itself n times (n ≥ 0: in a's dtype, the identity for 0), or a⁻¹'s (n < 0)."""
    count = _int("linalg.matrix_power", n, "the exponent")
    a = as_array(a, "linalg.matrix_power")
    a = a if isinstance(a, Tracer) else np.asarray(a)
    if np.ndim(a) < 2 or np.shape(a)[-1] != np.shape(a)[-2]:
        raise _fail("matrix_power", f"needs square matrices (the last two axes), got shape {tuple(np.shape(a))}")
    if count < 0:
        a, count = inv(a), -count
    if count == 0:
        eye: Any = np.eye(np.shape(a)[-1], dtype=a.dtype)
        return tc.broadcast_to(eye, tuple(np.shape(a)))
    result = None
    while True:  # binary powering: the squares a, a², a⁴, ... of count's bits
        if count & 1:
            result = a if result is None else tc.matmul(result, a)
        count >>= 1
        if not count:
            return result
        a = tc.matmul(a, a)


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:  # noqa: A002 - numpy's name
    """numpy's vector norms (one axis: ord None, 2, ±inf, 0, 1, any other number p:
        (Σ|x|ᵖ)^(1/p)) and matrix norms (two axes: None, 'fro', 'nuc', ±1, ±2, ±inf); with no axis,
        x's 2-norm flattened (ord None) or the norm of a vector or matrix x; 'nuc' and ±2 of
    x's singular values."""
    x = as_array(x, "linalg.norm")
    x = x if isinstance(x, Tracer) else np.asarray(x)
    if np.dtype(x.dtype).kind not in "biuf":
        raise _fail("norm", f"needs an array of numbers, got {x.dtype}", ShaxTypeError)
    x = _inexact(x)
    keep = _flag("norm", "keepdims", keepdims)
    rank = np.ndim(x)
    if axis is None:
        if ord is None:
            return _reduced(tc.sqrt(tc.reduce_sum(x * x, list(range(rank)))), range(rank), rank, keep)
        if rank not in (1, 2):
            raise _fail("norm", f"with an ord, needs a vector or a matrix (or an axis), got rank {rank}")
        axes = tuple(range(rank))
    else:
        given = axis if isinstance(axis, tuple) else (axis,)
        axes = tuple(normalize_axis("linalg.norm", a, rank) for a in given)
    if len(axes) == 1:
        return _reduced(_vector_norm(x, ord, axes[0]), axes, rank, keep)
    if len(axes) == 2 and axes[0] != axes[1]:
        return _reduced(_matrix_norm(x, ord, axes), axes, rank, keep)
    raise _fail("norm", f"takes one axis (a vector norm) or two distinct ones (a matrix norm), got {axis!r}")


def _reduced(y: Any, axes: Any, rank: int, keepdims: bool) -> Any:
    """y, x reduced over `axes`, with those axes kept as size 1 if `keepdims`."""
    if not keepdims:
        return y
    shape = list(np.shape(y))
    for a in sorted(axes):
        shape.insert(a, 1)
    return tc.reshape(y, tuple(shape))


def _is(ord: Any, value: float) -> bool:  # noqa: A002 - numpy's name
    return not isinstance(ord, str) and ord is not None and builtins.bool(ord == value)


def _abs(x: Any) -> Any:
    """|x| with JAX's derivative at 0 (1, where abs's is 0): x where x ≥ 0, else −x."""
    return tc.select(tc.ge(x, 0.0), x, tc.neg(x))


def _vector_norm(x: Any, ord: Any, axis: int) -> Any:  # noqa: A002 - numpy's name
    if ord is None or _is(ord, 2):
        return tc.sqrt(tc.reduce_sum(x * x, [axis]))
    if isinstance(ord, str) or not isinstance(ord, (int, float, np.integer, np.floating)):
        raise _fail("norm", f"invalid order {ord!r} for a vector norm")
    if _is(ord, np.inf):  # JAX's max with an initial 0, which shares a tie at 0
        return tc.max(tc.reduce_max(_abs(x), [axis]), 0.0)
    if _is(ord, -np.inf):
        return tc.reduce_min(_abs(x), [axis])
    if _is(ord, 0):
        return tc.reduce_sum(tc.convert_element_type(tc.ne(x, 0.0), np.dtype(x.dtype)), [axis])
    if _is(ord, 1):
        return tc.reduce_sum(_abs(x), [axis])
    p = float(ord)
    return tc.reduce_sum(_abs(x) ** p, [axis]) ** (1.0 / p)


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int]) -> Any:  # noqa: A002 - numpy's name
    row, col = axes
    if ord is None or ord in ("fro", "f"):
        return tc.sqrt(tc.reduce_sum(x * x, sorted(axes)))
    # ±1: the largest (smallest) column sum of |x|; ±inf: the largest (smallest) row sum;
    # the largest as JAX's, a max with an initial 0
    for value, summed, kept in ((1, row, col), (np.inf, col, row)):
        for sign in (1, -1):
            if _is(ord, sign * value):
                sums = tc.reduce_sum(_abs(x), [summed])
                left = [kept - (kept > summed)]
                return tc.max(tc.reduce_max(sums, left), 0.0) if sign > 0 else tc.reduce_min(sums, left)
    if ord == "nuc" or _is(ord, 2) or _is(ord, -2):  # the sum, the largest (initial 0, JAX's), the smallest of s
        s = linalg.svd(moveaxis(x, axes, (-2, -1)), False, False)[0]
        last = len(np.shape(s)) - 1
        if ord == "nuc":
            return tc.reduce_sum(s, [last])
        return tc.max(tc.reduce_max(s, [last]), 0.0) if _is(ord, 2) else tc.reduce_min(s, [last])
    raise _fail("norm", f"invalid order {ord!r} for a matrix norm")
