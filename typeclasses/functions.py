"""The typeclass functions users write against, each dispatching on its operands.

Floating: add sub mul div neg abs signum pow sin cos tan exp log sqrt tanh
          log1p expm1 logistic sinh cosh arcsin arccos arctan arctan2 arcsinh arctanh erf rem
          quot floor ceil round (default methods: log_base square reciprocal
          rsqrt logaddexp sign)
Ord:      min max lt le gt ge (default methods: maximum minimum clip)
HNP:      reshape broadcast transpose rev slice pad concatenate convert_element_type reduce_sum select dot_general eq ne
          reduce_max reduce_min reduce_prod argmax argmin argsort logical_and logical_or logical_not
          bitwise_and bitwise_or bitwise_xor bitwise_not shift_left shift_right_logical
          shift_right_arithmetic bitcast_convert_type gather scatter_add scatter dynamic_slice
          dynamic_update_slice stop_gradient conv_general_dilated reduce_window_sum reduce_window_max
          (default methods: dot, matmul, mean, var, where), and `shape` to ask a value for
          its shape.
Static parameters (shapes, axes, dimension numbers) come after the operands.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, TypeVar

from typeclasses.dispatch import HNP, Floating, Ord, pick, typeclass_function

F = TypeVar("F", bound=Floating)
Or = TypeVar("Or", bound=Ord)
H = TypeVar("H", bound=HNP)

DotDims = tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]]

__all__ = [
    "DotDims", "abs", "add", "broadcast", "broadcast_to", "concatenate", "convert_element_type", "cos", "cosh", "div",
    "dot", "dot_dims", "dot_general",
    "eq", "exp", "expm1", "ge", "gt", "le", "log", "log1p", "log_base", "logistic", "lt", "matmul", "max", "min",
    "mul", "ne", "neg", "pad", "pow", "reduce_sum",
    "argmax", "argmin", "argsort", "mean", "reduce_max", "reduce_min", "reduce_prod", "var",
    "reshape", "rev", "select", "shape", "signum", "sin", "sinh", "slice", "sqrt", "sub", "tan", "tanh", "transpose",
    # the numpy surface's elementwise functions
    "arccos", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "ceil", "rem", "quot", "clip", "erf", "floor",
    "logaddexp", "logical_and", "logical_not", "logical_or", "maximum", "minimum", "reciprocal", "round", "rsqrt",
    "sign", "square", "where",
    # bits
    "bitcast_convert_type", "bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "shift_left",
    "shift_right_arithmetic", "shift_right_logical",
    # indexing
    "gather", "scatter", "scatter_add", "dynamic_slice", "dynamic_update_slice",
    # windows: convolution and pooling
    "conv_general_dilated", "reduce_window_max", "reduce_window_sum",
    # differentiation
    "stop_gradient",
]  # fmt: skip


# Floating ---------------------------------------------------------------------


@typeclass_function(Floating)
def add(x: F, y: F) -> F:
    return pick("add", x, y).add(x, y)


@typeclass_function(Floating)
def sub(x: F, y: F) -> F:
    return pick("sub", x, y).sub(x, y)


@typeclass_function(Floating)
def mul(x: F, y: F) -> F:
    return pick("mul", x, y).mul(x, y)


@typeclass_function(Floating)
def div(x: F, y: F) -> F:
    return pick("div", x, y).div(x, y)


@typeclass_function(Floating)
def neg(x: F) -> F:
    return pick("neg", x).neg(x)


@typeclass_function(Floating)
def abs(x: F) -> F:  # noqa: A001 - the Haskell name
    return pick("abs", x).abs(x)


@typeclass_function(Floating)
def signum(x: F) -> F:
    return pick("signum", x).signum(x)


@typeclass_function(Floating)
def pow(x: F, y: F) -> F:  # noqa: A001
    return pick("pow", x, y).pow(x, y)


@typeclass_function(Floating)
def sin(x: F) -> F:
    return pick("sin", x).sin(x)


@typeclass_function(Floating)
def cos(x: F) -> F:
    return pick("cos", x).cos(x)


@typeclass_function(Floating)
def tan(x: F) -> F:
    return pick("tan", x).tan(x)


@typeclass_function(Floating)
def exp(x: F) -> F:
    return pick("exp", x).exp(x)


@typeclass_function(Floating)
def log(x: F) -> F:
    return pick("log", x).log(x)


@typeclass_function(Floating)
def sqrt(x: F) -> F:
    return pick("sqrt", x).sqrt(x)


@typeclass_function(Floating)
def tanh(x: F) -> F:
    return pick("tanh", x).tanh(x)


@typeclass_function(Floating)
def log1p(x: F) -> F:
    """log(1 + x), accurate for small x."""
    return pick("log1p", x).log1p(x)


@typeclass_function(Floating)
def expm1(x: F) -> F:
    """exp(x) - 1, accurate for small x."""
    return pick("expm1", x).expm1(x)


@typeclass_function(Floating)
def logistic(x: F) -> F:
    """The sigmoid 1 / (1 + exp(-x)), without overflow for large |x|."""
    return pick("logistic", x).logistic(x)


@typeclass_function(Floating)
def sinh(x: F) -> F:
    return pick("sinh", x).sinh(x)


@typeclass_function(Floating)
def cosh(x: F) -> F:
    return pick("cosh", x).cosh(x)


@typeclass_function(Floating)
def log_base(base: F, x: F) -> F:
    return pick("log_base", base, x).log_base(base, x)


# Floating, numpy's names -------------------------------------------------------


@typeclass_function(Floating)
def arcsin(x: F) -> F:
    return pick("arcsin", x).arcsin(x)


@typeclass_function(Floating)
def arccos(x: F) -> F:
    return pick("arccos", x).arccos(x)


@typeclass_function(Floating)
def arctan(x: F) -> F:
    return pick("arctan", x).arctan(x)


@typeclass_function(Floating)
def rem(x: F, y: F) -> F:
    """x − trunc(x / y) · y, the sign of x (C's and numpy's `fmod`, XLA's `rem`)."""
    return pick("rem", x, y).rem(x, y)


@typeclass_function(Floating)
def quot(x: F, y: F) -> F:
    """trunc(x / y) of integers (Haskell's `quot`, XLA's integer `div`), so that x = quot(x, y) · y + rem(x, y);
    0 where y is 0, numpy's integer division by zero."""
    return pick("quot", x, y).quot(x, y)


@typeclass_function(Floating)
def arctan2(y: F, x: F) -> F:
    """The angle of the point (x, y), in [-π, π] (numpy's argument order: y first)."""
    return pick("arctan2", y, x).arctan2(y, x)


@typeclass_function(Floating)
def arcsinh(x: F) -> F:
    return pick("arcsinh", x).arcsinh(x)


@typeclass_function(Floating)
def arctanh(x: F) -> F:
    return pick("arctanh", x).arctanh(x)


@typeclass_function(Floating)
def erf(x: F) -> F:
    """The error function 2/√π ∫₀ˣ e^(−t²) dt."""
    return pick("erf", x).erf(x)


@typeclass_function(Floating)
def floor(x: F) -> F:
    return pick("floor", x).floor(x)


@typeclass_function(Floating)
def ceil(x: F) -> F:
    return pick("ceil", x).ceil(x)


@typeclass_function(Floating)
def round(x: F) -> F:  # noqa: A001 - numpy's name
    """To the nearest whole number, halves to the even one (numpy's `round`)."""
    return pick("round", x).round(x)


@typeclass_function(Floating)
def square(x: F) -> F:
    return pick("square", x).square(x)


@typeclass_function(Floating)
def reciprocal(x: F) -> F:
    return pick("reciprocal", x).reciprocal(x)


@typeclass_function(Floating)
def rsqrt(x: F) -> F:
    """1 / √x."""
    return pick("rsqrt", x).rsqrt(x)


@typeclass_function(Floating)
def logaddexp(x: F, y: F) -> F:
    """log(eˣ + eʸ), without overflow."""
    return pick("logaddexp", x, y).logaddexp(x, y)


@typeclass_function(Floating)
def sign(x: F) -> F:
    """numpy's name for `signum`."""
    return pick("sign", x).sign(x)


# Ord --------------------------------------------------------------------------


@typeclass_function(Ord)
def min(x: Or, y: Or) -> Or:  # noqa: A001
    return pick("min", x, y).min(x, y)


@typeclass_function(Ord)
def max(x: Or, y: Or) -> Or:  # noqa: A001
    return pick("max", x, y).max(x, y)


# The comparisons return booleans of the operands' broadcast shape, elementwise (numpy).


@typeclass_function(Ord)
def lt(x: Or, y: Or) -> Or:
    return pick("lt", x, y).lt(x, y)


@typeclass_function(Ord)
def le(x: Or, y: Or) -> Or:
    return pick("le", x, y).le(x, y)


@typeclass_function(Ord)
def gt(x: Or, y: Or) -> Or:
    return pick("gt", x, y).gt(x, y)


@typeclass_function(Ord)
def ge(x: Or, y: Or) -> Or:
    return pick("ge", x, y).ge(x, y)


@typeclass_function(Ord)
def maximum(x: Or, y: Or) -> Or:
    """numpy's name for `max`."""
    return pick("maximum", x, y).maximum(x, y)


@typeclass_function(Ord)
def minimum(x: Or, y: Or) -> Or:
    """numpy's name for `min`."""
    return pick("minimum", x, y).minimum(x, y)


@typeclass_function(Ord)
def clip(x: Or, lo: Or, hi: Or) -> Or:
    """min(max(x, lo), hi), as numpy's `clip`."""
    return pick("clip", x, lo, hi).clip(x, lo, hi)


# HNP --------------------------------------------------------------------------


@typeclass_function(HNP)
def shape(x: H) -> tuple[int, ...]:
    return pick("shape", x).shape(x)


@typeclass_function(HNP)
def reshape(x: H, shape: Sequence[int]) -> H:
    return pick("reshape", x).reshape(x, shape)


@typeclass_function(HNP)
def broadcast(x: H, dims: Sequence[int], shape: Sequence[int]) -> H:
    """Input axis i becomes output axis dims[i]; a size-1 axis may stretch."""
    return pick("broadcast", x).broadcast(x, dims, shape)


@typeclass_function(HNP)
def transpose(x: H, perm: Sequence[int]) -> H:
    """Output axis i is input axis perm[i]."""
    return pick("transpose", x).transpose(x, perm)


@typeclass_function(HNP)
def slice(x: H, start: Sequence[int], end: Sequence[int]) -> H:  # noqa: A001
    return pick("slice", x).slice(x, start, end)


@typeclass_function(HNP)
def pad(x: H, lohi: Sequence[tuple[int, int]], value: float) -> H:
    return pick("pad", x).pad(x, lohi, value)


@typeclass_function(HNP)
def concatenate(x: H, y: H, axis: int) -> H:
    """x, then y, along `axis` (numpy's concatenate of two; `shax.numpy.concatenate`
    joins any number of arrays)."""
    return pick("concatenate", x, y).concatenate(x, y, axis)


@typeclass_function(HNP)
def reduce_sum(x: H, axes: Sequence[int]) -> H:
    return pick("reduce_sum", x).reduce_sum(x, axes)


@typeclass_function(HNP)
def reduce_max(x: H, axes: Sequence[int]) -> H:
    """The largest element over `axes` (NaN if one is), which disappear from the shape."""
    return pick("reduce_max", x).reduce_max(x, axes)


@typeclass_function(HNP)
def reduce_min(x: H, axes: Sequence[int]) -> H:
    return pick("reduce_min", x).reduce_min(x, axes)


@typeclass_function(HNP)
def reduce_prod(x: H, axes: Sequence[int]) -> H:
    return pick("reduce_prod", x).reduce_prod(x, axes)


@typeclass_function(HNP)
def argmax(x: H, axis: int) -> H:
    """The index (i32) of the first largest element along `axis`, which disappears (numpy)."""
    return pick("argmax", x).argmax(x, axis)


@typeclass_function(HNP)
def argmin(x: H, axis: int) -> H:
    return pick("argmin", x).argmin(x, axis)


@typeclass_function(HNP)
def argsort(x: H, axis: int) -> H:
    """The indices (i32) sorting x along `axis`: ascending, ties in order (stable), NaN last."""
    return pick("argsort", x).argsort(x, axis)


@typeclass_function(HNP)
def mean(x: H, axes: Sequence[int]) -> H:
    """The mean over `axes` (a default method: the sum over the count)."""
    return pick("mean", x).mean(x, axes)


@typeclass_function(HNP)
def var(x: H, axes: Sequence[int], ddof: int = 0) -> H:
    """The variance over `axes`, Σ |x − mean x|² / (n − ddof) as numpy's (a default method)."""
    return pick("var", x).var(x, axes, ddof)


@typeclass_function(HNP)
def select(pred: H, on_true: H, on_false: H) -> H:
    return pick("select", pred, on_true, on_false).select(pred, on_true, on_false)


@typeclass_function(HNP)
def dot_general(x: H, y: H, dims: DotDims) -> H:
    """dims = (lhs_contracting, rhs_contracting, lhs_batch, rhs_batch); the result
    has the batch axes, then lhs free axes, then rhs free axes (XLA)."""
    return pick("dot_general", x, y).dot_general(x, y, dims)


@typeclass_function(HNP)
def dot(x: H, y: H) -> H:
    return pick("dot", x, y).dot(x, y)


@typeclass_function(HNP)
def matmul(x: H, y: H) -> H:
    """numpy's matmul (`x @ y`): matrices in the last two axes, the axes before them
    broadcast as batch axes; a vector operand is a matrix with one row (x) or column (y)
    whose axis leaves the result."""
    return pick("matmul", x, y).matmul(x, y)


@typeclass_function(HNP)
def eq(x: H, y: H) -> H:
    return pick("eq", x, y).eq(x, y)


@typeclass_function(HNP)
def rev(x: H, axes: Sequence[int]) -> H:
    """x with its elements in reverse order along each of `axes` (numpy's `flip`)."""
    return pick("rev", x).rev(x, axes)


@typeclass_function(HNP)
def convert_element_type(x: H, dtype: Any) -> H:
    """x's elements as the numpy `dtype` (numpy's `astype`)."""
    return pick("convert_element_type", x).convert_element_type(x, dtype)


@typeclass_function(HNP)
def ne(x: H, y: H) -> H:
    return pick("ne", x, y).ne(x, y)


# Indexing: x[b..., p..., idx[b..., i...], q...], b the first `batch_dims` axes of x and of
# idx, p the axes of x before `axis`, q after it. An index in [-n, n) counts from the end
# if negative, as numpy's; beyond, it is clamped into range (XLA's gather).


@typeclass_function(HNP)
def gather(x: H, indices: H, axis: int, batch_dims: int) -> H:
    """x's elements at the integer `indices` along `axis`, for each index of the leading
    `batch_dims` axes (numpy's `take` when batch_dims is 0): the result's axes are
    (b..., p..., i..., q...)."""
    return pick("gather", x, indices).gather(x, indices, axis, batch_dims)


@typeclass_function(HNP)
def scatter_add(x: H, indices: H, updates: H, axis: int, batch_dims: int) -> H:
    """x with `updates` (shaped like gather's result) added at the positions gather reads;
    repeated positions add up (numpy's `add.at`)."""
    return pick("scatter_add", x, indices, updates).scatter_add(x, indices, updates, axis, batch_dims)


@typeclass_function(HNP)
def scatter(x: H, indices: H, updates: H, axis: int, batch_dims: int) -> H:
    """x with `updates` written at the positions gather reads; of several updates to one
    position the last, in C order of the indices, is kept (numpy's assignment)."""
    return pick("scatter", x, indices, updates).scatter(x, indices, updates, axis, batch_dims)


# Slices at traced starts (XLA's): `starts` is an integer vector, one start per axis of x,
# each clamped into [0, n - size] so the slice stays inside x.


@typeclass_function(HNP)
def dynamic_slice(x: H, starts: H, sizes: Sequence[int]) -> H:
    """The block of x of shape `sizes` at `starts` (clamped into range)."""
    return pick("dynamic_slice", x, starts).dynamic_slice(x, starts, sizes)


@typeclass_function(HNP)
def dynamic_update_slice(x: H, update: H, starts: H) -> H:
    """x with `update` written over the block of its shape at `starts` (clamped into range)."""
    return pick("dynamic_update_slice", x, update, starts).dynamic_update_slice(x, update, starts)


# Windows (XLA's convolution and reduce_window). A convolution's `dimension_numbers` are
# three tuples of axes: lhs (batch, feature, spatial...), rhs (out feature, in feature,
# spatial...), result (batch, feature, spatial...); `padding` one (lo, hi) pair per
# spatial axis (negative ones crop).


@typeclass_function(HNP)
def conv_general_dilated(
    lhs: H,
    rhs: H,
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int],
    rhs_dilation: Sequence[int],
    dimension_numbers: tuple[Sequence[int], Sequence[int], Sequence[int]],
    feature_group_count: int,
    batch_group_count: int,
) -> H:
    """XLA's convolution of lhs with the kernel rhs (a cross-correlation, as XLA's)."""
    return pick("conv_general_dilated", lhs, rhs).conv_general_dilated(
        lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
        feature_group_count, batch_group_count,
    )  # fmt: skip


