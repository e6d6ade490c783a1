"""concatenate: two tensors joined along one axis (numpy's `concatenate` of two;
`shax.numpy.concatenate` joins more as a balanced tree of these). Linear in both
operands jointly, like `add`: d concatenate(x, y) = concatenate(dx, dy), derived from
its linearity; its transpose slices the cotangent back apart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, integer
from shax.core.types import TensorType
from shax.rules.batch import batch_rule, batched_at, shifted
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.export import export_rule
from shax.rules.transpose import Linear, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["Concatenate"]


@attrs.frozen
class Concatenate(Primitive):
    """x, then y, along `axis`; every other axis the same size in both."""

    name, function = "concatenate", tc.concatenate
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.LINEAR, Linearity.LINEAR)
    axis: int = attrs.field(converter=integer)


@type_rule(Concatenate)
def _concatenate_type(prim: Concatenate, operands: Sequence[TensorType]) -> TensorType:
    x, y = operands
    if x.dtype != y.dtype:
        raise prim.fail(f"cannot join {x.dtype.name} and {y.dtype.name}", x, y)
    if x.rank != y.rank or not 0 <= prim.axis < x.rank:
        raise prim.fail(f"axis {prim.axis} must be an axis of two tensors of one rank", x, y, error=ShaxValueError)
    if any(m != n for a, (m, n) in enumerate(zip(x.shape, y.shape)) if a != prim.axis):
        raise prim.fail(f"all axes but axis {prim.axis} must have the same sizes", x, y)
    shape = list(x.shape)
    shape[prim.axis] += y.shape[prim.axis]
    return x.with_shape(tuple(shape))


# concatenate: a new C-contiguous array, as np.concatenate makes it
@codegen_rule(Concatenate)
def _concatenate_codegen(prim: Concatenate, site: Site, operands: Sequence[Operand]) -> str:
    x, y = operands
    site.fresh(contiguous=True)
    return f"np.concatenate(({x}, {y}), axis={prim.axis})"


# concatenate: (concatenate dx dy)ᵀ ct = (ct[: n], ct[n :]) along the axis, n = x's size there
@transpose_rule(Concatenate)
def _concatenate_transpose(prim: Concatenate, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer, Tracer]:
    x, y = operands
    shape = x.type.shape
    n = shape[prim.axis]
    end = list(shape)
    start = [0] * len(shape)
    start[prim.axis] = n
    total = list(shape)
    total[prim.axis] = n + y.type.shape[prim.axis]
    return tc.slice(ct, [0] * len(shape), end), tc.slice(ct, start, total)


# concatenate: both operands batched at the same axis d (an unbatched one broadcast there);
# the joined axis is shifted past it.
@batch_rule(Concatenate)
def _concatenate_batch(
    prim: Concatenate, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    d, size = next((d, tc.shape(x)[d]) for x, d in zip(operands, dims) if d is not None)
    x, y = (batched_at(o, e, d, size) for o, e in zip(operands, dims))
    return tc.concatenate(x, y, shifted(prim.axis, d)), d


@export_rule(Concatenate)
def _concatenate_export(prim: Concatenate, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.concatenate(list(operands), prim.axis)
