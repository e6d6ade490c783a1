"""numpy's reshaping and joining functions beyond `_arrays`: `ravel`, `atleast_1d/2d/3d`,
`vstack`, `hstack`, `concat` (the array API's name), `unstack`, `roll`, `pad`, `astype`.

Default definitions over reshape, slice, concatenate and `pad` (the primitive pads with
a constant; the other modes join slices of the array, `wrap` its far end, `edge` its
border broadcast), so each takes numpy values and tracers alike, with numpy's results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError
from shax.core.types import dtype_of_numpy
from shax.numpy._arrays import _arrays_of, _fail, _int, concatenate, normalize_axis, reshape, split
from shax.numpy._elementwise import as_array
from shax.numpy._options import one_of
from shax.tracing.tracer import Tracer

__all__ = [
    "array_split", "astype", "atleast_1d", "atleast_2d", "atleast_3d", "concat", "hstack", "pad", "ravel", "roll",
    "unstack", "vstack",
]  # fmt: skip


def ravel(a: Any, order: str = "C") -> Any:
    """a flattened, in C order."""
    one_of("ravel", "order", order, ("C", "F", "A", "K"))
    if order == "F":
        raise _fail("ravel", "order='F' is not supported (only C order)")
    return reshape(as_array(a, "ravel"), -1)


def _at_least(op: str, arys: tuple[Any, ...], shape_of: Any) -> Any:
    out = []
    for a in arys:
        a = as_array(a, op)
        if not isinstance(a, (Tracer, np.ndarray)):
            a = np.asarray(a)
        new = shape_of(tuple(tc.shape(a)))
        out.append(a if new == tuple(tc.shape(a)) else tc.reshape(a, list(new)))
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys: Any) -> Any:
    """Each array with at least one axis (a scalar as shape (1,))."""
    return _at_least("atleast_1d", arys, lambda s: s or (1,))


def atleast_2d(*arys: Any) -> Any:
    """Each array with at least two axes: (1, n) for a vector."""
    return _at_least("atleast_2d", arys, lambda s: s if len(s) >= 2 else (1, *(s or (1,))))


def atleast_3d(*arys: Any) -> Any:
    """Each array with at least three axes: (1, n, 1) for a vector, (m, n, 1) for a matrix."""
    return _at_least(
        "atleast_3d", arys, lambda s: s if len(s) >= 3 else {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}[len(s)]
    )


def vstack(tup: Sequence[Any], *, dtype: None = None, casting: str = "same_kind") -> Any:
    """The arrays (vectors as rows) joined along the first axis."""
    items = _arrays_of("vstack", tup)
    return concatenate(atleast_2d(*items) if len(items) > 1 else [atleast_2d(*items)], 0, dtype=dtype, casting=casting)


def hstack(tup: Sequence[Any], *, dtype: None = None, casting: str = "same_kind") -> Any:
    """The arrays joined along the second axis (vectors and scalars along the first)."""
    items = [atleast_1d(a) for a in _arrays_of("hstack", tup)]
    axis = 0 if len(tc.shape(items[0])) == 1 else 1
    return concatenate(items, axis, dtype=dtype, casting=casting)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """The array API's `concatenate`."""
    return concatenate(arrays, axis)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """x split along `axis` into its slices, that axis removed (numpy 2.1's)."""
    x = as_array(x, "unstack")
    shape = list(tc.shape(x))
    if not shape:
        raise _fail("unstack", "needs an array of rank at least 1, got a 0-d one")
    k = normalize_axis("unstack", axis, len(shape))
    rest = shape[:k] + shape[k + 1 :]
    return tuple(tc.reshape(piece, rest) for piece in split(x, shape[k], k)) if shape[k] else ()


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """a's elements shifted by `shift` along `axis` (of the flattened a if None), those
    leaving one end coming in at the other."""
    a = as_array(a, "roll")
    if axis is None:
        flat = reshape(a, -1)
        return reshape(roll(flat, shift, 0), list(tc.shape(a)))
    shifts = [_int("roll", s, "a shift") for s in (shift if isinstance(shift, (tuple, list)) else [shift])]
    rank = len(tc.shape(a))
    axes = [normalize_axis("roll", k, rank) for k in (axis if isinstance(axis, (tuple, list)) else [axis])]
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        raise _fail("roll", f"shift {shift!r} and axis {axis!r} do not broadcast together")
    if not shifts or not axes:
        raise _fail("roll", f"needs a shift and an axis, got shift {shift!r} and axis {axis!r}")
    count = max(len(shifts), len(axes))
    shifts, axes = shifts * (count // len(shifts)), axes * (count // len(axes))
    for s, k in zip(shifts, axes):
        n = tc.shape(a)[k]
        if n and s % n:
            head, tail = split(a, [n - s % n], k)
            a = concatenate([tail, head], k)
    return a


_MODES = (
    "constant",
    "edge",
    "wrap",
    "reflect",
    "symmetric",
    "linear_ramp",
    "maximum",
    "mean",
    "median",
    "minimum",
    "empty",
)


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Any:
    """numpy's pad, modes "constant" (`constant_values`: a number, or numpy's (before, after)
    pairs per axis; traced values too), "edge", "wrap"; numpy's other modes are refused."""
    one_of("pad", "mode", mode, _MODES)
    array = as_array(array, "pad")
    shape = list(tc.shape(array))
    widths = _widths(pad_width, len(shape))
    allowed = {"constant": {"constant_values"}}.get(mode, set())
    extra = set(kwargs) - allowed
    if extra:
        raise _fail("pad", f"mode {mode!r} takes no keyword {sorted(extra)[0]!r}", ShaxTypeError)
    values = kwargs.get("constant_values", 0)
    if not isinstance(array, Tracer) and not isinstance(values, Tracer):
        return _numpy_pad(array, widths, mode, kwargs)
    if mode not in ("constant", "edge", "wrap"):
        raise _fail("pad", f"mode {mode!r} of a traced array is not supported (only 'constant', 'edge', 'wrap')")
    if not isinstance(values, Tracer):  # numbers, or numpy's (before, after) pairs of them
        try:
            kind = np.asarray(values).dtype.kind
        except (TypeError, ValueError):
            kind = "O"
        if kind not in "biuf":
            raise _fail("pad", f"constant_values must be numbers, got {values!r:.60}", ShaxTypeError)
    for k, (lo, hi) in enumerate(widths):
        if mode == "constant":
            array = _pad_constant(array, k, lo, hi, _pair(values, k, len(shape)))
        elif lo or hi:
            array = _pad_from_array(array, k, lo, hi, mode)
    return array


def _numpy_pad(array: Any, widths: list[tuple[int, int]], mode: str, kwargs: dict[str, Any]) -> Any:
    try:
        return np.pad(array, widths, mode, **kwargs)  # type: ignore[call-overload]  # mode: one of numpy's
    except (TypeError, ValueError) as error:
        raise _fail(
            "pad", f"numpy: {error}", ShaxTypeError if isinstance(error, TypeError) else ShaxValueError
        ) from None


def _widths(pad_width: Any, rank: int) -> list[tuple[int, int]]:
    """numpy's pad_width (a number, a (before, after) pair, or one pair per axis) as pairs."""
    try:
        widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (rank, 2))
    except ValueError:
        raise _fail("pad", f"pad_width {pad_width!r} does not fit an array of rank {rank}") from None
    pairs = [(_int("pad", lo, "a pad width"), _int("pad", hi, "a pad width")) for lo, hi in widths]
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise _fail("pad", f"pad widths must be non-negative, got {pad_width!r}")
    return pairs


