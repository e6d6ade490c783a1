"""numpy's truth tests: `all`, `any`, `count_nonzero`, `isnan`, `isinf`, `isfinite`,
`isclose`, `allclose`, and `nan_to_num`, which replaces what they find.

On numpy values numpy's own. Traced, each is written with comparisons and `select`:
x is NaN where x ≠ x, infinite where |x| = ∞, finite where |x| < ∞; a truth reduction
reduces the 0/1 ints of its test (shax does not reduce bools); integers and bools are
never NaN nor infinite. Their results are bools (`count_nonzero`: i32 counts, JAX's
int), with no derivative; `nan_to_num`'s derivative is 1 where x is finite and 0 where it
was replaced (JAX's).
"""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError
from shax.core.types import dtype_of_numpy
from shax.numpy._arrays import _fail
from shax.numpy._elementwise import as_array
from shax.numpy._options import ufunc_options, unsupported
from shax.numpy._reductions import Axis, _flag, _kept, reduction_axes
from shax.tracing.tracer import Tracer

__all__ = [
    "all", "allclose", "any", "count_nonzero", "isclose", "isfinite", "isinf", "isnan", "nan_to_num",
]  # fmt: skip


_INF: Any = np.inf  # a float, which the typeclass functions take as a weak number


def _traced(*values: Any) -> bool:
    return builtins.any(isinstance(v, Tracer) for v in values)


