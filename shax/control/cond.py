"""`cond`: run one of several branches (typed Definitions of one signature) on the
operands, chosen by an integer index clamped to the branches, as one operation.

    x5 = cond [f_false,f_true] x1 x2                (one output; x1 is the index)
    (x6, x7) = cond [f0,f1,f2] x1 x2 x3             (branches with two outputs)

One binding defines every output of the cond (`multi_result`). The branches are printed once each, before
their users (`subdefinitions`). The rules run stages on the branches once per tuple of
branches (`shax.control.callees`, `shax.control.cond_branches`):

- linearize: a cond of the branches' forward definitions (outputs, then the union of
  the branches' activation slots, zeros in the others' slots), and a cond on the same
  index of their linear parts: d cond(i, f…)(x) = cond(i, df…)(dx, acts);
- transpose (a linear cond): a cond of the linear branches' transposes, on all its
  outputs' cotangents: (cond(i, df…)(dx, a))ᵀ ct = cond(i, dfᵀ…)(ct, a);
- batch: an unbatched index gives a cond of the batched branches; a batched index runs
  every branch on the whole batch and selects per member (as JAX does);
- codegen: a Python `if/elif/else` calling the taken branch's compiled function.

`linear` counts the leading operands after the index that the branches are linear in
(jointly; the others held fixed): 0 for a user's cond.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.control.base import Control
from shax.control.callees import batched, compiled, flops, wrt
from shax.control.cond_branches import cond_derivative, cond_transposed
from shax.core.ir import Definition
from shax.core.primitive import Linearity
from shax.core.types import TensorType
from shax.rules.batch import batch_rule, batched_at, moveaxis
from shax.rules.codegen import Operand, Site, codegen_rule
from shax.rules.cost import cost_rule
from shax.rules.evaluate import eval_rule
from shax.rules.export import export_rule, lowered
from shax.rules.linearize import PrimalAndTangent, Tangent, Zero, linearize_rule, materialized, residual, zero_rule
from shax.rules.transpose import transpose_rule
from shax.rules.types import type_rule
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer, apply_all

__all__ = ["Cond"]


@attrs.frozen(repr=False)
class Cond(Control):
    name: ClassVar[str] = "cond"
    branches: tuple[Definition, ...] = attrs.field(eq=False)
    linear: int = 0
    # The branches' identities: a cond compares and hashes by them, never by their bindings.
    key: tuple[int, ...] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", tuple(map(id, self.branches)))

    def operand_count(self) -> int:
        return 1 + len(self.branches[0].arg_types)

    @property
    def num_results(self) -> int:
        return len(self.branches[0].outputs)

    @property
    def linear_positions(self) -> tuple[int, ...]:
        return tuple(range(1, 1 + self.linear))

    @property
    def operand_linearity(self) -> tuple[Linearity, ...]:
        # the index is an integer: locally constant, whatever the branches are linear in
        return (Linearity.NON_DIFFERENTIABLE, *super().operand_linearity[1:])

    def subdefinitions(self) -> tuple[Definition, ...]:
        return self.branches

    def show(self, names: Mapping[int, str]) -> str:
        shown = ",".join(names.get(id(b), b.name) for b in self.branches)
        linear = f" linear={self.linear}" if self.linear else ""
        return f"cond [{shown}]{linear}"

    def __repr__(self) -> str:
        return f"Cond({', '.join(b.name for b in self.branches)}, linear={self.linear})"


def taken(index: Any, count: int) -> int:
    """The branch an index selects: clamped to 0..count-1, as `jax.lax.switch` does."""
    return min(max(int(index), 0), count - 1)


def run_all(prim: Cond, operands: Sequence[Any]) -> list[Any]:
    """Every output of the cond: the taken branch computed on numpy values (only it runs);
    recorded on tracers."""

    if any(isinstance(o, Tracer) for o in operands):
        return apply_all(prim, *operands)
    return evaluate(prim.branches[taken(operands[0], len(prim.branches))], *operands[1:])


# cond: index (an int or bool scalar), operands -> the outputs of every branch's type
@type_rule(Cond)
def _cond_type(prim: Cond, operands: Sequence[TensorType]) -> tuple[TensorType, ...]:
    index, args = operands[0], tuple(operands[1:])
    if index.shape or index.dtype.is_float:
        raise prim.fail(f"the index must be an int or bool scalar, not {index}", *operands)
    first = prim.branches[0]
    for b in prim.branches:
        if not b.is_typed:
            raise prim.fail(f"{b.name} is untyped", *operands)
        if b.arg_types != args:
            raise prim.fail(f"{b.name} takes ({', '.join(map(str, b.arg_types))})", *operands)
        if b.output_types() != first.output_types():
            shown = ", ".join(map(str, b.output_types()))
            raise prim.fail(f"{b.name} returns ({shown}), {first.name} {first.output_types()}", *operands)
    return first.output_types()


@eval_rule(Cond)
def _cond_eval(prim: Cond, operands: Sequence[Any]) -> list[Any]:
    return run_all(prim, operands)


# d cond(i, f…)(x) = cond(i, df…)(dx, acts), acts the union of the branches' slots
@linearize_rule(Cond)
def _cond_linearize(
    prim: Cond, primals: Sequence[Tracer], tangents: Sequence[Tangent], outs: Sequence[Tracer]
) -> PrimalAndTangent:
    d = cond_derivative(prim.branches)
    forward = apply_all(attrs.evolve(prim, branches=d.forward), *primals)
    values = forward[: prim.num_results]
    if not any(v.type.dtype.is_float for v in values):
        return PrimalAndTangent(values, [Zero(v.type) for v in values])
    differentiated = wrt(prim.branches[0])
    dx = [materialized(tangents[1 + k]) for k in differentiated]
    index = residual(primals[0])  # crossing before the activations, in operand order (as `unzip` reads them)
    acts = [residual(a) for a in forward[prim.num_results :]]
    dys = apply_all(Cond(d.linear, len(differentiated)), index, *dx, *acts)
    return PrimalAndTangent(values, [dy if v.type.dtype.is_float else Zero(v.type) for v, dy in zip(values, dys)])


# a linear cond is linear only in operands whose zeros the transpose rule fills in
@zero_rule(Cond)
def _cond_zero(prim: Cond, operands: Sequence[Any]) -> Any:
    return run_all(prim, [materialized(o) if isinstance(o, Zero) else o for o in operands])


# (cond(i, df…)(dx, a))ᵀ ct = cond(i, dfᵀ…)(ct, a): one cond for all outputs' cotangents
@transpose_rule(Cond)
def _cond_transpose(prim: Cond, cts: Sequence[Any], operands: Sequence[Any]) -> list[Any]:
    branches = cond_transposed(prim.branches, prim.linear)
    types = prim.branches[0].output_types()
    filled = [materialized(Zero(t)) if ct is None else ct for ct, t in zip(cts, types)]
    values = list(operands[1 + prim.linear :])
    results = apply_all(Cond(branches, len(types)), operands[0], *filled, *values)
    return [None, *results, *([None] * len(values))]


# batch: an unbatched index takes a cond of the batched branches; a batched one every
# branch on the whole batch, then member b's output is branch clamp(i[b])'s
@batch_rule(Cond)
def _cond_batch(
    prim: Cond, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[list[Tracer], list[int | None]]:
    size = next(o.type.shape[d] for o, d in zip(operands, dims) if d is not None)
    args, arg_dims = list(operands[1:]), tuple(dims[1:])
    if dims[0] is None:
        vbranches = tuple(batched(b, arg_dims, size) for b in prim.branches)
        results = apply_all(attrs.evolve(prim, branches=vbranches), *operands)
        return results, [0] * len(results)
    if any(d is not None for d in arg_dims):
        outs = [evaluate(batched(b, arg_dims, size), *args) for b in prim.branches]
    else:
        outs = [[batched_at(o, None, 0, size) for o in evaluate(b, *args)] for b in prim.branches]
    index: Tracer = tc.convert_element_type(moveaxis(operands[0], dims[0], 0), np.int32)
    results = []
    for j, first in enumerate(outs[0]):
        result, shape = first, tc.shape(first)
        for k in range(1, len(outs)):
            chosen = tc.broadcast(index >= np.int32(k), (0,), shape)
            result = tc.select(chosen, outs[k][j], result)
        results.append(result)
    return results, [0] * len(results)


# codegen: `if i <= 0: f0(x) elif i == 1: f1(x) … else: fn(x)`, each branch compiled once
@codegen_rule(Cond)
def _cond_codegen(prim: Cond, site: Site, operands: Sequence[Operand]) -> str:
    functions = [site.constant(compiled(b).function) for b in prim.branches]
    s, index = f"s{site.var}", operands[0].expr
    call = ", ".join(str(o) for o in operands[1:])
    if len(functions) == 1:
        return f"{functions[0]}({call})"
    lines = [f"if {index} <= 0:", f"    {s}_o = {functions[0]}({call})"]
    for k, f in enumerate(functions[1:-1], start=1):
        lines += [f"elif {index} == {k}:", f"    {s}_o = {f}({call})"]
    lines += ["else:", f"    {s}_o = {functions[-1]}({call})", f"{s}_o"]
    return "\n".join(lines)


# cond: the costliest branch's flops (which one runs is data)
@cost_rule(Cond)
def _cond_cost(prim: Cond, operands: Sequence[TensorType], out: Any) -> int:
    return max(flops(b) for b in prim.branches)


# cond: lax.switch of the branches' functions (which clamps the index, as shax does), traced
# inline as JAX's own branches are
@export_rule(Cond)
def _cond_export(prim: Cond, operands: Sequence[Any], out: Any) -> list[Any]:
    from jax import lax

    functions = [lowered(b) for b in prim.branches]
    index = lax.convert_element_type(operands[0], np.int32)
    return list(lax.switch(index, [lambda *a, f=f: tuple(f(*a)) for f in functions], *operands[1:]))
