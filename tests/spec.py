"""One spec row per primitive: how to reach it from the typeclass surface, at which
operand shapes and dtypes, and on which values it is safe to evaluate and differentiate.

This is data, not tests. Each stage's tests are driven from the same rows:

    for spec in SPECS.values():
        for case in spec.cases:
            for dtype in spec.dtypes:
                types = spec.arg_types(case, dtype)          # tuple[TensorType, ...]
                values = spec.sample(case, dtype, rng)       # tuple[np.ndarray, ...]
                case.apply(*values)                          # numpy
                shax.trace(case.apply, *types)               # one binding of spec.prim

- `case.apply` uses only typeclass functions, so it runs on numpy and on tracers.
- `cases[0]` is the plain case; later cases cover broadcasting, scalars, other
  static parameters. Every case's result is computed by a `spec.prim` binding.
- `dtypes` are the dtypes the primitive accepts for the operands whose dtype follows
  the row's (`fixed` pins the others, like `select`'s bool predicate); the type
  rule rejects the rest. A row without operands (constants) lists one dtype.
- `domains` are safe for evaluation, for finite differences (float64) and for
  batching: away from poles, kinks and ties (`log` positive, `abs` nonzero,
  `min`'s operands apart, `tan` well inside (-pi/2, pi/2)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

import shax
from shax import control as C
from shax import primitives as P
from shax.core.ir import Definition
from shax.core.types import DTYPES, INTEGERS, DType, TensorType, bool_, f32, f64, i32, i64, u8, u32
from shax.rules.evaluate import eval_rules
from shax.tracing.tracer import apply_all
from typeclasses import (
    abs,
    add,
    arccos,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    argmax,
    argmin,
    argsort,
    bitcast_convert_type,
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    broadcast,
    ceil,
    concatenate,
    conv_general_dilated,
    convert_element_type,
    cos,
    cosh,
    div,
    dot,
    dot_general,
    dynamic_slice,
    dynamic_update_slice,
    eq,
    erf,
    exp,
    expm1,
    floor,
    gather,
    ge,
    gt,
    le,
    linalg,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logistic,
    lt,
    max,
    min,
    mul,
    ne,
    neg,
    pad,
    pow,
    quot,
    reduce_max,
    reduce_min,
    reduce_prod,
    reduce_sum,
    reduce_window_max,
    reduce_window_sum,
    rem,
    reshape,
    rev,
    round,
    scatter,
    scatter_add,
    select,
    shift_left,
    shift_right_arithmetic,
    shift_right_logical,
    signum,
    sin,
    sinh,
    slice,
    sqrt,
    stop_gradient,
    sub,
    tan,
    tanh,
    transpose,
)

Shape = tuple[int, ...]


@attrs.frozen
class Domain:
    """Values drawn uniformly from [low, high]; `signed` also flips signs at random
    (so |value| is in [low, high]); `integral` rounds floats to whole numbers
    (so `eq` sometimes holds). Integer dtypes use the whole numbers in range (u8
    their absolute values), bool ignores the range."""

    name: str
    low: float
    high: float
    signed: bool = False
    integral: bool = False

    def sample(self, rng: np.random.Generator, shape: Shape, dtype: DType) -> np.ndarray:
        if dtype == bool_:
            return rng.random(shape) < 0.5
        if dtype.is_float and not self.integral:
            values = rng.uniform(self.low, self.high, shape)
        else:
            values = rng.integers(math.ceil(self.low), math.floor(self.high), shape, endpoint=True).astype(float)
        if self.signed:
            values = values * rng.choice([-1.0, 1.0], shape)
        if dtype in (u8, u32):  # unsigned: |value| (numpy's cast of a negative float to u8 is undefined)
            values = np.abs(values)
        return np.asarray(values, dtype.numpy)


REAL = Domain("real", -2.0, 2.0)
POSITIVE = Domain("positive", 0.5, 2.0)
NONZERO = Domain("nonzero", 0.5, 2.0, signed=True)
SMALL = Domain("small", -0.25, 0.25)  # |NONZERO - SMALL| >= 0.25: no ties in min/max
INSIDE_TAN = Domain("inside_tan", -1.2, 1.2)
WHOLE = Domain("whole", -1.0, 1.0, integral=True)  # -1, 0, 1: `eq` holds often
ABOVE_MINUS_ONE = Domain("above_minus_one", -0.5, 2.0)  # log1p's domain, away from its pole
WIDE = Domain("wide", -6.0, 6.0)  # the logistic's tails
INSIDE_ONE = Domain("inside_one", -0.8, 0.8)  # arcsin's, arccos's and arctanh's, away from ±1
# Indices into axes of 2 to 4 elements: negative ones, and ones beyond the axis (clamped)
INDEX = Domain("index", -4.0, 4.0)
# Away from whole numbers and halves, where floor, ceil and round jump
OFF_STEPS = Domain("off_steps", 0.1, 0.4, signed=True)
# Shift amounts: within a u8's width and beyond an i32's (every bit shifted out)
SHIFTS = Domain("shifts", 0.0, 40.0)
# bitcast_convert_type's target: another dtype of the operand's width
_SAME_WIDTH = {np.dtype(a): b for a, b in [(np.float32, np.uint32), (np.uint32, np.int32), (np.int32, np.float32)]}
_SAME_WIDTH.update({np.dtype(np.float64): np.int64, np.dtype(np.int64): np.float64})


def _bitcast(x: Any) -> Any:
    return bitcast_convert_type(x, _SAME_WIDTH.get(np.dtype(x.dtype), np.float32))  # u8, bool: refused


@attrs.frozen
class Matrices(Domain):
    """Stacks of well-conditioned matrices (the last two axes): `general`, 3·I plus
        uniform noise in [low, high], its rows' signs flipped at random (so determinants of
        both signs); `spd`, symmetric positive definite with eigenvalues 1, 2, ..., n, each
        moved by less than a quarter (eigh's derivative divides by their gaps); `spread`,
    singular values about n, n − 1, ..., plus uniform noise in [low, high] (svd's divides by theirs)."""

    kind: str = "general"

    def sample(self, rng: np.random.Generator, shape: Shape, dtype: DType) -> np.ndarray:
        *stack, m, n = shape
        if self.kind == "spd":
            q = np.linalg.qr(rng.normal(size=(*stack, n, n)))[0]
            w = np.arange(1.0, n + 1) + rng.uniform(0.0, 0.25, (*stack, n))
            values = q @ (w[..., :, None] * np.swapaxes(q, -1, -2))
            values = (values + np.swapaxes(values, -1, -2)) / 2
        elif self.kind == "spread":
            values = rng.uniform(self.low, self.high, shape) + np.eye(m, n) * np.arange(n, 0, -1)
        else:
            values = rng.uniform(self.low, self.high, shape) + 3 * np.eye(m, n)
            values = values * rng.choice([-1.0, 1.0], (*stack, m, 1))
        return np.asarray(values, dtype.numpy)


GENERAL = Matrices("general", -1.0, 1.0)
# svd's derivative divides by the gaps between singular values: diag(3, 2, 1, ...) plus noise
SPREAD = Matrices("spread", -0.2, 0.2, kind="spread")
SPD = Matrices("spd", 1.0, float("inf"), kind="spd")


@attrs.frozen
class Case:
    """`apply(*operands)` at operand `shapes`; `label` names it in test ids."""

    label: str
    apply: Callable[..., Any]
    shapes: tuple[Shape, ...]


@attrs.frozen
class Spec:
    prim: type[P.Primitive]
    cases: tuple[Case, ...]
    domains: tuple[Domain, ...]  # one per operand
    dtypes: tuple[DType, ...]
    fixed: tuple[DType | None, ...] = attrs.field()  # an operand's dtype, if not the row's
    # Derivative zero by definition (stop_gradient), not what finite differences of its values say
    zero_derivative: bool = attrs.field(default=False, kw_only=True)

    @fixed.default
    def _no_fixed(self) -> tuple[DType | None, ...]:
        return (None,) * len(self.domains)

    @property
    def arity(self) -> int:
        return len(self.domains)

    def operand_dtypes(self, dtype: DType) -> tuple[DType, ...]:
        return tuple(dtype if d is None else d for d in self.fixed)

    def arg_types(self, case: Case, dtype: DType) -> tuple[TensorType, ...]:
        return tuple(TensorType(d, s) for d, s in zip(self.operand_dtypes(dtype), case.shapes, strict=True))

    def sample(self, case: Case, dtype: DType, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        """Operand values for `case` at `dtype`, drawn from the row's domains."""
        return tuple(
            domain.sample(rng, shape, d)
            for domain, shape, d in zip(self.domains, case.shapes, self.operand_dtypes(dtype), strict=True)
        )

    def operation(self, case: Case, dtype: DType) -> P.Primitive:
        """The primitive `case` applies at `dtype`: a variadic one's arity and linearity are its own."""
        defn = shax.trace(case.apply, *self.arg_types(case, dtype))
        return next(b.prim for b in defn.bindings if any(v.id == defn.outputs[0].id for v in b.vars))


FLOATS = (f32, f64)
NUMBERS = (f32, f64, *INTEGERS)
ALL = DTYPES
NO_BOOL = NUMBERS


def unary(prim: type[P.Primitive], function: Callable[[Any], Any], domain: Domain, dtypes: tuple[DType, ...]) -> Spec:
    cases = (Case("matrix", function, ((2, 3),)), Case("scalar", function, ((),)))
    return Spec(prim, cases, (domain,), dtypes)


def binary(
    prim: type[P.Primitive],
    function: Callable[[Any, Any], Any],
    domains: tuple[Domain, Domain],
    dtypes: tuple[DType, ...],
) -> Spec:
    """Same shapes, then numpy broadcasting both ways and with a scalar."""
    cases = (
        Case("same", function, ((2, 3), (2, 3))),
        Case("broadcast_rhs", function, ((2, 3), (3,))),
        Case("broadcast_both", function, ((2, 1), (1, 3))),
        Case("scalar_lhs", function, ((), (2, 3))),
    )
    return Spec(prim, cases, domains, dtypes)


_NHWC = ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))


def _conv(
    x: Any,
    w: Any,
    strides: list[int],
    padding: list[tuple[int, int]],
    lhs_dilation: list[int] | None = None,
    rhs_dilation: list[int] | None = None,
    specs: Any = None,
    groups: int = 1,
) -> Any:
    """conv_general_dilated with no dilation and canonical axes (N, C, spatial...) unless given."""
    ones = [1] * len(strides)
    canonical = tuple(range(len(strides) + 2))
    specs = specs or (canonical, canonical, canonical)
    return conv_general_dilated(x, w, strides, padding, lhs_dilation or ones, rhs_dilation or ones, specs, groups, 1)


# Called definitions by (function, argument types): a call holds its callee by identity,
# so each is traced once, as a user's typed Definition would be.
_callees: dict[tuple[Callable[..., Any], tuple[TensorType, ...]], Definition] = {}


def _callee(function: Callable[..., Any], types: tuple[TensorType, ...]) -> Definition:
    key = (function, types)
    if key not in _callees:
        _callees[key] = shax.stages.infer_types(shax.trace(function, *types))
    return _callees[key]


def _sin_times(x: Any, y: Any) -> tuple[Any, Any]:
    s = sin(x)
    return mul(s, y), sub(s, y)


def calling(function: Callable[..., Any], output: int) -> Callable[..., Any]:
    """`call f[output]` of `function`'s typed definition at the operands' shapes. It takes
    floats: operands of another dtype meet the f64 definition, which the call rejects."""

    def apply(*operands: Any) -> Any:
        types = [o.type if isinstance(o, shax.Tracer) else TensorType.of(o) for o in operands]
        declared = tuple(t if t.dtype.is_float else TensorType(f64, t.shape) for t in types)
        return shax.call(_callee(function, declared), *operands)[output]

    apply.__name__ = f"call_{function.__name__.strip('_')}_{output}"
    return apply


# (sin x · y, sin x − y) with derivative rules of its own: a custom_jvp rule, and a
# custom_vjp fwd and bwd (linear in the cotangents, so its forward derivative exists too).
@shax.custom_jvp
def _custom_sin_times(x: Any, y: Any) -> tuple[Any, Any]:
    return _sin_times(x, y)


@_custom_sin_times.defjvp
def _custom_sin_times_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (dx, dy) = primals, tangents
    s, c = sin(x), cos(x)
    return _custom_sin_times(x, y), (mul(mul(c, dx), y) + mul(s, dy), mul(c, dx) - dy)


@shax.custom_vjp
def _vjp_sin_times(x: Any, y: Any) -> tuple[Any, Any]:
    return _sin_times(x, y)


def _sin_times_bwd(res: Any, cts: Any) -> tuple[Any, Any]:
    c, s, y = res
    g0, g1 = cts
    return mul(c, mul(y, g0) + g1), mul(s, g0) - g1


_vjp_sin_times.defvjp(lambda x, y: (_vjp_sin_times(x, y), (cos(x), sin(x), y)), _sin_times_bwd)


def _linear_sin_times(output: int) -> Callable[..., Any]:
    """`custom_vjp_linear` of `_sin_times_bwd` on (dx, dy, cos x, sin x, y), as linearize
    writes it for `_vjp_sin_times`."""

    def apply(*operands: Any) -> Any:
        types = tuple(o.type if isinstance(o, shax.Tracer) else TensorType.of(o) for o in operands)
        out = TensorType(types[0].dtype, tuple(np.broadcast_shapes(*(t.shape for t in types))))
        bwd = _callee(lambda c, s, y, g0, g1: _sin_times_bwd((c, s, y), (g0, g1)), (*types[2:], out, out))
        prim = C.CustomVJPLinear(bwd, "sin_times", (out, out), (0, 1))
        if any(isinstance(o, shax.Tracer) for o in operands):
            return apply_all(prim, *operands)[output]
        return eval_rules[prim](prim, operands)[output]

    apply.__name__ = f"custom_vjp_linear_{output}"
    return apply


# Static parameters of the large constant: more than SMALL_CONSTANT elements, printed elided.
_LARGE = np.linspace(-1.0, 1.0, P.SMALL_CONSTANT + 4).reshape(4, -1)

ROWS: list[Spec] = [
    # Structural and constants.
    Spec(P.Arg, (Case("identity", lambda x: x, ((2, 3),)),), (REAL,), ALL),
    Spec(
        P.Constant,
        (
            Case("f64", lambda: np.array([[1.0, -2.5], [0.5, 3.0]]), ()),
            Case("f32_scalar", lambda: np.float32(1.5), ()),
            Case("i32", lambda: np.arange(3, dtype=np.int32), ()),
            Case("i64", lambda: np.arange(3), ()),
            Case("u8", lambda: np.array([[0, 255]], np.uint8), ()),
            Case("bool", lambda: np.array([True, False]), ()),
            Case("large", lambda: _LARGE, ()),
        ),
        (),
        (f64,),
    ),
    # Floating, unary.
    unary(P.Neg, neg, REAL, NUMBERS),
    unary(P.Sin, sin, REAL, FLOATS),
    unary(P.Cos, cos, REAL, FLOATS),
    unary(P.Tan, tan, INSIDE_TAN, FLOATS),
    unary(P.Exp, exp, REAL, FLOATS),
    unary(P.Log, log, POSITIVE, FLOATS),
    unary(P.Sqrt, sqrt, POSITIVE, FLOATS),
    unary(P.Tanh, tanh, REAL, FLOATS),
    unary(P.Abs, abs, NONZERO, NUMBERS),
    unary(P.Signum, signum, NONZERO, NUMBERS),
    unary(P.Log1p, log1p, ABOVE_MINUS_ONE, FLOATS),
    unary(P.Expm1, expm1, REAL, FLOATS),
    unary(P.Sinh, sinh, REAL, FLOATS),
    unary(P.Cosh, cosh, REAL, FLOATS),
    unary(P.Logistic, logistic, WIDE, FLOATS),
    unary(P.Arcsin, arcsin, INSIDE_ONE, FLOATS),
    unary(P.Arccos, arccos, INSIDE_ONE, FLOATS),
    unary(P.Arctan, arctan, REAL, FLOATS),
    unary(P.Arcsinh, arcsinh, REAL, FLOATS),
    unary(P.Arctanh, arctanh, INSIDE_ONE, FLOATS),
    unary(P.Erf, erf, REAL, FLOATS),
    unary(P.Floor, floor, OFF_STEPS, FLOATS),
    unary(P.Ceil, ceil, OFF_STEPS, FLOATS),
    unary(P.Round, round, OFF_STEPS, FLOATS),
    unary(P.LogicalNot, logical_not, REAL, (bool_,)),
    # Floating and Ord, binary.
    binary(P.Add, add, (REAL, REAL), NUMBERS),
    binary(P.Sub, sub, (REAL, REAL), NUMBERS),
    binary(P.Mul, mul, (REAL, REAL), NUMBERS),
    binary(P.Div, div, (REAL, NONZERO), FLOATS),
    binary(P.Pow, pow, (POSITIVE, REAL), FLOATS),
    binary(P.Min, min, (NONZERO, SMALL), NUMBERS),
    binary(P.Max, max, (NONZERO, SMALL), NUMBERS),
    binary(P.Eq, eq, (WHOLE, WHOLE), ALL),
    binary(P.Ne, ne, (WHOLE, WHOLE), ALL),
    binary(P.Lt, lt, (WHOLE, WHOLE), NUMBERS),
    binary(P.Le, le, (WHOLE, WHOLE), NUMBERS),
    binary(P.Gt, gt, (WHOLE, WHOLE), NUMBERS),
    binary(P.Ge, ge, (WHOLE, WHOLE), NUMBERS),
    binary(P.Arctan2, arctan2, (NONZERO, NONZERO), FLOATS),
    binary(P.Rem, rem, (SMALL, NONZERO), NUMBERS),  # |x| < |y|: away from the jumps of trunc(x / y)
    binary(P.Quot, quot, (REAL, NONZERO), INTEGERS),
    binary(P.LogicalAnd, logical_and, (REAL, REAL), (bool_,)),
    binary(P.LogicalOr, logical_or, (REAL, REAL), (bool_,)),
    # Bits: of integers (and booleans), no derivative.
    binary(P.BitwiseAnd, bitwise_and, (WIDE, WIDE), (*INTEGERS, bool_)),
    binary(P.BitwiseOr, bitwise_or, (WIDE, WIDE), (*INTEGERS, bool_)),
    binary(P.BitwiseXor, bitwise_xor, (WIDE, WIDE), (*INTEGERS, bool_)),
    unary(P.BitwiseNot, bitwise_not, WIDE, (*INTEGERS, bool_)),
    binary(P.ShiftLeft, shift_left, (WIDE, SHIFTS), INTEGERS),
    binary(P.ShiftRightLogical, shift_right_logical, (WIDE, SHIFTS), INTEGERS),
    binary(P.ShiftRightArithmetic, shift_right_arithmetic, (WIDE, SHIFTS), INTEGERS),
    Spec(
        P.BitcastConvertType,
        (Case("matrix", _bitcast, ((2, 3),)), Case("scalar", _bitcast, ((),))),
        (REAL,),
        (f32, f64, i32, i64, u32),
    ),
    Spec(
        P.Select,
        (Case("matrix", select, ((2, 3), (2, 3), (2, 3))), Case("scalar", select, ((), (), ()))),
        (REAL, REAL, REAL),
        ALL,
        fixed=(bool_, None, None),
    ),
    # HNP, shapes.
    Spec(
        P.Reshape,
        (
            Case("split", lambda x: reshape(x, [3, 2, 1]), ((2, 3),)),
            Case("flatten", lambda x: reshape(x, [6]), ((2, 3),)),
            Case("to_scalar", lambda x: reshape(x, []), ((1, 1),)),
        ),
        (REAL,),
        ALL,
    ),
    Spec(
        P.Broadcast,
        (
            Case("new_axis", lambda x: broadcast(x, [1], [2, 3]), ((3,),)),
            Case("middle_axis", lambda x: broadcast(x, [0, 2], [2, 4, 3]), ((2, 3),)),
            Case("stretch", lambda x: broadcast(x, [0, 1], [2, 3]), ((1, 3),)),
            Case("scalar", lambda x: broadcast(x, [], [2, 3]), ((),)),
        ),
        (REAL,),
        ALL,
    ),
    Spec(
        P.Transpose,
        (
            Case("matrix", lambda x: transpose(x, [1, 0]), ((2, 3),)),
            Case("rank3", lambda x: transpose(x, [2, 0, 1]), ((2, 3, 4),)),
        ),
        (REAL,),
        ALL,
    ),
    Spec(
        P.Slice,
        (
            Case("inner", lambda x: slice(x, [1, 0], [3, 2]), ((4, 3),)),
            Case("whole", lambda x: slice(x, [0], [3]), ((3,),)),
        ),
        (REAL,),
        ALL,
    ),
    Spec(
        P.Rev,
        (
            Case("columns", lambda x: rev(x, [1]), ((2, 3),)),
            Case("both", lambda x: rev(x, [0, 1]), ((2, 3),)),
            Case("none", lambda x: rev(x, []), ((3,),)),
        ),
        (REAL,),
        ALL,
    ),
    Spec(
        P.ConvertElementType,
        (
            # Up to f64: exact, so the row's checks hold to the operand's precision (a cast
            # down rounds; tests/test_convert.py checks it).
            Case("to_f64", lambda x: convert_element_type(x, np.float64), ((2, 3),)),
            Case("scalar", lambda x: convert_element_type(x, np.float64), ((),)),
        ),
        (REAL,),
        ALL,
    ),
    Spec(
        P.Concatenate,
        (
            Case("rows", lambda x, y: concatenate(x, y, 0), ((2, 3), (1, 3))),
            Case("columns", lambda x, y: concatenate(x, y, 1), ((2, 3), (2, 4))),
            Case("vectors", lambda x, y: concatenate(x, y, 0), ((3,), (2,))),
        ),
        (REAL, REAL),
        ALL,
    ),
    Spec(
        P.Pad,
        (
            Case("zeros", lambda x: pad(x, [(1, 0), (0, 2)], 0.0), ((2, 3),)),
            # Not zero: pad is then affine, not linear, in its operand.
            Case("value", lambda x: pad(x, [(0, 1), (2, 0)], 1.0), ((2, 3),)),
        ),
        (REAL,),
        ALL,
    ),
    Spec(
        P.ReduceSum,
        (
            Case("axis0", lambda x: reduce_sum(x, [0]), ((2, 3),)),
            Case("all_axes", lambda x: reduce_sum(x, [2, 0, 1]), ((2, 3, 4),)),
            Case("no_axes", lambda x: reduce_sum(x, []), ((2, 3),)),
        ),
        (REAL,),
        NO_BOOL,
    ),
    *(
        Spec(
            prim,
            (
                Case("axis1", lambda x, f=f: f(x, [1]), ((2, 3),)),
                Case("all_axes", lambda x, f=f: f(x, [2, 0]), ((2, 3, 4),)),
                Case("no_axes", lambda x, f=f: f(x, []), ((2, 3),)),
            ),
            (REAL,),
            NO_BOOL,
        )
        for prim, f in ((P.ReduceMax, reduce_max), (P.ReduceMin, reduce_min), (P.ReduceProd, reduce_prod))
    ),
    *(
        Spec(
            prim,
            (Case("axis1", lambda x, f=f: f(x, 1), ((2, 3),)), Case("vector", lambda x, f=f: f(x, 0), ((4,),))),
            (REAL,),
            ALL,
        )
        for prim, f in ((P.ArgMax, argmax), (P.ArgMin, argmin))
    ),
    Spec(
        P.ArgSort,
        (Case("axis1", lambda x: argsort(x, 1), ((2, 3),)), Case("vector", lambda x: argsort(x, 0), ((4,),))),
        (WHOLE,),  # ties: a stable sort keeps their order
        NO_BOOL,
    ),
    Spec(
        P.Gather,
        (
            Case("rows", lambda x, i: gather(x, i, 0, 0), ((3, 4), (5,))),
            Case("index_matrix", lambda x, i: gather(x, i, 1, 0), ((2, 3), (2, 2))),
            Case("batched", lambda x, i: gather(x, i, 1, 1), ((2, 3, 4), (2, 5))),
            # An axis between the batch axis and the indexed one (numpy lays that out apart)
            Case("batched_apart", lambda x, i: gather(x, i, 2, 1), ((2, 3, 4, 2), (2, 5))),
        ),
        (REAL, INDEX),
        ALL,
        fixed=(None, i32),
    ),
    *(
        Spec(
            prim,
            (
                Case("rows", lambda x, i, u, f=f: f(x, i, u, 0, 0), ((3, 4), (5,), (5, 4))),
                Case("batched_apart", lambda x, i, u, f=f: f(x, i, u, 2, 1), ((2, 3, 4, 2), (2, 5), (2, 3, 5, 2))),
            ),
            (REAL, INDEX, REAL),
            dtypes,
            fixed=(None, i32, None),
        )
        for prim, f, dtypes in ((P.ScatterAdd, scatter_add, NO_BOOL), (P.Scatter, scatter, ALL))
    ),
    Spec(
        P.DynamicSlice,
        (
            Case("block", lambda x, s: dynamic_slice(x, s, [2, 2]), ((3, 4), (2,))),
            Case("whole", lambda x, s: dynamic_slice(x, s, [3]), ((3,), (1,))),
        ),
        (REAL, INDEX),
        ALL,
        fixed=(None, i32),
    ),
    Spec(
        P.DynamicUpdateSlice,
        (
            Case("block", lambda x, u, s: dynamic_update_slice(x, u, s), ((3, 4), (2, 2), (2,))),
            Case("vector", lambda x, u, s: dynamic_update_slice(x, u, s), ((4,), (1,), (1,))),
        ),
        (REAL, REAL, INDEX),
        ALL,
        fixed=(None, None, i32),
    ),
    Spec(
        P.ConvGeneralDilated,
        (
            Case("nchw", lambda x, w: _conv(x, w, [1, 1], [(1, 0), (0, 1)]), ((2, 2, 4, 3), (3, 2, 2, 2))),
            Case(
                "strided_dilated",
                lambda x, w: _conv(x, w, [2, 1], [(1, -1), (2, 0)], [1, 2], [2, 1]),
                ((1, 2, 5, 3), (2, 2, 2, 2)),
            ),
            # Its kernel's transpose is a convolution with batch groups.
            Case("grouped", lambda x, w: _conv(x, w, [1], [(0, 0)], groups=2), ((2, 4, 5), (4, 2, 2))),
            Case("nhwc", lambda x, w: _conv(x, w, [1, 2], [(0, 1), (1, 1)], specs=_NHWC), ((2, 4, 3, 2), (2, 2, 2, 3))),
        ),
        (REAL, REAL),
        NO_BOOL,
    ),
    *(
        Spec(
            prim,
            (
                Case("pool", lambda x, f=f: f(x, [1, 2, 2], [1, 2, 1], [(0, 0), (0, 1), (1, 0)]), ((2, 3, 4),)),
                Case("vector", lambda x, f=f: f(x, [3], [2], [(0, 0)]), ((7,),)),
            ),
            (REAL,),
            NO_BOOL,
        )
        for prim, f in ((P.ReduceWindowSum, reduce_window_sum), (P.ReduceWindowMax, reduce_window_max))
    ),
    Spec(
        P.DotGeneral,
        (
            Case("batched", lambda x, y: dot_general(x, y, ((2,), (1,), (0,), (0,))), ((2, 3, 4), (2, 4, 5))),
            Case("matrix", dot, ((2, 3), (3, 4))),
            Case("matrix_vector", dot, ((2, 3), (3,))),
            Case("outer", lambda x, y: dot_general(x, y, ((), (), (), ())), ((2,), (3,))),
            Case(
                "two_contracting_two_batch",
                lambda x, y: dot_general(x, y, ((3, 1), (3, 0), (2, 0), (1, 2))),
                ((2, 3, 4, 5), (3, 4, 2, 5, 2)),
            ),
        ),
        (REAL, REAL),
        NO_BOOL,
    ),
    # A definition returning (sin x · y, sin x − y), called: each case reads one output.
    Spec(
        C.Call,
        (
            Case("output0", calling(_sin_times, 0), ((2, 3), (2, 3))),
            Case("output1", calling(_sin_times, 1), ((2, 3), (2, 3))),
            Case("broadcast_rhs", calling(_sin_times, 0), ((2, 3), (3,))),
            Case("scalar", calling(_sin_times, 1), ((), ())),
        ),
        (REAL, REAL),
        FLOATS,
    ),
    Spec(
        C.CustomJVP,
        (
            Case("output0", lambda x, y: _custom_sin_times(x, y)[0], ((2, 3), (2, 3))),
            Case("output1", lambda x, y: _custom_sin_times(x, y)[1], ((2, 3), (2, 3))),
            Case("scalar", lambda x, y: _custom_sin_times(x, y)[0], ((), ())),
        ),
        (REAL, REAL),
        FLOATS,
    ),
    Spec(
        C.CustomVJP,
        (
            Case("output0", lambda x, y: _vjp_sin_times(x, y)[0], ((2, 3), (2, 3))),
            Case("output1", lambda x, y: _vjp_sin_times(x, y)[1], ((2, 3), (2, 3))),
            Case("scalar", lambda x, y: _vjp_sin_times(x, y)[1], ((), ())),
        ),
        (REAL, REAL),
        FLOATS,
    ),
    Spec(
        C.CustomVJPLinear,
        (
            Case("output0", _linear_sin_times(0), ((2, 3),) * 5),
            Case("output1", _linear_sin_times(1), ((2, 3),) * 5),
            Case("scalar", _linear_sin_times(0), ((),) * 5),
        ),
        (REAL,) * 5,
        FLOATS,
    ),
    # stop_gradient: the identity, of every dtype, with a zero derivative
    Spec(P.StopGradient, unary(P.StopGradient, stop_gradient, REAL, ALL).cases, (REAL,), ALL, zero_derivative=True),
    # checkpoint_name: the identity, named for a checkpoint policy
    unary(P.CheckpointName, lambda x: shax.checkpoint_name(x, "h"), REAL, ALL),
]


# Loops: an RNN-like scan (h ← sin(h·w + x), y = h·x) reading its carry or its ys, and a
# while loop running sin(x)·y three times.
def scanning(output: int, reverse: bool = False) -> Callable[..., Any]:
    def apply(w: Any, xs: Any) -> Any:
        return shax.scan(lambda h, x: (sin(add(mul(h, h), x)), mul(h, x)), w, xs, reverse=reverse)[output]

    apply.__name__ = f"scan_{output}{'_reverse' * reverse}"
    return apply


def _while_sin_times(x: Any, y: Any) -> Any:
    def body(c: Any) -> Any:
        return mul(sin(c[0]), c[1]), add(c[1], 1.0)

    return shax.while_loop(lambda c: lt(reduce_max(c[1], list(range(c[1].ndim))), 3.0), body, (x, y))[0]


ROWS += [
    Spec(
        C.Scan,
        (
            Case("carry", scanning(0), ((3,), (4, 3))),
            Case("ys", scanning(1), ((3,), (4, 3))),
            Case("reverse", scanning(1, reverse=True), ((2,), (3, 2))),
            Case("scalar", scanning(0), ((), (5,))),
        ),
        (REAL, REAL),
        FLOATS,
    ),
    Spec(
        C.While,
        (Case("matrix", _while_sin_times, ((2, 3), (2, 3))), Case("scalar", _while_sin_times, ((), ()))),
        (REAL, REAL),
        FLOATS,
    ),
]


# Linear algebra: stacks of well-conditioned matrices.
ROWS += [
    *(
        Spec(prim, (Case("matrix", f, ((3, 3),)), Case("stack", f, ((2, 3, 3),))), (domain,), FLOATS)
        for prim, f, domain in (
            (P.Inv, linalg.inv, GENERAL),
            (P.Cholesky, linalg.cholesky, SPD),
            (P.SignDet, linalg.sign_det, GENERAL),
            (P.LogAbsDet, linalg.log_abs_det, GENERAL),
        )
    ),
    Spec(
        P.Solve,
        (Case("matrix", linalg.solve, ((3, 3), (3, 2))), Case("stack", linalg.solve, ((2, 3, 3), (2, 3, 1)))),
        (GENERAL, REAL),
        FLOATS,
    ),
    Spec(
        P.Eigh,
        (
            Case("values", lambda a: linalg.eigh(a)[0], ((3, 3),)),
            Case("vectors", lambda a: linalg.eigh(a)[1], ((3, 3),)),
            Case("stack", lambda a: linalg.eigh(a)[1], ((2, 3, 3),)),
        ),
        (SPD,),
        FLOATS,
    ),
    Spec(
        P.Qr,
        (
            Case("q", lambda a: linalg.qr(a, False)[0], ((4, 3),)),
            Case("r", lambda a: linalg.qr(a, False)[1], ((4, 3),)),
            Case("complete", lambda a: linalg.qr(a, True)[0], ((3, 3),)),
            Case("stack", lambda a: linalg.qr(a, False)[1], ((2, 3, 2),)),
        ),
        (GENERAL,),
        FLOATS,
    ),
    Spec(
        P.Svd,
        (
            Case("s", lambda a: linalg.svd(a, False, True)[0], ((4, 3),)),
            Case("u", lambda a: linalg.svd(a, False, True)[1], ((4, 3),)),
            Case("vh", lambda a: linalg.svd(a, False, True)[2], ((4, 3),)),
            Case("wide", lambda a: linalg.svd(a, False, True)[2], ((2, 3),)),
            Case("full", lambda a: linalg.svd(a, True, True)[1], ((3, 3),)),
            Case("stack", lambda a: linalg.svd(a, False, True)[1], ((2, 2, 3),)),
            Case("values", lambda a: linalg.svd(a, False, False)[0], ((3, 4),)),
        ),
        (SPREAD,),
        FLOATS,
    ),
]


# Cond: a switch of three branches on an i32 index (clamped: -4..4 reaches past both
# ends), each returning (a, b); each case reads one output.
def _branch_sin(x: Any, y: Any) -> tuple[Any, Any]:
    return mul(sin(x), y), sub(x, y)


def _branch_exp(x: Any, y: Any) -> tuple[Any, Any]:
    return exp(mul(x, y)), mul(x, x)


def _branch_linear(x: Any, y: Any) -> tuple[Any, Any]:
    return sub(y, x), y


def switching(output: int) -> Callable[..., Any]:
    def apply(index: Any, x: Any, y: Any) -> Any:
        return shax.switch(index, [_branch_sin, _branch_exp, _branch_linear], x, y)[output]

    apply.__name__ = f"switch_{output}"
    return apply


ROWS.append(
    Spec(
        C.Cond,
        (
            Case("output0", switching(0), ((), (2, 3), (2, 3))),
            Case("output1", switching(1), ((), (2, 3), (2, 3))),
            Case("scalar", switching(0), ((), (), ())),
        ),
        (INDEX, REAL, REAL),
        FLOATS,
        fixed=(i32, None, None),
    )
)


# debug_print, its empty result returned (shax.debug.print returns None): it prints the
# operands (pytest captures it) and its result is f32[0] whatever they are.
def printing(fmt: str, names: tuple[str, ...] = ()) -> Callable[..., Any]:
    def apply(*operands: Any) -> Any:
        prim = P.DebugPrint(fmt, len(operands), names)
        return eval_rules[prim](prim, operands)

    apply.__name__ = "debug_print"
    return apply


ROWS.append(
    Spec(
        P.DebugPrint,
        (
            Case("positional", printing("x = {}, y = {}"), ((2, 3), (3,))),
            Case("named", printing("{} and {y}", ("y",)), ((2, 3), ())),
        ),
        (REAL, REAL),
        ALL,
        zero_derivative=True,
    )
)

SPECS: dict[type[P.Primitive], Spec] = {spec.prim: spec for spec in ROWS}
assert len(SPECS) == len(ROWS), "two spec rows for one primitive"
# Primitives differentiated in forward mode only (a while loop's trip count is known only
# when it runs), and the rows of the others, which the reverse-mode tests run.
FORWARD_ONLY: frozenset[type[P.Primitive]] = frozenset({C.While})
REVERSE_MODE_SPECS = {prim: spec for prim, spec in SPECS.items() if prim not in FORWARD_ONLY}
