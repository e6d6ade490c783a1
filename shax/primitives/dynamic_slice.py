"""`dynamic_slice` and `dynamic_update_slice`: a block of x at starts known only at run
time (JAX's `lax.dynamic_slice`). `starts` is an integer vector, one start per axis; a
negative one counts from the end, and each is then clamped into [0, n - size], so the
block always lies inside x.

    dynamic_slice x s sizes        = x[s₀ : s₀ + size₀, ...]
    dynamic_update_slice x u s     = x with that block (of u's shape) replaced by u

The starts are never differentiated. dynamic_slice is linear in x, dynamic_update_slice
jointly in x and u, and they transpose into one another:

    (dynamic_slice dx s)ᵀ ct               = dynamic_update_slice 0 ct s
    (dynamic_update_slice dx du s)ᵀ ct     = (dynamic_update_slice ct 0 s, dynamic_slice ct s)

Batched, the block of each example is a gather (a scatter) at its flat positions in x:
Σ_a (s_a + j_a) · stride_a for the block's positions j.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, ints
from shax.core.types import TensorType, bool_
from shax.rules.batch import batch_rule, batched, batched_at, moveaxis
from shax.rules.export import export_rule
from shax.rules.linearize import Zero
from shax.rules.transpose import Operand, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["DynamicSlice", "DynamicUpdateSlice"]

L, Z = Linearity.LINEAR, Linearity.NON_DIFFERENTIABLE


@attrs.frozen
class DynamicSlice(Primitive):
    name, function = "dynamic_slice", tc.dynamic_slice
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (L, Z)
    sizes: tuple[int, ...] = attrs.field(converter=ints)


@attrs.frozen
class DynamicUpdateSlice(Primitive):
    name, function = "dynamic_update_slice", tc.dynamic_update_slice
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (L, L, Z)


def _check_starts(prim: Primitive, x: TensorType, starts: TensorType, *others: TensorType) -> None:
    if starts.dtype.is_float or starts.dtype == bool_ or starts.shape != (x.rank,):
        raise prim.fail(f"starts must be a vector of {x.rank} integers, one per axis of x", x, *others, starts)


@type_rule(DynamicSlice)
def _dynamic_slice_type(prim: DynamicSlice, operands: Sequence[TensorType]) -> TensorType:
    x, starts = operands
    _check_starts(prim, x, starts)
    if len(prim.sizes) != x.rank or any(not 0 <= k <= n for k, n in zip(prim.sizes, x.shape)):
        message = f"sizes {list(prim.sizes)} must be one size per axis, each at most the axis's"
        raise prim.fail(message, x, starts, error=ShaxValueError)
    return x.with_shape(prim.sizes)


@type_rule(DynamicUpdateSlice)
def _dynamic_update_slice_type(prim: DynamicUpdateSlice, operands: Sequence[TensorType]) -> TensorType:
    x, update, starts = operands
    _check_starts(prim, x, starts, update)
    if update.dtype != x.dtype or update.rank != x.rank or any(k > n for k, n in zip(update.shape, x.shape)):
        raise prim.fail("the update must be of x's dtype and rank, and fit inside x", x, update, starts)
    return x


# dynamic_slice: (dynamic_slice dx s)ᵀ ct = dynamic_update_slice 0 ct s
@transpose_rule(DynamicSlice)
def _dynamic_slice_transpose(prim: DynamicSlice, ct: Tracer, operands: Sequence[Operand]) -> tuple[Any, None]:
    x, starts = operands
    return tc.dynamic_update_slice(Zero(x.type), ct, starts), None


# dynamic_update_slice: (dynamic_update_slice dx du s)ᵀ ct = (ct with the block zeroed, the block of ct)
@transpose_rule(DynamicUpdateSlice)
def _dynamic_update_slice_transpose(
    prim: DynamicUpdateSlice, ct: Tracer, operands: Sequence[Operand]
) -> tuple[Any, Any, None]:
    x, update, starts = operands
    block = tc.dynamic_slice(ct, starts, update.type.shape)
    return tc.dynamic_update_slice(ct, Zero(update.type), starts), block, None


def _flat_positions(shape: tuple[int, ...], sizes: Sequence[int], starts: Any) -> Any:
    """(B, block size): each example's block, as flat positions in x of `shape`, its
    starts (B, rank) counted from the end if negative and clamped first."""
    strides = np.array([math.prod(shape[a + 1 :]) for a in range(len(shape))], np.int32)
    if starts.type.dtype.name != "i32":
        starts = tc.convert_element_type(starts, np.int32)
    starts = tc.select(tc.lt(starts, 0), starts + np.asarray(shape, np.int32), starts)
    starts = tc.minimum(tc.maximum(starts, 0), np.subtract(shape, sizes).astype(np.int32))
    base = tc.dot_general(starts, strides, ((1,), (0,), (), ()))
    offsets = np.tensordot(strides, np.indices(tuple(sizes), np.int32), 1).astype(np.int32).reshape(1, -1)
    return tc.broadcast(base, [0], [tc.shape(base)[0], offsets.shape[1]]) + offsets


# batched: every operand batched in front (an unbatched one broadcast there), the block of
# each example gathered (scattered) at its flat positions in its example of x
@batch_rule(DynamicSlice)
def _dynamic_slice_batch(prim: DynamicSlice, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Any, int]:
    (x, starts), (dx, ds) = operands, dims
    if ds is None:  # one more axis, sliced whole from 0
        x = moveaxis(x, batched(dx), 0)
        zero: Any = np.zeros(1, starts.type.dtype.numpy)
        whole = tc.concatenate(zero, starts, 0)
        return tc.dynamic_slice(x, whole, [tc.shape(x)[0], *prim.sizes]), 0
    size = tc.shape(starts)[ds]
    x, starts = batched_at(x, dx, 0, size), moveaxis(starts, ds, 0)
    shape = tuple(tc.shape(x))[1:]
    positions = _flat_positions(shape, prim.sizes, starts)
    block = tc.gather(tc.reshape(x, [size, math.prod(shape)]), positions, 1, 1)
    return tc.reshape(block, [size, *prim.sizes]), 0


@batch_rule(DynamicUpdateSlice)
def _dynamic_update_slice_batch(
    prim: DynamicUpdateSlice, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Any, int]:
    size = next(tc.shape(o)[d] for o, d in zip(operands, dims) if d is not None)
    if dims[2] is None:  # one more axis, written whole from 0
        x, update = (batched_at(o, d, 0, size) for o, d in zip(operands[:2], dims[:2]))
        starts = operands[2]
        zero: Any = np.zeros(1, starts.type.dtype.numpy)
        whole = tc.concatenate(zero, starts, 0)
        return tc.dynamic_update_slice(x, update, whole), 0
    x, update, starts = (batched_at(o, d, 0, size) for o, d in zip(operands, dims))
    shape, sizes = tuple(tc.shape(x))[1:], tuple(tc.shape(update))[1:]
    positions = _flat_positions(shape, sizes, starts)
    flat_update = tc.reshape(update, [size, math.prod(sizes)])
    written = tc.scatter(tc.reshape(x, [size, math.prod(shape)]), positions, flat_update, 1, 1)
    return tc.reshape(written, [size, *shape]), 0


# Export: XLA's dynamic slices, which clamp the starts into range as shax does
def _starts(starts: Any) -> list[Any]:
    return [starts[a] for a in range(np.shape(starts)[0])]


@export_rule(DynamicSlice)
def _dynamic_slice_export(prim: DynamicSlice, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    x, starts = operands
    return lax.dynamic_slice(x, _starts(starts), prim.sizes)


@export_rule(DynamicUpdateSlice)
def _dynamic_update_slice_export(prim: DynamicUpdateSlice, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    x, update, starts = operands
    return lax.dynamic_update_slice(x, update, _starts(starts))
