"""The hyperparameters of the gradient transformations and schedules: real, finite
numbers (a 0-d array too), or for a learning rate a schedule (a function of the step
count); anything else a `ShaxError` naming the function and the parameter."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source


def number(what: str, name: str, value: Any) -> float:
    """`value` as a float, if it is a real, finite number."""
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise at(
            ShaxTypeError(f"{what}: {name} must be a number, got {type(value).__name__} {value!r}"), current_source()
        )
    try:
        finite = math.isfinite(value)
    except OverflowError:  # a Python int beyond the floats
        finite = False
    if not finite:
        raise at(ShaxValueError(f"{what}: {name} must be finite, got {value!r}"), current_source())
    return float(value)


def count(what: str, name: str, value: Any, least: int = 0) -> int:
    """`value` as an int, if it is an integer of at least `least` (a number of steps)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise at(
            ShaxTypeError(f"{what}: {name} must be an int, got {type(value).__name__} {value!r}"), current_source()
        )
    if value < least or value > np.iinfo(np.int32).max:
        message = f"{what}: {name} must be an int from {least} to 2**31 - 1 (step counts are i32), got {value}"
        raise at(ShaxValueError(message), current_source())
    return int(value)


def rate(what: str, learning_rate: Any) -> Any:
    """A learning rate: a schedule (a function of the step count) or a number."""
    if callable(learning_rate) and not isinstance(learning_rate, np.ndarray):
        return learning_rate
    return number(what, "learning_rate", learning_rate)


def flag(what: str, name: str, value: Any) -> None:
    """Nothing if `value` is a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise at(ShaxTypeError(f"{what}: {name} must be a bool, got {value!r}"), current_source())


def float_dtype(what: str, name: str, value: Any) -> np.dtype:
    """`value` as a float dtype of numpy's (np.float32, "float64", shax.f32)."""
    try:
        dtype = np.dtype(getattr(value, "numpy", value))
    except (TypeError, ValueError):  # not a dtype at all ((None, False) reads as a malformed record)
        dtype = None
    if dtype is None or dtype.kind != "f" or dtype.itemsize < 4:
        raise at(ShaxTypeError(f"{what}: {name} must be a float dtype (f32 or f64), got {value!r}"), current_source())
    return dtype
