"""numpy's indexing for tracers (and numpy values, through the typeclass functions):
`x[key]`, `take`'s indices (`indices_in`).

Basic indexing (ints, slices, None, ...) is `slice` of the ranges kept, `rev` where a
step is negative, a `gather` of every step-th element where a step is not ±1, and a
`reshape` dropping the axes ints pick and adding the ones None asks for.

With integer arrays in the key (lists, numpy arrays, integer tracers; a constant boolean
mask is the integer arrays of its nonzero positions), numpy's advanced indexing: the
indexed axes, moved to the front and flattened into one, are read by one `gather` at the
flat index Σ_k i_k · stride_k of the broadcast index arrays. Their axes go where the first
array was if the arrays (and ints, which then count as arrays) are adjacent in the key,
else in front, as numpy puts them. Constant indices out of range are errors, as in numpy;
traced ones count from the end if negative and are clamped into range beyond (JAX's rule).

The updates `x.at[key]` write through the same reading (`shax/tracing/at_updates.py`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, a_type, at
from shax.core.location import current_source
from shax.core.types import TensorType


def _fail(message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxTypeError) -> Exception:
    return failed("indexing", message, error)


def failed(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"{op}: {message}"), current_source())


def traced_type(value: Any) -> TensorType | None:
    """A tracer's type, None for anything else."""
    t = getattr(value, "type", None)
    return t if isinstance(t, TensorType) else None


def as_array(op: str, value: Any, dtype: Any = None) -> np.ndarray:
    """`value` as a numpy array (of `dtype`), or a ShaxError saying why it is none."""
    try:
        return np.asarray(value, dtype)
    except (TypeError, ValueError, OverflowError) as error:
        raise failed(op, f"cannot read {type(value).__name__} {value!r} as an array: {error}", ShaxTypeError) from None


def _is_int(item: Any) -> bool:
    return isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_))


def _index_array(item: Any) -> tuple[str, Any]:
    """An array-like index item: ("mask", a constant boolean array) or ("array", integer
    indices), a tracer kept as it is."""
    t = traced_type(item)
    if t is not None:
        if t.dtype.is_float or t.dtype.name == "bool":
            what = "a boolean mask has a data-dependent shape; use where(mask, x, 0)" if not t.dtype.is_float else ""
            raise _fail(f"a traced {t} cannot index: {what or 'indices must be integers'}")
        return ("array", item)
    array = as_array("indexing", item)
    if array.dtype == np.bool_:
        if array.ndim == 0:
            raise _fail("a 0-d boolean index (numpy's new axis, kept or emptied) is not supported")
        return ("mask", array)
    if array.size == 0 and array.dtype.kind == "f":  # `[]`: no index, as numpy reads it
        array = array.astype(np.int32)
    if array.dtype.kind not in "iu":
        raise _fail(f"cannot index with an array of {array.dtype}; indices must be integers")
    return ("array", array)


# An ellipsis standing for no axis: it still parts the index arrays on either side (numpy).
_GAP = object()


_MODES = (None, "raise", "wrap", "clip", "fill")


def indices_in(op: str, indices: Any, n: int, mode: str | None = None) -> Any:
    """`indices` into an axis of size n, as gather takes them: a tracer (of integers) as it
    is, unless `mode` is "clip" (negative ones then read the first element, as numpy's);
    constants checked (or clipped, by `mode`) and made non-negative i32, mod n (which is
    what wraps them for "wrap")."""
    if mode not in _MODES:
        raise failed(op, f"mode must be one of {_MODES}, got {mode!r}")
    if traced_type(indices) is not None:
        if indices.type.dtype.is_float or indices.type.dtype.name == "bool":
            raise failed(op, f"indices must be integers, got a traced {indices.type}", ShaxTypeError)
        if mode == "wrap":
            raise failed(op, "mode='wrap' needs constant indices (traced ones are clamped into range)")
        return tc.maximum(indices, 0) if mode == "clip" else indices
    i = as_array(op, indices)
    if i.dtype.kind not in "iu" and not (i.size == 0 and i.dtype.kind == "f"):
        raise failed(op, f"indices must be integers, got an array of {i.dtype}", ShaxTypeError)
    if mode == "clip":
        i = np.clip(i, 0, n - 1)
    elif mode != "wrap" and i.size and (i.min() < -n or i.max() >= n):
        bad = i.min() if i.min() < -n else i.max()
        raise failed(op, f"index {bad} is out of bounds for an axis of size {n}")
    return np.mod(i, max(n, 1)).astype(np.int32)


