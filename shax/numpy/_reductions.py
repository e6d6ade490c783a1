"""numpy's reductions, on numpy values and tracers alike: `sum`, `prod`, `max`/`amax`,
`min`/`amin`, `mean`, `var`, `std`, `argmax`, `argmin`, with numpy's `axis` (None for all
axes, an int or a tuple of them, negative counting from the end) and `keepdims`; `mean`,
`var` and `std` with numpy's `dtype` (of an integer or bool array: f64), `var` and `std`
with its `ddof`.

Each normalises its axes and calls the typeclass function (`tc.reduce_sum(x, axes)`,
`tc.argmax(x, axis)`); keepdims reshapes the result, the reduced axes kept with size 1.
Where shax's types differ from numpy's, results follow JAX's: integer sums and products
keep the operand's dtype, i32, i64 or u8 (numpy widens to int64 or uint64), indices are i32; a bool's
sum and product are numpy's, in i64.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable
from typing import Any, SupportsIndex

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.types import DType, dtype_of_numpy
from shax.numpy._elementwise import as_array
from shax.numpy._options import unsupported

__all__ = ["amax", "amin", "argmax", "argmin", "max", "mean", "min", "prod", "std", "sum", "var"]

Axis = SupportsIndex | tuple[SupportsIndex, ...] | None  # numpy's integers too


def sum(  # noqa: A001 - numpy's name
    a: Any,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    keepdims: bool = False,
    initial: None = None,
    where: Any = True,
) -> Any:
    """The sum over `axis`, of a converted to `dtype` first if given (`sum(mask, dtype=int)`);
    a bool array's in numpy's default int, as numpy counts."""
    _unsupported("sum", out=out, initial=initial, where=where)
    a = _counted(as_array(a)) if dtype is None else _converted("sum", a, dtype)
    return _reduce("sum", tc.reduce_sum, a, axis, keepdims)


def prod(
    a: Any,
    axis: Axis = None,
    dtype: None = None,
    out: None = None,
    keepdims: bool = False,
    initial: None = None,
    where: Any = True,
) -> Any:
    _unsupported("prod", dtype=dtype, out=out, initial=initial, where=where)
    return _reduce("prod", tc.reduce_prod, _counted(as_array(a)), axis, keepdims)


def max(  # noqa: A001 - numpy's name
    a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, initial: Any = None, where: Any = True
) -> Any:
    _unsupported("max", out=out, where=where)
    return _initial("max", _reduce("max", _ordered(tc.reduce_max), a, axis, keepdims), initial, tc.maximum)


def min(  # noqa: A001 - numpy's name
    a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, initial: Any = None, where: Any = True
) -> Any:
    _unsupported("min", out=out, where=where)
    return _initial("min", _reduce("min", _ordered(tc.reduce_min), a, axis, keepdims), initial, tc.minimum)


def amax(
    a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, initial: Any = None, where: Any = True
) -> Any:
    _unsupported("amax", out=out, where=where)
    return _initial("amax", _reduce("amax", _ordered(tc.reduce_max), a, axis, keepdims), initial, tc.maximum)


def amin(
    a: Any, axis: Axis = None, out: None = None, keepdims: bool = False, initial: Any = None, where: Any = True
) -> Any:
    _unsupported("amin", out=out, where=where)
    return _initial("amin", _reduce("amin", _ordered(tc.reduce_min), a, axis, keepdims), initial, tc.minimum)


def mean(
    a: Any, axis: Axis = None, dtype: Any = None, out: None = None, keepdims: bool = False, *, where: Any = True
) -> Any:
    """The mean, computed in `dtype` (a float dtype); by default in a's, or f64 for an
    integer or bool a (numpy's)."""
    _unsupported("mean", out=out)
    a = _accumulated("mean", a, dtype)
    if isinstance(where, (bool, np.bool_)) and where:
        return _reduce("mean", tc.mean, a, axis, keepdims)
    # Σ a where `where` / the number of such elements (NaN where none, numpy's 0 / 0).
    mask = tc.broadcast_to(as_array(where), list(tc.shape(a)))
    total = _reduce("mean", tc.reduce_sum, tc.where(mask, a, 0.0), axis, keepdims)
    count = _reduce("mean", tc.reduce_sum, tc.convert_element_type(mask, np.dtype(a.dtype)), axis, keepdims)
    return tc.div(total, count)


def var(
    a: Any,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: Any = True,
    correction: int | None = None,
) -> Any:
    """Σ |a − mean a|² / (n − ddof) (`correction` is the array API's name for ddof),
    computed in `dtype` as `mean`."""
    _unsupported("var", out=out, where=where)
    d = _ddof("var", ddof, correction)
    return _reduce("var", lambda x, axes: tc.var(x, axes, d), _accumulated("var", a, dtype), axis, keepdims)


def std(
    a: Any,
    axis: Axis = None,
    dtype: Any = None,
    out: None = None,
    ddof: int = 0,
    keepdims: bool = False,
    *,
    where: Any = True,
    correction: int | None = None,
) -> Any:
    """√var, numpy's: the square root of `var` with the same options."""
    _unsupported("std", out=out, where=where)
    d = _ddof("std", ddof, correction)
    return _reduce("std", lambda x, axes: tc.sqrt(tc.var(x, axes, d)), _accumulated("std", a, dtype), axis, keepdims)


def argmax(a: Any, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Any:
    """The index (i32) of the first largest element along `axis`, of the flattened array for None."""
    _unsupported("argmax", out=out)
    return _arg("argmax", tc.argmax, a, axis, keepdims)


def argmin(a: Any, axis: int | None = None, out: None = None, *, keepdims: bool = False) -> Any:
    _unsupported("argmin", out=out)
    return _arg("argmin", tc.argmin, a, axis, keepdims)


def _converted(op: str, a: Any, dtype: Any) -> Any:
    """a as `dtype` (a numpy dtype shax has), a itself for None."""
    if dtype is None:
        return a
    try:
        numpy_dtype = dtype_of_numpy(dtype).numpy
    except ShaxTypeError as error:
        raise _error(ShaxTypeError(f"{op}: {error}")) from None
    a = _operand(as_array(a))
    return np.asarray(a, numpy_dtype) if not hasattr(a, "type") else tc.convert_element_type(a, numpy_dtype)


def _initial(op: str, reduced: Any, initial: Any, combine: Callable[[Any, Any], Any]) -> Any:
    """numpy's `initial`: one more element of every reduction (a number)."""
    if initial is None:
        return reduced
    if not isinstance(initial, (int, float, np.number)) or isinstance(initial, (bool, np.bool_)):
        raise _error(ShaxTypeError(f"{op}: initial must be a number, got {initial!r}"))
    if not hasattr(reduced, "type"):
        reduced = np.asarray(reduced)
        return combine(reduced, np.asarray(initial, reduced.dtype))
    return combine(reduced, initial)


def _unsupported(op: str, **options: Any) -> None:
    """numpy's options shax does not take (an output array, a dtype to sum or multiply
    in, an initial value, a `where` mask) are errors unless left at their defaults."""
    for name, value in options.items():
        unsupported(op, name, value, True if name == "where" else None)


def _reduce(op: str, reduce: Callable[[Any, list[int]], Any], a: Any, axis: Axis, keepdims: bool) -> Any:
    a = _operand(a)
    shape = tc.shape(a)
    axes = reduction_axes(op, shape, axis)
    out = reduce(a, axes)
    return tc.reshape(out, _kept(shape, axes)) if _flag(op, keepdims) else out


def _arg(op: str, reduce: Callable[[Any, int], Any], a: Any, axis: int | None, keepdims: bool) -> Any:
    a = _operand(a)
    shape = tc.shape(a)
    if axis is None:
        out = reduce(tc.reshape(a, [math.prod(shape)]), 0)
        return tc.reshape(out, [1] * len(shape)) if _flag(op, keepdims) else out
    if isinstance(axis, tuple):
        raise _error(ShaxTypeError(f"{op}: axis must be an int or None, got the tuple {axis}"))
    (a_axis,) = reduction_axes(op, shape, axis)
    out = reduce(a, a_axis)
    return tc.reshape(out, _kept(shape, [a_axis])) if _flag(op, keepdims) else out


def _ordered(reduce: Callable[[Any, list[int]], Any]) -> Callable[[Any, list[int]], Any]:
    """`reduce` (max or min) also of booleans, as numpy orders them (False < True: max is
    any, min all): the extreme of their 0s and 1s as i32, nonzero."""

    def apply(a: Any, axes: list[int]) -> Any:
        if getattr(a, "dtype", None) != np.bool_:
            return reduce(a, axes)
        return tc.ne(reduce(tc.convert_element_type(a, np.dtype(np.int32)), axes), 0)

    return apply


def _counted(a: Any) -> Any:
    """A bool array as numpy sums and multiplies it, in its default int (i64): `sum(mask)`
    counts; the conversion of a traced one is a `convert_element_type` binding."""
    dtype = getattr(a, "dtype", None)
    return tc.convert_element_type(a, np.dtype(np.int_)) if dtype is not None and dtype == np.bool_ else a


def _operand(a: Any) -> Any:
    """A Python number as the numpy scalar numpy makes of it; other values as they are."""
    return np.asarray(a) if isinstance(a, (bool, int, float)) else a


def _accumulated(op: str, a: Any, dtype: Any) -> Any:
    """`a` in the dtype numpy computes a mean or variance in: `dtype` if given (a float
    dtype), else a's own if a float one, else f64 (numpy's for integers and bools). The
    sums are then those of the converted values, as numpy's are."""
    number = isinstance(a, (bool, int, float))
    a = _operand(as_array(a))
    own = getattr(a, "dtype", None)  # a tracer's is a shax dtype
    have = np.dtype(own.numpy) if isinstance(own, DType) else np.asarray(a).dtype
    if dtype is None:
        want = have if np.issubdtype(have, np.floating) else np.dtype(np.float64)
    else:
        try:
            want = np.dtype(dtype.numpy) if isinstance(dtype, DType) else np.dtype(dtype)
        except TypeError:
            raise _error(ShaxTypeError(f"{op}: dtype={dtype!r} is not a dtype")) from None
        if not np.issubdtype(want, np.floating):
            raise _error(ShaxTypeError(f"{op}: dtype={dtype!r} is not a float dtype (shax computes means in floats)"))
    if want == have:
        return a
    # A Python number converts itself (numpy's int64 for an int is no shax type).
    return np.asarray(a, want) if number else tc.convert_element_type(a, want)


def _ddof(op: str, ddof: Any, correction: Any) -> int:
    """numpy's delta degrees of freedom (an int; `correction` its other name, not both)."""
    if correction is not None:
        if not (isinstance(ddof, (int, np.integer)) and ddof == 0):
            raise _error(ShaxValueError(f"{op}: ddof={ddof!r} and correction={correction!r} given together"))
        ddof = correction
    if isinstance(ddof, bool) or not isinstance(ddof, (int, np.integer)):
        raise _error(ShaxTypeError(f"{op}: ddof must be an int, got {ddof!r}"))
    return operator.index(ddof)


def reduction_axes(op: str, shape: tuple[int, ...], axis: Axis) -> list[int]:
    """numpy's `axis` as distinct axes in [0, rank): None is every axis, negatives count
    from the end; an axis out of range or given twice is an error, as in numpy."""
    rank = len(shape)
    if axis is None:
        return list(range(rank))
    given = axis if isinstance(axis, tuple) else (axis,)
    axes = []
    for a in given:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise _error(ShaxTypeError(f"{op}: axis must be an int, a tuple of ints or None, got {axis!r}"))
        if not -rank <= a < rank:
            raise _error(ShaxValueError(f"{op}: axis {a} is out of range for an array of rank {rank} {list(shape)}"))
        axes.append(operator.index(a) % rank)
    if len(set(axes)) != len(axes):
        raise _error(ShaxValueError(f"{op}: axis {axis} repeats an axis (of rank {rank})"))
    return axes


def _kept(shape: tuple[int, ...], axes: list[int]) -> list[int]:
    """The shape with the reduced axes kept, of size 1 (keepdims)."""
    return [1 if a in axes else n for a, n in enumerate(shape)]


def _flag(op: str, keepdims: Any) -> bool:
    if not isinstance(keepdims, (bool, np.bool_)):
        raise _error(ShaxTypeError(f"{op}: keepdims must be a bool, got {keepdims!r}"))
    return builtins.bool(keepdims)


def _error(error: ShaxError) -> ShaxError:
    return at(error, current_source())
