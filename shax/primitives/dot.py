"""`dot_general`, bilinear: contract and batch axes of two tensors (XLA semantics).

Printed `dot` when its dimension numbers are the plain matrix product ([1] [0] [] []),
as in the original, and `dot_general [2] [1] [0] [0]` otherwise."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError
from shax.core.primitive import Linearity, Primitive, ints
from shax.core.types import TensorType, bool_
from shax.rules.batch import batch_rule, batched, shifted
from shax.rules.codegen import Operand, Site, codegen_rule, reshaped, shape_source
from shax.rules.cost import cost_rule
from shax.rules.export import export_rule
from shax.rules.transpose import Linear, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer


__all__ = ["DotGeneral", "free_axes"]


@attrs.frozen
class DotGeneral(Primitive):
    """Bilinear: d dot(x, y) = dot(x, dy) + dot(dx, y), derived from its linearity."""

    name: ClassVar[str] = "dot_general"
    function = tc.dot_general
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.BILINEAR, Linearity.BILINEAR)
    lhs_contracting: tuple[int, ...] = attrs.field(converter=ints)
    rhs_contracting: tuple[int, ...] = attrs.field(converter=ints)
    lhs_batch: tuple[int, ...] = attrs.field(converter=ints)
    rhs_batch: tuple[int, ...] = attrs.field(converter=ints)

    @property
    def dims(self) -> tuple[tuple[int, ...], ...]:
        return (self.lhs_contracting, self.rhs_contracting, self.lhs_batch, self.rhs_batch)

    def static_args(self) -> tuple[Any, ...]:
        return (self.dims,)

    @classmethod
    def from_static_args(cls, *args: Any) -> DotGeneral:
        """From dot_general's `dims = (lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)`."""
        try:
            ((lc, rc, lb, rb),) = args
        except (TypeError, ValueError):
            shown = args[0] if len(args) == 1 else args
            message = f"dims must be (lhs_contracting, rhs_contracting, lhs_batch, rhs_batch), got {shown!r}"
            raise ShaxTypeError(f"dot_general: {message}") from None
        return cls(lc, rc, lb, rb)

    @property
    def is_matrix_product(self) -> bool:
        return self.dims == ((1,), (0,), (), ())

    def show(self, names: Mapping[int, str]) -> str | None:
        return "dot" if self.is_matrix_product else None  # the seed's `dot x5 x6`


