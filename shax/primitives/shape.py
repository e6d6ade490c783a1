"""Shape primitives, all linear in their operand: reshape, broadcast, transpose, slice,
pad, reduce_sum. Semantics follow numpy and XLA. Being linear, each is its own derivative,
d f(x) = f(dx), derived from its linearity (pad's once its fill value is taken out);
their transposes are written here."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError
from shax.core.primitive import Linearity, Primitive, int_pairs, ints, number, sizes
from shax.core.types import DType, TensorType, bool_, fits
from shax.rules.batch import batch_rule, batched, moveaxis, shifted
from shax.rules.codegen import Operand, Site, codegen_rule, dtype_source, reshaped, shape_source
from shax.rules.cost import cost_rules, per_input_element
from shax.rules.export import export_rule
from shax.rules.linearize import Tangent, linearize_rule, zero_of, zero_rule
from shax.rules.transpose import Linear, transpose_rule, unbroadcast
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["Broadcast", "Pad", "ReduceSum", "Reshape", "Slice", "Transpose", "check_permutation"]

LINEAR: tuple[Linearity, ...] = (Linearity.LINEAR,)


@attrs.frozen
class ShapePrimitive(Primitive):
    """Linear in its one operand; given an operand of its result's type, it is the identity."""

    linearity: ClassVar[tuple[Linearity, ...]] = LINEAR
    same_type_is_identity: ClassVar[bool] = True


@attrs.frozen
class Reshape(ShapePrimitive):
    name, function = "reshape", tc.reshape
    shape_only: ClassVar[bool] = True
    shape: tuple[int, ...] = attrs.field(converter=sizes)