@typeclass_function(HNP)
def reduce_window_sum(
    x: H, window_dimensions: Sequence[int], window_strides: Sequence[int], padding: Sequence[tuple[int, int]]
) -> H:
    """The sum of each window of x (padded with zeros), every stride-th window per axis."""
    return pick("reduce_window_sum", x).reduce_window_sum(x, window_dimensions, window_strides, padding)


@typeclass_function(HNP)
def reduce_window_max(
    x: H, window_dimensions: Sequence[int], window_strides: Sequence[int], padding: Sequence[tuple[int, int]]
) -> H:
    """The largest element of each window of x (padded with its dtype's lowest value)."""
    return pick("reduce_window_max", x).reduce_window_max(x, window_dimensions, window_strides, padding)


# The logical functions take and return booleans, elementwise.


@typeclass_function(HNP)
def logical_and(x: H, y: H) -> H:
    return pick("logical_and", x, y).logical_and(x, y)


@typeclass_function(HNP)
def logical_or(x: H, y: H) -> H:
    return pick("logical_or", x, y).logical_or(x, y)


@typeclass_function(HNP)
def logical_not(x: H) -> H:
    return pick("logical_not", x).logical_not(x)


# Bits, of integers (and of booleans for and, or, xor, not): numpy's ufuncs, and XLA's shifts,
# whose amounts are read as unsigned, so one beyond the width (or negative) shifts every bit
# out (numpy's too). `shift_right_logical` fills with zeros, `shift_right_arithmetic` with
# the sign bit (of the bits read as signed, for unsigned dtypes too).


