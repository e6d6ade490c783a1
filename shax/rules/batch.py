"""What batching rules are written with.

The batching stage (`shax.stages.batch`) re-runs a definition on values that hold a
whole batch of examples at once. Each value carries its batch axis: an int, or None
when it depends on no batched argument (then it is the same for every example and
has no batch axis at all). A batching rule gets a binding's operands (tracers, at
least one batched) and their batch axes; it returns the result for the whole batch,
computed with the typeclass functions as the other rules are, and the result's batch
axis. For an elementwise f, whose batch axis stays where it is:

    prim.apply(x), dims[0]

Per-example axis `a` of a value batched at axis `d` is its axis `shifted(a, d)`.
A primitive without operands is never batched (the stage keeps it as it is).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import typeclasses as tc
from shax.core.errors import ShaxError
from shax.core.primitive import Primitive
from shax.rules.table import RuleTable

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer


class BatchRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[Tracer], dims: Sequence[int | None], /) -> tuple[Any, Any]:
        """(value, its batch axis); for a `multi_result` primitive, (values, their axes)."""


def never_batched(prim: Primitive, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    """The rule of a primitive without operands (a constant): none of them can be
    batched, so the stage emits it unchanged, as every binding with unbatched operands."""
    raise prim.fail("has no operands, so none of them can be batched", *(x.type for x in operands))


batch_rules: RuleTable[BatchRule] = RuleTable("batch", lambda cls: never_batched if cls.arity == 0 else None)
batch_rule = batch_rules.register


def batched(dim: int | None) -> int:
    """The batch axis `dim` of an operand a rule knows is batched: a unary primitive's operand
    (a rule runs only when some operand is batched), or one of two whose other is unbatched."""
    if dim is None:
        raise ShaxError("a batching rule expected a batched operand, got one without a batch axis")
    return dim


def shifted(axis: int, dim: int) -> int:
    """Where per-example axis `axis` is in a value whose batch axis is `dim`."""
    return axis + 1 if axis >= dim else axis


def moveaxis(x: Tracer, source: int, destination: int) -> Tracer:
    """`x` with its axis `source` moved to `destination`, the others keeping their order."""
    if source == destination:
        return x
    perm = [a for a in range(len(tc.shape(x))) if a != source]
    perm.insert(destination, source)
    return tc.transpose(x, perm)


def batched_at(x: Tracer, dim: int | None, to: int, size: int) -> Tracer:
    """`x` with its batch axis at `to`: moved there, or, if `x` is unbatched, broadcast
    along a new axis of `size` there (every example sees the same value)."""
    if dim is not None:
        return moveaxis(x, dim, to)
    shape = list(tc.shape(x))
    shape.insert(to, size)
    return tc.broadcast(x, [a for a in range(len(shape)) if a != to], shape)


def batch_first(x: Tracer, dim: int, rank: int) -> Tracer:
    """`x`, batched at `dim`, with its batch axis at the front and size-1 axes after it
    up to per-example rank `rank`: (B, 1, ..., 1, *example shape), which lines up with
    every operand of that rank under numpy's trailing alignment."""
    x = moveaxis(x, dim, 0)
    size, *example = tc.shape(x)
    if len(example) == rank:
        return x
    return tc.reshape(x, (size, *[1] * (rank - len(example)), *example))


# f elementwise: f(x) over the batch is f of the batched x; the batch axis stays put.
def unary_batch(prim: Primitive, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Tracer, int | None]:
    return prim.apply(*operands), dims[0]


# x ∘ y broadcasts like numpy, aligning trailing axes. Result rank r per example: if the
# batched operands have rank r and one batch axis d, and the unbatched ones rank <= r - d
# (so they stay clear of axis d), it is applied as is; otherwise each batched operand
# becomes (B, 1, ..., 1, *its shape) of rank r + 1, and the result's batch axis is 0.
def broadcasting_batch(
    prim: Primitive, operands: Sequence[Tracer], dims: Sequence[int | None]
) -> tuple[Tracer, int | None]:
    ranks = [len(tc.shape(x)) - (d is not None) for x, d in zip(operands, dims)]
    rank = max(ranks)
    batch_axes = {d for d in dims if d is not None}
    if len(batch_axes) == 1:
        (d,) = batch_axes
        if all(r == rank if e is not None else r <= rank - d for r, e in zip(ranks, dims)):
            return prim.apply(*operands), d
    return prim.apply(*(x if d is None else batch_first(x, d, rank) for x, d in zip(operands, dims))), 0