def _pair(values: Any, k: int, rank: int) -> tuple[Any, Any]:
    """The (before, after) constants of axis k: numpy's broadcast of constant_values."""
    if isinstance(values, Tracer):
        if values.shape:
            raise _fail("pad", f"a traced constant_values must be a scalar, got {values.type}")
        return values, values
    try:
        table = np.broadcast_to(np.asarray(values), (rank, 2)) if np.ndim(values) else None
    except ValueError:
        raise _fail("pad", f"constant_values {values!r:.60} do not broadcast to ({rank}, 2), numpy's pairs") from None
    return (values, values) if table is None else (table[k][0], table[k][1])


def _pad_constant(x: Any, k: int, lo: int, hi: int, values: tuple[Any, Any]) -> Any:
    """x padded along axis k with lo copies of values[0] before and hi of values[1] after:
    the pad primitive's zeros, selected to the values (so a traced value is differentiated)."""
    if not lo and not hi:
        return x
    dtype = x.dtype.numpy if isinstance(x, Tracer) else np.asarray(x).dtype
    rank = len(tc.shape(x))
    widths = [(lo, hi) if a == k else (0, 0) for a in range(rank)]
    padded = tc.pad(x, widths, 0)
    n = tc.shape(x)[k]
    where = [np.arange(lo + n + hi) < lo, np.arange(lo + n + hi) >= lo + n]
    for mask, value in zip(where, values):
        if not isinstance(value, Tracer):
            value = np.asarray(value).astype(dtype)
        shaped = mask.reshape([-1 if a == k else 1 for a in range(rank)])
        padded = tc.where(shaped, value, padded)
    return padded


