"""Common-subexpression elimination: typed Definition -> typed Definition.

A binding that repeats an earlier one (same primitive and static parameters, same
operands after renaming) is dropped and its uses read the earlier var. Operands of
commutative operations match in either order (`mul x2 x1` repeats `mul x1 x2`).
Constants match by value when small (`Primitive.cons_key`). One forward sweep with
hash-consed emission: linear time. Idempotent: the output has no repeats, so a
second run rebuilds it binding for binding.
"""

from __future__ import annotations

from typing import Any

from shax.builder import Builder
from shax.ir import Binding, Definition, Var
from shax.passes.rewrite import keep, rewrite
from shax.primitives import Add, Eq, Max, Min, Mul

# a ∘ b = b ∘ a: min and max included, since their values do not depend on operand order.
COMMUTATIVE = (Add, Mul, Min, Max, Eq)


def cse(defn: Definition) -> Definition:
    # (cons key, smaller operand id, larger operand id) -> the var computing that commutative operation
    commuted: dict[tuple[Any, ...], Var] = {}

    def reuse(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var:
        if not isinstance(binding.prim, COMMUTATIVE):
            return keep(builder, binding, args)  # the builder's hash-consing finds repeats
        x, y = args
        key = (binding.prim.cons_key(), min(x.id, y.id), max(x.id, y.id))
        found = commuted.get(key)
        if found is None:
            found = commuted[key] = keep(builder, binding, args)
        return found

    return rewrite("cse", defn, reuse, hash_cons=True)
