"""Slices at traced starts, convolution and window reductions on numpy values (the numpy
instance's methods, which compiled code calls too), with XLA's semantics:

- `dynamic_slice` / `dynamic_update_slice`: a negative start counts from the end (JAX's),
  then each is clamped into [0, n - size];
- `conv_general_dilated`: lhs dilated (zeros between its elements), padded (a negative pad
  crops), and correlated with the dilated kernel at the strides; channels split into
  `feature_group_count` groups, or the batch into `batch_group_count` groups, each with its
  own slice of the kernel's output features. One view of every window
  (`sliding_window_view`) and one `einsum` over it, no loop over positions;
- `reduce_window_sum` / `reduce_window_max`: x padded with 0 (the lowest value for max),
  each window reduced, every stride-th window per axis.
"""

from __future__ import annotations

import math
import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _starts(x: np.ndarray, starts: Any, sizes: Sequence[int]) -> list[int]:
    s = np.asarray(starts, np.int64)
    return [int(k) for k in np.clip(np.where(s < 0, s + x.shape, s), 0, np.subtract(x.shape, sizes))]


def dynamic_slice(x: Any, starts: Any, sizes: Sequence[int]) -> np.ndarray:
    x = np.asarray(x)
    return x[tuple(slice(s, s + n) for s, n in zip(_starts(x, starts, sizes), sizes))].copy()


def dynamic_update_slice(x: Any, update: Any, starts: Any) -> np.ndarray:
    out, update = np.array(x, copy=True), np.asarray(update)
    out[tuple(slice(s, s + n) for s, n in zip(_starts(out, starts, update.shape), update.shape))] = update
    return out


def dilated(x: np.ndarray, axes: Sequence[int], dilation: Sequence[int]) -> np.ndarray:
    """x with d - 1 zeros between neighbours along each axis dilated by d."""
    if all(d == 1 for d in dilation):
        return x
    shape = list(x.shape)
    for a, d in zip(axes, dilation):
        shape[a] = (shape[a] - 1) * d + 1 if shape[a] else 0
    out = np.zeros(shape, x.dtype)
    key = [slice(None)] * x.ndim
    for a, d in zip(axes, dilation):
        key[a] = slice(None, None, d)
    out[tuple(key)] = x
    return out


def padded(x: np.ndarray, axes: Sequence[int], padding: Sequence[tuple[int, int]], fill: Any) -> np.ndarray:
    """x padded with `fill` along `axes`; a negative pad crops."""
    widths = [(0, 0)] * x.ndim
    crop = [slice(None)] * x.ndim
    for a, (lo, hi) in zip(axes, padding):
        widths[a] = (max(lo, 0), max(hi, 0))
        crop[a] = slice(max(-lo, 0), x.shape[a] + max(lo, 0) + max(hi, 0) - max(-hi, 0))
    if any(w != (0, 0) for w in widths):
        x = np.pad(x, widths, constant_values=np.asarray(fill, x.dtype))
    return x[tuple(crop)]


def windows(x: np.ndarray, axes: Sequence[int], window: Sequence[int], strides: Sequence[int]) -> np.ndarray:
    """Every stride-th window of x along `axes`: x's axes (those along `axes` counting
    windows), then the window's axes. No copy."""
    counts = [max((x.shape[a] - w) // s + 1, 0) for a, w, s in zip(axes, window, strides)]
    if 0 in counts or 0 in x.shape:
        shape = list(x.shape)
        for a, n in zip(axes, counts):
            shape[a] = n
        return np.zeros((*shape, *window), x.dtype)
    view = sliding_window_view(x, tuple(window), axis=tuple(axes))
    key = [slice(None)] * view.ndim
    for a, s in zip(axes, strides):
        key[a] = slice(None, None, s)
    return view[tuple(key)]


def conv_general_dilated(
    lhs: Any,
    rhs: Any,
    window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int],
    rhs_dilation: Sequence[int],
    dimension_numbers: tuple[Sequence[int], Sequence[int], Sequence[int]],
    feature_group_count: int,
    batch_group_count: int,
) -> np.ndarray:
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x = np.transpose(np.asarray(lhs), lhs_spec)  # (N, C, spatial...)
    w = np.transpose(np.asarray(rhs), rhs_spec)  # (O, I, kernel...)
    rank = x.ndim - 2
    spatial = range(2, 2 + rank)
    x = padded(dilated(x, spatial, lhs_dilation), spatial, padding, 0)
    w = dilated(w, spatial, rhs_dilation)
    view = windows(x, spatial, w.shape[2:], window_strides)  # (N, C, out..., kernel...)
    g, b = feature_group_count, batch_group_count
    (n, c, *out), (o, i, *kernel) = view.shape[: 2 + rank], w.shape[: 2 + rank]
    view = view.reshape(b, n // b, g, c // g, *out, *kernel)
    w = w.reshape(b, g, o // (b * g), i, *kernel)
    letters = iter(string.ascii_uppercase)
    outs, ks = "".join(next(letters) for _ in out), "".join(next(letters) for _ in kernel)
    result = np.einsum(f"bngc{outs}{ks},bgoc{ks}->nbgo{outs}", view, w, optimize=True)
    result = result.reshape(n // b, o, *out).astype(x.dtype, copy=False)
    return np.transpose(result, np.argsort(out_spec))


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def reduce_window(
    kind: str, x: Any, window: Sequence[int], strides: Sequence[int], padding: Sequence[tuple[int, int]]
) -> np.ndarray:
    """`kind` "sum" or "max" of each window."""
    x = np.asarray(x)
    axes = range(x.ndim)
    view = windows(padded(x, axes, padding, 0 if kind == "sum" else _lowest(x.dtype)), axes, window, strides)
    window_axes = tuple(range(x.ndim, 2 * x.ndim))
    if kind == "sum":
        return np.asarray(np.sum(view, axis=window_axes, dtype=x.dtype))
    if math.prod(view.shape[: x.ndim]) == 0:
        return np.zeros(view.shape[: x.ndim], x.dtype)
    return np.asarray(np.max(view, axis=window_axes))
