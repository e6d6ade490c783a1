"""Lower reductions to sums of slices: typed Definition -> typed Definition.

Every `reduce_sum` becomes pointwise adds of slices. For each reduced axis in
increasing order, the operand is cut into its rows along that axis (slices of size 1
there) and the rows are added left to right; the axis stays, of size 1, until one
final reshape removes the reduced axes:

    x :: f32[2, 2]                        s0 = slice [0,0] [1,2] x
    y = reduce_sum [0] x          ==>     s1 = slice [1,0] [2,2] x
                                          s = add s0 s1
                                          y = reshape [2] s

An axis of size 1 needs no adds; a reduction over an axis of size 0 is zeros
(`broadcast [] shape (fromList [] [0.0])`). Linear in the size of the output program.
"""

from __future__ import annotations

import numpy as np

from shax.builder import Builder
from shax.ir import Binding, Definition, Var, type_of
from shax.passes.rewrite import emit_typed, keep, reshaped, rewrite
from shax.primitives import Add, Broadcast, Constant, ReduceSum, Slice
from shax.types import TensorType


def zeros(builder: Builder, t: TensorType, source: str | None) -> Var:
    zero = builder.emit(Constant(np.zeros((), t.dtype.numpy)), (), t.with_shape(()), source)
    return zero if t.rank == 0 else emit_typed(builder, Broadcast((), t.shape), (zero,), source)


def sum_rows(builder: Builder, x: Var, axis: int, source: str | None) -> Var:
    """Σ_i x[..., i:i+1, ...] along `axis`, added left to right."""
    t = type_of(x)
    start, end = [0] * t.rank, list(t.shape)

    def row(i: int) -> Var:
        start[axis], end[axis] = i, i + 1
        return emit_typed(builder, Slice(start, end), (x,), source)

    total = row(0)
    for i in range(1, t.shape[axis]):
        total = emit_typed(builder, Add(), (total, row(i)), source)
    return total


def lower_reductions_to_sums_of_slices(defn: Definition) -> Definition:
    def lower(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var:
        prim = binding.prim
        if not isinstance(prim, ReduceSum):
            return keep(builder, binding, args)
        (x,) = args
        if any(type_of(x).shape[axis] == 0 for axis in prim.axes):
            return zeros(builder, type_of(binding.var), binding.source)
        for axis in sorted(prim.axes):
            if type_of(x).shape[axis] > 1:
                x = sum_rows(builder, x, axis, binding.source)
        return reshaped(builder, x, type_of(binding.var).shape, binding.source)

    return rewrite("lower_reductions_to_sums_of_slices", defn, lower)
