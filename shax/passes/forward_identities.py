"""Forward identities: typed Definition -> typed Definition.

A binding whose value is one of its operands, unchanged, is dropped and its uses read
that operand. Each primitive says when (`Primitive.forwarded`): a reshape, broadcast,
slice, pad or reduce_sum whose result has its operand's type (nothing reshaped,
stretched, cut, padded or summed), a transpose by the identity permutation, `select p a a`;
and arithmetic with its neutral constant (`Primitive.neutral`: `x * 1`, `1 * x`, `x / 1`,
`x + 0`, `0 + x`, `x - 0`) where the result has x's type (a VJP with its cotangent fixed
to one is full of `mul ct r`). `xk = argj` bindings stay. One forward sweep: linear time
(plus one look at each constant).
"""

from __future__ import annotations

import numpy as np

from shax.core.builder import Builder
from shax.core.ir import Binding, Definition, Var, type_of
from shax.core.primitive import Primitive
from shax.passes.nested import reaching_in
from shax.passes.rewrite import keep_one, rewrite
from shax.primitives import Constant


def forwarded(binding: Binding, args: tuple[Var, ...], neutral: dict[int, int] | None = None) -> Var | None:
    """The operand `binding` (of one result) merely passes on, if any (`neutral`: var id ->
    the number every element of that constant equals, for constants all 0 or all 1)."""
    prim = binding.prim
    if prim.neutral is not None and neutral:
        element, positions = prim.neutral
        for k in positions:
            other = args[1 - k]
            if neutral.get(args[k].id) == element and other.type == binding.var.type:
                return other
    position = prim.forwarded(args, type_of(binding.var))
    return None if position is None else args[position]


def forwarded_results(binding: Binding, args: tuple[Var, ...]) -> list[Var | None]:
    """Per result of `binding` (of several results), the operand it merely passes on, if
    any: a callee returning its argument unchanged (`forwarded_results` of the primitive)."""
    positions = binding.prim.forwarded_results() or (None,) * len(binding.vars)
    return [None if p is None else args[p] for p in positions]


def neutral_element(prim: Primitive) -> int | None:
    """0 or 1 if `prim` is a (non-bool) constant every element of which is that number."""
    if not isinstance(prim, Constant) or prim.value.dtype == bool:
        return None
    found = None
    for element in (0, 1):
        if np.all(prim.value == element):
            found = element
    return found


@reaching_in
def forward_identities(defn: Definition) -> Definition:
    neutral: dict[int, int] = {}  # var id -> 0 or 1, for the kept constants all of whose elements are that

    def forward(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
        if binding.prim.multi_result:  # kept, the results it passes on read as their operands
            kept = builder.keep_all(binding, args)
            return tuple(o or v for o, v in zip(forwarded_results(binding, args), kept))
        operand = forwarded(binding, args, neutral)
        if operand is not None:
            return operand
        var = keep_one(builder, binding, args)
        element = neutral_element(binding.prim)
        if element is not None:
            neutral[var.id] = element
        return var

    return rewrite("forward_identities", defn, forward)