def free_axes(rank: int, contracting: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [a for a in range(rank) if a not in contracting and a not in batch]


@type_rule(DotGeneral)
def _dot_general_type(prim: DotGeneral, operands: Sequence[TensorType]) -> TensorType:
    x, y = operands
    lc, rc, lb, rb = prim.dims
    for side, t, axes in (("lhs", x, lc + lb), ("rhs", y, rc + rb)):
        if len(set(axes)) != len(axes) or any(not 0 <= a < t.rank for a in axes):
            message = f"{side} contracting and batch axes {list(axes)} must be distinct axes of rank {t.rank}"
            raise prim.fail(message, x, y, error=ShaxValueError)
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise prim.fail(f"dimension numbers {[list(d) for d in prim.dims]} do not pair up", x, y, error=ShaxValueError)
    if x.dtype != y.dtype or x.dtype == bool_:
        raise prim.fail("operands need the same numeric dtype", x, y)
    for kind, left, right in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(left, right):
            if x.shape[a] != y.shape[b]:
                raise prim.fail(f"{kind} axes lhs {a} and rhs {b} differ in size", x, y)
    shape = (
        *(x.shape[a] for a in lb),
        *(x.shape[a] for a in free_axes(x.rank, lc, lb)),
        *(y.shape[a] for a in free_axes(y.rank, rc, rb)),
    )
    return x.with_shape(shape)


# dot_general: as the numpy instance computes it, one matmul of x arranged as (batch, free,
# contracting) and y as (batch, contracting, free), leaving out what changes nothing
@codegen_rule(DotGeneral)
def _dot_general_codegen(prim: DotGeneral, site: Site, operands: Sequence[Operand]) -> str:
    x, y = operands
    lc, rc, lb, rb = prim.dims
    lf, rf = free_axes(x.rank, lc, lb), free_axes(y.rank, rc, rb)
    batch = [x.type.shape[a] for a in lb]
    k = math.prod(x.type.shape[a] for a in lc)
    m, n = math.prod(x.type.shape[a] for a in lf), math.prod(y.type.shape[a] for a in rf)
    # As the numpy instance: nothing summed (k = 1) is a broadcast multiply, else a matmul.
    product = f"np.{'multiply' if k == 1 else 'matmul'}({_arranged_source(x, (*lb, *lf, *lc), (*batch, m, k))}, "
    product += f"{_arranged_source(y, (*rb, *rc, *rf), (*batch, k, n))})"
    # A 2-d matmul's result is C-contiguous; a multiply's follows its operands' layout.
    site.fresh(contiguous=not lb and k != 1)
    shape = site.result.shape
    return product if shape == (*batch, m, n) else f"{product}.reshape({shape_source(shape)})"


def _arranged_source(x: Operand, perm: tuple[int, ...], shape: tuple[int, ...]) -> str:
    if x.rank == 0:
        return reshaped(x, shape)
    source = x.expr if perm == tuple(range(x.rank)) else f"{x}.transpose({shape_source(perm)})"
    return source if shape == tuple(x.type.shape[p] for p in perm) else f"{source}.reshape({shape_source(shape)})"


def _arranged(x: Tracer, layout: Sequence[int]) -> Tracer:
    """`x`, whose axis j is target axis layout[j], transposed into target order."""
    perm = sorted(range(len(layout)), key=lambda j: layout[j])
    return x if perm == list(range(len(perm))) else tc.transpose(x, perm)


# dot_general: ⟨ct, dot(dx, y)⟩ = ⟨dot(ct, y), dx⟩, contracting ct's rhs-free axes with y's
# free axes (batch with batch) and arranging the result like x; symmetrically for dy.
@transpose_rule(DotGeneral)
def _dot_general_transpose(prim: DotGeneral, ct: Tracer, operands: Sequence[Any]) -> tuple[Any, Any]:
    x, y = operands
    x_linear = isinstance(x, Linear)
    lc, rc, lb, rb = prim.dims
    lf, rf = free_axes(x.type.rank, lc, lb), free_axes(y.type.rank, rc, rb)
    ct_batch = list(range(len(lb)))
    ct_lf = list(range(len(lb), len(lb) + len(lf)))
    ct_rf = list(range(len(lb) + len(lf), len(lb) + len(lf) + len(rf)))
    if x_linear:
        # Result axes: batch, x's free axes, then y's contracting axes in y's order.
        dx = tc.dot_general(ct, y, (ct_rf, rf, ct_batch, rb))
        return _arranged(dx, [*lb, *lf, *(lc[i] for i in sorted(range(len(rc)), key=lambda i: rc[i]))]), None
    # Result axes: batch, x's contracting axes in x's order, then y's free axes.
    dy = tc.dot_general(x, ct, (lf, ct_lf, lb, ct_batch))
    return None, _arranged(dy, [*rb, *(rc[i] for i in sorted(range(len(lc)), key=lambda i: lc[i])), *rf])


# dot_general batched, one operation for the whole batch. Both operands batched: their
# batch axes are one more (first) pair of batch dimensions, so the result's batch axis is 0.
# One batched: its batch axis is one more free axis, which lands among the result's axes
# (batch dims, lhs free, rhs free) after the free axes before it.
@batch_rule(DotGeneral)
def _dot_general_batch(
    prim: DotGeneral, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    (x, y), (dx, dy) = operands, dims
    lc, rc, lb, rb = prim.dims
    if dx is not None:
        lc, lb = tuple(shifted(a, dx) for a in lc), tuple(shifted(a, dx) for a in lb)
    if dy is not None:
        rc, rb = tuple(shifted(a, dy) for a in rc), tuple(shifted(a, dy) for a in rb)
    if dx is not None and dy is not None:
        return tc.dot_general(x, y, (lc, rc, (dx, *lb), (dy, *rb))), 0
    result = tc.dot_general(x, y, (lc, rc, lb, rb))
    lf = free_axes(len(tc.shape(x)) - (dx is not None), prim.lhs_contracting, prim.lhs_batch)
    if dx is not None:
        return result, len(lb) + sum(a < dx for a in lf)
    dy = batched(dy)  # x is not batched, so y is
    rf = free_axes(len(tc.shape(y)) - 1, prim.rhs_contracting, prim.rhs_batch)
    return result, len(lb) + len(lf) + sum(a < dy for a in rf)


# dot_general: each of the batch·M·N results is K multiply-adds, so 2·batch·M·N·K flops
@cost_rule(DotGeneral)
def _dot_general_cost(prim: DotGeneral, operands: Sequence[TensorType], out: TensorType) -> int:
    return 2 * out.size * math.prod(operands[0].shape[a] for a in prim.lhs_contracting)


# dot_general: XLA's layout, (batch, lhs free, rhs free), which is shax's
@export_rule(DotGeneral)
def _dot_general_export(prim: DotGeneral, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    x, y = operands
    dims = ((tuple(prim.lhs_contracting), tuple(prim.rhs_contracting)), (tuple(prim.lhs_batch), tuple(prim.rhs_batch)))
    return lax.dot_general(x, y, dims, preferred_element_type=np.dtype(out.dtype.numpy))
