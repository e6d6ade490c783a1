"""What linearize rules are written with, and the rules derived from linearity.

Linearize (`shax.stages.linearize`) runs two traces at once: the primal trace recomputes
the definition, and the linear trace, opened inside it, records the tangent program. A
rule gets a binding's primal operands, their tangents and its primal result, and
returns the result's tangent, computed with typeclass functions. `residual(x)` is the
one crossing from the primal to the linear program: the primal value `x` becomes an
argument of the linear program, returned by the primal one. For sin:

    # sin: d(sin x) = cos x · dx
    residual(tc.cos(x)) * dx

Most rules are not written at all. From a primitive's linearity (per operand):

    no differentiable operand     d f = 0                          (eq, signum, constants)
    linear in every operand       d f(x, y) = f(dx, dy)            (add, reshape; select's
                                  with non-differentiable ones     predicate crosses as a
                                  crossing as residuals            residual)
    bilinear                      d f(x, y) = f(x, dy) + f(dx, y)  (mul, dot_general)

and an elementwise primitive declares only its derivative f'(x) (`elementwise_jvp`).

A tangent that depends on no input is a symbolic `Zero`. Typeclass functions on zeros
run in `shax.rules.zeros`, following the zero rules here: a linear operation on zeros is a
zero and emits nothing (`0 · r = 0`, `reshape 0 = 0`), a joint one with some operands
zero fills them with zeros (a rule may do better: `x + 0 = x`), and a nonlinear one is
a mistake in a linearize rule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from shax.core.errors import ShaxError, ShaxTypeError
from shax.core.primitive import Linearity, Primitive
from shax.core.types import TensorType
from shax.rules.table import RuleTable
from shax.rules.types import result_type
from typeclasses.operators import Operators

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer


@attrs.frozen
class Zero(Operators):
    """The symbolic zero tangent of a value of `type`."""

    type: TensorType

    def __neg__(self) -> Zero:
        return self


Tangent = Any  # a tracer of the linear trace, or a Zero


class Linearization(Protocol):
    """A linearization under way, as its rules see it."""

    def residual(self, x: Any) -> Any:
        """The primal value `x` as a value of the linear program."""

    def zeros(self, t: TensorType) -> Tracer:
        """A zero tangent of type `t` as a value of the linear program."""


# The innermost linearization under way in this thread (or task), which rules cross into;
# `shax.stages.linearize` and `transpose` open them. Per thread: a rule running in one
# thread never reaches a linearization of another.
_active: ContextVar[Linearization | None] = ContextVar("shax_linearization", default=None)


@contextmanager
def linearizing(linearization: Linearization) -> Iterator[None]:
    """Within this block, rules cross into (and materialize zeros in) `linearization`."""
    enclosing = _active.set(linearization)
    try:
        yield
    finally:
        _active.reset(enclosing)


def _current(what: str) -> Linearization:
    linearization = _active.get()
    if linearization is None:
        raise ShaxError(f"{what}: only linearize rules, while linearize runs, cross into a linear program")
    return linearization


def residual(x: Any) -> Any:
    """The primal value `x`, as the linear program sees it: an extra argument of the
    linear program, which the primal program returns (constants need no crossing)."""
    return _current("residual").residual(x)


def materialized(tangent: Tangent) -> Any:
    """`tangent` as a value: a zero becomes zeros of its type in the linear program."""
    return _current("materialized").zeros(tangent.type) if isinstance(tangent, Zero) else tangent


# Linearize rules --------------------------------------------------------------------------


class LinearizeRule(Protocol):
    def __call__(
        self, prim: Any, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Any, /
    ) -> Tangent | PrimalAndTangent:
        """The result's tangent; some operand's tangent is not a Zero. For a `multi_result`
        primitive, `out` is the list of its results and the rule gives a list of tangents
        (or a PrimalAndTangent of lists)."""


@attrs.frozen
class PrimalAndTangent:
    """What a rule returns that computes the primal value its own way, in place of `out`
    (a call runs its callee's forward definition, which also gives the activations); for a
    `multi_result` primitive, `value` and `tangent` are lists, one entry per result."""

    value: Any
    tangent: Any


# piecewise constant f: d f(x) = 0
def zero_tangent(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Zero:
    return Zero(out.type)


# f linear in its linear operands, the others (non-differentiable) fixed: d f(p, x) = f(p, dx)
def linear_jvp(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    linear = prim.linear_operands
    return prim.apply(*(t if k in linear else residual(x) for k, (x, t) in enumerate(zip(primals, tangents))))


# f linear in each factor alone: d f(x, y) = f(x, dy) + f(dx, y), the terms in this order
def bilinear_jvp(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
    total: Tangent = None
    for k in reversed(prim.bilinear_operands):
        term = prim.apply(*(t if j == k else residual(x) for j, (x, t) in enumerate(zip(primals, tangents))))
        total = term if total is None else total + term
    return total


Derivative = Callable[..., Any]  # (*primals, out) -> f'(x), or the tuple of partials ∂f/∂x_k


def elementwise_jvp(derivative: Derivative) -> LinearizeRule:
    """The rule of an elementwise f from its derivative: d f(x) = f'(x) · dx, and for several
    operands d f(x, y) = ∂f/∂x · dx + ∂f/∂y · dy (terms of zero tangents left out).
    `derivative(*primals, out)` is written with typeclass functions, so it differentiates
    again (higher derivatives)."""

    def rule(prim: Primitive, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer) -> Tangent:
        if len(primals) == 1:  # most elementwise functions: f'(x) · dx
            return residual(derivative(primals[0], out)) * tangents[0]
        partials = derivative(*primals, out)
        terms = [residual(p) * t for p, t in zip(partials, tangents) if not isinstance(t, Zero)]
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    return rule


def _derive_linearize(cls: type[Primitive]) -> LinearizeRule | None:
    kinds = set(cls.linearity) - {Linearity.NON_DIFFERENTIABLE}
    if not kinds:
        return zero_tangent
    if kinds == {Linearity.LINEAR}:
        return linear_jvp
    if kinds == {Linearity.BILINEAR}:
        return bilinear_jvp
    return None  # nonlinear: its rule is written


linearize_rules: RuleTable[LinearizeRule] = RuleTable("linearize", _derive_linearize)
linearize_rule = linearize_rules.register


# Zero rules -------------------------------------------------------------------------------


class ZeroRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[Any], /) -> Any:
        """The primitive on `operands`, one of which at least is a Zero."""


def zero_of(prim: Primitive, operands: Sequence[Any]) -> Zero:
    """The zero `prim` gives on `operands` (some of them zeros): of its result's type."""
    dtype = next(o.type.dtype for o in operands if isinstance(o, Zero))
    return Zero(result_type(prim, *(_operand_type(o, dtype) for o in operands)))


def _operand_type(operand: Any, dtype: Any) -> TensorType:
    if isinstance(operand, Zero):
        return operand.type
    if isinstance(operand, (bool, int, float)):  # a weakly typed Python number
        return TensorType(dtype, ())
    return operand.type if hasattr(operand, "type") else TensorType.of(operand)


def linear_zero(prim: Primitive, operands: Sequence[Any]) -> Any:
    """A zero where an operation is linear: `0 · r = 0` (bilinear), `f(0, 0) = 0` (linear in
    all its zero operands); `f(0, dx)`, linear in both, fills the zero with zeros."""
    zeros = [k for k, o in enumerate(operands) if isinstance(o, Zero)]
    for k in zeros:
        if prim.operand_linearity[k] not in (Linearity.LINEAR, Linearity.BILINEAR):
            role = "a predicate" if prim.operand_linearity[k] is Linearity.NON_DIFFERENTIABLE else "a nonlinear operand"
            raise ShaxTypeError(f"{prim.name}: a zero tangent ({operands[k].type}) cannot be {role}")
    if any(prim.operand_linearity[k] is Linearity.BILINEAR for k in zeros):
        return zero_of(prim, operands)
    if all(isinstance(operands[k], Zero) for k in prim.linear_operands):
        return zero_of(prim, operands)
    return prim.apply(*(materialized(o) for o in operands))


def nonlinear_zero(prim: Primitive, operands: Sequence[Any]) -> Any:
    raise ShaxTypeError(
        f"{prim.name}: a zero tangent reached a nonlinear operation; "
        "linearize rules apply only linear operations to tangents"
    )


def _derive_zero(cls: type[Primitive]) -> ZeroRule:
    linear = cls.linear_operands or cls.bilinear_operands
    return linear_zero if linear else nonlinear_zero


zero_rules: RuleTable[ZeroRule] = RuleTable("zero", _derive_zero)
zero_rule = zero_rules.register
