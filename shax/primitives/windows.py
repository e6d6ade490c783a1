"""`reduce_window_sum` and `reduce_window_max`: pooling, XLA's `reduce_window` with `add`
and `max`. x is padded (with 0 for the sum, its dtype's lowest value for the max), and
each window of `window_dimensions` elements, every `window_strides`-th one per axis, is
reduced to one element.

The sum is linear; its transpose spreads each window's cotangent over the window: a
convolution of the cotangent, dilated by the strides, with a kernel of ones (JAX's
`_reduce_window_sum_transpose_rule`, a pad and a window sum). The max's derivative is the
tangent of the element each window chose, its first largest (JAX's `select_and_gather_add`,
whose transpose is `select_and_scatter_add`): a gather at those positions, which a
constant table of every window's positions and an argmax over it find.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs
import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxValueError
from shax.core.primitive import Linearity, Primitive, int_pairs, ints
from shax.core.types import TensorType, bool_
from shax.primitives.conv import dilate, window_counts
from shax.rules.batch import batch_rule, batched
from shax.rules.cost import cost_rule
from shax.rules.export import export_rule
from shax.rules.linearize import Tangent, Zero, linearize_rule, residual
from shax.rules.transpose import Operand, transpose_rule
from shax.rules.types import type_rule

if TYPE_CHECKING:
    from shax.tracing.tracer import Tracer

__all__ = ["ReduceWindowMax", "ReduceWindowSum"]


@attrs.frozen
class ReduceWindow(Primitive):
    window_dimensions: tuple[int, ...] = attrs.field(converter=ints)
    window_strides: tuple[int, ...] = attrs.field(converter=ints)
    padding: tuple[tuple[int, int], ...] = attrs.field(converter=int_pairs)


@attrs.frozen
class ReduceWindowSum(ReduceWindow):
    name, function = "reduce_window_sum", tc.reduce_window_sum
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.LINEAR,)


@attrs.frozen
class ReduceWindowMax(ReduceWindow):
    name, function = "reduce_window_max", tc.reduce_window_max
    linearity: ClassVar[tuple[Linearity, ...]] = (Linearity.NONLINEAR,)


@type_rule(ReduceWindowSum, ReduceWindowMax)
def _reduce_window_type(prim: ReduceWindow, operands: Sequence[TensorType]) -> TensorType:
    (x,) = operands
    if x.dtype == bool_:
        raise prim.fail("cannot reduce booleans", x)
    if not len(prim.window_dimensions) == len(prim.window_strides) == len(prim.padding) == x.rank:
        raise prim.fail(f"window, strides and padding need one entry per axis ({x.rank})", x, error=ShaxValueError)
    if any(v < 1 for v in (*prim.window_dimensions, *prim.window_strides)):
        raise prim.fail("window dimensions and strides must be positive", x, error=ShaxValueError)
    if any(lo < 0 or hi < 0 for lo, hi in prim.padding):
        raise prim.fail(f"padding {list(prim.padding)} must be non-negative", x, error=ShaxValueError)
    return x.with_shape(window_counts(x.shape, prim.window_dimensions, prim.window_strides, prim.padding))


# window sum: ⟨ct, Σ_window dx⟩ = ⟨spread ct, dx⟩, spread = the cotangent dilated by the
# strides, convolved with ones over the window (padded so the result is x's shape)
@transpose_rule(ReduceWindowSum)
def _reduce_window_sum_transpose(prim: ReduceWindowSum, ct: Tracer, operands: Sequence[Operand]) -> tuple[Any]:
    (x,) = operands
    shape, out = tuple(x.type.shape), tuple(tc.shape(ct))
    window, strides = prim.window_dimensions, prim.window_strides
    before = [w - lo - 1 for w, (lo, _) in zip(window, prim.padding)]
    padding = [(b, n + w - 1 - dilate(m, s) - b) for b, n, w, m, s in zip(before, shape, window, out, strides)]
    canonical = tuple(range(len(shape) + 2))
    ones: Any = np.ones((1, 1, *window), x.type.dtype.numpy)
    spread = tc.conv_general_dilated(
        tc.reshape(ct, [1, 1, *out]), ones, [1] * len(shape), padding, strides, [1] * len(shape),
        (canonical, canonical, canonical), 1, 1,
    )  # fmt: skip
    return (tc.reshape(spread, list(shape)),)


def window_positions(shape: tuple[int, ...], prim: ReduceWindow) -> np.ndarray:
    """(windows..., window size): each window's elements, as flat positions in x padded."""
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(shape, prim.padding))
    flat = np.arange(math.prod(padded), dtype=np.int32).reshape(padded)
    windows = np.lib.stride_tricks.sliding_window_view(flat, prim.window_dimensions)
    windows = windows[tuple(slice(None, None, s) for s in prim.window_strides)]
    counts = windows.shape[: len(shape)]
    return np.ascontiguousarray(windows.reshape(*counts, -1))


