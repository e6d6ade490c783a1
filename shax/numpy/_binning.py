"""numpy's `digitize` and `interp`: where values fall among sorted points, found by
`searchsorted` (`shax.numpy._static_size`), so both run on tracers (i32 indices, JAX's
int, where numpy's are int64).

`interp` computes numpy's formula (`arr_interp` in numpy's C source), which its values
follow: on [xp_j, xp_j+1], slope · (x − xp_j) + fp_j with slope = Δfp / Δxp, retried from
the right end where that is NaN (an infinite fp), fp_j where both ends are equal; fp_j at
x = xp_j and fp's last value at xp's last; `left` / `right` (fp's ends by default)
outside; NaN at NaN. Its derivative reaches x, xp and fp, the slope's (JAX's) inside."""

from __future__ import annotations

from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError
from shax.numpy._arrays import _fail, broadcast_to, concatenate
from shax.numpy._elementwise import as_array
from shax.numpy._indexing import argsort, take
from shax.numpy._static_size import searchsorted
from shax.tracing.tracer import Tracer

__all__ = ["digitize", "interp"]


def _numpy(op: str, function: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return function(*args, **kwargs)
    except (TypeError, ValueError) as error:
        raise _fail(op, f"numpy: {error}", ShaxTypeError if isinstance(error, TypeError) else ShaxValueError) from None


def _vector(op: str, name: str, x: Any) -> None:
    if len(tc.shape(x)) != 1:
        raise _fail(op, f"{name} must be a vector, got shape {tuple(tc.shape(x))}")


def digitize(x: Any, bins: Any, right: bool = False) -> Any:
    """The index of the bin each x falls in: i with bins[i−1] ≤ x < bins[i] for increasing
    bins (bins[i−1] < x ≤ bins[i] if `right`), mirrored for decreasing ones. Traced bins are
    read as decreasing where their last is below their first (JAX's)."""
    x, bins = as_array(x, "digitize"), as_array(bins, "digitize")
    if not isinstance(right, (bool, np.bool_)):
        raise _fail("digitize", f"right must be a bool, got {right!r}", ShaxTypeError)
    if not isinstance(x, Tracer) and not isinstance(bins, Tracer):
        return _numpy("digitize", np.digitize, x, bins, right)
    _vector("digitize", "bins", bins)
    n = tc.shape(bins)[0]
    side = "left" if right else "right"
    increasing = searchsorted(bins, x, side)
    if n == 0:
        return increasing
    decreasing = tc.sub(np.int32(n), searchsorted(tc.rev(bins, [0]), x, side))
    if not isinstance(bins, Tracer):  # numpy's check, on the constant bins
        steps = np.diff(np.asarray(bins))
        if not (np.all(steps >= 0) or np.all(steps <= 0)):
            raise _fail("digitize", "bins must be monotonically increasing or decreasing")
        return increasing if n < 2 or bins[-1] >= bins[0] else decreasing
    return tc.where(tc.ge(take(bins, np.int32(n - 1)), take(bins, np.int32(0))), increasing, decreasing)


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None, period: Any = None) -> Any:
    """numpy's piecewise linear interpolation of the points (xp, fp) at x, xp increasing
    (f64, as numpy's); with a `period`, x and xp are read modulo it."""
    x, xp, fp = (as_array(v, "interp") for v in (x, xp, fp))
    if not any(isinstance(v, Tracer) for v in (x, xp, fp, left, right, period)):
        return _numpy("interp", np.interp, x, xp, fp, left, right, period)
    for v in (x, xp, fp, left, right, period):
        if v is None:
            continue
        dtype = v.dtype.numpy if isinstance(v, Tracer) else _numpy("interp", np.asarray, v).dtype
        if np.dtype(dtype).kind not in "biuf":
            raise _fail("interp", f"needs real numbers, got {getattr(v, 'type', dtype)}", ShaxTypeError)
    x, xp, fp = (_f64(v) for v in (x, xp, fp))
    _vector("interp", "xp", xp)
    _vector("interp", "fp", fp)
    n = tc.shape(xp)[0]
    if n != tc.shape(fp)[0] or n == 0:
        raise _fail("interp", f"xp and fp must have one non-zero length, got {n} and {tc.shape(fp)[0]}")
    if period is not None:
        if not isinstance(period, Tracer) and np.asarray(period) == 0:
            raise _fail("interp", "period must be a non-zero value")
        x, xp, fp, left, right = _periodic(x, xp, fp, _f64(tc.abs(_f64(period))))
        n += 2
    first, last = take(xp, np.int32(0)), take(xp, np.int32(n - 1))
    fp_first, fp_last = take(fp, np.int32(0)), take(fp, np.int32(n - 1))
    if n == 1:
        inside: Any = broadcast_to(fp_first, tuple(tc.shape(x)))  # numpy's: fp at NaN too
    else:
        j = tc.minimum(tc.maximum(tc.sub(searchsorted(xp, x, "right"), np.int32(1)), np.int32(0)), np.int32(n - 2))
        x0, x1 = take(xp, j), take(xp, tc.add(j, np.int32(1)))
        f0, f1 = take(fp, j), take(fp, tc.add(j, np.int32(1)))
        slope = tc.div(tc.sub(f1, f0), tc.sub(x1, x0))
        inside = tc.add(tc.mul(slope, tc.sub(x, x0)), f0)
        retried = tc.add(tc.mul(slope, tc.sub(x, x1)), f1)
        inside = tc.where(
            tc.ne(inside, inside), tc.where(tc.logical_and(tc.ne(retried, retried), tc.eq(f0, f1)), f0, retried), inside
        )
        inside = tc.where(tc.eq(x, x0), f0, inside)  # numpy's: no ∞ · 0 at a point
        inside = tc.where(tc.eq(x, last), fp_last, inside)
    low = fp_first if left is None else _f64(left)
    high = fp_last if right is None else _f64(right)
    return tc.where(tc.lt(x, first), low, tc.where(tc.gt(x, last), high, inside))


def _f64(v: Any) -> Any:
    if isinstance(v, Tracer):
        return v if v.dtype.numpy == np.float64 else tc.convert_element_type(v, np.float64)
    return np.asarray(v, np.float64)


def _periodic(x: Any, xp: Any, fp: Any, period: Any) -> tuple[Any, Any, Any, None, None]:
    """numpy's periodic case: x and xp modulo the period, xp sorted (fp with it) and
    extended by one point on each side, its last one period down and its first up."""
    x, xp = _mod(x, period), _mod(xp, period)
    order = argsort(xp)
    xp, fp = take(xp, order), take(fp, order)
    n = tc.shape(xp)[0]
    xp = concatenate(
        [
            tc.reshape(tc.sub(take(xp, np.int32(n - 1)), period), [1]),
            xp,
            tc.reshape(tc.add(take(xp, np.int32(0)), period), [1]),
        ]
    )
    fp = concatenate([take(fp, np.array([n - 1], np.int32)), fp, take(fp, np.array([0], np.int32))])
    return x, xp, fp, None, None


def _mod(x: Any, period: Any) -> Any:
    """x mod period in [0, period), numpy's `%` of a positive period."""
    r = tc.rem(x, period)
    return tc.where(tc.lt(r, 0.0), tc.add(r, period), r)
