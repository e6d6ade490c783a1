"""numpy's `convolve` and `cov`.

`convolve` of floats is one `conv_general_dilated` (XLA's convolution, a correlation: the
kernel reversed), so its derivative and batching are the primitive's; of integers and
booleans, which the primitive does not take, a sum of shifted products (exact, as numpy's).
`cov` is numpy's formula: the rows centred by their (weighted) means, their products summed
and divided by the degrees of freedom."""

from __future__ import annotations

from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError
from shax.numpy._arrays import _fail, concatenate
from shax.numpy._elementwise import as_array
from shax.numpy._options import one_of
from shax.numpy._statistics import average
from shax.tracing.tracer import Tracer

__all__ = ["convolve", "cov"]


def _numpy(op: str, function: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return function(*args, **kwargs)
    except (TypeError, ValueError, RuntimeError) as error:  # cov's mismatched weights are a RuntimeError
        raise _fail(op, f"numpy: {error}", ShaxTypeError if isinstance(error, TypeError) else ShaxValueError) from None


def _dtype(x: Any) -> Any:
    return np.dtype(x.dtype.numpy) if isinstance(x, Tracer) else np.asarray(x).dtype


def _cast(x: Any, dtype: Any, op: str = "cov") -> Any:
    if isinstance(x, Tracer):
        return x if x.dtype.numpy == dtype else tc.convert_element_type(x, dtype)
    if np.asarray(x).dtype.kind not in "biuf":
        raise _fail(op, f"needs real numbers, got {np.asarray(x).dtype} {x!r:.60}", ShaxTypeError)
    return np.asarray(x, dtype)


def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """The discrete convolution Σ_m a[m] v[n − m] of two vectors: every overlap ("full",
    length N + M − 1), the centre of it of the longer's length ("same"), or where they
    overlap wholly ("valid")."""
    one_of("convolve", "mode", mode, ("full", "same", "valid"))
    a, v = as_array(a, "convolve"), as_array(v, "convolve")
    if not isinstance(a, Tracer) and not isinstance(v, Tracer):
        return _numpy("convolve", np.convolve, a, v, mode)
    shapes = (tuple(tc.shape(a)), tuple(tc.shape(v)))
    if any(len(s) != 1 for s in shapes) or 0 in (shapes[0] + shapes[1]):
        raise _fail("convolve", f"needs two non-empty vectors, got shapes {shapes[0]} and {shapes[1]}")
    dtype = np.result_type(_dtype(a), _dtype(v))
    if dtype.kind not in "biuf":
        raise _fail("convolve", f"needs numbers, got {dtype}", ShaxTypeError)
    a, v = _cast(a, dtype, "convolve"), _cast(v, dtype, "convolve")
    if shapes[1][0] > shapes[0][0]:  # numpy's: the longer is the signal
        a, v = v, a
    n, m = tc.shape(a)[0], tc.shape(v)[0]
    # padding per mode: the output's first element overlaps m − pad elements of v
    pad = {"full": m - 1, "same": m // 2, "valid": 0}[mode]
    hi = {"full": m - 1, "same": m - 1 - m // 2, "valid": 0}[mode]
    if dtype.kind == "f":
        lhs, rhs = tc.reshape(a, [1, 1, n]), tc.reshape(tc.rev(v, [0]), [1, 1, m])
        dims = ((0, 1, 2), (0, 1, 2), (0, 1, 2))
        out = tc.conv_general_dilated(lhs, rhs, [1], [(pad, hi)], [1], [1], dims, 1, 1)
        return tc.reshape(out, [n + pad + hi - m + 1])
    # out[k] = Σ_j padded[k + j] · v[m − 1 − j]
    zeros = np.zeros(max(pad, hi, 0), dtype)
    padded = concatenate([zeros[:pad], a, zeros[:hi]])
    length = n + pad + hi - m + 1
    total: Any = None
    for j in range(m):
        term = tc.mul(tc.slice(padded, [j], [j + length]), tc.slice(v, [m - 1 - j], [m - j]))
        total = term if total is None else tc.add(total, term)
    return total


def cov(
    m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None, fweights: Any = None,
    aweights: Any = None, *, dtype: Any = None,
) -> Any:  # fmt: skip
    """numpy's covariance matrix of the variables (rows, or columns if not `rowvar`) of m
    (and y): Σ w (x − x̄)(x − x̄)ᵀ / (Σ w − ddof) with the weights w = fweights · aweights,
    ddof 1 (0 if `bias`), the aweights' correction as numpy's; a scalar for one variable."""
    m, y = as_array(m, "cov"), as_array(y, "cov")
    if not any(isinstance(t, Tracer) for t in (m, y, fweights, aweights)):
        kwargs = {"fweights": fweights, "aweights": aweights, "dtype": dtype}
        return _numpy("cov", np.cov, m, y, rowvar, bias, ddof, **kwargs)
    for name, flag in (("rowvar", rowvar), ("bias", bias)):
        if not isinstance(flag, (bool, np.bool_, int)):
            raise _fail("cov", f"{name} must be a bool, got {flag!r}", ShaxTypeError)
    if ddof is not None and (isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer))):
        raise _fail("cov", f"ddof must be an integer, got {ddof!r}", ShaxTypeError)
    kinds = [np.dtype(_dtype(t)) for t in (m, y) if t is not None]
    result = np.dtype(dtype) if dtype is not None else np.result_type(*kinds, np.float64)
    if result.kind != "f":
        raise _fail("cov", f"dtype must be a float dtype, got {result}", ShaxTypeError)
    x = _rows("cov", _cast(m, result), rowvar)
    if y is not None:
        x = concatenate([x, _rows("cov", _cast(y, result), rowvar)], axis=0)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    variables, n = tc.shape(x)
    w: Any = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        weights = _cast(as_array(weights, "cov"), result)
        if tuple(tc.shape(weights)) != (n,):
            raise _fail("cov", f"{name} must be a vector of the {n} observations, got {tuple(tc.shape(weights))}")
        w = weights if w is None else tc.mul(w, weights)
    if w is None:
        mean = average(x, 1)
        fact: Any = np.asarray(max(n - ddof, 0), result)
    else:
        mean, w_sum = average(x, 1, w, returned=True)
        w_sum = tc.slice(w_sum, [0], [1])
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = tc.sub(w_sum, float(ddof))
        else:
            fact = tc.sub(
                w_sum, tc.div(tc.mul(float(ddof), tc.reduce_sum(tc.mul(w, _cast(aweights, result)), [0])), w_sum)
            )
        fact = tc.maximum(fact, 0.0)
    centred = tc.sub(x, tc.reshape(mean, [variables, 1]))
    weighted = centred if w is None else tc.mul(centred, w)
    c = tc.div(tc.dot_general(centred, weighted, ((1,), (1,), (), ())), tc.reshape(fact, []))
    return tc.reshape(c, []) if variables == 1 else c


def _rows(op: str, x: Any, rowvar: Any) -> Any:
    """x as a matrix of one variable per row (numpy's: a vector is one variable)."""
    shape = tuple(tc.shape(x))
    if len(shape) > 2:
        raise _fail(op, f"m and y must have at most 2 axes, got shape {shape}")
    if len(shape) < 2:
        return tc.reshape(x, [1, int(np.prod(shape))])
    return x if rowvar or shape[0] == 1 else tc.transpose(x, [1, 0])
