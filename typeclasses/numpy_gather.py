"""gather, scatter_add and scatter on numpy values (the numpy instance's methods, which
compiled code calls too).

All three read or write x at the positions

    x[b..., p..., idx[b..., i...], q...]        b: the first `batch_dims` axes of x and idx,
                                                p: x's axes before `axis`, q: after it

so gather's result has the axes (b..., p..., i..., q...), and the updates of a scatter
have that shape. An index k in [-n, n) of an axis of size n means k mod n (numpy's
negative indices); beyond, it is clamped into [0, n) (XLA's gather, JAX's indexing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def _clamped(indices: Any, n: int) -> np.ndarray:
    i = np.asarray(indices)
    if i.dtype.kind == "u":  # never negative; n - 1 need not be a value of its dtype (a u8 into 300)
        return np.minimum(i, np.uint64(n - 1))
    return np.asarray(np.clip(np.where(i < 0, i + n, i), 0, n - 1))


def _key(shape: Sequence[int], indices: np.ndarray, axis: int, batch_dims: int) -> tuple[Any, ...]:
    """numpy's advanced index of those positions: an arange per batch axis (shaped to
    broadcast against the indices), full slices, the indices at `axis`."""
    rank = indices.ndim
    grid = tuple(np.arange(shape[j]).reshape((-1,) + (1,) * (rank - 1 - j)) for j in range(batch_dims))
    return (*grid, *(slice(None),) * (axis - batch_dims), indices)


def _layout(rank: int, axes: int, axis: int, batch_dims: int) -> list[int] | None:
    """The permutation from numpy's layout of `x[_key(...)]` to gather's, None if they agree.
    With batch axes and axes between them and `axis`, the advanced indices are apart and
    numpy puts their axes (b..., i...) first: (b, i, p, q) is permuted to (b, p, i, q)."""
    between = axis - batch_dims
    if batch_dims == 0 or between == 0:
        return None
    i = list(range(batch_dims, rank))
    p = list(range(rank, rank + between))
    return [*range(batch_dims), *p, *i, *range(rank + between, axes)]


def gather(x: Any, indices: Any, axis: int, batch_dims: int) -> Any:
    x = np.asarray(x)
    i = _clamped(indices, x.shape[axis])
    if batch_dims == 0:
        return np.take(x, i, axis=axis)
    out = x[_key(x.shape, i, axis, batch_dims)]
    perm = _layout(i.ndim, out.ndim, axis, batch_dims)
    return out if perm is None else out.transpose(perm)


def _updates(x: np.ndarray, i: np.ndarray, updates: Any, axis: int, batch_dims: int) -> np.ndarray:
    """The updates (in gather's layout) in numpy's layout of x[_key(...)]."""
    u = np.asarray(updates)
    perm = _layout(i.ndim, u.ndim, axis, batch_dims)
    return u if perm is None else u.transpose(np.argsort(perm))


def scatter_add(x: Any, indices: Any, updates: Any, axis: int, batch_dims: int) -> Any:
    """x plus the updates, added at their positions (repeated positions add up)."""
    out = np.array(x, copy=True)
    i = _clamped(indices, out.shape[axis])
    np.add.at(out, _key(out.shape, i, axis, batch_dims), _updates(out, i, updates, axis, batch_dims))
    return out


def scatter(x: Any, indices: Any, updates: Any, axis: int, batch_dims: int) -> Any:
    """x with the updates written at their positions; of updates to one position, the last
    (in C order of the indices) is kept, as numpy's assignment keeps it."""
    out = np.array(x, copy=True)
    i = _clamped(indices, out.shape[axis])
    out[_key(out.shape, i, axis, batch_dims)] = _updates(out, i, updates, axis, batch_dims)
    return out
