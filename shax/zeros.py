"""The typeclass instance of symbolic zero tangents (`shax.linear.Zero`).

Zeros have the highest level, so a typeclass function with a zero operand runs here.
Linear operations give a zero of the result's type (by the primitive's type rule) and
emit nothing: `0 · r = 0`, `reshape 0 = 0`, `dot(0, y) = 0`. A sum with one zero term
is the other term, broadcast to the sum's shape; a select with one zero branch fills
that branch with 0.0. A nonlinear operation on a zero is a mistake in a linearize rule.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import typeclasses as tc
from shax import primitives as P
from shax.errors import ShaxTypeError
from shax.linear import Zero
from shax.result_types import result_type
from shax.types import DType, TensorType


def _operand_type(operand: Any, dtype: DType) -> TensorType:
    if isinstance(operand, Zero):
        return operand.type
    if isinstance(operand, (bool, int, float)):  # a weakly typed Python number
        return TensorType(dtype, ())
    return operand.type if hasattr(operand, "type") else TensorType.of(operand)


def _zero(prim: P.Primitive, *operands: Any) -> Zero:
    """The zero that `prim` gives on `operands`, one of which is a zero."""
    dtype = next(o.type.dtype for o in operands if isinstance(o, Zero))
    return Zero(result_type(prim, *(_operand_type(o, dtype) for o in operands)))


def _broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    rank = len(tc.shape(x))
    if tc.shape(x) == shape:
        return x
    return tc.broadcast(x, list(range(len(shape) - rank, len(shape))), shape)


class ZeroInstance(tc.Instance):
    def level(self, value: Any) -> int:
        return sys.maxsize

    def shape(self, x: Any) -> tuple[int, ...]:
        return x.type.shape

    def add(self, x: Any, y: Any) -> Any:
        total = _zero(P.Add(), x, y)
        if isinstance(x, Zero) and isinstance(y, Zero):
            return total
        return _broadcast_to(y if isinstance(x, Zero) else x, total.type.shape)

    def sub(self, x: Any, y: Any) -> Any:
        difference = _zero(P.Sub(), x, y)
        if isinstance(x, Zero) and isinstance(y, Zero):
            return difference
        return _broadcast_to(tc.neg(y) if isinstance(x, Zero) else x, difference.type.shape)

    def mul(self, x: Any, y: Any) -> Any:
        return _zero(P.Mul(), x, y)

    def div(self, x: Any, y: Any) -> Any:
        if isinstance(y, Zero):
            raise ShaxTypeError(f"div: dividing by a zero tangent ({y.type}) is not linear")
        return _zero(P.Div(), x, y)

    def neg(self, x: Any) -> Any:
        return x

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return _zero(P.Reshape(shape), x)

    def broadcast(self, x: Any, dims: Sequence[int], shape: Sequence[int]) -> Any:
        return _zero(P.Broadcast(dims, shape), x)

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return _zero(P.Transpose(perm), x)

    def slice(self, x: Any, start: Sequence[int], end: Sequence[int]) -> Any:
        return _zero(P.Slice(start, end), x)

    def pad(self, x: Any, lohi: Sequence[tuple[int, int]], value: float) -> Any:
        if value != 0:
            raise ShaxTypeError(f"pad: padding a zero tangent ({x.type}) with {value} is not linear")
        return _zero(P.Pad(lohi, value), x)

    def reduce_sum(self, x: Any, axes: Sequence[int]) -> Any:
        return _zero(P.ReduceSum(axes), x)

    def dot_general(self, x: Any, y: Any, dims: Any) -> Any:
        return _zero(P.DotGeneral(*dims), x, y)

    def select(self, pred: Any, on_true: Any, on_false: Any) -> Any:
        if isinstance(pred, Zero):
            raise ShaxTypeError(f"select: a zero tangent ({pred.type}) cannot be a predicate")
        if isinstance(on_true, Zero) and isinstance(on_false, Zero):
            return _zero(P.Select(), pred, on_true, on_false)
        return tc.select(pred, *(0.0 if isinstance(b, Zero) else b for b in (on_true, on_false)))


def _nonlinear(name: str) -> Any:
    def refuse(self: ZeroInstance, *operands: Any) -> Any:
        raise ShaxTypeError(
            f"{name}: a zero tangent reached a nonlinear operation; "
            "linearize rules apply only linear operations to tangents"
        )

    return refuse


for _name in ("abs", "signum", "pow", "sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "min", "max", "eq"):
    setattr(ZeroInstance, _name, _nonlinear(_name))

tc.register_instance(ZeroInstance(), Zero)
