"""`call`: run another Definition (the callee) on the operands, as one operation.

    x5 = call linear x2 x3 x4          (the callee has one output)
    x6 = call linear[1] x2 x3 x4       (output 1 of a callee with several)

Each output a program reads is a binding of its own (`multi_output`): bindings of one
callee on the same operand vars are one call, which evaluation, codegen and transpose
run once. The callee is a static parameter held by identity (hashing a definition would
walk its bindings); printing shows every callee once, before its callers.

The rules run the stages on the callee, once per callee (`shax.callees` keeps what they
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

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from shax.ir import Definition, LinearizedDefinition, Var, type_of
from shax.primitive import Linearity, Primitive
from shax.rules.batch import batch_rule
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.cost import cost_rule
from shax.rules.evaluate import eval_rule
from shax.rules.linearize import PrimalAndTangent, Tangent, Zero, linearize_rule, materialized, residual, zero_rule
from shax.rules.transpose import transpose_rule
from shax.rules.types import type_rule
from shax.types import TensorType

if TYPE_CHECKING:
    from shax.tracer import Tracer

__all__ = ["Call"]


@attrs.frozen(repr=False)
class Call(Primitive):
    name: ClassVar[str] = "call"
    linearity: ClassVar[tuple[Linearity, ...]] = ()  # per operation: see `operand_linearity`
    multi_output: ClassVar[bool] = True
    variadic: ClassVar[bool] = True
    defn: Definition = attrs.field(eq=False)
    output: int = 0
    linear: int = 0
    # The callee's identity: a call compares and hashes by it, never by the callee's bindings.
    key: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", id(self.defn))

    @property
    def arity(self) -> int:  # type: ignore[override]
        return len(self.defn.arg_types)

    @property
    def num_outputs(self) -> int:
        return len(self.defn.outputs)

    @property
    def operand_linearity(self) -> tuple[Linearity, ...]:
        rest = len(self.defn.arg_types) - self.linear
        if self.linear == 0:
            return (Linearity.NONLINEAR,) * rest
        return (Linearity.LINEAR,) * self.linear + (Linearity.NON_DIFFERENTIABLE,) * rest

    @property
    def linear_operands(self) -> tuple[int, ...]:  # type: ignore[override]
        return tuple(range(self.linear))

    @property
    def bilinear_operands(self) -> tuple[int, ...]:  # type: ignore[override]
        return ()

    def group_key(self) -> Any:
        return (Call, self.key, self.linear)

    def forwarded(self, args: Sequence[Var], out: TensorType) -> int | None:
        """An output that is one of the callee's arguments is that operand (forward_identities)."""
        from shax.callees import passed_on

        return passed_on(self.defn)[self.output]

    def subdefinitions(self) -> tuple[Definition, ...]:
        return (self.defn,)

    def outputs_of(self, defn: Definition) -> list[Call]:
        """One call of `defn` (of the same linearity) per output of it."""
        return [Call(defn, k, self.linear) for k in range(len(defn.outputs))]

    def __repr__(self) -> str:
        return f"Call({self.defn.name}, output={self.output}, linear={self.linear})"


def call_all(prim: Call, operands: Sequence[Any]) -> list[Any]:
    """Every output of `prim`'s callee on `operands`: values on numpy values; on tracers,
    the call recorded (one node per output: hash-consing makes them one group)."""
    from shax.evaluate import evaluate
    from shax.tracer import Tracer, apply_each

    if any(isinstance(o, Tracer) for o in operands):
        return apply_each(prim.outputs_of(prim.defn), *operands)
    return evaluate(prim.defn, *operands)


@type_rule(Call)
def _call_type(prim: Call, operands: Sequence[TensorType]) -> TensorType:
    defn = prim.defn
    if not defn.is_typed:
        raise prim.fail(f"{defn.name} is untyped; run shax.stages.infer_types on it first", *operands)
    if tuple(operands) != defn.arg_types:
        declared = ", ".join(map(str, defn.arg_types))
        raise prim.fail(f"{defn.name} takes ({declared})", *operands)
    if not 0 <= prim.output < len(defn.outputs):
        raise prim.fail(f"{defn.name} has {len(defn.outputs)} output(s), no output {prim.output}", *operands)
    bound = next(b.var for b in defn.bindings if b.var.id == defn.outputs[prim.output].id)
    return type_of(bound)


