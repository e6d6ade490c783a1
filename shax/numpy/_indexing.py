"""Reading by integer indices (numpy's `take`, `take_along_axis`, and `sort` through
`argsort`), as one `gather` each,
so the indices may be constants or integer tracers. Constant indices follow numpy (out of
range is an error unless `mode` says how to bring them in); traced ones count from the end
if negative and are clamped into range beyond, as JAX's indexing reads them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import typeclasses as tc
from shax.numpy._arrays import broadcast_to, moveaxis, normalize_axis, reshape
from shax.numpy._options import one_of
from shax.tracing.indexing import failed, indices_in
from shax.tracing.tracer import Tracer

__all__ = ["argsort", "sort", "take", "take_along_axis"]


def _along(op: str, a: Any, axis: int | None) -> tuple[Any, int]:
    """`a` and the axis `op` works along: numpy's axis (negative from the end), or axis 0
    of the flattened `a` for None."""
    if axis is None:
        return reshape(a, [-1]), 0
    rank = len(tc.shape(a))
    if not rank:
        raise failed(op, "needs an axis, and a 0-d array has none")
    return a, normalize_axis(op, axis, rank)


def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None, fill_value: Any = None) -> Any:
    """numpy's take: a's elements at `indices` along `axis` (of the flattened a if None);
    the result's axes are a's before `axis`, the indices', a's after `axis`. Constant
    indices follow numpy's `mode` ("raise", the default, "wrap", "clip"). Traced ones
    cannot raise: out of [-n, n) they read `fill_value` (JAX's "fill", its default: NaN
    for floats, the lowest integer, True), with "clip" the nearest element."""
    a, k = _along("take", a, axis)
    n = tc.shape(a)[k]
    traced = isinstance(indices, Tracer)
    if not (mode == "fill" or (mode is None and traced)):
        if fill_value is not None:
            raise failed("take", "fill_value is read only with mode 'fill' (or traced indices and no mode)")
        return tc.gather(a, indices_in("take", indices, n, mode), k, 0)
    indices = indices if traced else np.asarray(indices)
    inside = tc.logical_and(tc.ge(indices, -n), tc.lt(indices, n))
    # constant indices out of range read element 0 (not numpy's error), then the fill
    read = tc.gather(a, indices_in("take", indices if traced else np.where(inside, indices, 0), n), k, 0)
    rank, index_rank = len(tc.shape(a)), len(tc.shape(indices))
    shape = tuple(tc.shape(read))
    # the indices' axes sit at k, ..., k + index_rank - 1 of the result
    inside = tc.broadcast(inside, list(range(k, k + index_rank)), shape) if rank > 1 else inside
    dtype = np.dtype(a.dtype)
    return tc.select(inside, read, np.full(shape, _fill(dtype) if fill_value is None else fill_value, dtype))


def _fill(dtype: np.dtype) -> Any:
    """JAX's default fill of an out-of-range read: NaN, the lowest integer, True."""
    if dtype.kind == "f":
        return np.nan
    if dtype.kind in "iu":
        return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max
    return True


def take_along_axis(arr: Any, indices: Any, axis: int | None) -> Any:
    """numpy's take_along_axis: out[..., j, ...] = arr[..., indices[..., j, ...], ...] along
    `axis`, the other axes of arr and indices broadcast together: one gather along the
    last axis with every other axis a batch axis."""
    arr, k = _along("take_along_axis", arr, axis)
    shape, index_shape = tuple(tc.shape(arr)), tuple(tc.shape(indices))
    if len(shape) != len(index_shape):
        raise failed("take_along_axis", f"indices of shape {index_shape} need the rank of arr {shape}")
    last = len(shape) - 1
    i = indices_in("take_along_axis", indices, shape[k])
    x, i = moveaxis(arr, k, last), moveaxis(i, k, last)
    try:
        batch = np.broadcast_shapes(tuple(tc.shape(x))[:-1], tuple(tc.shape(i))[:-1])
    except ValueError:
        message = f"arr {shape} and indices {index_shape} do not broadcast along the other axes"
        raise failed("take_along_axis", message) from None
    x = broadcast_to(x, (*batch, shape[k]))
    i = broadcast_to(i, (*batch, index_shape[k]))
    return moveaxis(tc.gather(x, i, last, last), last, k)


# numpy's sort kinds: every one sorts to the same values, and a stable sort's indices are
# indices each of them may give (numpy promises no order of ties but the stable one's).
_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _sort_axis(op: str, a: Any, axis: int | None, kind: Any, order: Any, stable: Any) -> tuple[Any, int]:
    one_of(op, "kind", kind, _KINDS)
    one_of(op, "stable", stable, (None, True, False))
    if kind is not None and stable is not None:
        raise failed(op, f"kind={kind!r} and stable={stable!r} given together (numpy takes only one)")
    if order is not None:
        raise failed(op, "order= (sorting structured arrays by field) is not supported")
    return _along(op, a, axis)


def argsort(
    a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *, stable: Any = None,
    descending: bool = False,
) -> Any:  # fmt: skip
    """numpy's argsort, always stable (numpy's kind='stable', JAX's): ties keep their
    order, NaNs go last. The indices are i32 (JAX's int, as argmax's). `kind` is validated;
    any kind's indices may be the stable ones. `descending` (JAX's): largest first, NaNs
    first, ties still in order (the reversed array sorted, the indices reversed back)."""
    a, k = _sort_axis("argsort", a, axis, kind, order, stable)
    one_of("argsort", "descending", descending, (True, False))
    if not descending:
        return tc.argsort(a, k)
    n = tc.shape(a)[k]
    return tc.rev(tc.sub(np.int32(n - 1), tc.argsort(tc.rev(a, [k]), k)), [k])


def sort(
    a: Any, axis: int | None = -1, kind: str | None = None, order: Any = None, *, stable: Any = None,
    descending: bool = False,
) -> Any:  # fmt: skip
    """numpy's sort: a gathered in argsort's order, so each sorted element's gradient goes
    back to where it came from; `descending` (JAX's) reverses it."""
    a, k = _sort_axis("sort", a, axis, kind, order, stable)
    one_of("sort", "descending", descending, (True, False))
    ascending = take_along_axis(a, tc.argsort(a, k), k)
    return tc.rev(ascending, [k]) if descending else ascending
