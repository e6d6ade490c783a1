"""convert_element_type: x as another dtype, elementwise (numpy's `astype`: a float to
an int truncates toward zero, a number to bool is `!= 0`). Linear between float dtypes:
d convert(x) = convert(dx), whose transpose converts the cotangent back; into or out
of an integer or bool dtype it is piecewise constant, d convert(x) = 0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.primitive import Linearity, Primitive
from shax.core.types import DType, TensorType, dtype_of_numpy
from shax.rules.batch import batch_rule, unary_batch
from shax.rules.export import export_rule
from shax.rules.linearize import Tangent, Zero, linearize_rule
from shax.rules.transpose import Linear, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["ConvertElementType"]


def _dtype(value: Any) -> DType:
    return value if isinstance(value, DType) else dtype_of_numpy(value)


@attrs.frozen
class ConvertElementType(Primitive):
    """x's elements as `dtype` (a shax dtype, or a numpy one naming it)."""

    name, function = "convert_element_type", tc.convert_element_type
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.LINEAR,)
    dtype: DType = attrs.field(converter=_dtype)

    def static_args(self) -> tuple[Any, ...]:
        return (np.dtype(self.dtype.numpy),)  # as the numpy instance takes it

    def forwarded(self, args: Sequence[Any], out: TensorType) -> int | None:
        return 0 if args[0].type == out else None  # to its own dtype: x itself


@type_rule(ConvertElementType)
def _convert_type(prim: ConvertElementType, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    return TensorType(prim.dtype, x.shape)


# between floats d convert(x) = convert(dx); into or out of ints and bools, 0
@linearize_rule(ConvertElementType)
def _convert_jvp(
    prim: ConvertElementType, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer
) -> Tangent:
    (x,), (dx,) = primals, tangents
    if isinstance(dx, Zero) or not (x.type.dtype.is_float and prim.dtype.is_float):
        return Zero(out.type)
    return tc.convert_element_type(dx, np.dtype(prim.dtype.numpy))


# (convert dx)ᵀ ct = convert(ct) back to dx's dtype
@transpose_rule(ConvertElementType)
def _convert_transpose(prim: ConvertElementType, ct: Tracer, operands: Sequence[Linear]) -> tuple[Tracer]:
    (x,) = operands
    return (tc.convert_element_type(ct, np.dtype(x.type.dtype.numpy)),)


batch_rule(ConvertElementType)(unary_batch)


@export_rule(ConvertElementType)
def _convert_export(prim: ConvertElementType, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.convert_element_type(operands[0], np.dtype(prim.dtype.numpy))
