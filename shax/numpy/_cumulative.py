"""numpy's running sums and products and differences: `cumsum`, `cumprod`, `diff`.

On numpy values numpy's own. Traced, a running sum or product is a prefix scan written
with the shape primitives and one `add` or `mul` per level (no primitive of its own):
pairs (x₀ ⊕ x₁, x₂ ⊕ x₃, ...) are scanned at half the length, which gives the odd
positions, and the even ones are the previous odd prefix ⊕ their own element. Each
level halves the length, so the work is O(n) and the depth O(log n), and derivatives,
batching and export are those of the primitives used (a product's gradient is right at
zeros, where a division by x would not be). Sums are added in a tree order, not numpy's
left to right, so float results may differ from numpy's in the last bits.

Dtypes follow `shax.numpy.sum`'s (JAX's): an integer running sum keeps its dtype, and
`dtype=` converts first; on numpy values numpy's own (which widens small integers).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError
from shax.core.types import dtype_of_numpy, weak_dtype
from shax.numpy._arrays import _fail, _int, concatenate, moveaxis, normalize_axis, reshape
from shax.numpy._elementwise import as_array
from shax.numpy._options import unsupported
from shax.tracing.tracer import Tracer

__all__ = ["cumprod", "cumsum", "diff"]


def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running sums along `axis` (of the flattened a if None)."""
    return _cumulative("cumsum", np.cumsum, tc.add, a, axis, dtype, out)


def cumprod(a: Any, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
    """Running products along `axis` (of the flattened a if None)."""
    return _cumulative("cumprod", np.cumprod, tc.mul, a, axis, dtype, out)


def _cumulative(
    op: str, numpy: Callable[..., Any], combine: Callable[[Any, Any], Any], a: Any, axis: Any, dtype: Any, out: Any
) -> Any:
    unsupported(op, "out", out, None)
    a = as_array(a, op)
    numpy_value = not isinstance(a, Tracer)
    if numpy_value:
        a = np.asarray(a)
        if axis is not None:
            normalize_axis(op, axis, a.ndim)
    dtype = _dtype(op, dtype) if dtype is not None else None
    if dtype is None and np.dtype(a.dtype) == np.bool_:
        dtype = np.dtype(np.int_)  # numpy's: booleans are counted in its default int, as by `sum`
    if numpy_value:
        return numpy(a, axis=axis, dtype=a.dtype if dtype is None else dtype)
    if dtype is not None:
        a = tc.convert_element_type(a, dtype)
    if axis is None:
        a, axis = reshape(a, -1), 0
    k = normalize_axis(op, axis, len(tc.shape(a)))
    return moveaxis(_scan(combine, moveaxis(a, k, -1)), -1, k)


def _dtype(op: str, dtype: Any) -> Any:
    try:
        return dtype_of_numpy(dtype).numpy
    except ShaxTypeError as error:  # a dtype numpy or shax does not know
        raise _fail(op, f"dtype={dtype!r}: {error}", ShaxTypeError) from None


def _scan(combine: Callable[[Any, Any], Any], x: Any) -> Any:
    """The prefix combinations of x along its last axis: y_i = x_0 ⊕ ... ⊕ x_i."""
    *batch, n = tc.shape(x)
    if n <= 1:
        return x
    if n % 2:
        head = _scan(combine, _last(x, 0, n - 1))
        return concatenate([head, combine(_last(head, n - 2, n - 1), _last(x, n - 1, n))], axis=-1)
    pairs = tc.reshape(x, [*batch, n // 2, 2])
    evens = tc.reshape(tc.slice(pairs, [0] * (len(batch) + 2), [*batch, n // 2, 1]), [*batch, n // 2])
    odds = tc.reshape(tc.slice(pairs, [0] * len(batch) + [0, 1], [*batch, n // 2, 2]), [*batch, n // 2])
    odd = _scan(combine, combine(evens, odds))  # y_{2j+1}
    if n == 2:
        even = evens
    else:
        even = concatenate([_last(evens, 0, 1), combine(_last(odd, 0, n // 2 - 1), _last(evens, 1, n // 2))], axis=-1)
    interleaved = tc.concatenate(
        tc.reshape(even, [*batch, n // 2, 1]), tc.reshape(odd, [*batch, n // 2, 1]), len(batch) + 1
    )
    return tc.reshape(interleaved, [*batch, n])


def _last(x: Any, start: int, end: int) -> Any:
    """x[..., start:end]."""
    *batch, _ = tc.shape(x)
    return tc.slice(x, [0] * len(batch) + [start], [*batch, end])


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """numpy's n-th discrete difference along `axis`: out[i] = a[i + 1] − a[i], n times,
    after `prepend` and `append` (numbers broadcast across the other axes) join a."""
    n = _int("diff", n, "n")
    if n < 0:
        raise _fail("diff", f"order n must be non-negative, got {n}")
    a = as_array(a, "diff")
    if not isinstance(a, Tracer) and not any(isinstance(v, Tracer) for v in (prepend, append)):
        a = np.asarray(a)
        if a.ndim == 0:
            raise _fail("diff", "needs an array of rank at least 1, got a 0-d one")
        normalize_axis("diff", axis, a.ndim)
        kwargs = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
        try:
            return np.diff(a, n, axis, **kwargs)
        except ValueError as error:
            raise _fail("diff", f"numpy: {error}") from None
    shape = list(tc.shape(a))
    if not shape:
        raise _fail("diff", "needs an array of rank at least 1, got a 0-d one")
    k = normalize_axis("diff", axis, len(shape))
    edges = [_edge(e, a, k) if e is not None else None for e in (prepend, append)]
    parts = [e for e in (edges[0], a, edges[1]) if e is not None]
    joined = concatenate(parts, axis=k) if len(parts) > 1 else a
    for _ in range(n):
        size = tc.shape(joined)[k]
        if size == 0:
            break
        start, end = [0] * len(shape), list(tc.shape(joined))
        start[k] = 1
        upper = tc.slice(joined, start, end)
        start[k], end[k] = 0, size - 1
        joined = tc.sub(upper, tc.slice(joined, start, end))
    return joined


def _edge(value: Any, a: Any, k: int) -> Any:
    """`prepend` or `append`: a number broadcast to one slice of a along axis k (a Python
    number in a's dtype, weakly), an array as it is."""
    shape = list(tc.shape(a))
    if isinstance(value, (bool, int, float)):
        value = np.asarray(value, weak_dtype(value, a.dtype, "diff").numpy)
    value = as_array(value, "diff")
    if not tc.shape(value):
        return tc.broadcast_to(value, [*shape[:k], 1, *shape[k + 1 :]])
    return value
