"""Materialize broadcasts: typed Definition -> typed Definition.

Elementwise operations of several operands (`Primitive.broadcasting`: add sub mul div
pow min max eq) broadcast their operands like numpy. This pass makes that explicit: an operand whose shape differs
from the result's becomes `broadcast dims shape x` first (XLA broadcast_in_dim), so
afterwards all operands of every such operation have the result's shape. One
forward sweep: linear time.
"""

from __future__ import annotations

from shax.core.builder import Builder
from shax.core.ir import Binding, Definition, Var, type_of
from shax.passes.nested import reaching_in
from shax.passes.rewrite import emit_typed, keep, rewrite
from shax.primitives import Broadcast


@reaching_in
def materialize_broadcasts(defn: Definition) -> Definition:
    def materialize(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
        if not binding.prim.broadcasting:
            return keep(builder, binding, args)
        shape = type_of(binding.var).shape
        explicit = []
        for x in args:
            rank = type_of(x).rank
            if type_of(x).shape != shape:
                # numpy aligns trailing axes: input axis i is output axis R - r + i; size-1 axes stretch.
                x = emit_typed(builder, Broadcast(range(len(shape) - rank, len(shape)), shape), (x,), binding.source)
            explicit.append(x)
        return builder.emit(binding.prim, explicit, binding.var.type, binding.source, binding.origin)

    return rewrite("materialize_broadcasts", defn, materialize)
