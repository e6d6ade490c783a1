"""rev: x with the order of its elements reversed along `axes` (numpy's `flip`, XLA's
`rev`). Linear: d rev(x) = rev(dx), derived from its linearity, and its own transpose,
since reversing is a permutation that is its own inverse: (rev)ᵀ ct = rev(ct)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, ints
from shax.core.types import TensorType
from shax.rules.batch import batch_rule, batched, shifted
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.export import export_rule
from shax.rules.transpose import Linear, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["Rev"]


@attrs.frozen
class Rev(Primitive):
    """x reversed along each of `axes` (distinct axes of x)."""

    name, function = "rev", tc.rev
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.LINEAR,)
    axes: tuple[int, ...] = attrs.field(converter=ints)


@type_rule(Rev)
def _rev_type(prim: Rev, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    if len(set(prim.axes)) != len(prim.axes) or not all(0 <= a < x.rank for a in prim.axes):
        raise prim.fail(
            f"axes {list(prim.axes)} must be distinct axes of a rank-{x.rank} tensor", x, error=ShaxValueError
        )
    return x


# rev: np.flip's view of x (negative strides), so x's memory is kept while it lives
@codegen_rule(Rev)
def _rev_codegen(prim: Rev, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    site.view(x, contiguous=x.contiguous and not prim.axes)
    # No axes: x itself, as an array (a rank-0 result of numpy's ufuncs is a numpy scalar)
    return f"np.flip({x}, {tuple(prim.axes)})" if prim.axes else f"np.asarray({x})"


# (rev dx)ᵀ ct = rev ct
@transpose_rule(Rev)
def _rev_transpose(prim: Rev, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    return (tc.rev(ct, list(prim.axes)),)


# rev: the same axes, past the batch axis d
@batch_rule(Rev)
def _rev_batch(prim: Rev, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    return tc.rev(x, [shifted(a, d) for a in prim.axes]), d


@export_rule(Rev)
def _rev_export(prim: Rev, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.rev(operands[0], tuple(prim.axes))
