"""Reductions other than the sum (a shape primitive, being linear): max, min and product
over axes, which disappear from the shape, and argmax/argmin along one axis. Results keep
the operand's dtype, except the indices: i32, JAX's default int (numpy's is int64).

max and min are differentiable almost everywhere, with JAX's tie rule (the tangent
averaged over the positions equal to the result); the product's derivative is the
product of the other elements, which stays right where elements are zero; the arg
reductions are piecewise constant. `mean` and `var` are no primitives: they are default
methods (`typeclasses.instance`) over reduce_sum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, integer, ints
from shax.core.types import TensorType, bool_, i32
from shax.rules.batch import batch_rule, batched, shifted
from shax.rules.cost import cost_rules, per_input_element
from shax.rules.export import export_rule
from shax.rules.linearize import Tangent, linearize_rule, residual
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["ArgMax", "ArgMin", "ReduceMax", "ReduceMin", "ReduceProd"]


@attrs.frozen
class Reduction(Primitive):
    """Over `axes`, which disappear from the shape."""

    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.NONLINEAR,)
    axes: tuple[int, ...] = attrs.field(converter=ints)


@attrs.frozen
class ReduceMax(Reduction):
    name, function = "reduce_max", tc.reduce_max


@attrs.frozen
class ReduceMin(Reduction):
    name, function = "reduce_min", tc.reduce_min


@attrs.frozen
class ReduceProd(Reduction):
    name, function = "reduce_prod", tc.reduce_prod


@type_rule(ReduceMax, ReduceMin, ReduceProd)
def _reduction_type(prim: Reduction, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    axes = prim.axes
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.rank for a in axes):
        raise prim.fail(f"axes {list(axes)} must be distinct axes of a rank-{x.rank} tensor", x, error=ShaxValueError)
    if x.dtype == bool_:
        raise prim.fail("cannot reduce bool", x)
    if not isinstance(prim, ReduceProd) and any(x.shape[a] == 0 for a in axes):
        # numpy's error too: an empty max has no value (the empty product is 1)
        raise prim.fail(
            f"axes {list(axes)} include an empty one: there is no element to choose", x, error=ShaxValueError
        )
    return x.with_shape(tuple(n for a, n in enumerate(x.shape) if a not in axes))


def _ones_like(x: Any) -> Any:
    """Ones of x's shape and dtype, built from x (no typeclass function names a dtype): its
    signum is 0, ±1 or NaN (never ∞ as x may be), and 0 · that is 0 except where x is NaN."""
    return 1 + 0 * tc.signum(x)


def _spread(r: Any, axes: Sequence[int], shape: tuple[int, ...]) -> Any:
    """A reduction's result `r` broadcast back to the operand's `shape` along `axes`."""
    return tc.broadcast(r, [a for a in range(len(shape)) if a not in axes], shape)


# max (and min): d max x = Σ_i w_i dx_i, w_i = [x_i = max x] / #{j : x_j = max x}: the tangent
# averaged over the elements equal to the result, as JAX's `_reduce_chooser_jvp_rule`
# (a NaN result equals none of them: 0 / 0, NaN as JAX's).
@linearize_rule(ReduceMax, ReduceMin)
def _chooser_jvp(prim: Reduction, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (x,), (dx,) = primals, tangents
    shape = tc.shape(x)
    chosen = tc.select(tc.eq(x, _spread(out, prim.axes, shape)), _ones_like(x), 0.0)
    weights = chosen / _spread(tc.reduce_sum(chosen, prim.axes), prim.axes, shape)
    return tc.reduce_sum(residual(weights) * dx, prim.axes)


# prod: d Π x = Σ_i (Π_{j≠i} x_j) dx_i, each Π_{j≠i} x_j a product of elements (JAX's
# `_reduce_prod_tree`): no division by x_i, no test for zeros, so its own derivatives, the
# second derivatives of Π x, are right at zeros too.
@linearize_rule(ReduceProd)
def _prod_jvp(prim: Reduction, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    (dx,) = tangents
    return tc.reduce_sum(residual(_products_of_the_others(primals[0], prim.axes)) * dx, prim.axes)


def _products_of_the_others(x: Any, axes: Sequence[int]) -> Any:
    """Π_{j≠i} x_j over `axes`, for each element x_i. The reduced elements (moved last,
    flattened, padded with ones to a power of two) are multiplied in a tree of pairs; then,
    from the root (whose factor is 1) down, a node's product of the others is its parent's
    times its sibling's product. Linear work, no division."""
    shape = tuple(tc.shape(x))
    kept = [a for a in range(len(shape)) if a not in axes]
    lead, reduced = [shape[a] for a in kept], [shape[a] for a in axes]
    n = math.prod(reduced)
    size = 1 << max(n - 1, 0).bit_length()  # the power of two at least n
    order = [*kept, *axes]
    moved = x if order == sorted(order) else tc.transpose(x, order)
    flat = _reshaped(moved, [*lead, n])
    level = flat if size == n else tc.pad(flat, [(0, 0)] * len(lead) + [(0, size - n)], 1.0)
    pairs: list[Any] = []  # each level's nodes, in pairs: [*lead, m, 2]
    while size > 1:
        size //= 2
        pairs.append(tc.reshape(level, [*lead, size, 2]))
        level = tc.reshape(_half(pairs[-1], 0) * _half(pairs[-1], 1), [*lead, size])
    others = _ones_like(level)  # the root's: [*lead, 1]
    for pair in reversed(pairs):
        m = tc.shape(pair)[-2]
        siblings = tc.concatenate(_half(pair, 1), _half(pair, 0), len(lead) + 1)
        others = tc.reshape(tc.reshape(others, [*lead, m, 1]) * siblings, [*lead, 2 * m])
    if n != tc.shape(others)[-1]:
        others = tc.slice(others, [0] * (len(lead) + 1), [*lead, n])
    others = _reshaped(others, [*lead, *reduced])
    return others if order == sorted(order) else tc.transpose(others, sorted(range(len(shape)), key=order.__getitem__))


