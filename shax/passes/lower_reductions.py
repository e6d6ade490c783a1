"""Lower reductions to sums of slices: typed Definition -> typed Definition.

Every `reduce_sum` becomes pointwise adds of slices. For each reduced axis in
increasing order, the operand is halved: its first and second halves along the axis
(slices) are added, and so on until the axis has size 1. When a size is odd its last
row (a slice of size 1 there) is set aside and added at the end, innermost first. The
axes stay, of size 1, until one final reshape removes them:

    x :: f32[2, 2]                        s0 = slice [0,0] [1,2] x
    y = reduce_sum [0] x          ==>     s1 = slice [1,0] [2,2] x
                                          s = add s0 s1
                                          y = reshape [2] s

An axis of size 2 or 3 is thus added row by row, left to right, as the original does;
an axis of size n takes at most 3·log2(n) slices and 2·log2(n) adds, not n of each, so
a reduction of a million elements stays a few dozen bindings. An axis of size 1 needs
no adds; a reduction over an axis of size 0 is zeros
(`broadcast [] shape (fromList [] [0.0])`).
"""

from __future__ import annotations

import numpy as np

from shax.core.builder import Builder
from shax.core.ir import Binding, Definition, Var, type_of
from shax.core.types import TensorType
from shax.passes.nested import reaching_in
from shax.passes.rewrite import emit_typed, keep, reshaped, rewrite
from shax.primitives import Add, Broadcast, Constant, ReduceSum, Slice


def zeros(builder: Builder, t: TensorType, source: str | None) -> Var:
    zero = builder.emit(Constant(np.zeros((), t.dtype.numpy)), (), t.with_shape(()), source)
    return zero if t.rank == 0 else emit_typed(builder, Broadcast((), t.shape), (zero,), source)


def sum_halves(builder: Builder, x: Var, axis: int, source: str | None) -> Var:
    """Σ_i x[..., i:i+1, ...] along `axis`, by adding halves."""

    def rows(y: Var, begin: int, end: int) -> Var:
        start, stop = [0] * type_of(y).rank, list(type_of(y).shape)
        start[axis], stop[axis] = begin, end
        return emit_typed(builder, Slice(start, stop), (y,), source)

    leftovers: list[tuple[Var, int]] = []  # (a partial sum, the index of its odd last row)
    while (n := type_of(x).shape[axis]) > 1:
        half = n // 2
        if n % 2:
            leftovers.append((x, n - 1))
        x = emit_typed(builder, Add(), (rows(x, 0, half), rows(x, half, 2 * half)), source)
    for partial, last in reversed(leftovers):
        x = emit_typed(builder, Add(), (x, rows(partial, last, last + 1)), source)
    return x


@reaching_in
def lower_reductions_to_sums_of_slices(defn: Definition) -> Definition:
    def lower(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
        prim = binding.prim
        if not isinstance(prim, ReduceSum):
            return keep(builder, binding, args)
        (x,) = args
        if any(type_of(x).shape[axis] == 0 for axis in prim.axes):
            return zeros(builder, type_of(binding.var), binding.source)
        for axis in sorted(prim.axes):
            x = sum_halves(builder, x, axis, binding.source)
        return reshaped(builder, x, type_of(binding.var).shape, binding.source)

    return rewrite("lower_reductions_to_sums_of_slices", defn, lower)
