"""numpy's functions whose result's shape depends on the values: `nonzero`, `argwhere`,
`where(condition)`, `unique`, `bincount`, and `searchsorted` with them (its shape does
not, but it is a search), plus `where(condition, x, y)`.

On numpy values numpy's own. Traced, a shape must be known before the values are, so
each takes JAX's static `size=` (`length=` for `bincount`): the first `size` results,
padded with `fill_value` (JAX's defaults: index 0; `unique`'s smallest element). Written
with existing primitives: the nonzero positions are a stable argsort of the negated
mask (the true ones first, in order), cut to `size`; unique values are the sorted
values starting a run; counts a `scatter_add` of ones; a search counts the elements
below each value. Indices are i32 (JAX's int).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError
from shax.numpy._arrays import _fail, _int, concatenate, reshape, stack
from shax.numpy._elementwise import as_array
from shax.numpy._indexing import sort, take
from shax.numpy._options import one_of
from shax.tracing.promotion import common_operands
from shax.tracing.tracer import Tracer

__all__ = ["argwhere", "bincount", "nonzero", "searchsorted", "unique", "where"]


def _numpy(op: str, function: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return function(*args, **kwargs)
    except TypeError as error:
        raise _fail(op, f"numpy: {error}", ShaxTypeError) from None
    except ValueError as error:
        raise _fail(op, f"numpy: {error}") from None


def _size(op: str, size: Any, traced: Any, keyword: str = "size") -> int | None:
    if size is None:
        if traced is not None:
            message = f"of a traced {traced.type} has a data-dependent shape: give a static {keyword}= (JAX's)"
            raise _fail(op, message, ShaxTypeError)
        return None
    n = _int(op, size, keyword)
    if not 0 <= n < 2**31:  # the static size of a result it allocates
        raise _fail(op, f"{keyword} must be from 0 to 2**31 - 1, got {n}")
    return n


def _padded(values: np.ndarray, size: int, fill: Any) -> np.ndarray:
    """numpy's values cut or padded with `fill` to `size` (JAX's static size, on numpy values)."""
    out = np.full(size, fill, values.dtype)
    out[: min(size, len(values))] = values[:size]
    return out


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The indices of a's nonzero elements, one array per axis; traced, the first `size`
    of them, the rest `fill_value` (0, or one per axis)."""
    a = as_array(a, "nonzero")
    traced = a if isinstance(a, Tracer) else None
    n = _size("nonzero", size, traced)
    shape = tuple(tc.shape(a))
    if not shape:
        raise _fail("nonzero", "of a 0-d array is not defined (numpy's: use atleast_1d)")
    fills = _fills("nonzero", fill_value, len(shape))
    if traced is None:
        found = _numpy("nonzero", np.nonzero, a)
        return found if n is None else tuple(_padded(i, n, f) for i, f in zip(found, fills))
    assert n is not None
    truth = a if a.dtype.name == "bool" else tc.ne(a, 0)
    flat = reshape(truth, -1)
    total = flat.shape[0]
    order = tc.argsort(tc.convert_element_type(tc.logical_not(flat), np.int32), 0)
    first = tc.slice(order, [0], [min(n, total)])
    if n > total:
        first = tc.pad(first, [(0, n - total)], 0)
    count = tc.reduce_sum(tc.convert_element_type(flat, np.int32), [0])
    valid = tc.lt(np.arange(n, dtype=np.int32), count)
    strides = [int(np.prod(shape[k + 1 :])) for k in range(len(shape))]
    out = []
    for k, (stride, extent) in enumerate(zip(strides, shape)):
        index = tc.rem(tc.quot(first, np.int32(stride)), np.int32(extent)) if len(shape) > 1 else first
        out.append(tc.where(valid, index, np.int32(fills[k])))
    return tuple(out)