def _parse(key: Any, shape: tuple[int, ...]) -> list[Any]:
    """The key's items, ellipsis expanded, array-likes as ("array", value) pairs (a boolean
    mask as the arrays of its nonzero positions, one per axis it covers)."""
    raw = list(key) if isinstance(key, tuple) else [key]
    items: list[Any] = []
    for item in raw:
        if item is None or item is Ellipsis or isinstance(item, slice) or _is_int(item):
            items.append(item)
        elif isinstance(item, (bool, np.bool_)):
            raise _fail("a boolean scalar as an index is not supported")
        elif isinstance(item, (list, tuple, np.ndarray)) or traced_type(item) is not None:
            items.append(_index_array(item))
        else:
            raise _fail(f"cannot index with {a_type(item)} (ints, slices, None, ..., integer arrays)")
    if sum(item is Ellipsis for item in items) > 1:
        raise _fail("an index can only have one ellipsis (...)", ShaxValueError)
    used = sum(_axes_taken(item) for item in items)
    if used > len(shape):
        raise _fail(f"too many indices ({used}) for a tensor of rank {len(shape)}", ShaxValueError)
    fill: list[Any] = [slice(None)] * (len(shape) - used)
    if any(item is Ellipsis for item in items):
        k = next(k for k, item in enumerate(items) if item is Ellipsis)
        items[k : k + 1] = fill or [_GAP]
    else:
        items += fill
    parsed: list[Any] = []
    axis = 0
    for item in items:
        if isinstance(item, tuple) and item[0] == "mask":
            mask = item[1]
            covered = shape[axis : axis + mask.ndim]
            if mask.shape != covered:
                raise _fail(f"a boolean mask of shape {mask.shape} indexes axes of sizes {covered}", ShaxValueError)
            parsed += [("array", a.astype(np.int32)) for a in np.nonzero(mask)]
        else:
            parsed.append(item)
        axis += _axes_taken(item)
    return parsed


def _axes_taken(item: Any) -> int:
    """How many of x's axes an item indexes."""
    if item is None or item is Ellipsis or item is _GAP:
        return 0
    return item[1].ndim if isinstance(item, tuple) and item[0] == "mask" else 1


def _bounds(s: slice) -> tuple[int | None, int | None, int | None]:
    parts = (s.start, s.stop, s.step)
    if not all(p is None or _is_int(p) for p in parts):
        raise _fail(f"slice bounds must be ints or None, got {s}")
    if s.step == 0:
        raise _fail("slice step cannot be zero", ShaxValueError)
    return parts


def _sliced(x: Any, slices: list[slice]) -> Any:
    """x with each axis read by its slice (every step): `slice` of the range, `rev` for a
    step of -1, `gather` of every step-th element otherwise."""
    shape = tc.shape(x)
    start, end, reversed_axes = [], [], []
    strided: list[tuple[int, np.ndarray]] = []
    for axis, (item, n) in enumerate(zip(slices, shape)):
        s, e, step = slice(*_bounds(item)).indices(n)
        picked = range(s, e, step)
        if step == 1 or (step == -1 and picked):
            lo = picked[-1] if step == -1 else s
            start.append(lo)
            end.append(lo + len(picked))
            if step == -1 and len(picked) > 1:
                reversed_axes.append(axis)
        else:
            start.append(0)
            end.append(n)
            strided.append((axis, np.asarray(picked, np.int32)))
    if start != [0] * len(shape) or end != list(shape):
        x = tc.slice(x, start, end)
    if reversed_axes:
        x = tc.rev(x, reversed_axes)
    for axis, every in strided:
        x = tc.gather(x, every, axis, 0)
    return x


def index(x: Any, key: Any, dropped: int | None = None) -> Any:
    """numpy's `x[key]`. With `dropped`, an element read through a traced index outside
    [-n, n) is `dropped` instead of the clamped read (how `x.at[key]` finds the updates
    JAX drops)."""
    x, key = _dynamic_slices(x, key)
    shape = tuple(tc.shape(x))
    items = _parse(key, shape)
    if not any(isinstance(item, tuple) for item in items):
        return _basic(x, shape, items)
    return _advanced(x, shape, items, dropped)


