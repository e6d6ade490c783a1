"""Elementwise primitives: the Floating functions, arithmetic, min/max, `eq`, each one
declaration of the elementwise family (`shax.primitives.elementwise`), and `select`.
Operands broadcast like numpy's; `materialize_broadcasts` makes that explicit.

Each declaration carries its derivative, one line of math; rules the family cannot
derive (a quotient's, select's) are written under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.primitive import Linearity, Primitive
from shax.core.types import DTYPES, INTEGERS, TensorType, bool_, f32, f64
from shax.primitives.elementwise import elementwise
from shax.rules.batch import batch_rule, batched_at
from shax.rules.codegen import Elementwise, codegen_rule
from shax.rules.export import elementwise_export, export_rule
from shax.rules.linearize import Tangent, Zero, linearize_rule, residual, zero_of, zero_rule
from shax.rules.transpose import Operand, transpose_rule
from shax.rules.types import type_rule
from typeclasses.numpy_instance import logistic as numpy_logistic

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

FLOATS = frozenset({f32, f64})
NUMBERS = frozenset({f32, f64, *INTEGERS})
ANY = frozenset(DTYPES)

L, B, N, Z = Linearity.LINEAR, Linearity.BILINEAR, Linearity.NONLINEAR, Linearity.NON_DIFFERENTIABLE

__all__ = [
    "ANY", "FLOATS", "NUMBERS", "Abs", "Add", "Cos", "Cosh", "Div", "Eq", "Exp", "Expm1", "Ge", "Gt", "Le", "Log",
    "Log1p", "Logistic", "Lt", "Max", "Min", "Mul", "Ne", "Neg", "Pow", "Select", "Signum", "Sin", "Sinh", "Sqrt",
    "Sub", "Tan", "Tanh",
]  # fmt: skip

# Unary: d f(x) = f'(x) · dx, f' as a function of x and out = f(x). `**` is not np.power on
# arrays (it squares for ** 2.0); a float32 number's sin is C's sinf (`typeclasses.libm`).

# negate is linear: d(−x) = −dx
Neg = elementwise(
    tc.neg, NUMBERS, Elementwise("np.negative", "-"), linearity=(L,), name="negate", export="neg", numpy="negative"
)
# sin: d(sin x) = cos x · dx
Sin = elementwise(
    tc.sin,
    FLOATS,
    Elementwise("np.sin", float32_scalar="sinf"),
    derivative=lambda x, out: tc.cos(x),
    export="sin",
    numpy="sin",
)
# cos: d(cos x) = −sin x · dx
Cos = elementwise(
    tc.cos,
    FLOATS,
    Elementwise("np.cos", float32_scalar="cosf"),
    derivative=lambda x, out: -tc.sin(x),
    export="cos",
    numpy="cos",
)
# tan: d(tan x) = (1 + tan² x) · dx
Tan = elementwise(
    tc.tan,
    FLOATS,
    Elementwise("np.tan", float32_scalar="tanf"),
    derivative=lambda x, out: 1.0 + out * out,
    export="tan",
    numpy="tan",
)
# exp: d(eˣ) = eˣ · dx
Exp = elementwise(
    tc.exp,
    FLOATS,
    Elementwise("np.exp", float32_scalar="expf"),
    derivative=lambda x, out: out,
    export="exp",
    numpy="exp",
)
# log: d(log x) = dx / x (written below: a quotient, not a product)
Log = elementwise(tc.log, FLOATS, Elementwise("np.log", float32_scalar="logf"), export="log", numpy="log")
# sqrt: d(√x) = dx / (2 √x) (written below)
Sqrt = elementwise(tc.sqrt, FLOATS, Elementwise("np.sqrt"), export="sqrt", numpy="sqrt")
# tanh: d(tanh x) = (1 − tanh² x) · dx
Tanh = elementwise(
    tc.tanh,
    FLOATS,
    Elementwise("np.tanh", float32_scalar="tanhf"),
    derivative=lambda x, out: 1.0 - out * out,
    export="tanh",
    numpy="tanh",
)


# |x| of an unsigned integer is x (lax.abs refuses them)
def _abs_export(x: Any) -> Any:
    import jax.numpy as jnp
    from jax import lax

    return x if jnp.issubdtype(x.dtype, jnp.unsignedinteger) else lax.abs(x)


# abs: d|x| = signum x · dx
Abs = elementwise(
    tc.abs,
    NUMBERS,
    Elementwise("np.abs"),
    derivative=lambda x, out: tc.signum(x),
    export=_abs_export,
    numpy=("abs", "absolute"),
)
# signum: piecewise constant, d(signum x) = 0
Signum = elementwise(
    tc.signum, NUMBERS, Elementwise("np.sign"), linearity=(Z,), name="sign", export="sign", numpy="sign"
)
# log1p: d log(1 + x) = dx / (1 + x)
Log1p = elementwise(
    tc.log1p, FLOATS, Elementwise("np.log1p"), derivative=lambda x, out: 1.0 / (1.0 + x), export="log1p", numpy="log1p"
)
# sinh: d sinh x = cosh x · dx; cosh: d cosh x = sinh x · dx (numpy's, accurate near 0,
# where (eˣ − e⁻ˣ) / 2 loses every digit)
Sinh = elementwise(
    tc.sinh, FLOATS, Elementwise("np.sinh"), derivative=lambda x, out: tc.cosh(x), export="sinh", numpy="sinh"
)
Cosh = elementwise(
    tc.cosh, FLOATS, Elementwise("np.cosh"), derivative=lambda x, out: tc.sinh(x), export="cosh", numpy="cosh"
)
# expm1: d(eˣ − 1) = eˣ · dx = (out + 1) · dx
Expm1 = elementwise(
    tc.expm1, FLOATS, Elementwise("np.expm1"), derivative=lambda x, out: out + 1.0, export="expm1", numpy="expm1"
)
# logistic: d σ(x) = σ(x) (1 − σ(x)) · dx; compiled code calls the numpy instance's function
Logistic = elementwise(
    tc.logistic,
    FLOATS,
    Elementwise(numpy_logistic, ufunc=False),
    derivative=lambda x, out: out * (1.0 - out),
    export="logistic",
)


# log: d(log x) = dx / x
@linearize_rule(Log)
def _log_jvp(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (x,), (dx,) = primals, tangents
    return dx / residual(x)


# sqrt: d(√x) = dx / (2 √x)
@linearize_rule(Sqrt)
def _sqrt_jvp(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (dx,) = tangents
    return dx / residual(2.0 * out)


# Binary: operands broadcast like numpy's.

# add and sub are linear: d(x ± y) = dx ± dy
Add = elementwise(
    tc.add,
    NUMBERS,
    Elementwise("np.add", "+"),
    linearity=(L, L),
    commutative=True,
    neutral=(0, (0, 1)),
    export="add",
    numpy="add",
)
Sub = elementwise(
    tc.sub,
    NUMBERS,
    Elementwise("np.subtract", "-"),
    linearity=(L, L),
    neutral=(0, (1,)),
    export="sub",
    numpy="subtract",
)
# mul is bilinear: d(x·y) = x·dy + dx·y
Mul = elementwise(
    tc.mul,
    NUMBERS,
    Elementwise("np.multiply", "*"),
    linearity=(B, B),
    commutative=True,
    neutral=(1, (0, 1)),
    export="mul",
    numpy="multiply",
)
# div, linear in its numerator: d(x / y) = (dx − (x / y) · dy) / y (written below)
Div = elementwise(
    tc.div,
    FLOATS,
    Elementwise("np.divide", "/"),
    linearity=(L, N),
    neutral=(1, (1,)),
    export="div",
    numpy=("divide", "true_divide"),
)


# pow: d(xʸ) = y · xʸ⁻¹ · dx + log x · xʸ · dy, at the edges as JAX's: ∂/∂y is 0 where x = 0
# (log x read as log 1, JAX's `_replace_zero`), and ∂/∂x is 0 at x = y = 0, since x⁰ = 1 is
# constant (JAX's value for an integer exponent; its float pow gives 0 · 0⁻¹ = NaN). There
# the base is 1 in the branch not taken too, so that no 0 · ∞ reaches the derivatives of
# ∂/∂x (reverse mode multiplies that branch's residuals by a zero cotangent).
def _pow_partials(x: Any, y: Any, out: Any) -> tuple[Any, Any]:
    origin = tc.eq(tc.abs(x) + tc.abs(y), 0.0)  # x = y = 0 (a sum of non-negative numbers), out's shape
    base = tc.select(origin, 1.0, tc.broadcast_to(x, tc.shape(out)))
    by_x = tc.select(origin, 0.0, y * base ** (y - 1.0))
    by_y = tc.log(tc.select(tc.eq(x, 0.0), 1.0, x)) * out
    return by_x, by_y


# max: d max(x, y) = m · dx + n · dy with JAX's weights (its `_balanced_eq`): 1 for the operand
# that is the result, ½ each at a tie (±∞ too), 0 for both where an operand is NaN (every
# comparison with NaN is false). min swaps the weights. Selects of constants keep the
# operands' dtype, and max and min of the same operands share them (cse). Piecewise
# constant: d m = d n = 0.
def _max_partials(x: Any, y: Any, out: Any) -> tuple[Any, Any]:
    return _weights(x, y)


def _min_partials(x: Any, y: Any, out: Any) -> tuple[Any, Any]:
    x_larger, y_larger = _weights(x, y)
    return y_larger, x_larger


def _weights(x: Any, y: Any) -> tuple[Any, Any]:
    """(∂ max(x, y)/∂x, ∂ max(x, y)/∂y): the weights of x larger and of y larger."""
    # In x's dtype: numpy reads a tracer's shax dtype as its numpy one.
    half, zero, one = (np.asarray(v, x.dtype) for v in (0.5, 0.0, 1.0))
    tie = tc.select(tc.eq(x, y), half, zero)
    return tc.select(tc.gt(x, y), one, tie), tc.select(tc.lt(x, y), one, tie)


Pow = elementwise(tc.pow, FLOATS, Elementwise("np.power"), derivative=_pow_partials, export="pow", numpy="power")
Min = elementwise(
    tc.min,
    NUMBERS,
    Elementwise("np.minimum"),
    derivative=_min_partials,
    commutative=True,
    export="min",
    numpy="minimum",
)
Max = elementwise(
    tc.max,
    NUMBERS,
    Elementwise("np.maximum"),
    derivative=_max_partials,
    commutative=True,
    export="max",
    numpy="maximum",
)
# The comparisons are piecewise constant: d(x == y) = d(x < y) = 0
Eq = elementwise(
    tc.eq,
    ANY,
    Elementwise("np.equal", "=="),
    linearity=(Z, Z),
    result_dtype=bool_,
    commutative=True,
    export="eq",
    numpy="equal",
)
Ne = elementwise(
    tc.ne,
    ANY,
    Elementwise("np.not_equal", "!="),
    linearity=(Z, Z),
    result_dtype=bool_,
    commutative=True,
    export="ne",
    numpy="not_equal",
)
Lt = elementwise(
    tc.lt, NUMBERS, Elementwise("np.less", "<"), linearity=(Z, Z), result_dtype=bool_, export="lt", numpy="less"
)
Le = elementwise(
    tc.le,
    NUMBERS,
    Elementwise("np.less_equal", "<="),
    linearity=(Z, Z),
    result_dtype=bool_,
    export="le",
    numpy="less_equal",
)
Gt = elementwise(
    tc.gt, NUMBERS, Elementwise("np.greater", ">"), linearity=(Z, Z), result_dtype=bool_, export="gt", numpy="greater"
)
Ge = elementwise(
    tc.ge,
    NUMBERS,
    Elementwise("np.greater_equal", ">="),
    linearity=(Z, Z),
    result_dtype=bool_,
    export="ge",
    numpy="greater_equal",
)


# div: d(x / y) = (dx − (x / y) · dy) / y
@linearize_rule(Div)
def _div_jvp(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (_, y), (dx, dy) = primals, tangents
    return (dx - residual(out) * dy) / residual(y)


# x + 0 = x and 0 − y = −y: no operation on a zero, only the other term broadcast to the result
@zero_rule(Add, Sub)
def _sum_zero(prim: Primitive, operands: Sequence[Any]) -> Any:
    x, y = operands
    total = zero_of(prim, operands)
    if isinstance(x, Zero) and isinstance(y, Zero):
        return total
    term = x if isinstance(y, Zero) else y if isinstance(prim, Add) else tc.neg(y)
    return tc.broadcast_to(term, total.type.shape)


@attrs.frozen
class Select(Primitive):
    """`select pred on_true on_false`: on_true where pred holds, else on_false. Linear in
    the branches for a fixed predicate: d(select p a b) = select p da db."""

    name: ClassVar[str] = "select"
    elementwise: ClassVar[bool] = True
    function = tc.select
    linearity: ClassVar[tuple[Linearity, ...]] = (Z, L, L)

    def forwarded(self, args: Sequence[Any], out: TensorType) -> int | None:
        # select p a a = a whatever p holds.
        return 1 if args[1] == args[2] else None


@type_rule(Select)
def _select_type(prim: Select, operands: Sequence[TensorType]) -> TensorType:
    pred, a, b = operands
    if pred.dtype != bool_:
        raise prim.fail("the predicate must be bool", pred, a, b)
    if a.dtype != b.dtype:
        raise prim.fail("the branches have different dtypes", pred, a, b)
    if not pred.shape == a.shape == b.shape:
        raise prim.fail("predicate and branches must have the same shape", pred, a, b)
    return a


codegen_rule(Select)(Elementwise("np.where", ufunc=False))
export_rule(Select)(elementwise_export("select"))


# select: (select p da db)ᵀ ct = (select p ct 0, select p 0 ct)
@transpose_rule(Select)
def _select_transpose(prim: Select, ct: Tracer, operands: Sequence[Operand]) -> tuple[None, Any, Any]:
    pred = operands[0]
    return None, tc.select(pred, ct, 0.0), tc.select(pred, 0.0, ct)


# select p a b: the three have one shape, so each gets the batch axis where the first
# batched operand has it (an unbatched one broadcast along it).
@batch_rule(Select)
def _select_batch(prim: Select, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    d, size = next((d, tc.shape(x)[d]) for x, d in zip(operands, dims) if d is not None)
    return tc.select(*(batched_at(x, e, d, size) for x, e in zip(operands, dims))), d