@typeclass_function(HNP)
def bitwise_and(x: H, y: H) -> H:
    return pick("bitwise_and", x, y).bitwise_and(x, y)


@typeclass_function(HNP)
def bitwise_or(x: H, y: H) -> H:
    return pick("bitwise_or", x, y).bitwise_or(x, y)


@typeclass_function(HNP)
def bitwise_xor(x: H, y: H) -> H:
    return pick("bitwise_xor", x, y).bitwise_xor(x, y)


@typeclass_function(HNP)
def bitwise_not(x: H) -> H:
    return pick("bitwise_not", x).bitwise_not(x)


@typeclass_function(HNP)
def shift_left(x: H, y: H) -> H:
    """x's bits moved y places up, zeros shifted in (numpy's `<<`)."""
    return pick("shift_left", x, y).shift_left(x, y)


@typeclass_function(HNP)
def shift_right_logical(x: H, y: H) -> H:
    """x's bits moved y places down, zeros shifted in (numpy's `>>` of unsigned integers)."""
    return pick("shift_right_logical", x, y).shift_right_logical(x, y)


@typeclass_function(HNP)
def shift_right_arithmetic(x: H, y: H) -> H:
    """x's bits moved y places down, copies of the sign bit shifted in (numpy's `>>` of signed integers)."""
    return pick("shift_right_arithmetic", x, y).shift_right_arithmetic(x, y)