def _is_traced_slice(item: Any) -> bool:
    return isinstance(item, slice) and any(traced_type(b) is not None for b in (item.start, item.stop))


def _width(item: slice) -> int:
    """k of a slice `i:i + k` whose start i is traced (k a constant int, written as i + k or k + i)."""
    start, stop = item.start, item.stop
    prim, args = getattr(stop, "prim", None), getattr(stop, "args", ())
    if traced_type(start) is None or item.step not in (None, 1) or type(prim).__name__ != "Add":
        raise _fail("a slice with a traced bound must be x[i:i + k], k a constant int (or use lax.dynamic_slice)")
    others = [a for a in args if a is not start]
    value = getattr(getattr(others[0], "prim", None), "value", None) if len(others) == 1 else None
    if value is None or np.ndim(value) or np.asarray(value).dtype.kind not in "iu":
        raise _fail("a slice with a traced bound must be x[i:i + k], k a constant int (or use lax.dynamic_slice)")
    return int(value)


def _dynamic_slices(x: Any, key: Any) -> tuple[Any, Any]:
    """x read by `dynamic_slice` along each axis the key slices as `i:i + k` with a traced
    start i, and the key with those slices made whole. The start is clamped into
    [0, n - k] (JAX's dynamic_slice; numpy's answer whenever the slice lies inside x)."""
    items = list(key) if isinstance(key, tuple) else [key]
    if not any(_is_traced_slice(item) for item in items):
        return x, key
    shape = tuple(tc.shape(x))
    taken = [0 if item is None or item is Ellipsis else 1 for item in items]
    ellipsis = next((p for p, item in enumerate(items) if item is Ellipsis), len(items))
    starts: list[Any] = [np.zeros(1, np.int32)] * len(shape)
    sizes = list(shape)
    for p, item in enumerate(items):
        if not _is_traced_slice(item):
            continue
        axis = sum(taken[:p]) if p < ellipsis else len(shape) - sum(taken[p:])
        if not 0 <= axis < len(shape):
            raise _fail(f"too many indices for a tensor of rank {len(shape)}", ShaxValueError)
        sizes[axis] = _width(item)
        if not 0 <= sizes[axis] <= shape[axis]:
            raise _fail(
                f"a slice of {sizes[axis]} elements does not fit axis {axis} of size {shape[axis]}", ShaxValueError
            )
        start = item.start
        if start.type.rank or start.type.dtype.is_float or start.type.dtype.name == "bool":
            raise _fail(f"a traced slice start must be an integer scalar, got {start.type}")
        starts[axis] = tc.reshape(tc.convert_element_type(start, np.int32), [1])
        items[p] = slice(None)
    vector = starts[0]
    for part in starts[1:]:
        vector = tc.concatenate(vector, part, 0)
    return tc.dynamic_slice(x, vector, sizes), tuple(items)


def _basic(x: Any, shape: tuple[int, ...], items: list[Any]) -> Any:
    slices, out = [], []
    axis = 0
    for item in items:
        if item is _GAP:
            continue
        if item is None:
            out.append(1)
            continue
        if isinstance(item, slice):
            slices.append(item)
            out.append(len(range(*slice(*_bounds(item)).indices(shape[axis]))))
        else:
            k = _checked(int(item), shape[axis], axis)
            slices.append(slice(k, k + 1))
        axis += 1
    x = _sliced(x, slices)
    return x if tuple(out) == tuple(tc.shape(x)) else tc.reshape(x, out)


def _checked(k: int, n: int, axis: int) -> int:
    if not -n <= k < n:
        raise _fail(f"index {k} is out of bounds for axis {axis} of size {n}", ShaxValueError)
    return k % n


