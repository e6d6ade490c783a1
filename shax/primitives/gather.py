"""gather, scatter_add, scatter: reading and writing x at integer indices along one axis,
for each index of the leading `batch_dims` axes (shared by x and the indices):

    gather x i        = x[b..., p..., i[b..., j...], q...]         axes (b..., p..., j..., q...)
    scatter_add x i u = x, plus u added at those positions (repeats add up)
    scatter x i u     = x, with u written at those positions (of repeats, the last is kept)

Negative indices count from the end; indices beyond the axis are clamped into it
(`typeclasses.numpy_gather`). The indices are never differentiated. gather is linear
in x, scatter_add and scatter jointly in x and u, so their derivatives come from their
linearity, and they transpose into one another:

    (gather dx i)ᵀ ct          = scatter_add 0 i ct
    (scatter_add dx i du)ᵀ ct  = (ct, gather ct i)
    (scatter dx i du)ᵀ ct      = (scatter ct i 0, gather ct i where that update was kept)

`batch_dims` is what batching needs: a batch axis of both x and the indices becomes
one more batch dim (XLA's operand and start-indices batching dims).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, integer
from shax.core.types import TensorType, bool_, i32
from shax.rules.batch import batch_rule, batched_at, moveaxis
from shax.rules.cost import cost_rule
from shax.rules.export import export_rule
from shax.rules.linearize import Zero, materialized
from shax.rules.transpose import Operand, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["Gather", "Scatter", "ScatterAdd"]

L, Z = Linearity.LINEAR, Linearity.NON_DIFFERENTIABLE


@attrs.frozen
class Indexing(Primitive):
    """The family: x's elements at integer indices along `axis`, per index of the first
    `batch_dims` axes of x and the indices."""

    axis: int = attrs.field(converter=integer)
    batch_dims: int = attrs.field(converter=integer, default=0)

    def read_type(self, x: TensorType, indices: TensorType) -> TensorType:
        """The type of what gather reads (a scatter's updates)."""
        a, b = self.axis, self.batch_dims
        if indices.dtype.is_float or indices.dtype == bool_:
            raise self.fail(f"indices must be integers, not {indices.dtype.name}", x, indices)
        if not 0 <= b <= a < x.rank or b > indices.rank:
            message = f"axis {a} and batch_dims {b} need batch_dims <= axis < rank of x, batch_dims <= rank of indices"
            raise self.fail(message, x, indices, error=ShaxValueError)
        if x.shape[:b] != indices.shape[:b]:
            raise self.fail(f"the first {b} axes of x and the indices must have the same sizes", x, indices)
        if x.shape[a] == 0 and indices.size:
            raise self.fail(f"axis {a} is empty: there is no element to read", x, indices, error=ShaxValueError)
        return x.with_shape((*x.shape[:a], *indices.shape[b:], *x.shape[a + 1 :]))

    def index_axes(self, indices_rank: int) -> list[int]:
        """gather's result axes that come from the indices (b... then j...)."""
        return [*range(self.batch_dims), *range(self.axis, self.axis + indices_rank - self.batch_dims)]


@attrs.frozen
class Gather(Indexing):
    name, function = "gather", tc.gather
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (L, Z)


@attrs.frozen
class ScatterAdd(Indexing):
    name, function = "scatter_add", tc.scatter_add
    linearity: ClassVar[tuple[Linearity, ...]] = (L, Z, L)


@attrs.frozen
class Scatter(Indexing):
    name, function = "scatter", tc.scatter
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (L, Z, L)


@type_rule(Gather)
def _gather_type(prim: Gather, operands: Sequence[TensorType]) -> TensorType:
    x, indices = operands
    return prim.read_type(x, indices)


@type_rule(ScatterAdd, Scatter)
def _scatter_type(prim: Indexing, operands: Sequence[TensorType]) -> TensorType:
    x, indices, updates = operands
    read = prim.read_type(x, indices)
    if updates != read:
        raise prim.fail(f"the updates must be {read}, what gather reads there", x, indices, updates)
    if isinstance(prim, ScatterAdd) and x.dtype == bool_:
        raise prim.fail("cannot add booleans", x, indices, updates)
    return x


# gather: (gather dx i)ᵀ ct = scatter_add 0 i ct, each read element's cotangent added back
@transpose_rule(Gather)
def _gather_transpose(prim: Gather, ct: Tracer, operands: Sequence[Operand]) -> tuple[Tracer, None]:
    x, indices = operands
    return tc.scatter_add(Zero(x.type), indices, ct, prim.axis, prim.batch_dims), None


# scatter_add: (scatter_add dx i du)ᵀ ct = (ct, gather ct i)
@transpose_rule(ScatterAdd)
def _scatter_add_transpose(prim: ScatterAdd, ct: Tracer, operands: Sequence[Operand]) -> tuple[Tracer, None, Tracer]:
    indices = operands[1]
    return ct, None, tc.gather(ct, indices, prim.axis, prim.batch_dims)


# scatter: (scatter dx i du)ᵀ ct = (scatter ct i 0, gather ct i · kept): x's overwritten
# elements get no cotangent; of updates to one position, only the kept one does. Which is
# kept: scatter each update's number, and read back who won (JAX's scatter does the same).
@transpose_rule(Scatter)
def _scatter_transpose(prim: Scatter, ct: Tracer, operands: Sequence[Operand]) -> tuple[Tracer, None, Tracer]:
    x, indices, updates = operands
    a, b = prim.axis, prim.batch_dims
    index_shape = tuple(tc.shape(indices))
    own = np.arange(int(np.prod(index_shape[b:])), dtype=np.int32).reshape(index_shape[b:])
    numbers = np.broadcast_to(own, index_shape)  # each update's number, in every batch
    owners = materialized(Zero(TensorType(i32, (*index_shape[:b], x.type.shape[a]))))
    owners = tc.scatter(owners, indices, numbers, b, b)
    kept = tc.eq(tc.gather(owners, indices, b, b), numbers)
    kept = tc.broadcast(kept, prim.index_axes(len(index_shape)), list(updates.type.shape))
    return (
        tc.scatter(ct, indices, Zero(updates.type), a, b),
        None,
        tc.select(kept, tc.gather(ct, indices, a, b), 0.0),
    )


# gather, batched. Both operands: their batch axes become one more batch dim, in front.
# x alone: its batch axis is an axis before `axis` (right after the batch dims), read
# whole. The indices alone: their batch axis is one more index axis, the first.
@batch_rule(Gather)
def _gather_batch(prim: Gather, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    (x, indices), (dx, di) = operands, dims
    a, b = prim.axis, prim.batch_dims
    if dx is not None and di is not None:
        return tc.gather(moveaxis(x, dx, 0), moveaxis(indices, di, 0), a + 1, b + 1), 0
    if dx is not None:
        return tc.gather(moveaxis(x, dx, b), indices, a + 1, b), b
    assert di is not None, "a batch rule runs when an operand is batched"
    return tc.gather(x, moveaxis(indices, di, b), a, b), a


# scatter_add, scatter: all three operands batched in front (an unbatched one broadcast
# there), the batch axis one more batch dim.
@batch_rule(ScatterAdd, Scatter)
def _scatter_batch(prim: Indexing, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int]:
    size = next(tc.shape(o)[d] for o, d in zip(operands, dims) if d is not None)
    x, indices, updates = (batched_at(o, d, 0, size) for o, d in zip(operands, dims))
    write = tc.scatter_add if isinstance(prim, ScatterAdd) else tc.scatter
    return write(x, indices, updates, prim.axis + 1, prim.batch_dims + 1), 0


# scatter_add: one addition per update element
@cost_rule(ScatterAdd)
def _scatter_add_cost(prim: ScatterAdd, operands: Sequence[TensorType], out: TensorType) -> int:
    return operands[2].size


# Export. All three address x[b..., p..., i[b..., j...], q...] (b: the `batch_dims` leading
# axes, p: x's axes before `axis`, q: after). In lax's terms every element of i gives a full
# start index (b..., i) (the batch positions are iotas) and p, q are the window.


def _start_indices(prim: Indexing, x_shape: tuple[int, ...], indices: Any) -> Any:
    """(b..., j..., 1 + batch_dims): each index's batch position, then the index itself,
    read modulo n if in [-n, n) and clamped into [0, n) beyond."""
    from jax import lax

    dtype = np.int64 if indices.dtype == np.int64 else np.int32
    i = lax.convert_element_type(indices, dtype)
    n = x_shape[prim.axis]
    i = lax.select(lax.lt(i, lax.full_like(i, 0)), lax.add(i, lax.full_like(i, n)), i)
    i = lax.clamp(np.asarray(0, dtype), i, np.asarray(n - 1, dtype))
    shape = (*np.shape(i), 1)
    parts = [lax.broadcasted_iota(dtype, shape, b) for b in range(prim.batch_dims)]
    return lax.concatenate([*parts, lax.reshape(i, shape)], len(shape) - 1)


def _window(prim: Indexing, x_rank: int, index_rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the result's window axes (p, q), x's axes addressed by the start indices (b, axis))."""
    before = prim.axis - prim.batch_dims
    window = (
        *range(prim.batch_dims, prim.batch_dims + before),
        *range(index_rank + before, x_rank - 1 + index_rank - prim.batch_dims),
    )
    return window, (*range(prim.batch_dims), prim.axis)


@export_rule(Gather)
def _gather_export(prim: Gather, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    x, indices = operands
    shape = tuple(np.shape(x))
    window, addressed = _window(prim, len(shape), np.ndim(indices))
    numbers = lax.GatherDimensionNumbers(offset_dims=window, collapsed_slice_dims=addressed, start_index_map=addressed)
    sizes = tuple(1 if a in addressed else s for a, s in enumerate(shape))
    start = _start_indices(prim, shape, indices)
    return lax.gather(x, start, numbers, sizes, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _scatter_numbers(prim: Indexing, x: Any, indices: Any) -> Any:
    from jax import lax

    window, addressed = _window(prim, np.ndim(x), np.ndim(indices))
    return lax.ScatterDimensionNumbers(
        update_window_dims=window, inserted_window_dims=addressed, scatter_dims_to_operand_dims=addressed
    )


@export_rule(ScatterAdd)
def _scatter_add_export(prim: ScatterAdd, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    x, indices, updates = operands
    start = _start_indices(prim, tuple(np.shape(x)), indices)
    numbers = _scatter_numbers(prim, x, indices)
    return lax.scatter_add(x, start, updates, numbers, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


# scatter: XLA leaves the order of repeated positions open; numpy keeps the last update.
# Each position learns the largest flat number (C order) of the update elements written to
# it (scatter_max), which is the last, and reads that update; positions none reached keep x.
@export_rule(Scatter)
def _scatter_export(prim: Scatter, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    x, indices, updates = operands
    shape = tuple(np.shape(x))
    start = _start_indices(prim, shape, indices)
    numbers = _scatter_numbers(prim, x, indices)
    size = int(np.prod(np.shape(updates), dtype=np.int64))
    dtype = np.int64 if size > np.iinfo(np.int32).max else np.int32
    flat = lax.reshape(lax.iota(dtype, size), tuple(np.shape(updates)))
    nobody = lax.full(shape, -1, dtype)
    winner = lax.scatter_max(nobody, start, flat, numbers, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
    reached = lax.ge(winner, lax.full_like(winner, 0))
    chosen = lax.max(winner, lax.full_like(winner, 0))
    read = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    values = lax.gather(lax.reshape(updates, (size,)), lax.reshape(chosen, (*shape, 1)), read, (1,))
    return lax.select(reached, values, x)
