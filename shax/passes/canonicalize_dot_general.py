"""Canonicalize dot_general: typed Definition -> typed Definition.

Every `dot_general` becomes the batched matrix product `dot_general [2] [1] [0] [0]`
of an lhs [B, M, K] and an rhs [B, K, N], where B, M, K, N are the products of the
sizes of the batch, lhs free, contracting and rhs free axes (1 where there are none):

    lhs: transpose to (batch, free, contracting), reshape to [B, M, K]
    rhs: transpose to (batch, contracting, free), reshape to [B, K, N]
    result: dot_general [2] [1] [0] [0], reshaped to (batch..., lhs free..., rhs free...)

A transpose or reshape is emitted only where it changes something; a dot_general
already in canonical form on rank-3 operands stays as it is. One forward sweep:
linear time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from shax.core.builder import Builder
from shax.core.ir import Binding, Definition, Var, type_of
from shax.passes.nested import reaching_in
from shax.passes.rewrite import emit_typed, keep, reshaped, rewrite
from shax.primitives import DotGeneral, Transpose
from shax.primitives.dot import free_axes

CANONICAL = DotGeneral((2,), (1,), (0,), (0,))


def as_rank3(builder: Builder, x: Var, groups: Sequence[Sequence[int]], source: str | None) -> Var:
    """`x` with its axes ordered group by group, each group merged into one axis."""
    merged = [math.prod(type_of(x).shape[axis] for axis in group) for group in groups]
    perm = [axis for group in groups for axis in group]
    if perm != list(range(len(perm))):
        x = emit_typed(builder, Transpose(perm), (x,), source)
    return reshaped(builder, x, merged, source)


@reaching_in
def canonicalize_dot_general(defn: Definition) -> Definition:
    def canonicalize(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | tuple[Var, ...]:
        prim = binding.prim
        if not isinstance(prim, DotGeneral) or (prim == CANONICAL and all(type_of(a).rank == 3 for a in args)):
            return keep(builder, binding, args)
        x, y = args
        lc, rc, lb, rb = prim.dims
        # Contracting axes pair up in the order listed, so both sides keep that order.
        lhs = as_rank3(builder, x, (lb, free_axes(type_of(x).rank, lc, lb), lc), binding.source)
        rhs = as_rank3(builder, y, (rb, rc, free_axes(type_of(y).rank, rc, rb)), binding.source)
        product = emit_typed(builder, CANONICAL, (lhs, rhs), binding.source)
        return reshaped(builder, product, type_of(binding.var).shape, binding.source)

    return rewrite("canonicalize_dot_general", defn, canonicalize)