def _advanced(x: Any, shape: tuple[int, ...], items: list[Any], dropped: int | None = None) -> Any:
    # The axes the arrays (and ints) index, their index arrays, and the sliced rest.
    arrays: list[tuple[int, Any]] = []  # (axis, index array)
    slices: list[slice] = []
    layout: list[Any] = []  # per result axis, before the arrays' axes are placed: "new", an axis, "arrays"
    axis = 0
    for item in items:
        if item is None or item is _GAP:
            layout.append("new" if item is None else "gap")
            continue
        if isinstance(item, slice):
            layout.append(axis)
        else:
            value = item[1] if isinstance(item, tuple) else np.asarray(item)
            arrays.append((axis, value))
            layout.append("arrays")
        slices.append(item if isinstance(item, slice) else slice(None))
        axis += 1
    x = _sliced(x, slices)
    sizes = tuple(tc.shape(x))
    indexed = [a for a, _ in arrays]
    flat, index_shape = _flat_index(arrays, sizes)
    rest = [a for a in range(len(sizes)) if a not in indexed]
    x = tc.transpose(x, [*indexed, *rest])
    x = tc.reshape(x, [math.prod(sizes[a] for a in indexed), *(sizes[a] for a in rest)])
    x = tc.gather(x, flat, 0, 0)  # axes: index_shape, then rest
    if dropped is not None:
        x = _drop_out_of_range(x, arrays, sizes, index_shape, dropped)
    # Where numpy puts the arrays' axes: at the first array if they are adjacent, else first.
    marks = [k for k, part in enumerate(layout) if part == "arrays"]
    adjacent = marks == list(range(marks[0], marks[0] + len(marks)))
    if adjacent:
        order = [p for k, p in enumerate(layout) if p != "arrays" or k == marks[0]]
    else:
        order = ["arrays", *(p for p in layout if p != "arrays")]
    count = len(index_shape)
    perm: list[int] = []
    out: list[int] = []
    for part in order:
        if part == "arrays":
            perm += range(count)
            out += index_shape
        elif part == "new":
            out.append(1)
        elif part != "gap":
            perm.append(count + rest.index(part))
            out.append(sizes[part])
    if perm != list(range(len(perm))):
        x = tc.transpose(x, perm)
    return x if tuple(out) == tuple(tc.shape(x)) else tc.reshape(x, out)


def _flat_index(arrays: list[tuple[int, Any]], sizes: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """Σ_k i_k · stride_k over the index arrays broadcast together (row-major strides of
    the indexed axes), and their broadcast shape. Constants are checked and normalized
    here; traced indices are normalized and clamped by `_clamped` (by gather itself when
    they index one axis)."""
    shapes = [tuple(tc.shape(a)) for _, a in arrays]
    try:
        index_shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise _fail(f"index arrays of shapes {shapes} do not broadcast together", ShaxValueError) from None
    total: Any = None
    stride = 1
    for axis, a in reversed(arrays):
        n = sizes[axis]
        if traced_type(a) is None:
            a = indices_in("indexing", a, n) * np.int32(stride)
        elif len(arrays) > 1:
            a = _clamped(a, n) * stride
        a = tc.broadcast_to(a, index_shape)
        total = a if total is None else total + a
        stride *= n
    return total, tuple(index_shape)


def _drop_out_of_range(
    x: Any, arrays: list[tuple[int, Any]], sizes: tuple[int, ...], index_shape: tuple[int, ...], dropped: int
) -> Any:
    """x (axes: index_shape, then the rest) with `dropped` wherever a traced index is
    outside [-n, n) of its axis (constant ones were checked)."""
    valid: Any = None
    for axis, a in arrays:
        if traced_type(a) is None:
            continue
        n = sizes[axis]
        a = tc.convert_element_type(a, np.int64)  # -n and n need not be values of a's dtype (u8)
        inside = tc.logical_and(tc.ge(a, -n), tc.lt(a, n))
        valid = inside if valid is None else tc.logical_and(valid, inside)
    if valid is None:
        return x
    out = tuple(tc.shape(x))
    valid = tc.reshape(tc.broadcast_to(valid, index_shape), [*index_shape, *[1] * (len(out) - len(index_shape))])
    return tc.select(tc.broadcast_to(valid, out), x, np.full(out, dropped, x.type.dtype.numpy))


def _clamped(i: Any, n: int) -> Any:
    """A traced index as gather reads it: negative ones from the end, clamped into [0, n)."""
    t = traced_type(i)
    assert t is not None
    if t.dtype.name != "i32":
        i = tc.convert_element_type(i, np.int32)
    i = tc.select(tc.lt(i, 0), i + n, i)
    return tc.minimum(tc.maximum(i, 0), n - 1)
