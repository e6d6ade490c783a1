"""numpy's functions and ufuncs called on a tracer (`np.sin(x)`, `np.reshape(x, ...)`,
`ndarray * x`) run `shax.numpy`'s function of the same name (numpy's protocols
`__array_ufunc__` and `__array_function__`); one shax.numpy lacks is a ShaxError naming it.

shax.numpy sits above the tracer (its functions are written on tracers and the typeclass
functions), yet the tracer's numpy methods run it: `x.T`, `x.sum()`, `round(x)`,
`x.at[i].divide(v)` and these protocols. So shax.numpy registers itself here when it is
imported (`register_numpy`), and they reach it through `shax_numpy()`: the import points
down. `import shax` imports shax.numpy, so it is there before any tracer exists."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, at
from shax.core.location import current_source

# numpy's operators run their ufuncs, which must reach shax whichever elementwise names
# shax.numpy has: these are the typeclass functions of Python's operators.
_OPERATOR_UFUNCS: dict[str, Callable[..., Any]] = {
    "add": tc.add, "subtract": tc.sub, "multiply": tc.mul, "divide": tc.div, "power": tc.pow,
    "negative": tc.neg, "absolute": tc.abs, "matmul": tc.matmul, "equal": tc.eq, "not_equal": tc.ne,
    "less": tc.lt, "less_equal": tc.le, "greater": tc.gt, "greater_equal": tc.ge,
}  # fmt: skip


# shax.numpy, once it has registered itself (one entry at most).
_registered: list[ModuleType] = []


def register_numpy(module: ModuleType) -> None:
    """Called by shax.numpy as it is imported: `module` is shax.numpy."""
    _registered[:] = [module]


def shax_numpy() -> Any:
    """The shax.numpy module (typed Any: its functions are looked up by name)."""
    if not _registered:
        raise ShaxError("shax.numpy is not imported yet (`import shax` imports it): the tracer's numpy methods need it")
    return _registered[0]


def _shax_function(name: str, what: str) -> Callable[..., Any]:
    snp = shax_numpy()
    function = getattr(snp, name, None) if name in snp.__all__ else None
    if function is None:
        function = _OPERATOR_UFUNCS.get(name) if what == "ufunc" else None
    if function is None:
        raise at(ShaxTypeError(f"numpy.{name} on a traced array: shax.numpy has no {name} (yet)"), current_source())
    return function


def array_ufunc(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name = ufunc.__name__
    if method != "__call__" or kwargs:
        given = f"numpy.{name}.{method}" if method != "__call__" else f"numpy.{name} with {', '.join(kwargs)}"
        raise at(ShaxTypeError(f"{given} on a traced array is not supported"), current_source())
    return _shax_function(name, "ufunc")(*inputs)


def array_function(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    name, module = func.__name__, getattr(func, "__module__", None)
    if module == "numpy.linalg":  # np.linalg.norm is shax.numpy.linalg.norm, not shax.numpy.norm
        snl = shax_numpy().linalg
        if name not in snl.__all__:
            raise at(
                ShaxTypeError(f"numpy.linalg.{name} on a traced array: shax.numpy.linalg has no {name} (yet)"),
                current_source(),
            )
        return getattr(snl, name)(*args, **kwargs)
    if module != "numpy":
        raise at(ShaxTypeError(f"{func.__module__}.{name} on a traced array is not supported"), current_source())
    return _shax_function(name, "function")(*args, **kwargs)
