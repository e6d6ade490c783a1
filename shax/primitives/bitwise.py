"""The bit primitives: `and`, `or`, `xor`, `not` of integers and booleans, the shifts of
integers (XLA's `shift_left`, `shift_right_logical`, `shift_right_arithmetic`, numpy's `<<`
and `>>`), and `bitcast_convert_type`, a value's bits read as another dtype of the same
width (numpy's `view`). What threefry, JAX's random bit generator, is made of
(`shax.random`).

Each bitwise primitive is one declaration of the elementwise family; none has a
derivative (their values are integers, or bits that are not a function of a float's value).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.primitive import Linearity, Primitive
from shax.core.types import INTEGERS, DType, TensorType, bool_, dtype_of_numpy
from shax.primitives.elementwise import elementwise
from shax.rules.batch import batch_rule, unary_batch
from shax.rules.codegen import Elementwise
from shax.rules.export import export_rule
from shax.rules.types import type_rule
from typeclasses.numpy_instance import shift

__all__ = [
    "BitcastConvertType", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "ShiftLeft", "ShiftRightArithmetic",
    "ShiftRightLogical",
]  # fmt: skip

Z = Linearity.NON_DIFFERENTIABLE
INTS = frozenset(INTEGERS)
BITS = frozenset({*INTEGERS, bool_})

# and, or, xor, not: integers and booleans, elementwise; nothing to differentiate
BitwiseAnd = elementwise(
    tc.bitwise_and,
    BITS,
    Elementwise("np.bitwise_and", "&"),
    linearity=(Z, Z),
    name="and",
    commutative=True,
    export="bitwise_and",
)
BitwiseOr = elementwise(
    tc.bitwise_or,
    BITS,
    Elementwise("np.bitwise_or", "|"),
    linearity=(Z, Z),
    name="or",
    commutative=True,
    export="bitwise_or",
)
BitwiseXor = elementwise(
    tc.bitwise_xor,
    BITS,
    Elementwise("np.bitwise_xor", "^"),
    linearity=(Z, Z),
    name="xor",
    commutative=True,
    export="bitwise_xor",
)
BitwiseNot = elementwise(
    tc.bitwise_not, BITS, Elementwise("np.invert", "~"), linearity=(Z,), name="not", export="bitwise_not"
)


def _shift_code(kind: str, ufunc: Any) -> Elementwise:
    """Compiled code calls the numpy instance's shift, which reads the amount as XLA does."""

    def run(x: Any, y: Any) -> Any:
        return shift(ufunc, kind, x, y)

    run.__name__ = f"shift_{kind}_{ufunc.__name__}"
    return Elementwise(run, ufunc=False)


# shifts: integers only, of integer values; nothing to differentiate
ShiftLeft = elementwise(tc.shift_left, INTS, _shift_code("u", np.left_shift), linearity=(Z, Z), export="shift_left")
ShiftRightLogical = elementwise(
    tc.shift_right_logical, INTS, _shift_code("u", np.right_shift), linearity=(Z, Z), export="shift_right_logical"
)
ShiftRightArithmetic = elementwise(
    tc.shift_right_arithmetic, INTS, _shift_code("i", np.right_shift), linearity=(Z, Z), export="shift_right_arithmetic"
)


def _dtype(value: Any) -> DType:
    return value if isinstance(value, DType) else dtype_of_numpy(value)


@attrs.frozen
class BitcastConvertType(Primitive):
    """x's bits read as `dtype`, of x's width (f32 ↔ i32 ↔ u32, f64 ↔ i64): bits, not values,
    so piecewise nothing: d bitcast(x) = 0."""

    name, function = "bitcast_convert_type", tc.bitcast_convert_type
    shape_only: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = (Z,)
    dtype: DType = attrs.field(converter=_dtype)

    def static_args(self) -> tuple[Any, ...]:
        return (np.dtype(self.dtype.numpy),)  # as the numpy instance takes it

    def forwarded(self, args: Sequence[Any], out: TensorType) -> int | None:
        return 0 if args[0].type == out else None  # to its own dtype: x itself


@type_rule(BitcastConvertType)
def _bitcast_type(prim: BitcastConvertType, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    width, target = np.dtype(x.dtype.numpy).itemsize, np.dtype(prim.dtype.numpy).itemsize
    if bool_ in (x.dtype, prim.dtype) or width != target:
        raise prim.fail(f"cannot read the bits of {x.dtype.name} as {prim.dtype.name} (not one width)", x)
    return TensorType(prim.dtype, x.shape)


batch_rule(BitcastConvertType)(unary_batch)


# bitcast_convert_type x = x's bits read as `dtype`
@export_rule(BitcastConvertType)
def _bitcast_export(prim: BitcastConvertType, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.bitcast_convert_type(operands[0], np.dtype(prim.dtype.numpy))
