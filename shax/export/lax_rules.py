"""The export rules (`shax.export.rules`): each primitive in `jax.lax`, computing what
its eval rule computes (the numpy instance, `typeclasses/numpy_instance.py`). shax's
conventions are XLA's where they differ from numpy's, so most rules are one lax call:

- elementwise operations broadcast their operands numpy's way (right-aligned, size-1
  axes stretched), which lax wants explicit: `broadcast_in_dim` to the result's shape;
- `broadcast` is `broadcast_in_dim`, and `dot_general`'s result is laid out as XLA's
  (batch, lhs free, rhs free);
- `min`/`max` propagate NaN, `pow` is C's (numpy's and XLA's agree), `rem` is C's fmod,
  `rem` and `quot` of integers by 0 are 0 (numpy's),
  `round` rounds halves to even (numpy's `rint`);
- reductions keep the operand's dtype (an integer sum wraps), `argmax`/`argmin` give the
  first extreme's index as i32, `argsort` is stable with NaNs last (numpy's order);
- gather and the scatters read an index in [-n, n) modulo n and clamp beyond (XLA's
  clamping); of repeated scatter positions the last update is kept (numpy's assignment).

Imports jax: only `shax.export.lowering` imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from shax import control as C
from shax import primitives as P
from shax.core.types import TensorType, i64
from shax.export.rules import export_rule
from shax.primitives.gather import Indexing


def stretched(x: Any, shape: tuple[int, ...]) -> Any:
    """x broadcast numpy's way to `shape`: its axes aligned to the right."""
    if tuple(np.shape(x)) == shape:
        return x
    rank = np.ndim(x)
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape) - rank, len(shape))))


def _elementwise(function: Callable[..., Any]) -> Callable[[Any, Sequence[Any], TensorType], Any]:
    def rule(prim: Any, operands: Sequence[Any], out: TensorType) -> Any:
        return function(*(stretched(x, out.shape) for x in operands))

    return rule


def _round(x: Any) -> Any:
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def _abs(x: Any) -> Any:
    # |x| of an unsigned integer is x (lax.abs refuses them)
    return x if jnp.issubdtype(x.dtype, jnp.unsignedinteger) else lax.abs(x)


# The logical operations of booleans as selects (lax's names for them changed across versions):
# not x = x ? false : true, x and y = x ? y : false, x or y = x ? true : y
def _not(x: Any) -> Any:
    return lax.select(x, lax.full_like(x, False), lax.full_like(x, True))


def _and(x: Any, y: Any) -> Any:
    return lax.select(x, y, x)


def _or(x: Any, y: Any) -> Any:
    return lax.select(x, x, y)


