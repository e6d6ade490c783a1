"""`shax.lax`'s window functions with jax.lax's signatures: `conv_general_dilated`, `conv`,
`reduce_window` and `top_k`. They resolve what lax lets a caller leave abstract — padding
as "SAME"/"VALID", dimension numbers as strings such as ("NHWC", "HWIO", "NHWC") — into
the primitives' static parameters, as JAX resolves them (`padtype_to_pads`,
`conv_general_permutations`)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.numpy import take_along_axis
from shax.primitives.conv import dilate

Specs = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _fail(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"lax.{op}: {message}"), current_source())


def _ints(op: str, name: str, values: Any, count: int) -> list[int]:
    if (
        isinstance(values, (str, bytes))
        or not isinstance(values, (Sequence, np.ndarray))
        or (isinstance(values, np.ndarray) and values.ndim == 0)
    ):
        raise _fail(op, f"{name} must be a sequence of {count} ints, got {values!r}", ShaxTypeError)
    items = list(values)
    if len(items) != count or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in items):
        raise _fail(op, f"{name} must be a sequence of {count} ints, got {values!r}", ShaxTypeError)
    return [int(v) for v in items]


def padding_pairs(
    op: str, padding: Any, sizes: Sequence[int], window: Sequence[int], strides: Sequence[int]
) -> list[tuple[int, int]]:
    """lax's padding: "VALID", "SAME" (the result ⌈n / stride⌉ long, an odd pad's extra at
    the end), "SAME_LOWER" (at the start), or one (lo, hi) pair per axis."""
    if isinstance(padding, str):
        if padding.upper() == "VALID":
            return [(0, 0)] * len(sizes)
        if padding.upper() not in ("SAME", "SAME_LOWER"):
            raise _fail(op, f"padding must be 'SAME', 'SAME_LOWER', 'VALID' or (lo, hi) pairs, got {padding!r}")
        pairs = []
        for n, w, s in zip(sizes, window, strides):
            total = max((-(-n // s) - 1) * s + w - n, 0)
            lo = total // 2 if padding.upper() == "SAME" else total - total // 2
            pairs.append((lo, total - lo))
        return pairs
    if isinstance(padding, (bytes, dict)) or not isinstance(padding, (Sequence, np.ndarray)):
        raise _fail(op, f"padding must be a string or (lo, hi) pairs, got {padding!r}", ShaxTypeError)
    given = [_ints(op, "each padding pair", p, 2) for p in padding]
    if len(given) != len(sizes):
        raise _fail(op, f"padding needs {len(sizes)} (lo, hi) pairs, got {len(given)}")
    return [(lo, hi) for lo, hi in given]


def dimension_specs(op: str, dimension_numbers: Any, rank: int) -> Specs:
    """The axes of lhs (batch, feature, spatial...), rhs (out, in, spatial...) and the
    result: from None (N, C, spatial... everywhere), three strings (spatial axes paired by
    letter, in the kernel's order), or three lists of axes (ConvDimensionNumbers)."""
    if dimension_numbers is None:
        canonical = tuple(range(rank))
        return canonical, canonical, canonical
    try:
        lhs, rhs, out = dimension_numbers
    except (TypeError, ValueError):
        raise _fail(op, f"dimension_numbers must be three specs, got {dimension_numbers!r}", ShaxTypeError) from None
    if not all(isinstance(s, str) for s in (lhs, rhs, out)):
        return tuple(_ints(op, "a dimension spec", s, rank) for s in (lhs, rhs, out))  # type: ignore[return-value]
    for spec, pair in ((lhs, "NC"), (rhs, "OI"), (out, "NC")):
        if len(spec) != rank or len(set(spec)) != rank or not all(spec.count(c) == 1 for c in pair):
            message = f"{spec!r} must name {rank} distinct axes, {pair[0]} and {pair[1]} once each"
            raise _fail(op, f"dimension_numbers {dimension_numbers!r}: {message}")
    spatial = [c for c in rhs if c not in "OI"]
    if set(spatial) != set(lhs) - set("NC") or set(spatial) != set(out) - set("NC"):
        raise _fail(op, f"dimension_numbers {dimension_numbers!r} must name the same spatial axes")
    return (
        (lhs.index("N"), lhs.index("C"), *(lhs.index(c) for c in spatial)),
        (rhs.index("O"), rhs.index("I"), *(rhs.index(c) for c in spatial)),
        (out.index("N"), out.index("C"), *(out.index(c) for c in spatial)),
    )


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    op = "conv_general_dilated"
    for name, value in (("precision", precision), ("preferred_element_type", preferred_element_type)):
        if value is not None:
            raise _fail(op, f"{name}={value!r} is not supported (only None)")
    lhs_shape, rhs_shape = tuple(tc.shape(lhs)), tuple(tc.shape(rhs))
    rank = len(lhs_shape)
    if rank < 2:
        raise _fail(op, f"lhs needs a batch and a feature axis, got shape {lhs_shape}", ShaxTypeError)
    specs = dimension_specs(op, dimension_numbers, rank)
    count = rank - 2
    strides = _ints(op, "window_strides", window_strides, count)
    lhs_d = _ints(op, "lhs_dilation", lhs_dilation, count) if lhs_dilation is not None else [1] * count
    rhs_d = _ints(op, "rhs_dilation", rhs_dilation, count) if rhs_dilation is not None else [1] * count
    sizes = [lhs_shape[a] for a in specs[0][2:]]
    kernel = [dilate(rhs_shape[a], d) if a < len(rhs_shape) else 0 for a, d in zip(specs[1][2:], rhs_d)]
    pairs = padding_pairs(op, padding, sizes, kernel, strides)
    return tc.conv_general_dilated(
        lhs, rhs, strides, pairs, lhs_d, rhs_d, specs, feature_group_count, batch_group_count
    )


def conv(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Any:
    """conv_general_dilated with (N, C, spatial...) and (O, I, spatial...) axes."""
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, precision=precision, preferred_element_type=preferred_element_type
    )


def reduce_window(
    operand: Any,
    init_value: Any,
    computation: Callable[[Any, Any], Any],
    window_dimensions: Sequence[int],
    window_strides: Sequence[int],
    padding: Any,
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
) -> Any:
    """Pooling: `computation` lax.add (from 0) or lax.max (from -inf, or the integer
    dtype's lowest value) over each window."""
    op = "reduce_window"
    shape = tuple(tc.shape(operand))
    for name, value in (("base_dilation", base_dilation), ("window_dilation", window_dilation)):
        if value is not None and any(d != 1 for d in _ints(op, name, value, len(shape))):
            raise _fail(op, f"{name}={value!r} is not supported (only 1s)")
    window = _ints(op, "window_dimensions", window_dimensions, len(shape))
    strides = _ints(op, "window_strides", window_strides, len(shape))
    pairs = padding_pairs(op, padding, shape, window, strides)
    try:
        scalar = getattr(init_value, "type", None) is None and np.ndim(init_value) == 0
    except ValueError:  # a ragged sequence numpy cannot read
        scalar = False
    if not scalar:
        raise _fail(op, "init_value must be a constant scalar", ShaxTypeError)
    init = np.asarray(init_value).item()
    if computation in (tc.add, _lax_function("add")):
        if init != 0:
            raise _fail(op, f"a sum needs init_value 0, got {init_value!r}")
        return tc.reduce_window_sum(operand, window, strides, pairs)
    if computation in (tc.max, _lax_function("max")):
        lowest = -np.inf if np.issubdtype(np.dtype(_dtype(operand)), np.floating) else np.iinfo(_dtype(operand)).min
        if init != lowest:
            raise _fail(op, f"a max needs init_value {lowest} (the dtype's lowest value), got {init_value!r}")
        return tc.reduce_window_max(operand, window, strides, pairs)
    raise _fail(op, f"computation must be lax.add or lax.max, got {computation!r}")


def _dtype(x: Any) -> Any:
    t = getattr(x, "type", None)
    return t.dtype.numpy if t is not None else np.asarray(x).dtype


def _lax_function(name: str) -> Any:
    """JAX's own lax.add / lax.max, when JAX is loaded (JAX code passes those)."""
    lax = sys.modules.get("jax.lax")
    return getattr(lax, name, None) if lax is not None else None


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The k largest elements along the last axis, largest first, and their i32 indices."""
    shape = tuple(tc.shape(operand))
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not shape or not 0 <= k <= shape[-1]:
        raise _fail("top_k", f"k must be an int in [0, {shape[-1] if shape else 0}] for shape {shape}, got {k!r}")
    dtype = np.dtype(_dtype(operand))
    if dtype == np.bool_:
        raise _fail("top_k", "cannot order booleans", ShaxTypeError)
    # A key whose ascending order is the operand's descending one: -x, or ~x of integers
    # (no overflow: ~x = -x - 1 wraps exactly as two's complement does).
    if dtype.kind == "f":
        key = tc.neg(operand)
    elif dtype.kind == "u":
        key = tc.sub(np.iinfo(dtype).max, operand)
    else:
        key = tc.sub(tc.neg(operand), 1)
    axis = len(shape) - 1
    indices = tc.slice(tc.argsort(key, axis), [0] * len(shape), [*shape[:-1], int(k)])
    return take_along_axis(operand, indices, axis), indices
