"""shax.numpy's array of numpy values, `Array`: numpy's ndarray with JAX's functional
updates `x.at[key].set(v)`, `.add(v)`, `.get()`, so a function written for tracers runs
on numpy values too. It adds nothing else: values, dtypes and shapes are numpy's, and
numpy's ufuncs and functions propagate it (`np.sin(x)`, `x + 1`). `asarray` and `array`
make one; every function of shax.numpy returns one where numpy would return an ndarray
(`returning_arrays`); numpy's scalars stay scalars, as numpy gives them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.types import dtype_of_numpy
from shax.numpy._arrays import _int, reshape, stack
from shax.tracing.at_updates import IndexUpdates
from shax.tracing.tracer import Tracer

__all__ = ["array", "asarray", "ndarray"]

Order = Literal["K", "A", "C", "F"]


class Array(np.ndarray):
    """numpy's ndarray, with `.at` (`shax.tracing.indexing`): an update is a new Array, never a
    write into this one."""

    @property
    def at(self) -> IndexUpdates:
        """JAX's functional updates: `x.at[key].set(v)`, `.add(v)`, `.get()`."""
        return IndexUpdates(self)


# numpy's name for the array type (for isinstance), as jax.numpy.ndarray is jax.Array;
# the class's own name is JAX's, which its repr shows: Array([1., 2.], dtype=float32).
ndarray = Array


def asarray(a: Any, dtype: Any = None, order: Order | None = None, *, copy: bool | None = None) -> Any:
    """numpy's `asarray`, as an Array; a tracer as it is (cast to `dtype` if given), and a
    list or tuple holding tracers as their stack."""
    if isinstance(a, Tracer):
        return a if dtype is None else a.astype(_dtype("asarray", dtype).numpy)
    if isinstance(a, (list, tuple)) and _holds_tracer(a):
        return stack([asarray(item, dtype) for item in a])
    if dtype is not None:
        _dtype("asarray", dtype)
    return _made("asarray", lambda: np.asarray(a, dtype, order, copy=copy))


def array(object: Any, dtype: Any = None, *, copy: bool = True, order: Order = "K", ndmin: int = 0) -> Any:  # noqa: A002
    """numpy's `array`, as an Array; a tracer (or a list or tuple holding tracers) as
    `asarray` reads it, with ones in front of its shape up to `ndmin` axes."""
    ndmin = _int("array", ndmin, "ndmin")
    if isinstance(object, Tracer) or (isinstance(object, (list, tuple)) and _holds_tracer(object)):
        x = asarray(object, dtype)
        rank = len(tc.shape(x))
        return x if rank >= ndmin else reshape(x, [1] * (ndmin - rank) + list(tc.shape(x)))
    if dtype is not None:
        _dtype("array", dtype)
    return _made("array", lambda: np.array(object, dtype, copy=copy, order=order, ndmin=ndmin))


def _dtype(op: str, dtype: Any) -> Any:
    try:
        return dtype_of_numpy(dtype)
    except ShaxTypeError as error:
        raise at(ShaxTypeError(f"{op}: {error}"), current_source()) from None


def _holds_tracer(items: list[Any] | tuple[Any, ...]) -> bool:
    return any(isinstance(i, Tracer) or (isinstance(i, (list, tuple)) and _holds_tracer(i)) for i in items)


def _made(op: str, make: Callable[[], np.ndarray]) -> Array:
    try:
        made = make()
    except (TypeError, ValueError, OverflowError) as error:  # ragged lists, copy=False needing a copy
        raise at(ShaxValueError(f"{op}: numpy: {type(error).__name__}: {error}"), current_source()) from None
    return made.view(Array)


def as_arrays(result: Any) -> Any:
    """numpy's arrays in a function's result as Arrays (in a tuple or list too: `divmod`,
    `split`); anything else (tracers, numpy scalars, shapes) as it is."""
    if type(result) is np.ndarray:
        return result.view(Array)
    if isinstance(result, (tuple, list)) and any(type(r) is np.ndarray for r in result):
        items = [as_arrays(r) for r in result]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)  # a named tuple: its fields
    return result


def returning_arrays(function: Callable[..., Any]) -> Callable[..., Any]:
    """`function`, its numpy arrays returned as Arrays."""

    @functools.wraps(function)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return as_arrays(function(*args, **kwargs))

    return wrapped