# rem and quot of integers by 0 are 0 (numpy's) where XLA gives x and -1: divided by 1 there, then replaced
def _integer_division(function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def divide(x: Any, y: Any) -> Any:
        if not jnp.issubdtype(y.dtype, jnp.integer):
            return function(x, y)
        zero = lax.eq(y, lax.full_like(y, 0))
        return lax.select(zero, lax.full_like(x, 0), function(x, lax.select(zero, lax.full_like(y, 1), y)))

    return divide


def elementwise_on(name: str, operands: Sequence[Any], out: TensorType) -> Any:
    """`jax.lax`'s function `name` on the operands broadcast to `out`'s shape: the export of
    an elementwise primitive whose declaration names it (`export="sin"`)."""
    return getattr(lax, name)(*(stretched(x, out.shape) for x in operands))


# The elementwise primitives whose export is more than a lax function of the same operands.
ELEMENTWISE: dict[type[P.Primitive], Callable[..., Any]] = {
    P.Abs: _abs, P.Round: _round, P.LogicalNot: _not, P.LogicalAnd: _and, P.LogicalOr: _or,
    P.Rem: _integer_division(lax.rem), P.Quot: _integer_division(lax.div), P.Select: lax.select,
}  # fmt: skip
for _cls, _function in ELEMENTWISE.items():
    export_rule(_cls)(_elementwise(_function))


@export_rule(P.BitcastConvertType)
def _bitcast(prim: P.BitcastConvertType, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.bitcast_convert_type(operands[0], np.dtype(prim.dtype.numpy))


@export_rule(P.Constant)
def _constant(prim: P.Constant, operands: Sequence[Any], out: TensorType) -> Any:
    return jnp.asarray(prim.value, prim.value.dtype)


@export_rule(P.ConvertElementType)
def _convert(prim: P.ConvertElementType, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.convert_element_type(operands[0], np.dtype(prim.dtype.numpy))


# Shapes ---------------------------------------------------------------------------------


@export_rule(P.Reshape)
def _reshape(prim: P.Reshape, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.reshape(operands[0], out.shape)


# broadcast dims shape x = broadcast_in_dim(x, shape, dims): input axis i is output axis dims[i]
@export_rule(P.Broadcast)
def _broadcast(prim: P.Broadcast, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.broadcast_in_dim(operands[0], out.shape, tuple(prim.dims))


@export_rule(P.Transpose)
def _transpose(prim: P.Transpose, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.transpose(operands[0], tuple(prim.perm))


@export_rule(P.Slice)
def _slice(prim: P.Slice, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.slice(operands[0], tuple(prim.start), tuple(prim.end))


@export_rule(P.Rev)
def _rev(prim: P.Rev, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.rev(operands[0], tuple(prim.axes))


@export_rule(P.Pad)
def _pad(prim: P.Pad, operands: Sequence[Any], out: TensorType) -> Any:
    fill = np.asarray(prim.value, out.dtype.numpy)
    return lax.pad(operands[0], fill, [(lo, hi, 0) for lo, hi in prim.lohi])


@export_rule(P.Concatenate)
def _concatenate(prim: P.Concatenate, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.concatenate(list(operands), prim.axis)


# Reductions: lax.reduce with a monoid JAX knows (add, max, min, mul) is its reduce_* primitive


def _reduction(monoid: Callable[..., Any], init: Callable[[np.dtype], Any]) -> Callable[..., Any]:
    def rule(prim: Any, operands: Sequence[Any], out: TensorType) -> Any:
        (x,) = operands
        dtype = np.dtype(out.dtype.numpy)
        return lax.reduce(x, np.asarray(init(dtype), dtype), monoid, tuple(prim.axes))

    return rule


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    return np.inf if dtype.kind == "f" else np.iinfo(dtype).max


export_rule(P.ReduceSum)(_reduction(lax.add, lambda d: 0))
export_rule(P.ReduceProd)(_reduction(lax.mul, lambda d: 1))
export_rule(P.ReduceMax)(_reduction(lax.max, _lowest))
export_rule(P.ReduceMin)(_reduction(lax.min, _highest))


@export_rule(P.ArgMax)
def _argmax(prim: P.ArgMax, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.argmax(operands[0], prim.axis, np.int32)


@export_rule(P.ArgMin)
def _argmin(prim: P.ArgMin, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.argmin(operands[0], prim.axis, np.int32)


# argsort: a stable sort of (key, position) by key. lax.sort's order is total (-0 < +0,
# -NaN first); numpy's keeps -0 and +0 as equal and puts every NaN last: the keys are
# made so (x + 0 is +0 for ±0; a NaN becomes +NaN).
@export_rule(P.ArgSort)
def _argsort(prim: P.ArgSort, operands: Sequence[Any], out: TensorType) -> Any:
    (x,) = operands
    if jnp.issubdtype(x.dtype, jnp.floating):
        x = lax.add(x, lax.full_like(x, 0))
        x = lax.select(lax.ne(x, x), lax.full_like(x, np.nan), x)
    positions = lax.broadcasted_iota(np.int32, np.shape(x), prim.axis)
    return lax.sort((x, positions), dimension=prim.axis, is_stable=True, num_keys=1)[1]


# dot_general: XLA's layout, (batch, lhs free, rhs free)
@export_rule(P.DotGeneral)
def _dot_general(prim: P.DotGeneral, operands: Sequence[Any], out: TensorType) -> Any:
    x, y = operands
    dims = ((tuple(prim.lhs_contracting), tuple(prim.rhs_contracting)), (tuple(prim.lhs_batch), tuple(prim.rhs_batch)))
    return lax.dot_general(x, y, dims, preferred_element_type=np.dtype(out.dtype.numpy))


# Gather and scatter ---------------------------------------------------------------------
#
# All three address x[b..., p..., i[b..., j...], q...] (b: the `batch_dims` leading axes,
# p: x's axes before `axis`, q: after). In lax's terms every element of i gives a full
# start index (b..., i) — the batch positions are iotas — and p, q are the window.


def _start_indices(prim: Indexing, x_shape: tuple[int, ...], indices: Any) -> Any:
    """(b..., j..., 1 + batch_dims): each index's batch position, then the index itself,
    read modulo n if in [-n, n) and clamped into [0, n) beyond."""
    dtype = np.int64 if indices.dtype == i64.numpy else np.int32
    i = lax.convert_element_type(indices, dtype)
    n = x_shape[prim.axis]
    i = lax.select(lax.lt(i, lax.full_like(i, 0)), lax.add(i, lax.full_like(i, n)), i)
    i = lax.clamp(np.asarray(0, dtype), i, np.asarray(n - 1, dtype))
    shape = (*np.shape(i), 1)
    parts = [lax.broadcasted_iota(dtype, shape, b) for b in range(prim.batch_dims)]
    return lax.concatenate([*parts, lax.reshape(i, shape)], len(shape) - 1)


def _window(prim: Indexing, x_rank: int, index_rank: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(the result's window axes (p, q), x's axes addressed by the start indices (b, axis))."""
    before = prim.axis - prim.batch_dims
    window = (
        *range(prim.batch_dims, prim.batch_dims + before),
        *range(index_rank + before, x_rank - 1 + index_rank - prim.batch_dims),
    )
    return window, (*range(prim.batch_dims), prim.axis)


@export_rule(P.Gather)
def _gather(prim: P.Gather, operands: Sequence[Any], out: TensorType) -> Any:
    x, indices = operands
    shape = tuple(np.shape(x))
    window, addressed = _window(prim, len(shape), np.ndim(indices))
    numbers = lax.GatherDimensionNumbers(offset_dims=window, collapsed_slice_dims=addressed, start_index_map=addressed)
    sizes = tuple(1 if a in addressed else s for a, s in enumerate(shape))
    start = _start_indices(prim, shape, indices)
    return lax.gather(x, start, numbers, sizes, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


def _scatter_numbers(prim: Indexing, x: Any, indices: Any) -> lax.ScatterDimensionNumbers:
    window, addressed = _window(prim, np.ndim(x), np.ndim(indices))
    return lax.ScatterDimensionNumbers(
        update_window_dims=window, inserted_window_dims=addressed, scatter_dims_to_operand_dims=addressed
    )


@export_rule(P.ScatterAdd)
def _scatter_add(prim: P.ScatterAdd, operands: Sequence[Any], out: TensorType) -> Any:
    x, indices, updates = operands
    start = _start_indices(prim, tuple(np.shape(x)), indices)
    numbers = _scatter_numbers(prim, x, indices)
    return lax.scatter_add(x, start, updates, numbers, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)


# scatter: XLA leaves the order of repeated positions open; numpy keeps the last update.
# Each position learns the largest flat number (C order) of the update elements written to
# it (scatter_max), which is the last, and reads that update; positions none reached keep x.
@export_rule(P.Scatter)
def _scatter(prim: P.Scatter, operands: Sequence[Any], out: TensorType) -> Any:
    x, indices, updates = operands
    shape = tuple(np.shape(x))
    start = _start_indices(prim, shape, indices)
    numbers = _scatter_numbers(prim, x, indices)
    size = int(np.prod(np.shape(updates), dtype=np.int64))
    dtype = np.int64 if size > np.iinfo(np.int32).max else np.int32
    flat = lax.reshape(lax.iota(dtype, size), tuple(np.shape(updates)))
    nobody = lax.full(shape, -1, dtype)
    winner = lax.scatter_max(nobody, start, flat, numbers, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
    reached = lax.ge(winner, lax.full_like(winner, 0))
    chosen = lax.max(winner, lax.full_like(winner, 0))
    read = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    values = lax.gather(lax.reshape(updates, (size,)), lax.reshape(chosen, (*shape, 1)), read, (1,))
    return lax.select(reached, values, x)


# call f x = f's function under jax.jit: one StableHLO function, which every call site calls
@export_rule(C.Call)
def _call(prim: C.Call, operands: Sequence[Any], out: Any) -> list[Any]:
    from shax.export.lowering import exported

    return list(exported("to_jax", prim.defn).jitted(*operands))


# stop_gradient x = x, a constant of JAX's differentiation too
@export_rule(P.StopGradient)
def _stop_gradient(prim: P.StopGradient, operands: Sequence[Any], out: TensorType) -> Any:
    return lax.stop_gradient(operands[0])


# checkpoint_name x = x (JAX's name only steers its own checkpoint policies)
@export_rule(P.CheckpointName)
def _checkpoint_name(prim: P.CheckpointName, operands: Sequence[Any], out: TensorType) -> Any:
    return operands[0]


# custom_jvp f rule x = f x (and custom_vjp's): the function, as a call of it; the rule
# has entered the program already where shax differentiated it
@export_rule(C.CustomJVP, C.CustomVJP)
def _custom(prim: C.CustomJVP | C.CustomVJP, operands: Sequence[Any], out: Any) -> list[Any]:
    from shax.export.lowering import exported

    return list(exported("to_jax", prim.defn).jitted(*operands))


# custom_vjp_linear bwd dx r = (bwd transposed)(dx, r)
@export_rule(C.CustomVJPLinear)
def _custom_vjp_linear(prim: C.CustomVJPLinear, operands: Sequence[Any], out: Any) -> list[Any]:
    from shax.control.custom import forward_tangents
    from shax.export.lowering import exported

    jvp, tangents = forward_tangents(prim, operands)
    return list(exported("to_jax", jvp).jitted(*tangents, *operands[len(prim.floats) :]))


# scan: lax.scan of the body's function, the consts closed over. The body (as a while
# loop's functions and a cond's branches) is traced inline, as JAX's own scan traces its
# step: the loop's jaxpr is JAX's for the same program. Where a nested jax.jit would only
# add a call per step, a called definition keeps its jit: one StableHLO function, however
# many call sites.
@export_rule(C.Scan)
def _scan(prim: C.Scan, operands: Sequence[Any], out: Any) -> list[Any]:
    from shax.export.lowering import exported

    body = exported("to_jax", prim.body)
    consts, carry, xs = (
        operands[: prim.consts],
        operands[prim.consts : prim.consts + prim.carry],
        operands[prim.consts + prim.carry :],
    )

    def step(c: tuple[Any, ...], x: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        results = body(*consts, *c, *x)
        return tuple(results[: prim.carry]), tuple(results[prim.carry :])

    final, ys = lax.scan(step, tuple(carry), tuple(xs), length=prim.length, reverse=prim.reverse)
    return [*final, *ys]


# while: lax.while_loop of the cond's and body's functions, the consts closed over
@export_rule(C.While)
def _while(prim: C.While, operands: Sequence[Any], out: Any) -> list[Any]:
    from shax.export.lowering import exported

    cond, body = exported("to_jax", prim.cond), exported("to_jax", prim.body)
    consts, carry = operands[: prim.consts], tuple(operands[prim.consts :])
    final = lax.while_loop(lambda c: cond(*consts, *c)[0], lambda c: tuple(body(*consts, *c)), carry)
    return list(final)


# cond: lax.switch of the branches' functions (which clamps the index, as shax does)
@export_rule(C.Cond)
def _cond(prim: C.Cond, operands: Sequence[Any], out: Any) -> list[Any]:
    from shax.export.lowering import exported

    functions = [exported("to_jax", b) for b in prim.branches]
    index = lax.convert_element_type(operands[0], np.int32)
    return list(lax.switch(index, [lambda *a, f=f: tuple(f(*a)) for f in functions], *operands[1:]))
