"""Elementwise primitives: unary Floating functions, binary arithmetic, min/max,
`eq` and `select`. Binary operands broadcast like numpy; `materialize_broadcasts`
makes that explicit."""

from __future__ import annotations

from typing import Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.primitives.base import Linearity, Primitive
from shax.rules import eval_rule, type_rule
from shax.types import DTYPES, TensorType, bool_, f32, f64, i32

FLOATS = frozenset({f32, f64})
NUMBERS = frozenset({f32, f64, i32})
ANY = frozenset(DTYPES)

L, B, N, Z = Linearity.LINEAR, Linearity.BILINEAR, Linearity.NONLINEAR, Linearity.NON_DIFFERENTIABLE


@attrs.frozen
class Unary(Primitive):
    arity: ClassVar[int] = 1
    accepts: ClassVar[frozenset]


@attrs.frozen
class Neg(Unary):
    name, linearity, accepts = "negate", L, NUMBERS


@attrs.frozen
class Sin(Unary):
    name, linearity, accepts = "sin", N, FLOATS


@attrs.frozen
class Cos(Unary):
    name, linearity, accepts = "cos", N, FLOATS


@attrs.frozen
class Tan(Unary):
    name, linearity, accepts = "tan", N, FLOATS


@attrs.frozen
class Exp(Unary):
    name, linearity, accepts = "exp", N, FLOATS


@attrs.frozen
class Log(Unary):
    name, linearity, accepts = "log", N, FLOATS


@attrs.frozen
class Sqrt(Unary):
    name, linearity, accepts = "sqrt", N, FLOATS


@attrs.frozen
class Tanh(Unary):
    name, linearity, accepts = "tanh", N, FLOATS


@attrs.frozen
class Abs(Unary):
    name, linearity, accepts = "abs", N, NUMBERS


@attrs.frozen
class Signum(Unary):
    name, linearity, accepts = "sign", N, NUMBERS


@type_rule(Neg, Sin, Cos, Tan, Exp, Log, Sqrt, Tanh, Abs, Signum)
def _unary_type(prim: Unary, x: TensorType) -> TensorType:
    if x.dtype not in prim.accepts:
        raise prim.fail(f"{x.dtype.name} is not supported", x)
    return x


@attrs.frozen
class Binary(Primitive):
    arity: ClassVar[int] = 2
    accepts: ClassVar[frozenset]


@attrs.frozen
class Add(Binary):
    name, linearity, accepts = "add", L, NUMBERS


@attrs.frozen
class Sub(Binary):
    name, linearity, accepts = "sub", L, NUMBERS


@attrs.frozen
class Mul(Binary):
    name, linearity, accepts = "mul", B, NUMBERS


@attrs.frozen
class Div(Binary):
    name, linearity, accepts = "div", N, FLOATS


@attrs.frozen
class Pow(Binary):
    name, linearity, accepts = "pow", N, FLOATS


@attrs.frozen
class Min(Binary):
    name, linearity, accepts = "min", N, NUMBERS


@attrs.frozen
class Max(Binary):
    name, linearity, accepts = "max", N, NUMBERS


@attrs.frozen
class Eq(Binary):
    name, linearity, accepts = "eq", Z, ANY


def broadcast_shapes(prim: Primitive, x: TensorType, y: TensorType) -> tuple[int, ...]:
    """numpy's broadcasting of two shapes, or an error naming the operation."""
    if x.shape == y.shape or not y.shape:
        return x.shape
    if not x.shape:
        return y.shape
    try:
        return tuple(np.broadcast_shapes(x.shape, y.shape))
    except ValueError:
        raise prim.fail("shapes do not broadcast together", x, y) from None


@type_rule(Add, Sub, Mul, Div, Pow, Min, Max, Eq)
def _binary_type(prim: Binary, x: TensorType, y: TensorType) -> TensorType:
    if x.dtype != y.dtype:
        raise prim.fail("operands have different dtypes", x, y)
    if x.dtype not in prim.accepts:
        raise prim.fail(f"{x.dtype.name} is not supported", x, y)
    return TensorType(bool_ if isinstance(prim, Eq) else x.dtype, broadcast_shapes(prim, x, y))


@attrs.frozen
class Select(Primitive):
    """`select pred on_true on_false`: on_true where pred holds, else on_false."""

    name: ClassVar[str] = "select"
    # Linear in the two branches for a fixed predicate.
    linearity: ClassVar[Linearity] = Linearity.LINEAR
    arity: ClassVar[int] = 3


@type_rule(Select)
def _select_type(prim: Select, pred: TensorType, a: TensorType, b: TensorType) -> TensorType:
    if pred.dtype != bool_:
        raise prim.fail("the predicate must be bool", pred, a, b)
    if a.dtype != b.dtype:
        raise prim.fail("the branches have different dtypes", pred, a, b)
    if not pred.shape == a.shape == b.shape:
        raise prim.fail("predicate and branches must have the same shape", pred, a, b)
    return a


_FUNCTIONS: dict[type, Any] = {
    Neg: tc.neg, Sin: tc.sin, Cos: tc.cos, Tan: tc.tan, Exp: tc.exp, Log: tc.log,
    Sqrt: tc.sqrt, Tanh: tc.tanh, Abs: tc.abs, Signum: tc.signum,
    Add: tc.add, Sub: tc.sub, Mul: tc.mul, Div: tc.div, Pow: tc.pow,
    Min: tc.min, Max: tc.max, Eq: tc.eq, Select: tc.select,
}  # fmt: skip

for _cls, _function in _FUNCTIONS.items():
    eval_rule(_cls)(lambda prim, *operands, _f=_function: _f(*operands))
