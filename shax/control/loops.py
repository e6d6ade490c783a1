"""Structured loops: `scan` and `while`, each one operation holding its body as a typed
Definition (printed once, before its users: `subdefinitions`).

    (x5, x6) = scan body length=10 consts=1 carry=1 x1 x2 x3
    (x7, x8) = while cond body consts=1 x1 x2 x3

Operands are the loop-invariant consts, then the carry, then (scan) the stacked xs:

    scan:  body(consts, carry, x[i]) -> (carry, y[i]) for i in 0..length-1 (or reversed);
           outputs: the final carry, then each y stacked along a new leading axis;
    while: while cond(consts, carry): carry = body(consts, carry); outputs: the carry.

One binding defines every output of the loop (`multi_result`), which runs once. The rules run stages on the body,
once per body (`shax.control.callees`, `shax.control.loop_bodies`):

- linearize (scan): a scan of the body's forward part, which also stacks the activations
  its derivative reads, and a linear scan of the body's linear part over them;
- transpose (a linear scan): a scan the other way over the stacked activations, the
  consts' cotangents summed in its carry;
- linearize (while): the loop of (carry, tangent) pairs; its transpose is an error (the
  trip count is not known before the loop runs: use scan or fori_loop);
- batch: the loop of the batched body; a while loop runs while any member's predicate
  holds, members done keeping their carry;
- codegen: a Python `for` or `while` calling the body's compiled function.

`linear` marks the operands a loop is linear in (the `linear` after a linear scan's first
`fixed` consts, the activations computed once; the tangents of a jvp while loop), the
others held fixed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
import numpy as np

from shax.control.base import Control
from shax.control.callees import batched, compiled_body, flops, passed_on, pruned
from shax.control.hoisting import hoisting
from shax.control.loop_bodies import scan_derivative, scan_transposed, while_batched, while_jvp
from shax.core.errors import ShaxTypeError
from shax.core.ir import Definition
from shax.core.primitive import Hoisting, Primitive
from shax.core.types import TensorType, bool_
from shax.rules.batch import batch_rule, batched_at, moveaxis
from shax.rules.codegen import Operand, Site, codegen_rule, dtype_source, shape_source
from shax.rules.cost import cost_rule
from shax.rules.evaluate import eval_rule
from shax.rules.export import export_rule, lowered
from shax.rules.linearize import PrimalAndTangent, Tangent, Zero, linearize_rule, materialized, residual, zero_rule
from shax.rules.transpose import transpose_rule
from shax.rules.types import type_rule
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer, apply_all

__all__ = ["Scan", "While"]


class _Loop(Control):
    """What scan and while share: the body takes the operands and gives the results."""

    body: Definition

    def operand_count(self) -> int:
        return len(self.body.arg_types)

    @property
    def num_results(self) -> int:
        return len(self.body.outputs)


@attrs.frozen(repr=False)
class Scan(_Loop):
    name: ClassVar[str] = "scan"
    body: Definition = attrs.field(eq=False)
    length: int
    reverse: bool = False
    consts: int = 0
    carry: int = 0
    linear: int = 0  # the body is linear in the `linear` arguments after the first `fixed`, the others fixed
    fixed: int = 0  # consts held fixed ahead of the linear operands (activations computed once)
    # The body's identity: a scan compares and hashes by it, never by the body's bindings.
    key: int = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", id(self.body))

    @property
    def linear_positions(self) -> tuple[int, ...]:
        return tuple(range(self.fixed, self.fixed + self.linear))

    def subdefinitions(self) -> tuple[Definition, ...]:
        return (self.body,)

    def pruned(self, read: Sequence[bool]) -> tuple[Primitive, tuple[int, ...]] | None:
        """A scan of the body without the ys nothing reads (its carries stay: the next
        iteration reads them), built once per body and outputs kept."""
        kept = tuple(k for k, r in enumerate(read) if r or k < self.carry)
        return None if len(kept) == len(read) else (attrs.evolve(self, body=pruned(self.body, kept)), kept)

    def hoisted(self) -> Hoisting | None:
        return hoisting(self)

    def show(self, names: Mapping[int, str]) -> str:
        params = [f"length={self.length}", f"consts={self.consts}", f"carry={self.carry}"]
        params += ["reverse"] * self.reverse + [f"linear={self.linear}"] * bool(self.linear)
        params += [f"fixed={self.fixed}"] * bool(self.fixed)
        return f"scan {names.get(self.key, self.body.name)} {' '.join(params)}"

    def __repr__(self) -> str:
        return f"Scan({self.body.name}, length={self.length})"


@attrs.frozen(repr=False)
class While(_Loop):
    name: ClassVar[str] = "while"
    cond: Definition = attrs.field(eq=False)
    body: Definition = attrs.field(eq=False)
    consts: int = 0
    linear: tuple[int, ...] = ()  # the operands it is linear in (a jvp loop's tangents)
    key: tuple[int, int] = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "key", (id(self.cond), id(self.body)))

    @property
    def linear_positions(self) -> tuple[int, ...]:
        return self.linear

    def subdefinitions(self) -> tuple[Definition, ...]:
        return (self.cond, self.body)

    def show(self, names: Mapping[int, str]) -> str:
        cond, body = names.get(self.key[0], self.cond.name), names.get(self.key[1], self.body.name)
        linear = f" linear={list(self.linear)}" if self.linear else ""
        return f"while {cond} {body} consts={self.consts}{linear}"

    def __repr__(self) -> str:
        return f"While({self.cond.name}, {self.body.name})"


def run_all(prim: Scan | While, operands: Sequence[Any]) -> list[Any]:
    """Every output of the loop: computed on numpy values; recorded on tracers."""

    if any(isinstance(o, Tracer) for o in operands):
        return apply_all(prim, *operands)
    return _run_scan(prim, operands) if isinstance(prim, Scan) else _run_while(prim, operands)


def _run_scan(prim: Scan, operands: Sequence[Any]) -> list[Any]:
    start = prim.consts + prim.carry
    consts, carry, xs = list(operands[: prim.consts]), list(operands[prim.consts : start]), operands[start:]
    ys = [np.empty((prim.length, *t.shape), t.dtype.numpy) for t in prim.body.output_types()[prim.carry :]]
    for i in range(prim.length - 1, -1, -1) if prim.reverse else range(prim.length):
        outputs = evaluate(prim.body, *consts, *carry, *(x[i] for x in xs))
        carry = outputs[: prim.carry]
        for y, value in zip(ys, outputs[prim.carry :]):
            y[i] = value
    return [*carry, *ys]


def _run_while(prim: While, operands: Sequence[Any]) -> list[Any]:
    consts, carry = list(operands[: prim.consts]), list(operands[prim.consts :])
    while evaluate(prim.cond, *consts, *carry)[0]:
        carry = evaluate(prim.body, *consts, *carry)
    return carry


def _expect(prim: Primitive, what: str, declared: Sequence[TensorType], given: Sequence[TensorType]) -> None:
    if tuple(declared) != tuple(given):
        shown = ", ".join(map(str, declared))
        raise prim.fail(f"{what} takes ({shown})", *given)


# scan: body (consts, carry, x slices) -> (carry, y slices); outputs carry, then stacked ys
@type_rule(Scan)
def _scan_type(prim: Scan, operands: Sequence[TensorType]) -> tuple[TensorType, ...]:
    body = prim.body
    if not body.is_typed:
        raise prim.fail(f"{body.name} is untyped", *operands)
    start = prim.consts + prim.carry
    if prim.length < 0 or start > len(operands) or prim.carry > len(body.outputs):
        raise prim.fail(f"length {prim.length}, {prim.consts} consts and {prim.carry} carries do not fit", *operands)
    for x in operands[start:]:
        if not x.shape or x.shape[0] != prim.length:
            raise prim.fail(f"xs must have a leading axis of the length {prim.length}", *operands)
    slices = [TensorType(x.dtype, x.shape[1:]) for x in operands[start:]]
    _expect(prim, body.name, body.arg_types, [*operands[:start], *slices])
    outputs = body.output_types()
    _expect(prim, f"{body.name}'s carry output", operands[prim.consts : start], outputs[: prim.carry])
    return (*outputs[: prim.carry], *(TensorType(t.dtype, (prim.length, *t.shape)) for t in outputs[prim.carry :]))


# while: cond (consts, carry) -> bool[], body (consts, carry) -> carry; outputs the carry
@type_rule(While)
def _while_type(prim: While, operands: Sequence[TensorType]) -> tuple[TensorType, ...]:
    for d in (prim.cond, prim.body):
        if not d.is_typed:
            raise prim.fail(f"{d.name} is untyped", *operands)
        _expect(prim, d.name, d.arg_types, operands)
    if prim.cond.output_types() != (TensorType(bool_, ()),):
        raise prim.fail(f"{prim.cond.name} must return one bool[], not {prim.cond.output_types()}", *operands)
    _expect(prim, f"{prim.body.name}'s output", operands[prim.consts :], prim.body.output_types())
    return tuple(operands[prim.consts :])


@eval_rule(Scan)
def _scan_eval(prim: Scan, operands: Sequence[Any]) -> list[Any]:
    return run_all(prim, operands)


@eval_rule(While)
def _while_eval(prim: While, operands: Sequence[Any]) -> list[Any]:
    return run_all(prim, operands)


def _float_positions(types: Sequence[TensorType]) -> list[int]:
    return [k for k, t in enumerate(types) if t.dtype.is_float]


# d scan f (c, h, xs) = scan df ((a, dc), dh, (dxs, acts)): acts stacked by the scan of f's
# forward part, a (the activations of the consts alone) computed once
@linearize_rule(Scan)
def _scan_linearize(
    prim: Scan, primals: Sequence[Tracer], tangents: Sequence[Tangent], outs: Sequence[Tracer]
) -> PrimalAndTangent:
    d = scan_derivative(prim.body, prim.consts, prim.carry)
    forward = apply_all(attrs.evolve(prim, body=d.forward), *primals)
    n = prim.num_results
    values = forward[:n]
    if not any(v.type.dtype.is_float for v in values):
        return PrimalAndTangent(values, [Zero(v.type) for v in values])
    types = prim.body.arg_types
    start = prim.consts + prim.carry
    tangent_of = [(k, materialized(tangents[k])) for k in _float_positions(types)]
    dc = [t for k, t in tangent_of if k < prim.consts]
    dh = [t for k, t in tangent_of if prim.consts <= k < start]
    dx = [t for k, t in tangent_of if k >= start]
    # The activations of the consts alone, computed once: consts every iteration reads.
    invariant = [residual(a) for a in evaluate(d.invariant, *primals[: prim.consts])]
    # An activation that is the step's x slice is the xs themselves, not stacked again (dce drops that y).
    slices = [k if k is not None and k >= start else None for k in passed_on(d.forward)[n:]]
    stacked = [residual(a if k is None else primals[k]) for k, a in zip(slices, forward[n:])]
    fixed = len(invariant)
    linear = Scan(d.linear, prim.length, prim.reverse, fixed + len(dc), len(dh), len(dc) + len(dh) + len(dx), fixed)
    dys = iter(apply_all(linear, *invariant, *dc, *dh, *dx, *stacked))  # the float outputs' tangents
    return PrimalAndTangent(values, [next(dys) if v.type.dtype.is_float else Zero(v.type) for v in values])


# a linear scan is linear only in operands whose zeros the transpose rule fills in
@zero_rule(Scan)
def _scan_zero(prim: Scan, operands: Sequence[Any]) -> Any:
    return run_all(prim, [materialized(o) if isinstance(o, Zero) else o for o in operands])


# (scan g ((a, dc), dh, (dx, acts)))ᵀ (ct_h, ct_ys) = reversed scan gᵀ ((a, acc = 0), ct_h, (ct_ys, acts)):
# the carry's cotangent runs backwards, the consts' add up, the xs' are stacked
@transpose_rule(Scan)
def _scan_transpose(prim: Scan, cts: Sequence[Any], operands: Sequence[Any]) -> list[Any]:
    body = prim.body
    tbody = scan_transposed(body, prim.fixed, prim.linear, prim.consts, prim.carry)
    types = body.output_types()
    filled = [
        materialized(Zero(t if k < prim.carry else TensorType(t.dtype, (prim.length, *t.shape)))) if ct is None else ct
        for k, (ct, t) in enumerate(zip(cts, types))
    ]
    fixed = list(operands[: prim.fixed])
    acc = [materialized(Zero(t)) for t in body.arg_types[prim.fixed : prim.consts]]
    acts = list(operands[prim.fixed + prim.linear :])
    carried = len(acc) + prim.carry
    linear = carried + len(types) - prim.carry
    scan = Scan(tbody, prim.length, not prim.reverse, prim.fixed, carried, linear, prim.fixed)
    results = apply_all(scan, *fixed, *acc, *filled, *acts)
    return [*([None] * prim.fixed), *results, *([None] * len(acts))]


# d while f (c, h) = the loop of (h, dh) under f and its derivative (forward mode only)
@linearize_rule(While)
def _while_linearize(
    prim: While, primals: Sequence[Tracer], tangents: Sequence[Tangent], outs: Sequence[Tracer]
) -> list[Tangent]:
    if not any(o.type.dtype.is_float for o in outs):
        return [Zero(o.type) for o in outs]
    types = prim.body.arg_types
    j = while_jvp(prim.cond, prim.body, prim.consts)
    dc = [materialized(tangents[k]) for k in _float_positions(types[: prim.consts])]
    dh = [materialized(tangents[prim.consts + k]) for k in _float_positions(types[prim.consts :])]
    n = len(types)
    linear = (*range(len(dc)), *range(len(dc) + n, len(dc) + n + len(dh)))
    loop = While(j.cond, j.body, len(dc) + prim.consts, linear)
    operands = [*dc, *(residual(p) for p in primals), *dh]
    # The loop's outputs: the carry, then the float carries' tangents.
    dys = iter(apply_all(loop, *operands)[len(types) - prim.consts :])
    return [next(dys) if o.type.dtype.is_float else Zero(o.type) for o in outs]


@zero_rule(While)
def _while_zero(prim: While, operands: Sequence[Any]) -> Any:
    return run_all(prim, [materialized(o) if isinstance(o, Zero) else o for o in operands])


@transpose_rule(While)
def _while_transpose(prim: While, cts: Sequence[Any], operands: Sequence[Any]) -> list[Any]:
    raise ShaxTypeError(
        "while_loop: reverse-mode differentiation (grad, vjp) of a while loop is not supported, its trip "
        "count being known only when it runs; use scan or fori_loop with a fixed trip count (Python ints)"
    )


# batch: the carry is batched at axis 0 (broadcast where it is not), xs at axis 1, so the
# body's slices are batched at 0; the body batched so gives carry and y slices at 0
@batch_rule(Scan)
def _scan_batch(
    prim: Scan, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[list[Tracer], list[int | None]]:
    size = next(o.type.shape[d] for o, d in zip(operands, dims) if d is not None)
    start = prim.consts + prim.carry
    consts = list(operands[: prim.consts])
    carry = [batched_at(x, d, 0, size) for x, d in zip(operands[prim.consts : start], dims[prim.consts : start])]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(operands[start:], dims[start:])]
    body_dims = (*dims[: prim.consts], *([0] * prim.carry), *(None if d is None else 0 for d in dims[start:]))
    vbody = batched(prim.body, body_dims, size)
    results = apply_all(attrs.evolve(prim, body=vbody), *consts, *carry, *xs)
    return results, [0 if k < prim.carry else 1 for k in range(len(results))]


@batch_rule(While)
def _while_batch(
    prim: While, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[list[Tracer], list[int | None]]:
    size = next(o.type.shape[d] for o, d in zip(operands, dims) if d is not None)
    consts = list(operands[: prim.consts])
    carry = [batched_at(x, d, 0, size) for x, d in zip(operands[prim.consts :], dims[prim.consts :])]
    body_dims = (*dims[: prim.consts], *([0] * len(carry)))
    v = while_batched(prim.cond, prim.body, body_dims, size)
    results = apply_all(attrs.evolve(prim, cond=v.cond, body=v.body), *consts, *carry)
    return results, [0] * len(results)


# codegen: a Python loop calling the body's compiled function (untested arguments: the
# loop passes values of its types), the carry in locals, each distinct y written in place
# (a y that is the body's x slice is the xs themselves, a y it returns twice one array)
@codegen_rule(Scan)
def _scan_codegen(prim: Scan, site: Site, operands: Sequence[Operand]) -> str:
    body = site.constant(compiled_body(prim.body).function)
    s = f"s{site.var}"
    start = prim.consts + prim.carry
    carry = [f"{s}_c{k}" for k in range(prim.carry)]
    targets, results, allocated, writes = list(carry), list(carry), [], []
    stacked: dict[int, str] = {}  # the body's output var id -> the array stacking it
    argument, outputs = passed_on(prim.body), prim.body.outputs
    for j, t in enumerate(prim.body.output_types()[prim.carry :]):
        k, var = prim.carry + j, outputs[prim.carry + j].id
        passed = argument[k]
        if passed is not None and passed >= start:  # y[i] = x[i]: the xs
            targets.append("_")
            results.append(operands[passed].expr)
        elif var in stacked:
            targets.append("_")
            results.append(stacked[var])
        else:
            y = stacked[var] = f"{s}_y{j}"
            targets.append(f"{s}_o{j}")
            results.append(y)
            allocated.append(f"{y} = np.empty({shape_source((prim.length, *t.shape))}, {dtype_source(t.dtype)})")
            writes.append(f"    {y}[{s}_i] = {s}_o{j}")
    order = f"range({prim.length - 1}, -1, -1)" if prim.reverse else f"range({prim.length})"
    args = [o.expr for o in operands[: prim.consts]] + carry + [f"{o.expr}[{s}_i]" for o in operands[start:]]
    return "\n".join(
        [
            *(f"{c} = {o.expr}" for c, o in zip(carry, operands[prim.consts : start])),
            *allocated,
            f"for {s}_i in {order}:",
            f"    [{', '.join(targets)}] = {body}({', '.join(args)})",
            *writes,
            f"[{', '.join(results)}]",
        ]
    )


@codegen_rule(While)
def _while_codegen(prim: While, site: Site, operands: Sequence[Operand]) -> str:
    cond, body = site.constant(compiled_body(prim.cond).function), site.constant(compiled_body(prim.body).function)
    s = f"s{site.var}"
    carry = [f"{s}_c{k}" for k in range(len(operands) - prim.consts)]
    args = ", ".join([*(o.expr for o in operands[: prim.consts]), *carry])
    return "\n".join(
        [
            *(f"{c} = {o.expr}" for c, o in zip(carry, operands[prim.consts :])),
            f"while {cond}({args})[0]:",
            f"    [{', '.join(carry)}] = {body}({args})",
            f"[{', '.join(carry)}]",
        ]
    )


# scan: its body's flops, once per iteration
@cost_rule(Scan)
def _scan_cost(prim: Scan, operands: Sequence[TensorType], out: Any) -> int:
    return prim.length * flops(prim.body)


# while: one iteration's (cond and body): the trip count is data, known only when it runs
@cost_rule(While)
def _while_cost(prim: While, operands: Sequence[TensorType], out: Any) -> int:
    return flops(prim.cond) + flops(prim.body)


# Export. scan: lax.scan of the body's function, the consts closed over; while:
# lax.while_loop of the cond's and body's functions. The bodies are traced inline, as JAX's
# own scan traces its step: the loop's jaxpr is JAX's for the same program (where a nested
# jax.jit would only add a call per step).
@export_rule(Scan)
def _scan_export(prim: Scan, operands: Sequence[Any], out: Any) -> list[Any]:
    from jax import lax

    body = lowered(prim.body)
    consts, carry, xs = (
        operands[: prim.consts],
        operands[prim.consts : prim.consts + prim.carry],
        operands[prim.consts + prim.carry :],
    )

    def step(c: tuple[Any, ...], x: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        results = body(*consts, *c, *x)
        return tuple(results[: prim.carry]), tuple(results[prim.carry :])

    final, ys = lax.scan(step, tuple(carry), tuple(xs), length=prim.length, reverse=prim.reverse)
    return [*final, *ys]


@export_rule(While)
def _while_export(prim: While, operands: Sequence[Any], out: Any) -> list[Any]:
    from jax import lax

    cond, body = lowered(prim.cond), lowered(prim.body)
    consts, carry = operands[: prim.consts], tuple(operands[prim.consts :])
    final = lax.while_loop(lambda c: cond(*consts, *c)[0], lambda c: tuple(body(*consts, *c)), carry)
    return list(final)
