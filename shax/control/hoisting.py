"""Sums a scan carries, hoisted out of it (`Scan.hoisted`, which the pass
`shax.passes.hoist_accumulations` runs).

A carry read only by its own update `acc = acc + dot_general(a, b)`, where a and b are
per-step values, ends the loop as

    acc_L = acc_0 + Σ_i dot_general(a_i, b_i) = acc_0 + dot_general(A, B)

where A and B stack the a_i and b_i along a new leading axis, which the product then
contracts too (dot_general is bilinear: the sum of the products is the product of the
stacks over the step axis). So the loop stacks a and b instead of carrying acc (a factor
that is an x slice is the xs themselves; one the body returns as a y, that y) and one
product after it replaces a product and a sum per step. A gradient's backward loop
adds an outer product per step (`gW += outer(h, dp)`): that becomes one matrix product
over the steps, which BLAS and XLA run vectorized, where XLA's CPU backend compiles the
32×32 rank-1 update of each step as scalar code.

Done only where it stores less per step than the product it saves: the elements of
the factors not stacked already are fewer than the product's (a matrix-vector
product's sum stays in the loop), and only products: a plain sum `acc + v` stays too,
XLA's sum over the step axis after the loop costing more than an add per step. The loop
adds up in another order: the same sum, its
rounding may differ. The rewritten loop is not marked linear (a factor it stacks may be
an activation): it is a program to run, not a linear program to transpose.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import attrs

from shax.core.builder import Builder
from shax.core.derived import derived
from shax.core.ir import Binding, Definition, Var, type_of
from shax.core.primitive import Arg, Hoisted, Hoisting, Primitive
from shax.core.well_typed import mark_well_typed
from shax.passes import cleanup
from shax.primitives import Add, DotGeneral

if TYPE_CHECKING:
    from shax.control.loops import Scan


@attrs.frozen
class _Sum:
    carry: int  # which carry
    dropped: tuple[Binding, ...]  # acc' = add acc v, and v = dot_general a b if the sum is a product's
    total: Primitive  # of the stacked terms, after the loop: the product over the steps too
    terms: tuple[Var, ...]  # a and b, or v


@attrs.frozen
class _Plan:
    body: Definition  # without the carries summed, returning the terms stacked after its ys
    sums: tuple[tuple[int, Primitive, tuple[tuple[str, int], ...]], ...]  # per carry summed: it, total, terms


def hoisting(scan: Scan) -> Hoisting | None:
    """`Primitive.hoisted` of a scan: planned once per body, consts and carry count."""
    (plan,) = derived(scan.body, ("hoisting", scan.consts, scan.carry), lambda: (_plan(scan),))
    if plan is None:
        return None
    summed = {k for k, _, _ in plan.sums}
    kept_carries = [k for k in range(scan.carry) if k not in summed]
    prim = attrs.evolve(scan, body=plan.body, carry=len(kept_carries), linear=0, fixed=0)
    operands = tuple(k for k in range(scan.operand_count()) if k - scan.consts not in summed)
    results = (*kept_carries, *range(scan.carry, scan.num_results))
    sums = tuple(Hoisted(k, scan.consts + k, total, terms) for k, total, terms in plan.sums)
    return Hoisting(prim, operands, results, sums)


def _plan(scan: Scan) -> _Plan | None:
    body, consts, carry = scan.body, scan.consts, scan.carry
    start = consts + carry
    binding_of = {v.id: b for b in body.bindings for v in b.vars}
    type_at = {v.id: type_of(v) for b in body.bindings for v in b.vars}  # (a returned var may be unannotated)
    uses = Counter([a.id for b in body.bindings for a in b.args] + [v.id for v in body.outputs])
    arg_var = {b.prim.index: b.vars[0] for b in body.bindings if isinstance(b.prim, Arg)}
    index_of = {v.id: k for k, v in arg_var.items()}
    stacked = {v.id for v in body.outputs[carry:]} | {v.id for v in arg_var.values() if index_of[v.id] >= start}
    adds: list[tuple[int, Binding, Var]] = []  # per carry updated by an add: it, the add, the other addend
    for k in range(carry):
        acc, out = arg_var.get(consts + k), body.outputs[k]
        add = binding_of.get(out.id)
        if acc is None or add is None or not isinstance(add.prim, Add) or uses[acc.id] != 1 or uses[out.id] != 1:
            continue
        x, y = add.args
        v = y if x.id == acc.id else x if y.id == acc.id else None
        if v is not None and type_at[v.id] == type_at[out.id] and type_at[v.id].dtype.is_float:
            adds.append((k, add, v))
    found: list[_Sum] = []
    for k, add, v in adds:
        product = binding_of.get(v.id)
        if product is None or not isinstance(product.prim, DotGeneral) or uses[v.id] != 1:
            continue
        factors = product.args
        if any(index_of.get(f.id, start) < consts for f in factors):
            continue  # a const factor: the sum is that factor's product with a sum, not a stack's
        if sum(type_at[f.id].size for f in factors if f.id not in stacked) < type_at[v.id].size:
            found.append(_Sum(k, (add, product), _over_steps(product.prim), tuple(factors)))
            stacked.update(f.id for f in factors)
    return _planned(scan, found) if found else None


def _over_steps(dot: DotGeneral) -> DotGeneral:
    """`dot` of stacks: the step axis leads each, contracted first, every other axis one further on."""
    lc, rc = ((0, *(d + 1 for d in dims)) for dims in dot.dims[:2])
    lb, rb = (tuple(d + 1 for d in dims) for dims in dot.dims[2:])
    return DotGeneral(lc, rc, lb, rb)


def _planned(scan: Scan, found: list[_Sum]) -> _Plan:
    """The body without the summed carries, their updates and products, returning each
    term not stacked already as one more y."""
    body, consts, carry = scan.body, scan.consts, scan.carry
    start = consts + carry
    removed_args = {consts + s.carry for s in found}
    dropped = {id(b) for s in found for b in s.dropped}
    position = {old: new for new, old in enumerate(k for k in range(len(body.arg_types)) if k not in removed_args)}
    builder = Builder()
    new_var: dict[int, Var] = {}  # body var id -> its var in the new body
    index_of: dict[int, int] = {}  # var id of an argument of the body -> its index
    for b in body.bindings:
        if isinstance(b.prim, Arg):
            index_of[b.vars[0].id] = b.prim.index
            if b.prim.index in removed_args:
                continue
            new_var[b.vars[0].id] = builder.emit(Arg(position[b.prim.index]), (), b.vars[0].type, b.source, b.origin)
        elif id(b) not in dropped:
            new_var.update(zip([v.id for v in b.vars], builder.keep_all(b, [new_var[a.id] for a in b.args])))
    kept_carries = [out for k, out in enumerate(body.outputs[:carry]) if consts + k not in removed_args]
    outputs = [new_var[v.id] for v in (*kept_carries, *body.outputs[carry:])]
    result_of = {v.id: len(kept_carries) + j for j, v in reversed(list(enumerate(body.outputs[carry:])))}

    def source(term: Var) -> tuple[str, int]:
        if index_of.get(term.id, -1) >= start:  # an x slice: the xs operand
            return ("operand", index_of[term.id])
        if term.id not in result_of:
            result_of[term.id] = len(outputs)
            outputs.append(new_var[term.id])
        return ("result", result_of[term.id])

    sums = tuple((s.carry, s.total, tuple(map(source, s.terms))) for s in found)
    arg_types = tuple(t for k, t in enumerate(body.arg_types) if k not in removed_args)
    new_body = cleanup(mark_well_typed(builder.build(body.name, arg_types, outputs)))
    return _Plan(new_body, sums)
