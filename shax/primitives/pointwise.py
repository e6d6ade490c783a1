"""Elementwise primitives: unary Floating functions, binary arithmetic, min/max,
`eq` and `select`. Binary operands broadcast like numpy; `materialize_broadcasts`
makes that explicit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.batching import batch_first, batched_at
from shax.linear import Zero, linear_operands, not_linear, residual, unbroadcast, zero_tangent
from shax.primitives.base import Linearity, Primitive, derive_linearize_rules
from shax.pysource import Elementwise
from shax.rules import batch_rule, codegen_rule, eval_rule, linearize_rule, transpose_rule, type_rule
from shax.types import DTYPES, TensorType, bool_, f32, f64, i32

if TYPE_CHECKING:
    from shax.tracer import Tracer

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

# Codegen rules: the numpy function the numpy instance calls (`**` is not np.power on
# arrays: it squares for ** 2.0; a float32 number's sin is C's sinf, `typeclasses.libm`).
_CODEGEN: dict[type, Elementwise] = {
    Neg: Elementwise("np.negative", "-"), Sin: Elementwise("np.sin", float32_scalar="sinf"),
    Cos: Elementwise("np.cos", float32_scalar="cosf"), Tan: Elementwise("np.tan", float32_scalar="tanf"),
    Exp: Elementwise("np.exp", float32_scalar="expf"), Log: Elementwise("np.log", float32_scalar="logf"),
    Sqrt: Elementwise("np.sqrt"), Tanh: Elementwise("np.tanh", float32_scalar="tanhf"),
    Abs: Elementwise("np.abs"), Signum: Elementwise("np.sign"),
    Add: Elementwise("np.add", "+"), Sub: Elementwise("np.subtract", "-"), Mul: Elementwise("np.multiply", "*"),
    Div: Elementwise("np.divide", "/"), Pow: Elementwise("np.power"),
    Min: Elementwise("np.minimum"), Max: Elementwise("np.maximum"), Eq: Elementwise("np.equal"),
    Select: Elementwise("np.where", ufunc=False),
}  # fmt: skip

for _cls, _rule in _CODEGEN.items():
    codegen_rule(_cls)(_rule)


# Linearize rules: primal operands, their tangents (maybe Zero), the primal result -> the
# result's tangent. Rules see at least one tangent that is not Zero.

# negate, add and sub are linear: d(x + y) = dx + dy; mul is bilinear: d(x·y) = x·dy + dx·y
derive_linearize_rules(Neg, Add, Sub, Mul)


# sin: d(sin x) = cos x · dx
@linearize_rule(Sin)
def _sin_jvp(prim: Sin, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (x,), (dx,) = primals, tangents
    return residual(tc.cos(x)) * dx


# cos: d(cos x) = −sin x · dx
@linearize_rule(Cos)
def _cos_jvp(prim: Cos, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (x,), (dx,) = primals, tangents
    return residual(-tc.sin(x)) * dx


# tan: d(tan x) = (1 + tan² x) · dx
@linearize_rule(Tan)
def _tan_jvp(prim: Tan, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (dx,) = tangents
    return residual(1.0 + out * out) * dx


# exp: d(eˣ) = eˣ · dx
@linearize_rule(Exp)
def _exp_jvp(prim: Exp, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (dx,) = tangents
    return residual(out) * dx


# log: d(log x) = dx / x
@linearize_rule(Log)
def _log_jvp(prim: Log, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (x,), (dx,) = primals, tangents
    return dx / residual(x)


# sqrt: d(√x) = dx / (2 √x)
@linearize_rule(Sqrt)
def _sqrt_jvp(prim: Sqrt, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (dx,) = tangents
    return dx / residual(2.0 * out)


# tanh: d(tanh x) = (1 − tanh² x) · dx
@linearize_rule(Tanh)
def _tanh_jvp(prim: Tanh, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (dx,) = tangents
    return residual(1.0 - out * out) * dx


# abs: d|x| = signum x · dx
@linearize_rule(Abs)
def _abs_jvp(prim: Abs, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (x,), (dx,) = primals, tangents
    return residual(tc.signum(x)) * dx


# signum, eq: piecewise constant, d(signum x) = 0 and d(x == y) = 0
linearize_rule(Signum, Eq)(zero_tangent)


# div: d(x / y) = (dx − (x / y) · dy) / y
@linearize_rule(Div)
def _div_jvp(prim: Div, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (_, y), (dx, dy) = primals, tangents
    return (dx - residual(out) * dy) / residual(y)


# pow: d(xʸ) = y · xʸ⁻¹ · dx + log x · xʸ · dy
@linearize_rule(Pow)
def _pow_jvp(prim: Pow, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (x, y), (dx, dy) = primals, tangents
    return residual(y * x ** (y - 1.0)) * dx + residual(tc.log(x) * out) * dy


# max: d max(x, y) = m · dx + (1 − m) · dy with m = (1 + signum(x − y)) / 2:
# 1 where x > y, 0 where x < y, and ties split ½–½ (as the original)
@linearize_rule(Max)
def _max_jvp(prim: Max, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (x, y), (dx, dy) = primals, tangents
    m = 0.5 + 0.5 * tc.signum(x - y)
    return residual(m) * dx + residual(1.0 - m) * dy


# min: d min(x, y) = m · dx + (1 − m) · dy with m = (1 − signum(x − y)) / 2
@linearize_rule(Min)
def _min_jvp(prim: Min, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (x, y), (dx, dy) = primals, tangents
    m = 0.5 - 0.5 * tc.signum(x - y)
    return residual(m) * dx + residual(1.0 - m) * dy


# select: d(select p a b) = select p da db, the predicate being piecewise constant
@linearize_rule(Select)
def _select_jvp(prim: Select, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    (pred, _, _), (_, da, db) = primals, tangents
    return tc.select(residual(pred), da, db)


# Transpose rules: the result's cotangent and the operands (Linear markers, or values)
# -> one cotangent per operand. Binary operands broadcast like numpy, so each
# cotangent is summed back to its operand's shape.


# negate: (−dx)ᵀ ct = −ct
@transpose_rule(Neg)
def _neg_transpose(prim: Neg, ct: Tracer, x: Any) -> tuple[Any]:
    return (-ct,)


# add: (dx + dy)ᵀ ct = (ct, ct)
@transpose_rule(Add)
def _add_transpose(prim: Add, ct: Tracer, x: Any, y: Any) -> tuple[Any, Any]:
    linear_operands(prim, (x, y), [(True, True)])
    return unbroadcast(ct, x.type), unbroadcast(ct, y.type)


# sub: (dx − dy)ᵀ ct = (ct, −ct)
@transpose_rule(Sub)
def _sub_transpose(prim: Sub, ct: Tracer, x: Any, y: Any) -> tuple[Any, Any]:
    linear_operands(prim, (x, y), [(True, True)])
    return unbroadcast(ct, x.type), unbroadcast(-ct, y.type)


# mul: (r · dy)ᵀ ct = r · ct and (dx · r)ᵀ ct = ct · r
@transpose_rule(Mul)
def _mul_transpose(prim: Mul, ct: Tracer, x: Any, y: Any) -> tuple[Any, Any]:
    x_linear, _ = linear_operands(prim, (x, y), [(True, False), (False, True)])
    if x_linear:
        return unbroadcast(y * ct, x.type), None
    return None, unbroadcast(x * ct, y.type)


# div: (dx / r)ᵀ ct = ct / r
@transpose_rule(Div)
def _div_transpose(prim: Div, ct: Tracer, x: Any, y: Any) -> tuple[Any, None]:
    linear_operands(prim, (x, y), [(True, False)])
    return unbroadcast(ct / y, x.type), None


# select: (select p da db)ᵀ ct = (select p ct 0, select p 0 ct)
@transpose_rule(Select)
def _select_transpose(prim: Select, ct: Tracer, pred: Any, a: Any, b: Any) -> tuple[None, Any, Any]:
    linear_operands(prim, (pred, a, b), [(False, True, True)])
    return None, tc.select(pred, ct, 0.0), tc.select(pred, 0.0, ct)


# The rest are linear in no operand: applied to a linear value, they make a program nonlinear.
transpose_rule(Sin, Cos, Tan, Exp, Log, Sqrt, Tanh, Abs, Signum, Pow, Min, Max, Eq)(not_linear)


# Batching rules: the operands (some batched) and their batch axes -> the result for the
# whole batch and its batch axis (`shax.batching`).


# f elementwise: f(x) over the batch is f of the batched x; the batch axis stays put.
@batch_rule(Neg, Sin, Cos, Tan, Exp, Log, Sqrt, Tanh, Abs, Signum)
def _unary_batch(prim: Unary, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    return _FUNCTIONS[type(prim)](*operands), dims[0]


# x ∘ y broadcasts like numpy, aligning trailing axes. Result rank r per example: if the
# batched operands have rank r and one batch axis d, and the unbatched ones rank <= r - d
# (so they stay clear of axis d), it is applied as is; otherwise each batched operand
# becomes (B, 1, ..., 1, *its shape) of rank r + 1, and the result's batch axis is 0.
@batch_rule(Add, Sub, Mul, Div, Pow, Min, Max, Eq)
def _binary_batch(prim: Binary, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    ranks = [len(tc.shape(x)) - (d is not None) for x, d in zip(operands, dims)]
    rank = max(ranks)
    batch_axes = {d for d in dims if d is not None}
    function = _FUNCTIONS[type(prim)]
    if len(batch_axes) == 1:
        (d,) = batch_axes
        if all(r == rank if e is not None else r <= rank - d for r, e in zip(ranks, dims)):
            return function(*operands), d
    return function(*(x if d is None else batch_first(x, d, rank) for x, d in zip(operands, dims))), 0


# select p a b: the three have one shape, so each gets the batch axis where the first
# batched operand has it (an unbatched one broadcast along it).
@batch_rule(Select)
def _select_batch(prim: Select, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    d, size = next((d, tc.shape(x)[d]) for x, d in zip(operands, dims) if d is not None)
    return tc.select(*(batched_at(x, e, d, size) for x, e in zip(operands, dims))), d
