"""What linearize and transpose rules are written with.

Linearize runs two traces at once: the primal trace recomputes the definition, and
the linear trace, opened inside it, records the tangent program. A linearize rule
computes primal quantities with typeclass functions on primal tracers and combines
them with tangents; `residual(x)` is the one crossing from the primal to the linear
program: the primal value `x` becomes an argument of the linear program, returned
by the primal one (a residual). For sin, d(sin x) = cos x · dx is

    residual(tc.cos(x)) * dx

A tangent that depends on no input is a symbolic `Zero`: linear operations on it give
zeros again and emit nothing (its typeclass instance is `shax.zeros`).

A transpose rule gets the cotangent of a binding's result and its operands: a `Linear`
marker for each operand that depends on the tangent inputs (the rule returns its
cotangent) and a value (a tracer) for each that does not. It returns one cotangent
per operand, None where there is none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import attrs

import typeclasses as tc
from shax.errors import ShaxError
from shax.rules import rule_for
from shax.types import TensorType
from typeclasses.operators import Operators

if TYPE_CHECKING:
    from shax.primitives.base import Primitive
    from shax.tracer import Tracer


@attrs.frozen
class Zero(Operators):
    """The symbolic zero tangent of a value of `type`."""

    type: TensorType

    def __neg__(self) -> Zero:
        return self


@attrs.frozen
class Linear:
    """An operand of a linear program's binding that depends on the tangent inputs."""

    type: TensorType


# How each linearization under way carries a primal value into its linear program
# (innermost last); `shax.stages.linearize` provides it.
_crossings: list[Callable[[Any], Any]] = []


@contextmanager
def crossing(cross: Callable[[Any], Any]) -> Iterator[None]:
    """Within this block, `residual` is `cross`."""
    _crossings.append(cross)
    try:
        yield
    finally:
        _crossings.pop()


def residual(x: Any) -> Any:
    """The primal value `x`, as the linear program sees it: an extra argument of the
    linear program, which the primal program returns (constants need no crossing)."""
    if not _crossings:
        raise ShaxError("residual: only linearize rules, while linearize runs, cross into a linear program")
    return _crossings[-1](x)


# linear f: d f(x, y) = f(dx, dy)
def linear_jvp(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    return rule_for("eval", prim)(prim, *tangents)


# bilinear f: d f(x, y) = f(x, dy) + f(dx, y)
def bilinear_jvp(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Any:
    apply = rule_for("eval", prim)
    (x, y), (dx, dy) = primals, tangents
    return apply(prim, residual(x), dy) + apply(prim, dx, residual(y))


# piecewise constant f: d f(x) = 0
def zero_tangent(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tracer | Zero], out: Tracer) -> Zero:
    return Zero(out.type)


def not_linear(prim: Primitive, ct: Tracer, *operands: Any) -> tuple[Any, ...]:
    """The transpose rule of a primitive that is linear in none of its operands."""
    raise prim.fail("is not linear, but an operand depends on the tangent inputs", *(o.type for o in operands))


def linear_operands(prim: Primitive, operands: Sequence[Any], allowed: Sequence[Sequence[bool]]) -> tuple[bool, ...]:
    """Which operands are `Linear`, checked against the `allowed` patterns (one bool per
    operand); any other pattern is an error: the binding is not linear in the tangents."""
    pattern = tuple([isinstance(o, Linear) for o in operands])
    if not any(pattern == tuple(a) for a in allowed):
        linear = [k for k, is_linear in enumerate(pattern) if is_linear]
        message = f"is not linear in the tangent inputs when its operand(s) {linear}, and no others, depend on them"
        raise prim.fail(message, *(o.type for o in operands))
    return pattern


def unbroadcast(ct: Tracer, target: TensorType, dims: Sequence[int] | None = None) -> Tracer:
    """The adjoint of broadcasting a `target` to ct's shape (input axis i at output axis
    dims[i]; numpy's trailing alignment by default): sum ct over the new axes and over
    the size-1 axes that were stretched."""
    shape = tc.shape(ct)
    if dims is None and shape == target.shape:  # nothing was broadcast (the common case)
        return ct
    dims = tuple(range(len(shape) - target.rank, len(shape)) if dims is None else dims)
    summed = [a for a in range(len(shape)) if a not in dims or (target.shape[dims.index(a)] == 1 and shape[a] != 1)]
    if summed:
        ct = tc.reduce_sum(ct, summed)
        shape = tc.shape(ct)
    if shape != target.shape:
        ct = tc.reshape(ct, target.shape)
    return ct
