"""Forward identities: typed Definition -> typed Definition.

A binding whose value is one of its operands, unchanged, is dropped and its uses read
that operand: a reshape, broadcast, slice, pad or reduce_sum whose result has its
operand's type (same shape: nothing reshaped, stretched, cut, padded or summed), a
transpose by the identity permutation, and `select p a a`. `xk = argj` bindings stay.
One forward sweep: linear time.
"""

from __future__ import annotations

from shax.builder import Builder
from shax.ir import Binding, Definition, Var
from shax.passes.rewrite import keep, rewrite
from shax.primitives import Broadcast, Pad, ReduceSum, Reshape, Select, Slice, Transpose

# These change a value only by changing its shape: same type in and out means identity.
SHAPE_PRESERVING_IS_IDENTITY = (Reshape, Broadcast, Slice, Pad, ReduceSum)


def forwarded(binding: Binding, args: tuple[Var, ...]) -> Var | None:
    """The operand `binding` merely passes on, if any."""
    prim = binding.prim
    if isinstance(prim, SHAPE_PRESERVING_IS_IDENTITY) and args[0].type == binding.var.type:
        return args[0]
    # Output axis i is input axis perm[i] = i.
    if isinstance(prim, Transpose) and prim.perm == tuple(range(len(prim.perm))):
        return args[0]
    # select p a a = a whatever p holds.
    if isinstance(prim, Select) and args[1] == args[2]:
        return args[1]
    return None


def forward_identities(defn: Definition) -> Definition:
    def forward(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var:
        operand = forwarded(binding, args)
        return keep(builder, binding, args) if operand is None else operand

    return rewrite("forward_identities", defn, forward)