@eval_rule(Call)
def _call_eval(prim: Call, operands: Sequence[Any]) -> list[Any]:
    return call_all(prim, operands)


# d call f(x) = call df(dx, acts(x)), the activations computed by f's forward definition
@linearize_rule(Call)
def _call_linearize(
    prim: Call, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer
) -> PrimalAndTangent:
    from shax.callees import derivative

    return through_derivative(derivative(prim.defn), prim.defn, prim.output, primals, tangents, out, prim.linear)


def through_derivative(
    d: LinearizedDefinition,
    defn: Definition,
    output: int,
    primals: Sequence[Tracer],
    tangents: Sequence[Tangent],
    out: Tracer,
    linear: int = 0,
) -> PrimalAndTangent:
    """Output `output` of `defn` and its tangent, by `d`, a derivative of `defn` (its own,
    or a custom_jvp rule's): a call of d's forward definition (linear in its first
    `linear` operands, as the call differentiated is), and of its linear one on the float
    arguments' tangents and the activations."""
    from shax.callees import wrt
    from shax.tracer import apply, apply_each

    forward = apply_each(Call(d.primal, 0, linear).outputs_of(d.primal), *primals)
    value = forward[output]
    if not out.type.dtype.is_float:
        return PrimalAndTangent(value, Zero(out.type))
    differentiated = wrt(defn)
    dx = [materialized(tangents[k]) for k in differentiated]
    acts = [residual(a) for a in forward[len(defn.outputs) :]]
    return PrimalAndTangent(value, apply(Call(d.linear, output, len(differentiated)), *dx, *acts))


# call is linear only through a linear callee, whose zeros the transpose rule fills in
@zero_rule(Call)
def _call_zero(prim: Call, operands: Sequence[Any]) -> Any:
    return call_all(prim, [materialized(o) if isinstance(o, Zero) else o for o in operands])[prim.output]


# (call df(dx, a))ᵀ ct = call dft(ct, a): one call for all outputs' cotangents
@transpose_rule(Call)
def _call_transpose(prim: Call, cts: Sequence[Any], operands: Sequence[Any]) -> list[Any]:
    from shax.callees import transposed
    from shax.tracer import apply_each

    defn = prim.defn
    t = transposed(defn, prim.linear)
    output_types = defn.output_types()
    filled = [materialized(Zero(ty)) if ct is None else ct for ct, ty in zip(cts, output_types)]
    values = list(operands[prim.linear :])
    results = apply_each(Call(t, 0, len(defn.outputs)).outputs_of(t), *filled, *values)
    return [*results, *([None] * len(values))]


@batch_rule(Call)
def _call_batch(prim: Call, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    from shax.callees import batched
    from shax.tracer import apply

    size = next(o.type.shape[d] for o, d in zip(operands, dims) if d is not None)
    vdefn = batched(prim.defn, tuple(dims), size)
    return apply(Call(vdefn, prim.output, prim.linear), *operands), 0


# A call's results are new arrays (the callee copies an output that is, or views, one of
# its arguments): the caller neither keeps the operands alive for them nor copies them again.
@codegen_rule(Call)
def _call_codegen(prim: Call, site: Site, operands: Sequence[Operand]) -> str:
    from shax.callees import compiled_fresh

    function = site.constant(compiled_fresh(prim.defn).function)
    site.fresh(False)
    return f"{function}({', '.join(map(str, operands))})"


# call: what the callee computes, counted once per call (not per output binding), its
# count computed once per callee
@cost_rule(Call)
def _call_cost(prim: Call, operands: Sequence[TensorType], out: TensorType) -> int:
    from shax.callees import flops

    return flops(prim.defn)
