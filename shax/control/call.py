"""`call`: run another Definition (the callee) on the operands, as one operation.

    x5 = call linear x2 x3 x4                (the callee has one output)
    (x6, x7) = call linear x2 x3 x4          (a callee with two)

One binding defines every output of the call (`multi_result`). The callee is a static
parameter held by identity (hashing a definition would walk its bindings); printing
shows every callee once, before its callers.

The rules run the stages on the callee, once per callee (`shax.control.callees` keeps what they
built), so that a call stays a call through every transform:

- linearize: the callee's forward definition (its outputs, then the activations its
  derivative reads) and a call of its linear definition on the operands' tangents and
  the activations: d call f(x) = call df(dx, acts(x));
- transpose: a call of the linear callee's transpose, on all its outputs' cotangents:
  (call df(dx, a))ᵀ ct = call dft(ct, a);
- batch: a call of the batched callee (built once per batch layout);
- codegen: the callee's compiled function, called.

`linear` counts the leading operands the callee is linear in (jointly; the others held
fixed): 0 for a user's call, the tangents of a linear definition's call, the cotangents
of a transposed one's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from shax.control.base import Control
from shax.control.callees import (
    batched,
    compiled_fresh,
    derivative,
    flops,
    passed_on,
    pruned,
    read_arguments,
    reordered,
    transposed,
    wrt,
)
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.primitive import Primitive
from shax.core.types import TensorType
from shax.primitives import Broadcast, Constant
from shax.rules.batch import batch_rule
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.cost import cost_rule
from shax.rules.evaluate import eval_rule
from shax.rules.export import export_rule, lowered
from shax.rules.linearize import PrimalAndTangent, Tangent, Zero, linearize_rule, materialized, residual, zero_rule
from shax.rules.transpose import Linear, transpose_rule
from shax.rules.types import type_rule
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer, apply_all

__all__ = ["Call"]


@attrs.frozen(repr=False)
class Call(Control):
    name: ClassVar[str] = "call"
    defn: Definition = attrs.field(eq=False)
    linear: int = 0
    # The callee's identity: a call compares and hashes by it, never by the callee's bindings.
    key: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", id(self.defn))

    def operand_count(self) -> int:
        return len(self.defn.arg_types)

    @property
    def num_results(self) -> int:
        return len(self.defn.outputs)

    @property
    def linear_positions(self) -> tuple[int, ...]:
        return tuple(range(self.linear))

    def show(self, names: Mapping[int, str]) -> str:
        return f"call {names.get(self.key, self.defn.name)}"

    def pruned(self, read: Sequence[bool]) -> tuple[Primitive, tuple[int, ...]] | None:
        """A call of the callee without the outputs nothing reads (built once per callee and outputs)."""
        kept = tuple(k for k, r in enumerate(read) if r)
        return None if len(kept) == len(read) else (Call(pruned(self.defn, kept), self.linear), kept)

    def callee(self) -> Definition:
        return self.defn

    def forwarded_results(self) -> tuple[int | None, ...]:
        """Per output, the operand it is when the callee returns that argument unchanged
        (forward_identities)."""
        return passed_on(self.defn)

    def subdefinitions(self) -> tuple[Definition, ...]:
        return (self.defn,)

    def __repr__(self) -> str:
        return f"Call({self.defn.name}, linear={self.linear})"


def call_all(prim: Call, operands: Sequence[Any]) -> list[Any]:
    """Every output of `prim`'s callee on `operands`: values on numpy values; on tracers,
    the call recorded."""

    if any(isinstance(o, Tracer) for o in operands):
        return apply_all(prim, *operands)
    return evaluate(prim.defn, *operands)


@type_rule(Call)
def _call_type(prim: Call, operands: Sequence[TensorType]) -> tuple[TensorType, ...]:
    defn = prim.defn
    if not defn.is_typed:
        raise prim.fail(f"{defn.name} is untyped; run shax.stages.infer_types on it first", *operands)
    if tuple(operands) != defn.arg_types:
        declared = ", ".join(map(str, defn.arg_types))
        raise prim.fail(f"{defn.name} takes ({declared})", *operands)
    return defn.output_types()


@eval_rule(Call)
def _call_eval(prim: Call, operands: Sequence[Any]) -> list[Any]:
    return call_all(prim, operands)


# d call f(x) = call df(dx, acts(x)), the activations computed by f's forward definition
@linearize_rule(Call)
def _call_linearize(
    prim: Call, primals: Sequence[Tracer], tangents: Sequence[Tangent], outs: Sequence[Tracer]
) -> PrimalAndTangent:
    return through_derivative(derivative(prim.defn), prim.defn, primals, tangents, prim.linear)


def through_derivative(
    d: LinearizedDefinition,
    defn: Definition,
    primals: Sequence[Tracer],
    tangents: Sequence[Tangent],
    linear: int = 0,
) -> PrimalAndTangent:
    """The outputs of `defn` and their tangents, by `d`, a derivative of `defn` (its own,
    or a custom_jvp rule's): one call of d's forward definition (linear in its first
    `linear` operands, as the call differentiated is), and one of its linear definition on
    the float arguments' tangents and the activations (integer outputs' tangents are zeros)."""

    forward = apply_all(Call(d.primal, linear), *primals)
    n = len(defn.outputs)
    values = forward[:n]
    if not any(v.type.dtype.is_float for v in values):
        return PrimalAndTangent(values, [Zero(v.type) for v in values])
    differentiated = wrt(defn)
    dx = [materialized(tangents[k]) for k in differentiated]
    acts = [residual(a) for a in forward[n:]]
    dys = apply_all(Call(d.linear, len(differentiated)), *dx, *acts)
    return PrimalAndTangent(values, [dy if v.type.dtype.is_float else Zero(v.type) for v, dy in zip(values, dys)])


# call is linear only through a linear callee, whose zeros the transpose rule fills in
@zero_rule(Call)
def _call_zero(prim: Call, operands: Sequence[Any]) -> Any:
    return call_all(prim, [materialized(o) if isinstance(o, Zero) else o for o in operands])


# (call df(dx, a))ᵀ ct = call dft(ct, a): one call for all outputs' cotangents
def _is_zero(operand: Any) -> bool:
    """Whether a (recomputed) operand is a constant zero, or one broadcast."""
    while isinstance(operand, Tracer) and isinstance(operand.prim, Broadcast):
        operand = operand.args[0]
    return isinstance(operand, Tracer) and isinstance(operand.prim, Constant) and not np.any(operand.prim.value)


@transpose_rule(Call)
def _call_transpose(prim: Call, cts: Sequence[Any], operands: Sequence[Any]) -> list[Any]:
    marked = tuple(k for k, o in enumerate(operands) if isinstance(o, Linear) or _is_zero(o))
    if marked != prim.linear_positions:
        # A call not declared linear whose operands carry the cotangents' values (a
        # custom_vjp's bwd calling another's, transposed for forward mode): the callee
        # with those operands first, transposed, which checks that it is linear in them.
        # A zero operand (a cotangent materialized for an output nothing reached) is one.
        order = (*marked, *(k for k in range(len(operands)) if k not in marked))
        linear = Call(reordered(prim.defn, order), len(marked))
        moved = _call_transpose(linear, cts, [operands[k] for k in order])
        back: list[Any] = [None] * len(operands)
        for position, ct in zip(order, moved, strict=True):
            back[position] = ct
        return back
    # Only what the cotangents reach: the callee without the outputs none reached, and
    # cotangents for the linear operands those outputs read (None for the others). A zero
    # entering or leaving the transposed callee would be a constant that the transposes
    # around it multiply by primal values (0 · r), not linear in the other cotangents.
    reached = tuple(k for k, ct in enumerate(cts) if ct is not None)
    values = list(operands[prim.linear :])
    defn = prim.defn if len(reached) == len(cts) else pruned(prim.defn, reached)
    read = tuple(k for k in range(prim.linear) if read_arguments(defn)[k])
    if not reached or not read:
        return [None] * len(operands)
    t = transposed(defn, prim.linear)
    t = t if len(read) == prim.linear else pruned(t, read)
    results = apply_all(Call(t, len(reached)), *(cts[k] for k in reached), *values)
    cotangents: list[Any] = [None] * len(operands)
    for k, result in zip(read, results, strict=True):
        cotangents[k] = result
    return cotangents


@batch_rule(Call)
def _call_batch(
    prim: Call, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[list[Tracer], list[int | None]]:
    size = next(o.type.shape[d] for o, d in zip(operands, dims) if d is not None)
    vdefn = batched(prim.defn, tuple(dims), size)
    results = apply_all(Call(vdefn, prim.linear), *operands)
    return results, [0] * len(results)


# A call's results are new arrays (the callee copies an output that is, or views, one of
# its arguments): the caller neither keeps the operands alive for them nor copies them again.
@codegen_rule(Call)
def _call_codegen(prim: Call, site: Site, operands: Sequence[Operand]) -> str:
    function = site.constant(compiled_fresh(prim.defn).function)
    site.fresh(False)
    return f"{function}({', '.join(map(str, operands))})"


# call: what the callee computes, its count computed once per callee
@cost_rule(Call)
def _call_cost(prim: Call, operands: Sequence[TensorType], out: Any) -> int:
    return flops(prim.defn)


# call f x = f's function under jax.jit: one StableHLO function, which every call site calls
@export_rule(Call)
def _call_export(prim: Call, operands: Sequence[Any], out: Any) -> list[Any]:
    return list(lowered(prim.defn).jitted(*operands))
