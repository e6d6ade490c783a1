"""The export rules of the window primitives and of slices at traced starts: each one
`jax.lax` call, with XLA's semantics, which shax's are (`typeclasses/numpy_windows.py`):
starts clamped into range, convolution with shax's dimension numbers and explicit
padding, window reductions padded with 0 (sum) or the dtype's lowest value (max).

Imports jax: only `shax.export.lowering` imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

from shax import primitives as P
from shax.core.types import TensorType
from shax.export.rules import export_rule


def _starts(starts: Any) -> list[Any]:
    return [starts[a] for a in range(np.shape(starts)[0])]


@export_rule(P.DynamicSlice)
def _dynamic_slice(prim: P.DynamicSlice, operands: Sequence[Any], out: TensorType) -> Any:
    x, starts = operands
    return lax.dynamic_slice(x, _starts(starts), prim.sizes)


@export_rule(P.DynamicUpdateSlice)
def _dynamic_update_slice(prim: P.DynamicUpdateSlice, operands: Sequence[Any], out: TensorType) -> Any:
    x, update, starts = operands
    return lax.dynamic_update_slice(x, update, _starts(starts))


@export_rule(P.ConvGeneralDilated)
def _conv(prim: P.ConvGeneralDilated, operands: Sequence[Any], out: TensorType) -> Any:
    lhs, rhs = operands
    return lax.conv_general_dilated(
        lhs,
        rhs,
        prim.window_strides,
        prim.padding,
        prim.lhs_dilation,
        prim.rhs_dilation,
        lax.ConvDimensionNumbers(*prim.dimension_numbers),
        prim.feature_group_count,
        prim.batch_group_count,
    )


@export_rule(P.ReduceWindowSum)
def _reduce_window_sum(prim: P.ReduceWindowSum, operands: Sequence[Any], out: TensorType) -> Any:
    (x,) = operands
    zero = np.zeros((), x.dtype)
    return lax.reduce_window(x, zero, lax.add, prim.window_dimensions, prim.window_strides, prim.padding)


@export_rule(P.ReduceWindowMax)
def _reduce_window_max(prim: P.ReduceWindowMax, operands: Sequence[Any], out: TensorType) -> Any:
    (x,) = operands
    lowest = np.array(-np.inf if jnp.issubdtype(x.dtype, jnp.floating) else jnp.iinfo(x.dtype).min, x.dtype)
    return lax.reduce_window(x, lowest, lax.max, prim.window_dimensions, prim.window_strides, prim.padding)