def _fills(op: str, fill_value: Any, rank: int) -> list[int]:
    if fill_value is None:
        return [0] * rank
    values = list(fill_value) if isinstance(fill_value, (tuple, list)) else [fill_value] * rank
    if len(values) != rank:
        raise _fail(op, f"fill_value needs one value per axis ({rank}), got {fill_value!r}")
    return [_int(op, v, "a fill value") for v in values]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of a's nonzero elements as rows (`size` rows traced)."""
    a = as_array(a, "argwhere")
    if not isinstance(a, Tracer):
        if size is None:
            return _numpy("argwhere", np.argwhere, a)
        if np.ndim(a) == 0:
            a = np.reshape(a, 1)
    elif not a.shape:
        a = reshape(a, 1)
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=-1)


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """numpy's `where`: x where condition holds, else y, the three broadcast. With the
    condition alone, `nonzero(condition, size=, fill_value=)`."""
    if x is None and y is None:
        condition = as_array(condition, "where")
        if size is None and isinstance(condition, Tracer):
            message = (
                f"one-argument where of a traced {condition.type} has a data-dependent shape: "
                "give a static size= (JAX's, as nonzero(..., size=))"
            )
            raise _fail("where", message, ShaxTypeError)
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise _fail("where", "give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise _fail("where", "size= and fill_value= are for where(condition) alone", ShaxTypeError)
    return tc.where(as_array(condition), *common_operands("where", (as_array(x), as_array(y))))


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value: Any = None,
) -> Any:
    """The sorted distinct elements of ar flattened (NaNs one, with equal_nan); traced, the
    first `size` of them, padded with `fill_value` (default the smallest element, JAX's).
    numpy's return_index/inverse/counts and axis on numpy values only."""
    ar = as_array(ar, "unique")
    one_of("unique", "equal_nan", equal_nan, (True, False))
    if not isinstance(ar, Tracer):
        if size is None:
            kwargs = {"return_index": return_index, "return_inverse": return_inverse, "return_counts": return_counts}
            return _numpy("unique", np.unique, ar, axis=axis, equal_nan=equal_nan, **kwargs)
    if return_index or return_inverse or return_counts or axis is not None:
        raise _fail("unique", "return_index, return_inverse, return_counts and axis are supported on numpy values only")
    n = _size("unique", size, ar if isinstance(ar, Tracer) else None)
    assert n is not None
    if not isinstance(ar, Tracer):
        values = _numpy("unique", np.unique, ar, equal_nan=equal_nan)
        if not values.size and n:
            raise _fail("unique", "of an empty array with size > 0 needs a fill_value")
        return _padded(values, n, values[0] if fill_value is None and values.size else fill_value)
    flat = sort(reshape(ar, -1))
    total = flat.shape[0]
    if not total:
        raise _fail("unique", f"of an empty traced {ar.type}: nothing to fill size={n} with")
    later, earlier = tc.slice(flat, [1], [total]), tc.slice(flat, [0], [total - 1])
    differs = tc.ne(later, earlier)
    if equal_nan and ar.dtype.is_float:
        differs = tc.logical_and(differs, tc.logical_not(tc.logical_and(tc.ne(later, later), tc.ne(earlier, earlier))))
    starts = concatenate([np.ones(1, bool), differs])
    (positions,) = nonzero(starts, size=n)
    values = take(flat, positions)
    if fill_value is None:
        return values
    count = tc.reduce_sum(tc.convert_element_type(starts, np.int32), [0])
    return tc.where(tc.lt(np.arange(n, dtype=np.int32), count), values, np.asarray(fill_value, ar.dtype.numpy))


def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None) -> Any:
    """How often each value 0, 1, ... occurs in the non-negative ints x (or the sum of
    their weights); traced, JAX's: `length` bins, negative values counted in bin 0 and
    values beyond dropped."""
    x = as_array(x, "bincount")
    minlength = _int("bincount", minlength, "minlength")
    traced = x if isinstance(x, Tracer) else weights if isinstance(weights, Tracer) else None
    if length is None and traced is None:
        return _numpy("bincount", np.bincount, x, None if weights is None else as_array(weights), minlength)
    bins = _size("bincount", length, traced, "length")
    assert bins is not None
    if len(tc.shape(x)) != 1:
        raise _fail("bincount", f"x must be 1-dimensional, got shape {tuple(tc.shape(x))}")
    kind = np.dtype(x.dtype.numpy if isinstance(x, Tracer) else np.asarray(x).dtype).kind
    if kind not in "iub":
        raise _fail("bincount", f"x must be integers, got {x.dtype}", ShaxTypeError)
    if kind == "b":
        x = tc.convert_element_type(x, np.int32)
    if weights is None:
        weights = np.ones(tc.shape(x), np.int32 if isinstance(x, Tracer) else np.int64)
    weights = as_array(weights, "bincount")
    if tuple(tc.shape(weights)) != tuple(tc.shape(x)):
        raise _fail("bincount", f"weights {tuple(tc.shape(weights))} must have x's shape {tuple(tc.shape(x))}")
    index = tc.clip(x, 0, bins)
    dtype = weights.dtype.numpy if isinstance(weights, Tracer) else np.asarray(weights).dtype
    zeros = np.zeros(bins + 1, dtype)
    return tc.slice(tc.scatter_add(zeros, index, weights, 0, 0), [0], [bins])


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *, method: str = "compare_all") -> Any:
    """Where each of v would go in the sorted vector a to keep it sorted: the number of
    elements of a before v ("left") or not after it ("right"), NaN sorting last."""
    one_of("searchsorted", "side", side, ("left", "right"))
    one_of("searchsorted", "method", method, ("scan", "scan_unrolled", "sort", "compare_all"))
    a, v = as_array(a, "searchsorted"), as_array(v, "searchsorted")
    if not any(isinstance(t, Tracer) for t in (a, v, sorter)):
        return _numpy("searchsorted", np.searchsorted, a, v, side, sorter)
    if len(tc.shape(a)) != 1:
        raise _fail("searchsorted", f"a must be a vector, got shape {tuple(tc.shape(a))}")
    if sorter is not None:
        a = take(a, sorter)
    if isinstance(v, (int, float)) and not isinstance(v, bool):  # weakly, in a's dtype
        v = np.asarray(v, np.dtype(a.dtype.numpy) if isinstance(a, Tracer) else np.asarray(a).dtype)
    column = tc.reshape(v, [*tc.shape(v), 1])
    below = _before(a, column) if side == "left" else tc.logical_not(_before(column, a))
    return tc.reduce_sum(tc.convert_element_type(below, np.int32), [len(tc.shape(v))])


def _before(x: Any, y: Any) -> Any:
    """x < y in numpy's sort order, NaN last: x < y, or y NaN and x not."""
    return tc.logical_or(tc.lt(x, y), tc.logical_and(tc.ne(y, y), tc.eq(x, x)))
