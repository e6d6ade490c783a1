"""More of numpy's array functions, each a composition of shax's (issue 31's most-used
missing names): comparing (`array_equal`), joining and shaping (`append`, `column_stack`,
`broadcast_arrays`, `kron`, `rot90`, `select`, `copy`), index constructors (`diag_indices`,
`diag_indices_from`, `tril_indices`, `triu_indices`), `logspace`, NaN-ignoring reductions
(`nansum nanmean nanmin nanmax`), and the predicates `iscomplexobj`, `isrealobj`, `isscalar`.

On numpy values numpy's own; traced, shax's functions, so derivatives, batching and export
are theirs. The index constructors take sizes only and are numpy's.
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError
from shax.numpy._arrays import (
    _fail,
    _int,
    _numpy,
    broadcast_to,
    concatenate,
    flip,
    reshape,
    swapaxes,
)
from shax.numpy._dtypes import broadcast_shapes
from shax.numpy._elementwise import as_array
from shax.numpy._logic import all as all_
from shax.numpy._logic import isnan
from shax.numpy._options import unsupported
from shax.numpy._reductions import Axis, sum
from shax.numpy._reductions import max as max_
from shax.numpy._reductions import min as min_
from shax.numpy._static_size import where
from shax.tracing.tracer import Tracer

__all__ = [
    "append", "array_equal", "broadcast_arrays", "column_stack", "copy", "diag_indices", "diag_indices_from",
    "iscomplexobj", "isrealobj", "isscalar", "kron", "logspace", "nanmax", "nanmean", "nanmin", "nansum", "rot90",
    "select", "tril_indices", "triu_indices",
]  # fmt: skip


def _traced(*values: Any) -> bool:
    return builtins.any(isinstance(v, Tracer) for v in values)


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(tc.shape(x)) if isinstance(x, Tracer) else np.shape(x)


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """numpy's: the same shape and every element equal (NaNs equal with `equal_nan`); a
    traced bool of the elements, False at once for different shapes."""
    a1, a2 = as_array(a1, "array_equal"), as_array(a2, "array_equal")
    if not _traced(a1, a2):
        return _numpy("array_equal", np.array_equal, a1, a2, equal_nan=equal_nan)
    if _shape_of(a1) != _shape_of(a2):
        return np.False_
    same = a1 == a2
    if equal_nan:
        same = same | (isnan(a1) & isnan(a2)) if _inexact(a1) or _inexact(a2) else same
    return all_(same)


def _inexact(x: Any) -> bool:
    return bool(np.dtype(x.dtype).kind == "f")


def broadcast_arrays(*args: Any) -> list[Any]:
    """numpy's: each array broadcast to the shape of all of them together."""
    arrays = [as_array(a, "broadcast_arrays") for a in args]
    shape = broadcast_shapes(*(_shape_of(a) for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """numpy's: arr and values joined along `axis`, both flattened first if it is None."""
    arr, values = as_array(arr, "append"), as_array(values, "append")
    if axis is None:
        return concatenate([reshape(arr, -1), reshape(values, -1)])
    return concatenate([arr, values], axis=axis)


def column_stack(tup: Sequence[Any]) -> Any:
    """numpy's: 1-D arrays as columns (and 2-D ones as they are), joined along axis 1."""
    if not isinstance(tup, (list, tuple)):
        raise _fail("column_stack", f"takes a sequence of arrays, got {type(tup).__name__}", ShaxTypeError)
    arrays = [as_array(a, "column_stack") for a in tup]
    return concatenate([reshape(a, (-1, 1)) if len(_shape_of(a)) < 2 else a for a in arrays], axis=1)


def copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    """numpy's: a copy (a traced value is immutable: itself)."""
    a = as_array(a, "copy")
    return a if isinstance(a, Tracer) else _numpy("copy", np.copy, a, order=order, subok=subok)


def kron(a: Any, b: Any) -> Any:
    """numpy's Kronecker product: blocks a[i] · b, of shape a.shape · b.shape (ranks
    equalized by leading 1s): an outer product with the axes interleaved, reshaped."""
    a, b = as_array(a, "kron"), as_array(b, "kron")
    if not _traced(a, b):
        return _numpy("kron", np.kron, a, b)
    sa, sb = _shape_of(a), _shape_of(b)
    rank = builtins.max(len(sa), len(sb))
    sa, sb = (1,) * (rank - len(sa)) + sa, (1,) * (rank - len(sb)) + sb
    spread_a = reshape(a, [n for s in sa for n in (s, 1)])  # (a0, 1, a1, 1, ...)
    spread_b = reshape(b, [n for s in sb for n in (1, s)])  # (1, b0, 1, b1, ...)
    return reshape(spread_a * spread_b, [x * y for x, y in zip(sa, sb)])


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """numpy's: m rotated k quarter turns from axes[0] towards axes[1] (flips and a swap)."""
    m = as_array(m, "rot90")
    k = _int("rot90", k, "k")
    if not isinstance(m, Tracer):
        return _numpy("rot90", np.rot90, m, k, axes)
    if len(axes) != 2 or len(tc.shape(m)) < 2:
        raise _fail("rot90", f"needs two axes of an array of rank at least 2, got axes {axes} of {m.type}")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    if k == 1:
        return swapaxes(flip(m, axes[1]), axes[0], axes[1])
    return flip(swapaxes(m, axes[0], axes[1]), axes[1])


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """numpy's: at each element, the choice of the first true condition, else `default`."""
    if not isinstance(condlist, (list, tuple)) or not isinstance(choicelist, (list, tuple)):
        raise _fail("select", "takes lists of conditions and of choices", ShaxTypeError)
    if len(condlist) != len(choicelist):
        raise _fail("select", f"{len(condlist)} conditions and {len(choicelist)} choices: they must pair up")
    if not _traced(*condlist, *choicelist, default):
        return _numpy("select", np.select, list(condlist), list(choicelist), default)
    result = default
    for condition, choice in zip(reversed(condlist), reversed(choicelist)):  # the first true one last, so it wins
        result = where(condition, choice, result)
    return broadcast_to(result, broadcast_shapes(*map(_shape_of, (*condlist, *choicelist, default))))


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    """numpy's: the indices of the main diagonal of an n × ... × n array."""
    return _numpy("diag_indices", np.diag_indices, _int("diag_indices", n, "n"), _int("diag_indices", ndim, "ndim"))


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    """numpy's: `diag_indices` for arr, whose sides must all be equal (at least 2 of them)."""
    shape = _shape_of(as_array(arr, "diag_indices_from"))
    if len(shape) < 2 or len(set(shape)) != 1:
        raise _fail("diag_indices_from", f"needs an array of rank at least 2 with equal sides, got shape {shape}")
    return np.diag_indices(shape[0], len(shape))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, ...]:
    """numpy's: the indices of the lower triangle (diagonal k and below) of an n × m array."""
    return _numpy("tril_indices", np.tril_indices, _int("tril_indices", n, "n"), _int("tril_indices", k, "k"), m)


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, ...]:
    """numpy's: the indices of the upper triangle (diagonal k and above) of an n × m array."""
    return _numpy("triu_indices", np.triu_indices, _int("triu_indices", n, "n"), _int("triu_indices", k, "k"), m)


def logspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0, dtype: Any = None, axis: int = 0
) -> Any:
    """numpy's: base ** linspace(start, stop, num) (concrete arguments, as `linspace`'s)."""
    return _numpy("logspace", np.logspace, start, stop, num, endpoint, base, dtype, axis)


# NaN-ignoring reductions: each NaN replaced by what does not change the result (0 for a
# sum, ∓∞ for a max or min), a mean dividing by the count of the others (in the sum's
# dtype: f32 stays f32). All-NaN slices give numpy's values (0 for nansum, NaN for the
# others), without numpy's warning.


def nansum(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """numpy's `nansum`: the sum, NaNs counted as 0."""
    unsupported("nansum", "out", out, None)
    return _nan_reduction(
        "nansum",
        lambda x: np.nansum(x, axis, dtype, None, keepdims),
        lambda x, nan: sum(where(nan, 0, x), axis, dtype, None, keepdims),
        a,
    )


def nanmean(a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """numpy's `nanmean`: the mean of the elements that are not NaN."""
    unsupported("nanmean", "out", out, None)

    def traced(x: Any, nan: Any) -> Any:
        total = sum(where(nan, 0, x), axis, dtype, None, keepdims)
        return total / sum(~nan, axis, total.dtype, None, keepdims)

    return _nan_reduction("nanmean", lambda x: np.nanmean(x, axis, dtype, None, keepdims), traced, a)


def nanmax(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
    """numpy's `nanmax`: the largest element that is not NaN (NaN if all are)."""
    return _nan_extreme("nanmax", np.nanmax, max_, -np.inf, a, axis, out, keepdims)


def nanmin(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False) -> Any:
    """numpy's `nanmin`: the smallest element that is not NaN (NaN if all are)."""
    return _nan_extreme("nanmin", np.nanmin, min_, np.inf, a, axis, out, keepdims)


def _nan_extreme(
    op: str, numpy: Callable[..., Any], reduce: Callable[..., Any], neutral: float, a: Any, axis: Axis, out: None,
    keepdims: bool,
) -> Any:  # fmt: skip
    unsupported(op, "out", out, None)

    def traced(x: Any, nan: Any) -> Any:
        extreme = reduce(where(nan, neutral, x), axis, None, keepdims)
        return where(all_(nan, axis, None, keepdims), np.nan, extreme)

    return _nan_reduction(op, lambda x: numpy(x, axis, None, keepdims), traced, a)


def _nan_reduction(op: str, numpy: Callable[[Any], Any], traced: Callable[[Any, Any], Any], a: Any) -> Any:
    """numpy's own on numpy values; traced, `traced(a, its NaN mask)` (no NaN in integers)."""
    a = as_array(a, op)
    if not isinstance(a, Tracer):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice: numpy's NaN, not its warning
            return _numpy(op, numpy, a)
    return traced(a, isnan(a) if _inexact(a) else tc.ne(a, a))


def iscomplexobj(x: Any) -> bool:
    """numpy's: whether x's dtype is complex (never a traced value's: shax's are real)."""
    return False if isinstance(x, Tracer) else builtins.bool(_numpy("iscomplexobj", np.iscomplexobj, x))


def isrealobj(x: Any) -> bool:
    """numpy's: whether x's dtype is not complex (every traced value's)."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """JAX's `isscalar`: a number, a numpy scalar, or an array or traced value of rank 0."""
    if isinstance(element, Tracer):
        return len(tc.shape(element)) == 0
    if isinstance(element, np.ndarray):
        return element.ndim == 0
    return isinstance(element, (builtins.bool, int, float, complex, np.generic))
