"""The hyperparameters of the gradient transformations and schedules: real, finite
numbers (a 0-d array too), or for a learning rate a schedule (a function of the step
count); anything else a `ShaxError` naming the function and the parameter."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from shax.errors import ShaxTypeError, ShaxValueError, at
from shax.location import current_source


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
