"""Common-subexpression elimination: typed Definition -> typed Definition.

A binding that repeats an earlier one (same primitive and static parameters, same
operands after renaming) is dropped and its uses read the earlier var. Operands of
commutative operations (`Primitive.commutative`) match in either order (`mul x2 x1`
repeats `mul x1 x2`).
Constants match by value when small (`Primitive.cons_key`). One forward sweep: linear
time. Idempotent: the output has no repeats, so a second run rebuilds it binding for
binding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shax.core.builder import Builder
from shax.core.ir import Binding, Definition, Var
from shax.core.primitive import Primitive
from shax.passes.nested import reaching_in
from shax.passes.rewrite import keep, rewrite


def cse_key(prim: Primitive, operands: Sequence[int]) -> tuple[Any, ...]:
    """What a repeat of `prim` on the operands numbered `operands` shares with the original."""
    if prim.commutative:
        x, y = operands
        return (prim.cons_key(), min(x, y), max(x, y))
    return (prim.cons_key(), *operands)


@reaching_in
def cse(defn: Definition) -> Definition:
    first: dict[tuple[Any, ...], Var | tuple[Var, ...]] = {}  # cse_key on output var ids -> the var computing it first

    def reuse(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
        key = cse_key(binding.prim, [a.id for a in args])
        found = first.get(key)
        if found is None:
            found = first[key] = keep(builder, binding, args)
        return found

    return rewrite("cse", defn, reuse)
