"""The typeclass functions users write against, each dispatching on its operands.

Floating: add sub mul div neg abs signum pow sin cos tan exp log sqrt tanh
          log1p expm1 logistic (default methods: sinh cosh log_base)
Ord:      min max lt le gt ge
HNP:      reshape broadcast transpose slice pad concatenate reduce_sum select dot_general eq ne
          reduce_max reduce_min reduce_prod argmax argmin (default methods: dot, matmul,
          mean, var), and `shape` to ask a value for its shape.
Static parameters (shapes, axes, dimension numbers) come after the operands.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import TypeVar

from typeclasses.dispatch import HNP, Floating, Ord, pick, typeclass_function

F = TypeVar("F", bound=Floating)
Or = TypeVar("Or", bound=Ord)
H = TypeVar("H", bound=HNP)

DotDims = tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int]]

__all__ = [
    "DotDims", "abs", "add", "broadcast", "concatenate", "cos", "cosh", "div", "dot", "dot_dims", "dot_general",
    "eq", "exp", "expm1", "ge", "gt", "le", "log", "log1p", "log_base", "logistic", "lt", "matmul", "max", "min",
    "mul", "ne", "neg", "pad", "pow", "reduce_sum",
    "argmax", "argmin", "mean", "reduce_max", "reduce_min", "reduce_prod", "var",
    "reshape", "select", "shape", "signum", "sin", "sinh", "slice", "sqrt", "sub", "tan", "tanh", "transpose",
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
def mean(x: H, axes: Sequence[int]) -> H:
    """The mean over `axes` (a default method: the sum over the count)."""
    return pick("mean", x).mean(x, axes)


@typeclass_function(HNP)
def var(x: H, axes: Sequence[int]) -> H:
    """The variance over `axes`, ddof 0 as numpy's (a default method)."""
    return pick("var", x).var(x, axes)


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
def ne(x: H, y: H) -> H:
    return pick("ne", x, y).ne(x, y)


def dot_dims(x_rank: int, y_rank: int) -> DotDims:
    """numpy's `dot`: contract the last axis of x with the second-to-last of y
    (the only one, if y is a vector): lhs axis 1 with rhs axis 0 for matrices."""
    return ((x_rank - 1,), (builtins.max(y_rank - 2, 0),), (), ())
