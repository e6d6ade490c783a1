"""Sums hoisted out of loops: typed Definition -> typed Definition.

A loop that adds up a product of per-step values in a carry (`Primitive.hoisted`: a
scan's `acc = acc + dot_general(a, b)`, `shax.control.hoisting`) stacks the factors
instead, and the sum is one product of the stacks after it, contracting the step axis:

    (acc, ys) = scan body ... acc0 xs    ->    (ys, as) = scan body' ... xs
                                               p = dot_general [0] [0] [] [] as xs
                                               acc = add acc0 p

The same value (the sum taken in another order, so its rounding may differ). The loop
it rewrites is no longer marked linear: this is for programs to run (`jit` runs it),
not for linear programs to transpose. One walk over the bindings (and over each loop
body, branch and callee: a loop inside a loop's body is hoisted in it): linear time.
"""

from __future__ import annotations

from shax.core.builder import Builder
from shax.core.ir import Binding, Definition, Var, type_of
from shax.passes.nested import reaching_in
from shax.passes.rewrite import emit_typed, keep, rewrite
from shax.primitives import Add
from shax.rules.types import result_types


@reaching_in
def hoist_accumulations(defn: Definition) -> Definition:
    return rewrite("hoist_accumulations", defn, _hoisted)


def _hoisted(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
    found = binding.prim.hoisted() if binding.prim.multi_result else None
    if found is None:
        return keep(builder, binding, args)
    operands = [args[k] for k in found.operands]
    types = result_types(found.prim, *map(type_of, operands))
    loop = builder.emit_results(found.prim, operands, types, binding.source, binding.origin)
    results: list[Var] = list(binding.vars)  # each replaced below: every result is kept or a sum
    for old, new in zip(found.results, loop):
        results[old] = new
    for s in found.sums:
        terms = [args[k] if kind == "operand" else loop[k] for kind, k in s.terms]
        total = emit_typed(builder, s.total, terms, binding.source)
        results[s.result] = emit_typed(builder, Add(), [args[s.init], total], binding.source)
    return tuple(results)