def _numpy(op: str, function: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return function(*args, **kwargs)
    except TypeError as error:
        raise _fail(op, f"numpy: {error}", ShaxTypeError) from None
    except (ValueError, OverflowError) as error:  # numpy's AxisError is a ValueError
        raise _fail(op, f"numpy: {error}") from None


def _is_float(x: Any) -> bool:
    return np.dtype(x.dtype.numpy if isinstance(x, Tracer) else np.asarray(x).dtype).kind == "f"


def _truth(x: Any) -> Any:
    """x ≠ 0, a bool tensor (x itself if bool)."""
    return x if x.dtype.name == "bool" else tc.ne(x, 0)


def _truth_reduction(op: str, a: Any, axis: Axis, out: Any, keepdims: Any, where: Any, largest: bool) -> Any:
    unsupported(op, "out", out, None)
    a = as_array(a, op)
    if not _traced(a, where):
        return _numpy(op, np.all if not largest else np.any, a, axis, keepdims=_flag(op, keepdims), where=where)
    if not isinstance(a, Tracer):
        a = np.asarray(a)
    shape = tuple(tc.shape(a))
    axes = reduction_axes(op, shape, axis)
    truth: Any = _truth(a) if isinstance(a, Tracer) else np.asarray(a, bool)
    if not (isinstance(where, bool) and where):
        truth = tc.where(as_array(where, op), truth, not largest)
    counts: Any = tc.convert_element_type(truth, np.int32)
    reduced: Any = (tc.reduce_max if largest else tc.reduce_min)(counts, axes) if axes else counts
    result = tc.ne(reduced, 0)
    return tc.reshape(result, _kept(shape, axes)) if _flag(op, keepdims) else result


def all(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, *, where: Any = True) -> Any:  # noqa: A001
    """Whether every element (along `axis`) is nonzero (NaN is)."""
    return _truth_reduction("all", a, axis, out, keepdims, where, largest=False)


def any(a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, *, where: Any = True) -> Any:  # noqa: A001
    """Whether some element (along `axis`) is nonzero."""
    return _truth_reduction("any", a, axis, out, keepdims, where, largest=True)


def count_nonzero(a: Any, axis: Axis = None, *, keepdims: bool = False) -> Any:
    """The number of nonzero elements (along `axis`): numpy's ints, i32 traced (JAX's)."""
    a = as_array(a, "count_nonzero")
    if not isinstance(a, Tracer):
        return _numpy("count_nonzero", np.count_nonzero, a, axis, keepdims=_flag("count_nonzero", keepdims))
    shape = tuple(tc.shape(a))
    axes = reduction_axes("count_nonzero", shape, axis)
    counts = tc.convert_element_type(_truth(a), np.int32)
    result = tc.reduce_sum(counts, axes)
    return tc.reshape(result, _kept(shape, axes)) if _flag("count_nonzero", keepdims) else result


def isnan(x: Any, /, **options: Any) -> Any:
    """x ≠ x: only NaN is not equal to itself."""
    ufunc_options("isnan", options)
    x = as_array(x, "isnan")
    return tc.ne(x, x) if isinstance(x, Tracer) else _numpy("isnan", np.isnan, x)


def isinf(x: Any, /, **options: Any) -> Any:
    """|x| = ∞ (never, for integers and bools)."""
    ufunc_options("isinf", options)
    x = as_array(x, "isinf")
    if not isinstance(x, Tracer):
        return _numpy("isinf", np.isinf, x)
    return tc.eq(tc.abs(x), _INF) if _is_float(x) else tc.ne(x, x)


def isfinite(x: Any, /, **options: Any) -> Any:
    """|x| < ∞: false for ∞ and NaN (true always, for integers and bools)."""
    ufunc_options("isfinite", options)
    x = as_array(x, "isfinite")
    if not isinstance(x, Tracer):
        return _numpy("isfinite", np.isfinite, x)
    return tc.lt(tc.abs(x), _INF) if _is_float(x) else tc.eq(x, x)


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """numpy's |a − b| ≤ atol + rtol·|b| for finite b, or a = b (so ∞ is close to ∞ only);
    NaNs close to each other with `equal_nan`. Computed in numpy's float dtype of a, b
    and 1.0 (integers in f64)."""
    a, b = as_array(a, "isclose"), as_array(b, "isclose")
    if not isinstance(equal_nan, (bool, np.bool_)):
        raise _fail("isclose", f"equal_nan must be a bool, got {equal_nan!r}", ShaxTypeError)
    if not _traced(a, b, rtol, atol):
        return _numpy("isclose", np.isclose, a, b, rtol, atol, equal_nan)
    x, y = _inexact("isclose", a, b)
    near = tc.le(tc.abs(tc.sub(x, y)), tc.add(atol, tc.mul(rtol, tc.abs(y))))
    result = tc.logical_or(tc.logical_and(near, isfinite(y)), tc.eq(x, y))
    if equal_nan:
        result = tc.logical_or(result, tc.logical_and(isnan(x), isnan(y)))
    return result


def _inexact(op: str, a: Any, b: Any) -> tuple[Any, Any]:
    """a and b in numpy's float result dtype of the two and 1.0 (Python numbers weakly)."""
    try:
        dtype = np.result_type(_dtype_of(a), _dtype_of(b), 1.0)
        dtype_of_numpy(dtype)
    except (TypeError, ValueError, ShaxTypeError) as error:
        raise _fail(op, f"no common float dtype of {a!r} and {b!r}: {error}", ShaxTypeError) from None
    return tuple(  # type: ignore[return-value]  # two in, two out
        tc.convert_element_type(v, dtype) if isinstance(v, Tracer) else np.asarray(v, dtype) for v in (a, b)
    )


def _dtype_of(value: Any) -> Any:
    """numpy's dtype of a value (a Python number as it is, weak in `np.result_type`)."""
    if isinstance(value, (bool, int, float)):
        return value
    return np.dtype(value.dtype.numpy) if isinstance(value, Tracer) else np.asarray(value).dtype


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False) -> Any:
    """Whether all of a is close to b (`isclose`): numpy's bool, a traced bool[]."""
    if not _traced(as_array(a, "allclose"), as_array(b, "allclose"), rtol, atol):
        return builtins.bool(_numpy("allclose", np.allclose, as_array(a), as_array(b), rtol, atol, equal_nan))
    return all(isclose(a, b, rtol, atol, equal_nan))


def nan_to_num(
    x: Any, copy: bool = True, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None
) -> Any:
    """x with NaN replaced by `nan`, ∞ by `posinf` (default: the dtype's largest) and −∞ by
    `neginf` (its smallest); integers and bools as they are."""
    x = as_array(x, "nan_to_num")
    if not isinstance(x, Tracer):
        return _numpy("nan_to_num", np.nan_to_num, x, copy, nan, posinf, neginf)
    for name, value in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if value is not None and (
            isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number))
        ):
            raise _fail("nan_to_num", f"{name} must be a number, got {value!r}", ShaxTypeError)
    if not _is_float(x):
        return x
    info: Any = np.finfo(x.dtype.numpy)
    big = info.max if posinf is None else posinf
    small = info.min if neginf is None else neginf
    x = tc.where(tc.eq(x, _INF), np.asarray(big, x.dtype.numpy), x)
    x = tc.where(tc.eq(x, -_INF), np.asarray(small, x.dtype.numpy), x)
    return tc.where(tc.ne(x, x), np.asarray(nan, x.dtype.numpy), x)