# window max: d out = dx at each window's (first) largest element, a gather of the padded dx
@linearize_rule(ReduceWindowMax)
def _reduce_window_max_jvp(
    prim: ReduceWindowMax, primals: Sequence[Tracer], tangents: Sequence[Tangent], out: Tracer
) -> Tangent:
    (x,), (dx,) = primals, tangents
    shape = tuple(tc.shape(x))
    rank = len(shape)
    if out.type.size == 0:
        return Zero(out.type)
    positions: Any = window_positions(shape, prim)
    dtype: Any = x.type.dtype.numpy
    lowest = -np.inf if x.type.dtype.is_float else np.iinfo(dtype).min
    size = math.prod(n + lo + hi for n, (lo, hi) in zip(shape, prim.padding))
    chosen = tc.argmax(tc.gather(tc.reshape(tc.pad(x, prim.padding, lowest), [size]), positions, 0, 0), rank)
    where = tc.gather(positions, chosen, rank, rank)
    return tc.gather(tc.reshape(tc.pad(dx, prim.padding, 0.0), [size]), residual(where), 0, 0)


# a window of 1 along the batch axis d, which stays put
@batch_rule(ReduceWindowSum, ReduceWindowMax)
def _reduce_window_batch(prim: ReduceWindow, operands: Sequence[Tracer], dims: Sequence[int | None]) -> tuple[Any, int]:
    (x,), d = operands, batched(dims[0])
    window, strides, padding = list(prim.window_dimensions), list(prim.window_strides), list(prim.padding)
    window.insert(d, 1)
    strides.insert(d, 1)
    padding.insert(d, (0, 0))
    return type(prim)(window, strides, padding).apply(x), d


# one addition or comparison per window element
@cost_rule(ReduceWindowSum, ReduceWindowMax)
def _reduce_window_cost(prim: ReduceWindow, operands: Sequence[TensorType], out: TensorType) -> int:
    return out.size * math.prod(prim.window_dimensions)


# Export: lax.reduce_window padded with 0 (sum) or the dtype's lowest value (max)
@export_rule(ReduceWindowSum)
def _reduce_window_sum_export(prim: ReduceWindowSum, operands: Sequence[Any], out: TensorType) -> Any:
    from jax import lax

    (x,) = operands
    zero = np.zeros((), x.dtype)
    return lax.reduce_window(x, zero, lax.add, prim.window_dimensions, prim.window_strides, prim.padding)


@export_rule(ReduceWindowMax)
def _reduce_window_max_export(prim: ReduceWindowMax, operands: Sequence[Any], out: TensorType) -> Any:
    import jax.numpy as jnp
    from jax import lax

    (x,) = operands
    lowest = np.array(-np.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min, x.dtype)
    return lax.reduce_window(x, lowest, lax.max, prim.window_dimensions, prim.window_strides, prim.padding)