def _pad_from_array(x: Any, k: int, lo: int, hi: int, mode: str) -> Any:
    """x padded along axis k from its own elements: its border repeated ("edge") or its far end ("wrap")."""
    n = tc.shape(x)[k]
    if not n:
        raise _fail("pad", f"cannot pad an empty axis with mode {mode!r}")
    parts = []
    if lo:
        parts.append(_edge_part(x, k, 0, lo) if mode == "edge" else _wrapped(x, k, -lo % n, lo))
    parts.append(x)
    if hi:
        parts.append(_edge_part(x, k, n - 1, hi) if mode == "edge" else _wrapped(x, k, 0, hi))
    return concatenate(parts, k)


def _take(x: Any, k: int, start: int, end: int) -> Any:
    shape = list(tc.shape(x))
    lo, hi = [0] * len(shape), list(shape)
    lo[k], hi[k] = start, end
    return tc.slice(x, lo, hi)


def _edge_part(x: Any, k: int, at: int, count: int) -> Any:
    shape = list(tc.shape(x))
    shape[k] = count
    return tc.broadcast_to(_take(x, k, at, at + 1), shape)


def _wrapped(x: Any, k: int, start: int, count: int) -> Any:
    """count elements of x along k from `start`, cycling."""
    n = tc.shape(x)[k]
    parts, position = [], start
    while count:
        step = min(count, n - position)
        parts.append(_take(x, k, position, position + step))
        count -= step
        position = 0
    return concatenate(parts, k) if len(parts) > 1 else parts[0]


def astype(x: Any, dtype: Any, /, *, copy: bool = True, device: Any = None) -> Any:
    """x's elements as `dtype` (numpy 2's function; numpy's rounding)."""
    x = as_array(x, "astype")
    try:
        numpy_dtype = dtype_of_numpy(dtype).numpy
    except ShaxTypeError as error:
        raise _fail("astype", str(error), ShaxTypeError) from None
    if device is not None:
        raise _fail("astype", f"device={device!r} is not supported (shax has one device)")
    if isinstance(x, Tracer):
        return tc.convert_element_type(x, numpy_dtype)
    try:
        return np.asarray(x).astype(numpy_dtype, copy=copy)
    except (TypeError, ValueError) as error:
        raise _fail("astype", f"numpy: {error}", ShaxTypeError) from None


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """numpy's array_split: `split`, but N sections of an axis of length L need not divide
    it: the first L mod N get one more element (L // N + 1, then L // N)."""
    if isinstance(indices_or_sections, (tuple, list)) or np.ndim(indices_or_sections) > 0:
        return split(ary, indices_or_sections, axis)
    sections = _int("array_split", indices_or_sections, "the number of sections")
    if sections <= 0:
        raise _fail("array_split", f"the number of sections must be positive, got {sections}")
    rank = len(tc.shape(ary))
    n = tc.shape(ary)[normalize_axis("array_split", axis, rank)]
    each, extras = divmod(n, sections)
    sizes = [each + 1] * extras + [each] * (sections - extras)
    return split(ary, [int(c) for c in np.cumsum(sizes)[:-1]], axis)