@typeclass_function(HNP)
def bitcast_convert_type(x: H, dtype: Any) -> H:
    """x's bits read as the numpy `dtype` of the same width (numpy's `view`, XLA's bitcast)."""
    return pick("bitcast_convert_type", x).bitcast_convert_type(x, dtype)


@typeclass_function(HNP)
def where(cond: H, x: H, y: H) -> H:
    """numpy's `where`: x where cond holds, else y, the three broadcast together."""
    return pick("where", cond, x, y).where(cond, x, y)


@typeclass_function(HNP)
def stop_gradient(x: H) -> H:
    """x itself, whose derivative is zero: what x is computed from gets no gradient through it."""
    return pick("stop_gradient", x).stop_gradient(x)


def broadcast_to(x: H, target: Sequence[int]) -> H:
    """x broadcast to the shape `target` as numpy broadcasts an operand: its axes are the
    trailing ones (x itself if it has that shape already)."""
    own, new = tuple(shape(x)), tuple(target)
    if own == new:
        return x
    return broadcast(x, list(range(len(new) - len(own), len(new))), list(new))


def dot_dims(x_rank: int, y_rank: int) -> DotDims:
    """numpy's `dot`: contract the last axis of x with the second-to-last of y
    (the only one, if y is a vector): lhs axis 1 with rhs axis 0 for matrices."""
    return ((x_rank - 1,), (builtins.max(y_rank - 2, 0),), (), ())
