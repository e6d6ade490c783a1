"""stop_gradient: x itself, with a zero derivative (JAX's `lax.stop_gradient`). It is
the identity in evaluation, batching and compiled code; linearize gives its result a
symbolic zero tangent (derived from its linearity: its operand is not differentiated),
so nothing x is computed from gets a gradient through it. No pass removes it: a program
cleaned before it is differentiated (`jit(f)` inside `grad`) keeps it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

import typeclasses as tc
from shax.core.primitive import Linearity, Primitive
from shax.core.types import TensorType
from shax.rules.batch import batch_rule, unary_batch
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.export import export_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["StopGradient"]


@attrs.frozen
class StopGradient(Primitive):
    """x, of any dtype, as a constant of differentiation."""

    name, function = "stop_gradient", tc.stop_gradient
    # d stop_gradient(x) = 0
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.NON_DIFFERENTIABLE,)
    shape_only: ClassVar[bool] = True  # no flops: the identity


@type_rule(StopGradient)
def _stop_gradient_type(prim: StopGradient, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    return x


# stop_gradient: x itself (the result shares x's memory, so it is never overwritten)
@codegen_rule(StopGradient)
def _stop_gradient_codegen(prim: StopGradient, site: Site, operands: Sequence[Operand]) -> str:
    (x,) = operands
    return str(x)


# stop_gradient: elementwise, the batch axis stays put
@batch_rule(StopGradient)
def _stop_gradient_batch(
    prim: StopGradient, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    return unary_batch(prim, operands, dims)


# stop_gradient x = x, a constant of JAX's differentiation too
@export_rule(StopGradient)
def _stop_gradient_export(prim: StopGradient, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    return lax.stop_gradient(operands[0])
