"""`shax.lax`'s shaping, sorting and scanning functions that are compositions, with
jax.lax's signatures: `iota`, `expand_dims`, `slice_in_dim`, `dynamic_index_in_dim`,
`sort` (of one array or of several by their first `num_keys`), and the cumulative
`cumsum cumprod cummax cummin` (shax.numpy's prefix scan, `shax.numpy._cumulative`,
with lax's `reverse`).

`sort` is stable, as lax's default; its order is numpy's (NaN last), where lax's total
order also puts −0.0 before 0.0 and a negative NaN first: shax keeps such ties in order."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax import numpy as snp
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.numpy._cumulative import _scan

__all__ = [
    "cummax", "cummin", "cumprod", "cumsum", "dynamic_index_in_dim", "expand_dims", "iota", "slice_in_dim", "sort",
]  # fmt: skip


def _fail(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"lax.{op}: {message}"), current_source())


def _int(op: str, name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise _fail(op, f"{name} must be an int, got {value!r}", ShaxTypeError)
    return int(value)


def _axis(op: str, axis: Any, rank: int) -> int:
    k = _int(op, "the axis", axis)
    if not -rank <= k < rank:
        raise _fail(op, f"axis {k} is out of range for an operand of rank {rank}")
    return k % rank


def iota(dtype: Any, size: int) -> Any:
    """0, 1, ..., size − 1 in `dtype` (a constant)."""
    n = _int("iota", "size", size)
    if n < 0:
        raise _fail("iota", f"size must be non-negative, got {n}")
    try:
        return snp.arange(n, dtype=dtype)
    except (TypeError, ValueError) as error:
        raise _fail("iota", f"dtype={dtype!r}: {error}", ShaxTypeError) from None


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """array with a new axis of size 1 at each of `dimensions` (axes of the result)."""
    if isinstance(dimensions, (str, bytes)) or not isinstance(dimensions, (Sequence, np.ndarray)):
        raise _fail("expand_dims", f"dimensions must be a sequence of ints, got {dimensions!r}", ShaxTypeError)
    return snp.expand_dims(array, tuple(_int("expand_dims", "a dimension", d) for d in dimensions))


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None, stride: int = 1, axis: int = 0) -> Any:
    """operand[start:limit:stride] along `axis`; None is the axis's start or end, and a
    negative index counts from the end (once, as lax's)."""
    shape = list(tc.shape(operand))
    k = _axis("slice_in_dim", axis, len(shape))
    n = shape[k]
    start = 0 if start_index is None else _int("slice_in_dim", "start_index", start_index)
    limit = n if limit_index is None else _int("slice_in_dim", "limit_index", limit_index)
    start, limit = start + n if start < 0 else start, limit + n if limit < 0 else limit
    step = _int("slice_in_dim", "stride", stride)
    if not 0 <= start <= limit <= n or step < 1:
        message = f"start {start_index}, limit {limit_index}, stride {stride} do not fit an axis of size {n}"
        raise _fail("slice_in_dim", message)
    starts, limits = [0] * len(shape), list(shape)
    starts[k], limits[k] = start, limit
    sliced = tc.slice(operand, starts, limits)
    if step == 1:
        return sliced
    every = builtins.slice(None)
    return sliced[tuple(builtins.slice(None, None, step) if j == k else every for j in range(len(shape)))]


def dynamic_index_in_dim(
    operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *, allow_negative_indices: bool = True
) -> Any:
    """operand's element `index` along `axis` (a traced index too), kept as an axis of
    size 1 if `keepdims`. A negative index counts from the end, or, without
    `allow_negative_indices`, is clamped to 0; one beyond the end is clamped to the last."""
    shape = list(tc.shape(operand))
    k = _axis("dynamic_index_in_dim", axis, len(shape))
    if getattr(index, "type", None) is None:
        index = np.asarray(_int("dynamic_index_in_dim", "index", index[()] if isinstance(index, np.ndarray) else index))
    elif index.type.rank or index.dtype.is_float or index.dtype.name == "bool":
        message = f"index must be an integer scalar, got a traced {index.type}"
        raise _fail("dynamic_index_in_dim", message, ShaxTypeError)
    index = tc.convert_element_type(index, np.int32) if getattr(index, "type", None) is not None else index
    if not allow_negative_indices:
        index = tc.maximum(index, np.int32(0)) if getattr(index, "type", None) is not None else np.maximum(index, 0)
    starts = [np.int32(0) if j != k else index for j in range(len(shape))]
    sizes = [1 if j == k else n for j, n in enumerate(shape)]
    from shax.lax import dynamic_slice  # the package's, which imports this module

    block = dynamic_slice(operand, starts, sizes)
    return block if keepdims else tc.reshape(block, [n for j, n in enumerate(shape) if j != k])


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """operand sorted along `dimension`; of a sequence of arrays (one shape), all permuted
    by the order of the first `num_keys` (lexicographic), returned as a tuple. Stable sorts
    from the last key to the first give the lexicographic order."""
    if not isinstance(is_stable, (bool, np.bool_)):
        raise _fail("sort", f"is_stable must be a bool, got {is_stable!r}", ShaxTypeError)
    single = not isinstance(operand, (list, tuple))
    operands = [operand] if single else list(operand)
    keys = _int("sort", "num_keys", num_keys)
    if not 1 <= keys <= len(operands):
        raise _fail("sort", f"num_keys must be between 1 and the {len(operands)} operands, got {keys}")
    shape = tuple(tc.shape(operands[0]))
    if any(tuple(tc.shape(o)) != shape for o in operands):
        shapes = [tuple(tc.shape(o)) for o in operands]
        raise _fail("sort", f"the operands must have one shape, got {shapes}", ShaxTypeError)
    if not shape:
        raise _fail("sort", "the operands must have at least one axis", ShaxTypeError)
    k = _axis("sort", dimension, len(shape))
    if single:
        return snp.sort(operand, axis=k)
    order: Any = snp.argsort(operands[keys - 1], axis=k)
    for key in reversed(operands[: keys - 1]):
        order = snp.take_along_axis(order, snp.argsort(snp.take_along_axis(key, order, k), axis=k), k)
    return tuple(snp.take_along_axis(o, order, k) for o in operands)


def _cumulative(op: str, combine: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def cumulative(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        shape = tuple(tc.shape(operand))
        if not shape:
            raise _fail(op, "the operand must have at least one axis", ShaxTypeError)
        k = _axis(op, axis, len(shape))
        if not isinstance(reverse, (bool, np.bool_)):
            raise _fail(op, f"reverse must be a bool, got {reverse!r}", ShaxTypeError)
        x = snp.moveaxis(operand, k, -1)
        x = tc.rev(x, [len(shape) - 1]) if reverse else x
        y = _scan(combine, x)
        y = tc.rev(y, [len(shape) - 1]) if reverse else y
        return snp.moveaxis(y, -1, k)

    cumulative.__name__ = cumulative.__qualname__ = op
    return cumulative


# The prefix combinations y_i = x_0 ⊕ ... ⊕ x_i along `axis` (from the end if `reverse`);
# max and min share a tie's derivative equally, as lax.max's.
cumsum = _cumulative("cumsum", tc.add)
cumprod = _cumulative("cumprod", tc.mul)
cummax = _cumulative("cummax", tc.maximum)
cummin = _cumulative("cummin", tc.minimum)
cumsum.__doc__ = "The running sums along `axis` (from the end if `reverse`)."
cumprod.__doc__ = "The running products along `axis` (from the end if `reverse`)."
cummax.__doc__ = "The running maxima along `axis` (from the end if `reverse`)."
cummin.__doc__ = "The running minima along `axis` (from the end if `reverse`)."