def _reshaped(x: Any, shape: list[int]) -> Any:
    """x reshaped to `shape`, no operation where it has that shape (the learner reads the rule's bindings)."""
    return x if list(tc.shape(x)) == shape else tc.reshape(x, shape)


def _half(pairs: Any, k: int) -> Any:
    """The first (k = 0) or second element of each pair, [..., m, 2] -> [..., m, 1]."""
    shape = list(tc.shape(pairs))
    return tc.slice(pairs, [0] * (len(shape) - 1) + [k], [*shape[:-1], k + 1])


# The reduced axes shifted past the batch axis d, which moves left by the number of reduced
# axes before it.
@batch_rule(ReduceMax, ReduceMin, ReduceProd)
def _reduction_batch(
    prim: Reduction, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    return type(prim)([shifted(a, d) for a in prim.axes]).apply(x), d - sum(a < d for a in prim.axes)


@attrs.frozen
class ArgReduction(Primitive):
    """The index of the first chosen element along `axis`, which disappears (numpy's ties)."""

    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.NON_DIFFERENTIABLE,)
    axis: int = attrs.field(converter=integer)


@attrs.frozen
class ArgMax(ArgReduction):
    name, function = "argmax", tc.argmax


@attrs.frozen
class ArgMin(ArgReduction):
    name, function = "argmin", tc.argmin


@type_rule(ArgMax, ArgMin)
def _arg_type(prim: ArgReduction, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    if not 0 <= prim.axis < x.rank:
        raise prim.fail(f"axis {prim.axis} is not an axis of a rank-{x.rank} tensor", x, error=ShaxValueError)
    if x.shape[prim.axis] == 0:
        raise prim.fail(f"axis {prim.axis} is empty: there is no element to choose", x, error=ShaxValueError)
    return TensorType(i32, tuple(n for a, n in enumerate(x.shape) if a != prim.axis))


# The axis shifted past the batch axis d, which moves left if the axis was before it.
@batch_rule(ArgMax, ArgMin)
def _arg_batch(prim: ArgReduction, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    (x,), d = operands, batched(dims[0])
    return type(prim)(shifted(prim.axis, d)).apply(x), d - (prim.axis < d)


# reductions: one comparison or product per input element
cost_rules.register(ReduceMax, ReduceMin, ReduceProd, ArgMax, ArgMin)(per_input_element)


# Export: lax.reduce with a monoid JAX knows (mul, max, min) is its reduce_* primitive, from
# the monoid's identity (the lowest or highest value for max and min)
def _reduction_export(monoid: str, init: Callable[[np.dtype], Any]) -> Callable[..., Any]:
    def rule(prim: Any, operands: Sequence[Any], out: TensorType) -> Any:
        from jax import lax

        dtype = np.dtype(out.dtype.numpy)
        return lax.reduce(operands[0], np.asarray(init(dtype), dtype), getattr(lax, monoid), tuple(prim.axes))

    return rule


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


export_rule(ReduceProd)(_reduction_export("mul", lambda d: 1))
export_rule(ReduceMax)(_reduction_export("max", _lowest))
export_rule(ReduceMin)(_reduction_export("min", _highest))


# argmax, argmin: the first extreme's index, as i32
@export_rule(ArgMax, ArgMin)
def _arg_export(prim: ArgMax | ArgMin, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    function = lax.argmax if isinstance(prim, ArgMax) else lax.argmin
    return function(operands[0], prim.axis, np.int32)
