"""numpy's order statistics, `quantile` and `percentile` (numpy's default method,
"linear", and "lower", "higher", "nearest", "midpoint"), `median`, `ptp` and the weighted
`average`, and `vectorize` (JAX's: a function of core elements mapped over the others
with `shax.vmap`).

A quantile sorts along the axes (moved last and flattened) and reads the two sorted
neighbours of position q·(n − 1), interpolated as numpy's `_lerp` computes it (from the
nearer one); a NaN anywhere makes it NaN, as numpy's. q may be traced (a gather at the
computed positions), so derivatives reach both a and q.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError
from shax.numpy._arrays import _fail, broadcast_to, moveaxis, reshape
from shax.numpy._elementwise import as_array
from shax.numpy._indexing import sort, take
from shax.numpy._options import one_of, unsupported
from shax.numpy._reductions import _flag, _kept, reduction_axes
from shax.numpy._reductions import max as _max
from shax.numpy._reductions import mean as _mean
from shax.numpy._reductions import min as _min
from shax.numpy._reductions import sum as _sum
from shax.tracing.tracer import Tracer

__all__ = ["average", "median", "percentile", "ptp", "quantile", "vectorize"]

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(
    a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False, method: str = "linear",
    keepdims: bool = False, *, weights: None = None,
) -> Any:  # fmt: skip
    """The q-th quantiles (q in [0, 1]) of a along `axis` (all axes if None); q's axes first."""
    return _quantile("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights, 1.0)


def percentile(
    a: Any, q: Any, axis: Any = None, out: None = None, overwrite_input: bool = False, method: str = "linear",
    keepdims: bool = False, *, weights: None = None,
) -> Any:  # fmt: skip
    """The q-th percentiles (q in [0, 100]): `quantile(a, q / 100)`."""
    return _quantile("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights, 100.0)


def _quantile(
    op: str, a: Any, q: Any, axis: Any, out: Any, overwrite: Any, method: Any, keepdims: Any, weights: Any, scale: float
) -> Any:
    unsupported(op, "out", out, None)
    unsupported(op, "weights", weights, None)
    one_of(op, "overwrite_input", overwrite, (True, False))
    one_of(op, "method", method, _METHODS)
    a, q = as_array(a, op), as_array(q, op)
    if not isinstance(a, Tracer) and not isinstance(q, Tracer):
        try:
            function = np.quantile if scale == 1.0 else np.percentile
            return function(a, q, axis, method=method, keepdims=_flag(op, keepdims))
        except (TypeError, ValueError) as error:
            raise _fail(
                op, f"numpy: {error}", ShaxTypeError if isinstance(error, TypeError) else ShaxValueError
            ) from None
    if not (a.dtype.is_float if isinstance(a, Tracer) else np.asarray(a).dtype.kind == "f"):
        raise _fail(op, f"of a traced array needs floats, got {getattr(a, 'type', np.asarray(a).dtype)}", ShaxTypeError)
    shape = tuple(tc.shape(a))
    axes = reduction_axes(op, shape, axis if axis is None or isinstance(axis, tuple) else (axis,))
    rest = [k for k in range(len(shape)) if k not in axes]
    block = tc.transpose(a, [*rest, *axes]) if axes else a
    n = int(np.prod([shape[k] for k in axes]))
    flat = sort(reshape(block, [*(shape[k] for k in rest), n]), -1)
    dtype = flat.dtype.numpy
    position: Any
    if isinstance(q, Tracer):
        position = q / scale * float(n - 1)
    else:  # numpy's positions, in f64
        try:
            position = np.asarray(q, np.float64) / scale * (n - 1)
        except (TypeError, ValueError) as error:
            raise _fail(op, f"q must be numbers, got {q!r}: {error}", ShaxTypeError) from None
    below: Any = tc.floor(position)
    above: Any = tc.ceil(position)
    low = take(flat, tc.convert_element_type(below, np.int32), -1)
    high = take(flat, tc.convert_element_type(above, np.int32), -1)
    if method == "lower":
        result = low
    elif method == "higher":
        result = high
    elif method == "nearest":
        result = tc.where(_rounds_down(position, below), low, high)
    else:
        t: Any = tc.sub(position, below) if method == "linear" else np.asarray(0.5, dtype)
        t = t if isinstance(t, Tracer) else np.asarray(t, dtype)
        step = tc.sub(high, low)
        result = tc.where(tc.ge(t, 0.5), tc.sub(high, tc.mul(step, tc.sub(1.0, t))), tc.add(low, tc.mul(step, t)))
    nan = tc.ne(take(flat, np.int32(n - 1), -1), take(flat, np.int32(n - 1), -1))
    q_rank = len(tc.shape(q))
    result = moveaxis(result, list(range(len(rest), len(rest) + q_rank)), list(range(q_rank))) if q_rank else result
    result = tc.where(nan, np.asarray(np.nan, dtype), result)
    if _flag(op, keepdims):
        result = reshape(result, [*tc.shape(q), *_kept(shape, axes)])
    return result


def median(a: Any, axis: Any = None, out: None = None, overwrite_input: bool = False, keepdims: bool = False) -> Any:
    """numpy's median: the mean of the two middle elements (the middle one twice for an odd
    count), so each gets half the gradient; NaN if a NaN is among them."""
    a = as_array(a, "median")
    if not isinstance(a, Tracer):
        unsupported("median", "out", out, None)
        return _numpy_statistic("median", np.median, a, axis, overwrite_input=overwrite_input, keepdims=keepdims)
    low, high = (
        _quantile("median", a, 0.5, axis, out, overwrite_input, side, keepdims, None, 1.0)
        for side in ("lower", "higher")
    )
    return tc.mul(tc.add(low, high), 0.5)


def ptp(a: Any, axis: Any = None, out: None = None, keepdims: bool = False) -> Any:
    """numpy's peak to peak: max − min along `axis`."""
    a = as_array(a, "ptp")
    if not isinstance(a, Tracer):
        unsupported("ptp", "out", out, None)
        return _numpy_statistic("ptp", np.ptp, a, axis, keepdims=keepdims)
    return tc.sub(_max(a, axis, out, keepdims), _min(a, axis, out, keepdims))


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False, *, keepdims: bool = False) -> Any:
    """numpy's weighted average Σ a·w / Σ w along `axis` (the mean without weights), in
    numpy's dtype (f64 for integers); a 1-D `weights` lies along the one `axis`.
    `returned` adds Σ w (the count without weights), broadcast to the average's shape."""
    a, weights = as_array(a, "average"), as_array(weights, "average")
    one_of("average", "returned", returned, (True, False))
    if not isinstance(a, Tracer) and not isinstance(weights, Tracer):
        return _numpy_statistic("average", np.average, a, axis, weights=weights, returned=returned, keepdims=keepdims)
    shape = tuple(tc.shape(a))
    if weights is None:
        avg = _mean(a, axis, keepdims=keepdims)
        total: Any = np.asarray(int(np.prod(shape)) / max(int(np.prod(tc.shape(avg))), 1), _dtype(avg))
    else:
        dtype = np.result_type(_dtype(a), _dtype(weights), *(["f8"] if np.dtype(_dtype(a)).kind in "biu" else []))
        a, weights = _cast(a, dtype), _cast(weights, dtype)
        w_shape = tuple(tc.shape(weights))
        if w_shape != shape:
            if axis is None:
                raise _fail("average", f"axis must be given when weights {w_shape} differ from a's shape {shape}")
            if len(w_shape) != 1 or not isinstance(axis, (int, np.integer)):
                message = f"weights of shape {w_shape} must be 1-D, along one int axis, when a's shape is {shape}"
                raise _fail("average", message, ShaxTypeError)
            k = reduction_axes("average", shape, (axis,))[0]
            if w_shape[0] != shape[k]:
                raise _fail("average", f"weights of length {w_shape[0]} differ from a's axis {k} of length {shape[k]}")
            weights = broadcast_to(reshape(weights, [shape[k] if j == k else 1 for j in range(len(shape))]), shape)
        total = _sum(weights, axis, keepdims=keepdims)
        avg = tc.div(_sum(tc.mul(a, weights), axis, keepdims=keepdims), total)
    if not _flag("average", returned):
        return avg
    return avg, broadcast_to(total, tuple(tc.shape(avg)))


def _dtype(x: Any) -> Any:
    return x.dtype.numpy if isinstance(x, Tracer) else np.asarray(x).dtype


def _cast(x: Any, dtype: Any) -> Any:
    if isinstance(x, Tracer):
        return x if x.dtype.numpy == dtype else tc.convert_element_type(x, dtype)
    return np.asarray(x, dtype)


def _numpy_statistic(op: str, function: Callable[..., Any], a: Any, axis: Any, **kwargs: Any) -> Any:
    """numpy's own `function`; what it refuses a ShaxError naming `op`."""
    try:
        return function(a, axis=axis, **kwargs)
    except (TypeError, ValueError, ZeroDivisionError) as error:
        raise _fail(op, f"numpy: {error}", ShaxTypeError if isinstance(error, TypeError) else ShaxValueError) from None


def _rounds_down(position: Any, below: Any) -> Any:
    """numpy's "nearest": the lower neighbour unless past the half, halves to the even index."""
    t = tc.sub(position, below)
    even = tc.eq(tc.rem(below, 2.0), 0.0)
    return tc.logical_or(tc.lt(t, 0.5), tc.logical_and(tc.eq(t, 0.5), even))


def vectorize(
    pyfunc: Callable[..., Any], *, excluded: frozenset[Any] = frozenset(), signature: str | None = None
) -> Callable[..., Any]:
    """JAX's vectorize: `pyfunc` of core elements (scalars, or the core shapes of a
    gufunc `signature` such as "(n),(n)->()") applied over the broadcast loop axes of its
    arguments, as one `shax.vmap` over them flattened; `excluded` positions and names are
    passed as they are."""
    import shax  # the transforms, which import shax.numpy

    inputs = _signature(signature)

    def vectorized(*args: Any, **kwargs: Any) -> Any:
        positions = [k for k in range(len(args)) if k not in excluded]
        arrays = [as_array(args[k]) if not isinstance(args[k], Tracer) else args[k] for k in positions]
        arrays = [np.asarray(x) if not isinstance(x, (Tracer, np.ndarray)) else x for x in arrays]
        cores = inputs if inputs is not None else [()] * len(arrays)
        if len(cores) != len(arrays):
            raise _fail("vectorize", f"signature {signature!r} has {len(cores)} inputs, got {len(arrays)} arguments")
        loops = []
        for x, core in zip(arrays, cores):
            shape = tuple(tc.shape(x))
            if len(shape) < len(core):
                raise _fail("vectorize", f"an argument of shape {shape} has fewer axes than its core {core}")
            loops.append(shape[: len(shape) - len(core)])
        try:
            loop = np.broadcast_shapes(*loops)
        except ValueError as error:
            raise _fail("vectorize", f"the loop axes do not broadcast: {error}") from None
        size = int(np.prod(loop))
        flat = [
            reshape(broadcast_to(x, (*loop, *tc.shape(x)[len(lp) :])), [size, *tc.shape(x)[len(lp) :]])
            for x, lp in zip(arrays, loops)
        ]

        def core_call(*cores_: Any) -> Any:
            full = list(args)
            for k, c in zip(positions, cores_):
                full[k] = c
            return pyfunc(*full, **kwargs)

        result = shax.vmap(core_call)(*flat)
        unflat = lambda r: reshape(r, [*loop, *tc.shape(r)[1:]])  # noqa: E731
        return tuple(unflat(r) for r in result) if isinstance(result, tuple) else unflat(result)

    vectorized.__name__ = getattr(pyfunc, "__name__", "vectorized")
    return vectorized


def _signature(signature: str | None) -> list[tuple[str, ...]] | None:
    """numpy's gufunc signature "(m,n),(n)->(m)" as the core dimension names of each input
    (the outputs' core shapes are what the function returns)."""
    if signature is None:
        return None
    match = re.fullmatch(r"\s*(.*?)\s*->\s*(.*?)\s*", signature)
    if not match:
        raise _fail("vectorize", f"not a valid gufunc signature: {signature!r}")
    parse = lambda side: [  # noqa: E731
        tuple(d.strip() for d in group.split(",") if d.strip()) for group in re.findall(r"\(([^)]*)\)", side)
    ]
    return parse(match.group(1))
