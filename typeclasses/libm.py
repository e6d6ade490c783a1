"""float32 elementary functions of single numbers, through the C library's float versions.

numpy computes `sin` of float32 with its own vectorized approximations, which may differ
from C's `sinf` in the last bit. The original (GHC's `Float`) calls `sinf`, and one last
bit early in a gradient descent shows in its printed digits. So a float32 number (a
numpy scalar or 0-d array) goes through the C function, and arrays through numpy's
loops, which are fast. Where the C library has no such function, numpy does it all.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable
from typing import Any

import numpy as np


def _c_library() -> ctypes.CDLL | None:
    for name in (ctypes.util.find_library("m"), ctypes.util.find_library("c")):
        if name:
            try:
                return ctypes.CDLL(name)
            except OSError:
                continue
    return None


_LIBRARY = _c_library()


def c_float_function(c_name: str) -> Callable[[float], float] | None:
    """The C library's float function `c_name` (e.g. "sinf") of one float, or None if it lacks it."""
    c_function = getattr(_LIBRARY, c_name, None)
    if c_function is not None:
        c_function.restype, c_function.argtypes = ctypes.c_float, [ctypes.c_float]
    return c_function


def float32_unary(ufunc: np.ufunc, c_name: str) -> Callable[[Any], Any]:
    """`ufunc`, except on a float32 number (a numpy scalar or 0-d array), which goes through
    the C library's `c_name` (e.g. "sinf"), where the C library has it."""
    c_function = c_float_function(c_name)
    if c_function is None:
        return ufunc

    def apply(x: Any) -> Any:
        if getattr(x, "dtype", None) == np.float32 and not getattr(x, "shape", ()):
            return np.float32(c_function(float(x)))
        return ufunc(x)

    apply.__name__ = ufunc.__name__
    return apply
