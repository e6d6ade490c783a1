"""Custom derivatives: `custom_jvp` and `custom_vjp` (the front ends are in
`shax.transforms.custom`), each one operation holding the function's definition and
its rule, so that printed programs show where a rule entered:

    x3 = custom_jvp log1pexp log1pexp_jvp 0 x1
    x5 = custom_vjp clip clip_fwd clip_bwd 0 x2

- `custom_jvp f rule`: `rule(primals, tangents) -> (outputs, output tangents)`, linear in
  the tangents. Linearize partially evaluates the rule (`shax.control.callees.custom_derivative`,
  built once per rule): its part at zero tangents is a forward definition (outputs, then
  the activations), its linear part a definition of the tangents and activations; the
  operation becomes calls of them, as a `call` of f becomes calls of f's derivative, so
  transposing, batching and differentiating again (the rule's own operations, written
  with the typeclass functions) are the calls'.
- `custom_vjp f fwd bwd`: `fwd(args) -> (outputs, residuals)`, `bwd(residuals, output
  cotangents) -> argument cotangents`. Linearize calls fwd, and its tangent is a
  `custom_vjp_linear bwd` operation, linear in the tangents, whose transpose calls bwd
  on the residuals and the cotangents: (custom_vjp_linear bwd dx r)ᵀ ct = bwd(r, ct).
  It has no forward meaning: evaluating it (jvp, linearize, jacfwd of a custom_vjp
  function) is a ShaxError, as in JAX.

Batching batches every held definition at the operands' batch axes (outputs at axis 0);
a batched bwd returns cotangents at axis 0, which a wrapper moves to each argument's
axis (or sums, for an unbatched argument).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from shax.control.base import Control
from shax.control.call import Call, through_derivative
from shax.control.callees import batched, batched_cotangents, compiled, custom_derivative, custom_vjp_jvp, flops, wrt
from shax.core.errors import ShaxError, ShaxTypeError
from shax.core.ir import Definition
from shax.core.primitive import Linearity, Primitive
from shax.core.printing import show_static
from shax.core.types import TensorType
from shax.rules.batch import batch_rule
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.cost import cost_rule
from shax.rules.evaluate import eval_rule
from shax.rules.export import export_rule, lowered
from shax.rules.linearize import (
    PrimalAndTangent,
    Tangent,
    Zero,
    linearize_rule,
    linearize_rules,
    materialized,
    residual,
)
from shax.rules.transpose import transpose_rule
from shax.rules.types import type_rule
from shax.stages.batch import batched_type
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer, apply_all

__all__ = ["CustomJVP", "CustomVJP", "CustomVJPLinear", "Rule"]


class Rule:
    """A rule's definition, traced when first needed: a rule may call its own function,
    whose call inside it is then recorded, not traced again (held by identity)."""

    def __init__(self, build: Callable[[], Definition], name: str, location: str | None = None) -> None:
        self._build = build
        self.name = name  # printed until it is traced
        self.location = location  # the rule function's file:line, for errors in it
        self._defn: Definition | None = None
        # (dims, size) -> this rule batched (lazily too: the rule's own calls of its
        # function hold this rule, and batching them must not batch it again)
        self._batched: dict[tuple[Any, ...], Rule] = {}

    def get(self) -> Definition:
        if self._defn is None:
            self._defn = self._build()
        return self._defn

    @property
    def traced(self) -> Definition | None:
        """The definition, if traced already (printing shows a rule's name without tracing it)."""
        return self._defn

    def batched(self, dims: tuple[int | None, ...], size: int, out_dims: tuple[int | None, ...] | None = None) -> Rule:
        """This rule over a batch; with `out_dims`, a custom_vjp bwd whose cotangents go
        to those axes (`shax.control.callees.batched_cotangents`)."""

        key = (dims, size, out_dims)
        found = self._batched.get(key)
        if found is None:
            if out_dims is None:
                found = Rule(lambda: batched(self.get(), dims, size), self.name)
            else:
                found = Rule(lambda: batched_cotangents(self.get(), dims, out_dims, size), self.name)
            self._batched[key] = found
        return found


class _Holding(Control):
    """What the custom operations share: the function's definition `defn`, whose operands
    they take and whose outputs they give, and rules shown by name until traced."""

    defn: Definition

    def operand_count(self) -> int:
        return len(self.defn.arg_types)

    @property
    def num_results(self) -> int:
        return len(self.defn.outputs)

    def show(self, names: Mapping[int, str]) -> str:
        params = [getattr(self, f.name) for f in attrs.fields(type(self)) if f.init]
        shown = [p.name if isinstance(p, Rule) and p.traced is None else show_static(_defn(p), names) for p in params]
        return " ".join([self.name, *shown])


def _defn(value: Definition | Rule) -> Definition:
    return value.get() if isinstance(value, Rule) else value


@attrs.frozen(repr=False)
class CustomJVP(_Holding):
    name: ClassVar[str] = "custom_jvp"
    defn: Definition = attrs.field(eq=False)
    rule: Rule = attrs.field(eq=False)  # (primals, tangents) -> (outputs, output tangents)
    key: tuple[int, int] = attrs.field(init=False)  # the definitions' identities

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", (id(self.defn), id(self.rule)))

    def subdefinitions(self) -> tuple[Definition, ...]:
        return (self.defn, self.rule.get())

    def runs(self) -> tuple[Definition, ...]:
        return (self.defn,)

    def __repr__(self) -> str:
        return f"CustomJVP({self.defn.name})"


@attrs.frozen(repr=False)
class CustomVJP(_Holding):
    name: ClassVar[str] = "custom_vjp"
    defn: Definition = attrs.field(eq=False)
    fwd: Rule = attrs.field(eq=False)  # args -> outputs, residuals
    bwd: Rule = attrs.field(eq=False)  # residuals, output cotangents -> argument cotangents
    key: tuple[int, int, int] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", (id(self.defn), id(self.fwd), id(self.bwd)))

    def subdefinitions(self) -> tuple[Definition, ...]:
        return (self.defn, self.fwd.get(), self.bwd.get())

    def runs(self) -> tuple[Definition, ...]:
        return (self.defn,)

    def __repr__(self) -> str:
        return f"CustomVJP({self.defn.name})"


@attrs.frozen(repr=False)
class CustomVJPLinear(Control):
    """The tangent of a custom_vjp function's output: linear in the float arguments'
    tangents (its first operands), the residuals held fixed; only its transpose runs."""

    name: ClassVar[str] = "custom_vjp_linear"
    bwd: Definition = attrs.field(eq=False)
    # Of the custom_vjp function: its name, output types, and the float arguments whose
    # tangents are the operands (the bwd's cotangents at those positions are theirs).
    fname: str = ""
    output_types: tuple[TensorType, ...] = ()
    floats: tuple[int, ...] = ()
    key: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", id(self.bwd))

    def operand_count(self) -> int:
        return len(self.floats) + self.num_residuals

    @property
    def num_residuals(self) -> int:
        return len(self.bwd.arg_types) - len(self.output_types)

    @property
    def num_results(self) -> int:
        return len(self.output_types)

    @property
    def linear_positions(self) -> tuple[int, ...]:
        return tuple(range(len(self.floats)))

    @property
    def operand_linearity(self) -> tuple[Linearity, ...]:
        # Linear in the tangents; the residuals are values a derivative of it may move too.
        return (Linearity.LINEAR,) * len(self.floats) + (Linearity.NONLINEAR,) * self.num_residuals

    def subdefinitions(self) -> tuple[Definition, ...]:
        return (self.bwd,)

    def __repr__(self) -> str:
        return f"CustomVJPLinear({self.bwd.name})"


@eval_rule(CustomJVP, CustomVJP)
def _record_or_run(prim: CustomJVP | CustomVJP, operands: Sequence[Any]) -> list[Any]:
    """Every output: on tracers the operation recorded, on values f's definition run."""

    if any(isinstance(o, Tracer) for o in operands):
        return apply_all(prim, *operands)
    return evaluate(prim.defn, *operands)


@type_rule(CustomJVP, CustomVJP)
def _holding_type(prim: CustomJVP | CustomVJP, operands: Sequence[TensorType]) -> tuple[TensorType, ...]:
    defn = prim.defn
    if tuple(operands) != defn.arg_types:
        raise prim.fail(f"{defn.name} takes ({', '.join(map(str, defn.arg_types))})", *operands)
    return defn.output_types()


@type_rule(CustomVJPLinear)
def _custom_vjp_linear_type(prim: CustomVJPLinear, operands: Sequence[TensorType]) -> tuple[TensorType, ...]:
    residuals = prim.bwd.arg_types[: prim.num_residuals]
    if not all(t.dtype.is_float for t in operands[: len(prim.floats)]):
        raise prim.fail("its tangents must be float tensors", *operands)
    if tuple(operands[len(prim.floats) :]) != residuals:
        raise prim.fail(f"{prim.bwd.name} takes residuals ({', '.join(map(str, residuals))})", *operands)
    return prim.output_types


# custom_vjp_linear bwd dx r = (bwd(r, ·))ᵀ dx, where bwd is linear in the cotangents
@eval_rule(CustomVJPLinear)
def _custom_vjp_linear_eval(prim: CustomVJPLinear, operands: Sequence[Any]) -> list[Any]:
    jvp, tangents = forward_tangents(prim, operands)
    return evaluate(jvp, *tangents, *operands[len(prim.floats) :])


def forward_tangents(prim: CustomVJPLinear, operands: Sequence[Any]) -> tuple[Definition, list[Any]]:
    """bwd transposed (the forward derivative), and the tangent per argument of the
    function it takes: the operands at the float arguments, zeros at the others."""
    jvp = _forward(prim)
    return jvp, _all_tangents(prim, jvp, operands)


def _forward(prim: CustomVJPLinear) -> Definition:
    """bwd transposed: the forward derivative, or a ShaxError where bwd is not linear."""

    try:
        return custom_vjp_jvp(prim.bwd, prim.num_residuals)
    except ShaxError as error:
        raise ShaxTypeError(
            f"{prim.fname} is a custom_vjp function whose bwd is not linear in the cotangents, so it has no "
            f"forward-mode derivative (jvp, linearize, jacfwd): use grad, vjp or jacrev, or custom_jvp ({error})"
        ) from None


# d (custom_vjp_linear bwd dx r) = d (call jvp dx r), jvp = bwd transposed (where bwd is linear)
@linearize_rule(CustomVJPLinear)
def _custom_vjp_linear_linearize(
    prim: CustomVJPLinear, primals: Sequence[Tracer], tangents: Sequence[Tangent], outs: Sequence[Tracer]
) -> Any:
    jvp = _forward(prim)
    n = len(prim.floats)
    zeros = [Zero(t) for t in jvp.arg_types]
    full_primals, full_tangents = (
        list(_all_tangents(prim, jvp, primals)),
        list(zeros[: len(zeros) - prim.num_residuals]),
    )
    for k, dx in zip(prim.floats, tangents[:n]):
        full_tangents[k] = dx
    call = Call(jvp)
    return linearize_rules[call](call, [*full_primals, *primals[n:]], [*full_tangents, *tangents[n:]], outs)


def _all_tangents(prim: CustomVJPLinear, jvp: Definition, operands: Sequence[Any]) -> list[Any]:
    """A tangent per argument of the function: the operands at the float arguments, zeros at the others."""
    tangents: list[Any] = [np.zeros(t.shape, t.dtype.numpy) for t in jvp.arg_types[: -prim.num_residuals or None]]
    for k, dx in zip(prim.floats, operands):
        tangents[k] = dx
    return tangents


# d f(x) = L(dx, acts(x)): the rule's linear part, on the activations its forward part computes
@linearize_rule(CustomJVP)
def _custom_jvp_linearize(
    prim: CustomJVP, primals: Sequence[Tracer], tangents: Sequence[Tangent], outs: Sequence[Tracer]
) -> PrimalAndTangent:
    rule = prim.rule
    shown = rule.name if rule.location is None else f"{rule.name} (defined at {rule.location})"
    d = custom_derivative(prim.defn, rule.get(), shown)
    return through_derivative(d, prim.defn, primals, tangents)


# d f(x) = custom_vjp_linear bwd (dx, residuals of fwd(x)), transposed by bwd
@linearize_rule(CustomVJP)
def _custom_vjp_linearize(
    prim: CustomVJP, primals: Sequence[Tracer], tangents: Sequence[Tangent], outs: Sequence[Tracer]
) -> PrimalAndTangent:
    fwd = prim.fwd.get()
    forward = apply_all(Call(fwd), *primals)
    values = forward[: prim.num_results]
    if not any(v.type.dtype.is_float for v in values):
        return PrimalAndTangent(values, [Zero(v.type) for v in values])
    floats = wrt(prim.defn)
    dx = [materialized(tangents[k]) for k in floats]
    res = [residual(r) for r in forward[prim.num_results :]]
    linear = CustomVJPLinear(prim.bwd.get(), prim.defn.name, prim.defn.output_types(), floats)
    dys = apply_all(linear, *dx, *res)
    return PrimalAndTangent(values, [dy if v.type.dtype.is_float else Zero(v.type) for v, dy in zip(values, dys)])


# (custom_vjp_linear bwd dx r)ᵀ ct = bwd(r, ct), at the float arguments
@transpose_rule(CustomVJPLinear)
def _custom_vjp_linear_transpose(prim: CustomVJPLinear, cts: Sequence[Any], operands: Sequence[Any]) -> list[Any]:
    filled = [materialized(Zero(t)) if ct is None else ct for ct, t in zip(cts, prim.output_types)]
    residuals = list(operands[len(prim.floats) :])
    gradients = apply_all(Call(prim.bwd), *residuals, *filled)
    return [*(gradients[k] for k in prim.floats), *([None] * len(residuals))]


@batch_rule(CustomJVP)
def _custom_jvp_batch(prim: CustomJVP, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Any, Any]:
    size = _size(operands, dims)
    defn = batched(prim.defn, tuple(dims), size)
    rule = prim.rule.batched((*dims, *dims), size)  # tangents laid out as their primals
    return _at_axis_0(CustomJVP(defn, rule), operands)


def _at_axis_0(prim: Primitive, operands: Sequence[Tracer]) -> tuple[list[Tracer], list[int | None]]:
    """Every result of `prim` on `operands`, each batched at axis 0."""

    results = apply_all(prim, *operands)
    return results, [0] * len(results)


@batch_rule(CustomVJP)
def _custom_vjp_batch(prim: CustomVJP, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Any, Any]:
    size = _size(operands, dims)
    defn = batched(prim.defn, tuple(dims), size)
    # The batched fwd and function give the residuals and outputs (so their cotangents) at axis 0.
    fwd = prim.fwd.batched(tuple(dims), size)
    bwd = prim.bwd.batched((0,) * len(prim.bwd.get().arg_types), size, out_dims=tuple(dims))
    return _at_axis_0(CustomVJP(defn, fwd, bwd), operands)


@batch_rule(CustomVJPLinear)
def _custom_vjp_linear_batch(
    prim: CustomVJPLinear, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Any, Any]:
    size = _size(operands, dims)
    n = len(prim.floats)
    arguments = len(prim.bwd.outputs)
    out_dims: list[int | None] = [None] * arguments
    for k, d in zip(prim.floats, dims[:n]):
        out_dims[k] = d
    in_dims = (*dims[n:], *(0,) * len(prim.output_types))  # the outputs' cotangents come at axis 0
    bwd = batched_cotangents(prim.bwd, in_dims, tuple(out_dims), size)
    output_types = tuple(batched_type(t, 0, size) for t in prim.output_types)
    return _at_axis_0(CustomVJPLinear(bwd, prim.fname, output_types, prim.floats), operands)


def _size(operands: Sequence[Tracer], dims: Sequence[int | None]) -> int:
    return next(o.type.shape[d] for o, d in zip(operands, dims) if d is not None)


@codegen_rule(CustomJVP, CustomVJP)
def _holding_codegen(prim: CustomJVP | CustomVJP, site: Site, operands: Sequence[Operand]) -> str:
    return _call_compiled(prim.defn, site, operands)


@codegen_rule(CustomVJPLinear)
def _custom_vjp_linear_codegen(prim: CustomVJPLinear, site: Site, operands: Sequence[Operand]) -> str:
    jvp = _forward(prim)
    names = [site.constant(t) if not isinstance(t, Operand) else t for t in _all_tangents(prim, jvp, operands)]
    residuals = operands[len(prim.floats) :]
    return f"{site.constant(compiled(jvp).function)}({', '.join(map(str, [*names, *residuals]))})"


def _call_compiled(defn: Definition, site: Site, operands: Sequence[Operand]) -> str:
    function = site.constant(compiled(defn).function)
    return f"{function}({', '.join(map(str, operands))})"


# what f computes (its rule runs only where a derivative is taken)
@cost_rule(CustomJVP, CustomVJP)
def _holding_cost(prim: CustomJVP | CustomVJP, operands: Sequence[TensorType], out: Any) -> int:
    return flops(prim.defn)


# bwd's, which its forward value (bwd transposed) and its transpose (bwd) both cost
@cost_rule(CustomVJPLinear)
def _custom_vjp_linear_cost(prim: CustomVJPLinear, operands: Sequence[TensorType], out: Any) -> int:
    return flops(prim.bwd)


# custom_jvp f rule x = f x (and custom_vjp's): the function, as a call of it; the rule
# has entered the program already where shax differentiated it
@export_rule(CustomJVP, CustomVJP)
def _custom_export(prim: CustomJVP | CustomVJP, operands: Sequence[Any], out: Any) -> list[Any]:
    return list(lowered(prim.defn).jitted(*operands))


# custom_vjp_linear bwd dx r = (bwd transposed)(dx, r)
@export_rule(CustomVJPLinear)
def _custom_vjp_linear_export(prim: CustomVJPLinear, operands: Sequence[Any], out: Any) -> list[Any]:
    jvp, tangents = forward_tangents(prim, operands)
    return list(lowered(jvp).jitted(*tangents, *operands[len(prim.floats) :]))
