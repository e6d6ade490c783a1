"""Python's and numpy's protocols for tracers that need a concrete value or a mutable
array. A traced value is a type, not numbers, and it is immutable (as JAX's arrays are):
what has a meaning on it is that meaning (`copy()`, `copy.copy` and `copy.deepcopy` are
the value itself, `round(x, 2)` is `shax.numpy.round`, `x.view()` of its own dtype is
x); the rest raises a ShaxError naming the operation, the traced type and the user's
line and saying what to do instead, as JAX's `ConcretizationTypeError` and
`TracerArrayConversionError` do. `shax.tracing.array_methods` has the methods that are
`shax.numpy`'s functions."""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxAttributeError, ShaxError, ShaxTypeError, at
from shax.core.location import current_source
from shax.tracing.numpy_dispatch import shax_numpy as _snp
from shax.tracing.promotion import promoted

# What to do instead, for each kind of refusal.
_BRANCH = (
    "Python's `if`, `while`, `and` and `or` cannot branch on it; choose elementwise with "
    "select(pred, on_true, on_false) or snp.where (or min/max) instead"
)
_OUTSIDE = "return it from the traced function and convert the result, or compute this outside the traced function"
_NO_MEMORY = "a traced value has no memory, only a type; return it and use numpy's on the result"


def refuse(x: Any, what: str, instead: str, error: type[ShaxError] = ShaxTypeError) -> NoReturn:
    """Raise that `what` has no meaning on the traced value x, saying to do `instead`."""
    raise at(error(f"{what}: a traced {x.type} {instead}"), current_source())


def _concrete(x: Any, what: str, instead: str = _OUTSIDE) -> NoReturn:
    refuse(x, what, f"has no concrete value inside jit, grad or vmap, which trace types, not numbers: {instead}")


def _width(dtype: Any) -> int:
    """The item size of a numpy dtype, 0 for what is none."""
    try:
        return int(np.dtype(dtype).itemsize)
    except TypeError:
        return 0


class ArrayProtocols:
    """Mixed into Tracer (whose `type` these read)."""

    __slots__ = ()

    def __bool__(self) -> bool:
        _concrete(self, "bool()", _BRANCH)

    def __float__(self) -> float:
        _concrete(self, "float()")

    def __int__(self) -> int:
        _concrete(self, "int()")

    def __complex__(self) -> complex:
        _concrete(self, "complex()")

    def __index__(self) -> int:
        _concrete(self, "index", "index a shax array with it (x[i] is a gather), or pass a Python int")

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        _concrete(self, "conversion to a numpy array", "use shax.numpy's functions on it, or " + _OUTSIDE)

    def __hash__(self) -> int:
        refuse(self, "hash", "is not hashable (`==` on it is elementwise): it cannot be a dict key or set member")

    def __format__(self, spec: str) -> str:
        if not spec:  # f"{x}": the tracer's text, as str(x)
            return str(self)
        _concrete(self, f"format {spec!r}")

    def item(self, *args: Any) -> Any:
        _concrete(self, "item()")

    def tolist(self) -> Any:
        _concrete(self, "tolist()")

    # Values are immutable, so a copy is the value itself.

    def copy(self, order: str = "K") -> Any:
        return self

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memodict: dict[int, Any]) -> Any:  # not `memo`: typeguard's own local
        return self

    def view(self, dtype: Any = None, type: Any = None) -> Any:  # noqa: A002 - numpy's name
        """x itself for its own dtype; x's bits read as another dtype of its width
        (`bitcast_convert_type`: f32 as u32 or i32)."""
        this: Any = self
        if type is None and (dtype is None or this.type.dtype == dtype):
            return self
        if type is None:
            width = _width(dtype)
            if width == np.dtype(this.type.dtype.numpy).itemsize and width != 1:
                return tc.bitcast_convert_type(this, np.dtype(dtype))
        asked = dtype if type is None else type
        refuse(self, "view", f"cannot be viewed as {asked!r} (not one width); use x.astype to convert the values")

    def round(self, decimals: int = 0, out: None = None) -> Any:
        return _snp().round(self, decimals, out)

    def __round__(self, ndigits: int | None = None) -> Any:
        return _snp().round(self, ndigits or 0)

    def __pow__(self, other: Any, modulo: Any = None) -> Any:
        if modulo is not None:
            refuse(self, "pow", "has no three-argument pow (modulo; numpy has none either): use (x ** y) % m")
        return promoted(np.power, "pow", tc.pow, self, other)  # numpy's promotion, as the other operators

    def __setitem__(self, key: Any, value: Any) -> None:
        refuse(self, "x[key] = value", "is immutable: use x = x.at[key].set(value), a new array")

    def fill(self, value: Any) -> None:
        refuse(self, "fill", "is immutable: use snp.full_like(x, value), a new array")


# numpy's methods with no meaning on an immutable value known only by its type: each
# raises a ShaxTypeError saying what to do instead.
_REFUSED_METHODS = {
    "argpartition": "has no argpartition in shax: use snp.argsort(x, axis)",
    "byteswap": _NO_MEMORY,
    "choose": "has no choose in shax: use snp.where or snp.take_along_axis",
    "compress": "has no compress in shax (a data-dependent shape): use snp.where(condition, x, 0)",
    "dump": "has no concrete value to pickle: " + _OUTSIDE,
    "dumps": "has no concrete value to pickle: " + _OUTSIDE,
    "getfield": _NO_MEMORY,
    "partition": "is immutable and numpy's partition works in place: use snp.sort(x, axis), a new array",
    "put": "is immutable: use x = x.at[indices].set(values), a new array",
    "resize": "is immutable and numpy's resize works in place: use snp.reshape, a new array",
    "setfield": _NO_MEMORY,
    "setflags": _NO_MEMORY,
    "to_device": "has no device in shax: its values are numpy's",
    "tobytes": "has no concrete value: " + _OUTSIDE,
    "tofile": "has no concrete value: " + _OUTSIDE,
}

# numpy's attributes of an array's memory: reading one raises a ShaxAttributeError (an
# AttributeError, so `hasattr(x, "flags")` is False) saying so.
_REFUSED_ATTRIBUTES = ("base", "ctypes", "data", "device", "flags", "flat", "strides")


def _refusing_method(name: str, instead: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        refuse(self, name, instead)

    method.__name__ = method.__qualname__ = name
    return method


def _refusing_attribute(name: str) -> property:
    def read(self: Any) -> NoReturn:
        refuse(self, name, f"has no {name}: {_NO_MEMORY}", ShaxAttributeError)

    return property(read)


for _name, _instead in _REFUSED_METHODS.items():
    setattr(ArrayProtocols, _name, _refusing_method(_name, _instead))
for _name in _REFUSED_ATTRIBUTES:
    setattr(ArrayProtocols, _name, _refusing_attribute(_name))