@type_rule(Reshape)
def _reshape_type(prim: Reshape, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    # Sizes first: a shape of the wrong size is that error, even one too large to be a type.
    if math.prod(prim.shape) != x.size:
        raise prim.fail(f"cannot reshape {x.size} elements to {list(prim.shape)}", x)
    return x.with_shape(prim.shape)


# reshape: a view, C-contiguous if x is
@codegen_rule(Reshape)
def _reshape_codegen(prim: Reshape, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    site.view(x, contiguous=x.contiguous)
    return reshaped(x, prim.shape)


@attrs.frozen
class Broadcast(ShapePrimitive):
    """Input axis i becomes output axis dims[i]; a size-1 input axis may stretch."""

    name, function = "broadcast", tc.broadcast
    shape_only: ClassVar[bool] = True
    dims: tuple[int, ...] = attrs.field(converter=ints)
    shape: tuple[int, ...] = attrs.field(converter=sizes)


@type_rule(Broadcast)
def _broadcast_type(prim: Broadcast, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    dims, shape = prim.dims, prim.shape
    if len(dims) != x.rank:
        raise prim.fail(f"needs one output axis per input axis, got dims {list(dims)}", x)
    if any(not 0 <= d < len(shape) for d in dims) or any(a >= b for a, b in zip(dims, dims[1:])):
        raise prim.fail(f"dims {list(dims)} must increase strictly within rank {len(shape)}", x)
    for axis, d in enumerate(dims):
        if x.shape[axis] not in (1, shape[d]):
            raise prim.fail(f"input axis {axis} of size {x.shape[axis]} cannot become size {shape[d]}", x)
    return x.with_shape(shape)


# broadcast: input axis i placed at output axis dims[i] (size 1 elsewhere), then stretched
# (a read-only view). Where numpy stretches it anyway (site.implicit), it is only placed.
@codegen_rule(Broadcast)
def _broadcast_codegen(prim: Broadcast, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    placed = [1] * len(prim.shape)
    for axis, d in enumerate(prim.dims):
        placed[d] = x.type.shape[axis]
    site.view(x, contiguous=x.contiguous or x.rank <= 1, writable=False)
    if site.implicit:
        trailing = prim.dims == tuple(range(len(prim.shape) - x.rank, len(prim.shape)))
        return x.expr if trailing else reshaped(x, placed)
    return f"np.broadcast_to({reshaped(x, placed)}, {shape_source(prim.shape)})"


def check_permutation(prim: Primitive, axes: tuple[int, ...], rank: int, x: TensorType) -> None:
    if sorted(axes) != list(range(rank)):
        raise prim.fail(f"{list(axes)} is not a permutation of the {rank} axes", x, error=ShaxValueError)


@attrs.frozen
class Transpose(Primitive):
    """Output axis i is input axis perm[i]."""

    name, function = "transpose", tc.transpose
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = LINEAR
    perm: tuple[int, ...] = attrs.field(converter=ints)

    def forwarded(self, args: Sequence[Any], out: TensorType) -> int | None:
        # Output axis i is input axis perm[i] = i.
        return 0 if self.perm == tuple(range(len(self.perm))) else None


@type_rule(Transpose)
def _transpose_type(prim: Transpose, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    check_permutation(prim, prim.perm, x.rank, x)
    return x.with_shape(tuple(x.shape[p] for p in prim.perm))


# transpose: a view, laid out as x only if nothing moves
@codegen_rule(Transpose)
def _transpose_codegen(prim: Transpose, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    site.view(x, contiguous=x.contiguous and prim.perm == tuple(range(x.rank)))
    if x.rank == 0:
        return f"np.transpose({x}, ())"
    return f"{x}.transpose({shape_source(prim.perm)})"


@attrs.frozen
class Slice(ShapePrimitive):
    """Elements start[i] <= j < end[i] along each axis i (no strides)."""

    name, function = "slice", tc.slice
    shape_only: ClassVar[bool] = True
    start: tuple[int, ...] = attrs.field(converter=ints)
    end: tuple[int, ...] = attrs.field(converter=ints)


@type_rule(Slice)
def _slice_type(prim: Slice, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    if not len(prim.start) == len(prim.end) == x.rank:
        raise prim.fail(f"start {list(prim.start)} and end {list(prim.end)} need one entry per axis", x)
    for axis, (s, e, n) in enumerate(zip(prim.start, prim.end, x.shape)):
        if not 0 <= s <= e <= n:
            raise prim.fail(f"[{s}, {e}) is out of range for axis {axis} of size {n}", x, error=ShaxValueError)
    return x.with_shape(tuple(e - s for s, e in zip(prim.start, prim.end)))


# slice: a view (indexing a number with () gives a number, as in evaluate)
@codegen_rule(Slice)
def _slice_codegen(prim: Slice, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    site.view(x)
    if x.rank == 0:
        return f"np.asarray({x})[()]"
    return f"{x}[{', '.join(f'{s}:{e}' for s, e in zip(prim.start, prim.end))}]"


@attrs.frozen
class Pad(ShapePrimitive):
    """lohi[i] = (elements before, elements after) along axis i, filled with `value`.

    Linear in its operand when value is 0 (the only padding linearize/transpose emit)."""

    name, function = "pad", tc.pad
    shape_only: ClassVar[bool] = True
    lohi: tuple[tuple[int, int], ...] = attrs.field(converter=int_pairs)
    value: float = attrs.field(converter=number)


@type_rule(Pad)
def _pad_type(prim: Pad, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    if len(prim.lohi) != x.rank:
        raise prim.fail(f"needs one (lo, hi) pair per axis, got {list(prim.lohi)}", x)
    if any(lo < 0 or hi < 0 for lo, hi in prim.lohi):
        raise prim.fail(f"padding {list(prim.lohi)} must be non-negative", x, error=ShaxValueError)
    if not _is_value_of(prim.value, x.dtype):
        message = f"cannot pad a {x.dtype.name} tensor with {prim.value}, which is not one of its values"
        raise prim.fail(message, x, error=ShaxValueError)
    return x.with_shape(tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, prim.lohi)))


def _is_value_of(value: float, dtype: DType) -> bool:
    """Whether the fill value (held as a float) is one of `dtype`'s values, so that padding
    does not truncate it (0.5 to 0 in i32) or wrap it around."""
    if dtype.is_float:
        return True
    if dtype == bool_:
        return value in (0.0, 1.0)
    return value.is_integer() and fits(int(value), dtype)


# pad: the value, in x's dtype, everywhere, then x in its region: np.pad's values and layout
@codegen_rule(Pad)
def _pad_codegen(prim: Pad, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    site.fresh(contiguous=x.contiguous or x.rank <= 1)
    fill = site.constant(np.asarray(prim.value, x.type.dtype.numpy))
    region = [f"slice({lo}, {lo + n})" for (lo, _), n in zip(prim.lohi, x.type.shape)]
    regions = f"({region[0]},)" if len(region) == 1 else f"({', '.join(region)})"
    return f"pad_constant({x}, {shape_source(site.result.shape)}, {regions}, {fill})"


@attrs.frozen
class ReduceSum(ShapePrimitive):
    """Sum over `axes`, which disappear from the shape."""

    name, function = "reduce_sum", tc.reduce_sum
    axes: tuple[int, ...] = attrs.field(converter=ints)


@type_rule(ReduceSum)
def _reduce_sum_type(prim: ReduceSum, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    axes = prim.axes
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.rank for a in axes):
        raise prim.fail(f"axes {list(axes)} must be distinct axes of a rank-{x.rank} tensor", x, error=ShaxValueError)
    if x.dtype.name == "bool":
        raise prim.fail("cannot sum bool", x)
    return x.with_shape(tuple(n for a, n in enumerate(x.shape) if a not in axes))


# reduce_sum: the reduction np.sum makes, in x's dtype (np.add.reduce would widen i32)
@codegen_rule(ReduceSum)
def _reduce_sum_codegen(prim: ReduceSum, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    site.fresh(contiguous=x.contiguous or site.result.rank <= 1)
    return f"np.add.reduce({x}, axis={shape_source(prim.axes)}, dtype={dtype_source(x.type.dtype)})"


# pad: d pad(x, v) = pad(dx, 0), the padding value being constant
@linearize_rule(Pad)
def _pad_jvp(prim: Pad, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (dx,) = tangents
    return tc.pad(dx, prim.lohi, 0.0)


# pad 0 v = 0 only for v = 0: with another fill value it is affine, not linear
@zero_rule(Pad)
def _pad_zero(prim: Pad, operands: Sequence[Any]) -> Any:
    if prim.value != 0:
        raise ShaxTypeError(f"pad: padding a zero tangent ({operands[0].type}) with {prim.value} is not linear")
    return zero_of(prim, operands)


# Transpose rules: the result's cotangent and the (linear) operand -> its cotangent.


# reshape: (reshape dx)ᵀ ct = ct reshaped back
@transpose_rule(Reshape)
def _reshape_transpose(prim: Reshape, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    (x,) = operands
    return (tc.reshape(ct, x.type.shape),)


# broadcast: ct summed over the new axes and over the stretched size-1 axes
@transpose_rule(Broadcast)
def _broadcast_transpose(prim: Broadcast, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    (x,) = operands
    return (unbroadcast(ct, x.type, prim.dims),)


# transpose: (transpose p dx)ᵀ ct = transpose p⁻¹ ct
@transpose_rule(Transpose)
def _transpose_transpose(prim: Transpose, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    (x,) = operands
    inverse = [0] * len(prim.perm)
    for axis, p in enumerate(prim.perm):
        inverse[p] = axis
    return (tc.transpose(ct, inverse),)


# slice: ct padded with zeros back to the operand's shape
@transpose_rule(Slice)
def _slice_transpose(prim: Slice, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    (x,) = operands
    lohi = [(s, n - e) for s, e, n in zip(prim.start, prim.end, x.type.shape)]
    return (tc.pad(ct, lohi, 0.0),)


# pad: (pad dx 0)ᵀ ct = ct sliced back to the operand's region
@transpose_rule(Pad)
def _pad_transpose(prim: Pad, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    (x,) = operands
    if prim.value != 0:
        raise prim.fail(f"with padding value {prim.value} is affine, not linear, in its operand", x.type)
    start = [lo for lo, _ in prim.lohi]
    return (tc.slice(ct, start, [lo + n for lo, n in zip(start, x.type.shape)]),)


# reduce_sum: ct broadcast back along the summed axes
@transpose_rule(ReduceSum)
def _reduce_sum_transpose(prim: ReduceSum, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    (x,) = operands
    kept = [a for a in range(x.type.rank) if a not in prim.axes]
    return (tc.broadcast(ct, kept, x.type.shape),)


# Batching rules: the operand, batched at axis d, and [d] -> the result for the whole batch
# and its batch axis (`shax.rules.batch`). Per-example axis a is batched axis shifted(a, d).


# reshape: in row-major order a leading or trailing batch axis stays one:
# (B, *s) -> (B, *shape) and (*s, B) -> (*shape, B); another moves to the front first.
@batch_rule(Reshape)
def _reshape_batch(prim: Reshape, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    shape = tc.shape(x)
    if 0 < d == len(shape) - 1:
        return tc.reshape(x, (*prim.shape, shape[d])), len(prim.shape)
    return tc.reshape(moveaxis(x, d, 0), (shape[d], *prim.shape)), 0


# broadcast: input axis i goes to output axis dims[i], and the batch axis d right after
# where input axis d - 1 went, to q = dims[d - 1] + 1 (or 0): dims stay increasing.
@batch_rule(Broadcast)
def _broadcast_batch(
    prim: Broadcast, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    q = prim.dims[d - 1] + 1 if d > 0 else 0
    out_dims = [shifted(a, q) for a in prim.dims]
    out_dims.insert(d, q)
    shape = list(prim.shape)
    shape.insert(q, tc.shape(x)[d])
    return tc.broadcast(x, out_dims, shape), q


# transpose: the batch axis stays at d, output axis i being input axis perm[i] shifted.
@batch_rule(Transpose)
def _transpose_batch(
    prim: Transpose, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    perm = [shifted(p, d) for p in prim.perm]
    perm.insert(d, d)
    return tc.transpose(x, perm), d


# slice: the whole batch axis, [0, B), is kept.
@batch_rule(Slice)
def _slice_batch(prim: Slice, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    start, end = list(prim.start), list(prim.end)
    start.insert(d, 0)
    end.insert(d, tc.shape(x)[d])
    return tc.slice(x, start, end), d


# pad: nothing is added along the batch axis.
@batch_rule(Pad)
def _pad_batch(prim: Pad, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    lohi = list(prim.lohi)
    lohi.insert(d, (0, 0))
    return tc.pad(x, lohi, prim.value), d


# reduce_sum: summed axes shifted past the batch axis, which moves left by the number of
# summed axes before it.
@batch_rule(ReduceSum)
def _reduce_sum_batch(
    prim: ReduceSum, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    return tc.reduce_sum(x, [shifted(a, d) for a in prim.axes]), d - sum(a < d for a in prim.axes)


# reduce_sum: one addition per input element
cost_rules.register(ReduceSum)(per_input_element)


# Export: each one lax call. broadcast dims shape x = broadcast_in_dim(x, shape, dims):
# input axis i is output axis dims[i].


@export_rule(Reshape)
def _reshape_export(prim: Reshape, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.reshape(operands[0], out.shape)


@export_rule(Broadcast)
def _broadcast_export(prim: Broadcast, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.broadcast_in_dim(operands[0], out.shape, tuple(prim.dims))


@export_rule(Transpose)
def _transpose_export(prim: Transpose, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.transpose(operands[0], tuple(prim.perm))


@export_rule(Slice)
def _slice_export(prim: Slice, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.slice(operands[0], tuple(prim.start), tuple(prim.end))


@export_rule(Pad)
def _pad_export(prim: Pad, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    fill = np.asarray(prim.value, out.dtype.numpy)
    return lax.pad(operands[0], fill, [(lo, hi, 0) for lo, hi in prim.lohi])


# reduce_sum: lax.reduce with add, which JAX knows as its reduce_sum primitive
@export_rule(ReduceSum)
def _reduce_sum_export(prim: ReduceSum, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.reduce(operands[0], np.zeros((), out.dtype.numpy), lax.add, tuple(prim.axes))
