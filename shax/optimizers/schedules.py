"""Learning-rate schedules, optax's: functions of the step count (an i32 array, traced
or not, or a Python int) giving the rate, in f32. Each is a learning rate for the
gradient transformations, which keep the count in their state. Where optax answers
with a constant (a linear or exponential schedule of no steps) so do these.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import shax.numpy as snp
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.optimizers.checks import count, number
from shax.tracing.tracer import Tracer

Schedule = Callable[[Any], Any]


def constant_schedule(value: float) -> Schedule:
    """η(t) = value."""
    value = number("constant_schedule", "value", value)
    return lambda step: value


def polynomial_schedule(
    init_value: float, end_value: float, power: float, transition_steps: int, transition_begin: int = 0
) -> Schedule:
    """η(t) = (init − end)·(1 − c/T)^power + end, c = t − begin clipped to [0, T]."""
    what = "polynomial_schedule"
    init_value, end_value = number(what, "init_value", init_value), number(what, "end_value", end_value)
    power = number(what, "power", power)
    transition_steps = count(what, "transition_steps", transition_steps, least=-(2**31))
    transition_begin = count(what, "transition_begin", transition_begin)
    if transition_steps <= 0:
        return constant_schedule(init_value)

    def schedule(step: Any) -> Any:
        c = snp.clip(_steps(step) - transition_begin, 0, transition_steps)
        return (init_value - end_value) * (1 - c / transition_steps) ** power + end_value

    return schedule


def linear_schedule(init_value: float, end_value: float, transition_steps: int, transition_begin: int = 0) -> Schedule:
    """η(t) from init_value to end_value linearly over transition_steps, from transition_begin."""
    return polynomial_schedule(init_value, end_value, 1, transition_steps, transition_begin)


def exponential_decay(
    init_value: float,
    transition_steps: int,
    decay_rate: float,
    transition_begin: int = 0,
    staircase: bool = False,
    end_value: float | None = None,
) -> Schedule:
    """η(t) = init · rate^((t − begin)/T) (the exponent floored with `staircase`), init
    before `transition_begin`, bounded by `end_value` if given."""
    what = "exponential_decay"
    init_value, decay_rate = number(what, "init_value", init_value), number(what, "decay_rate", decay_rate)
    transition_steps = count(what, "transition_steps", transition_steps, least=-(2**31))
    transition_begin = count(what, "transition_begin", transition_begin)
    if not isinstance(staircase, (bool, np.bool_)):
        raise at(ShaxTypeError(f"{what}: staircase must be a bool, got {staircase!r}"), current_source())
    end = None if end_value is None else number(what, "end_value", end_value)
    if transition_steps <= 0:
        return constant_schedule(init_value)

    def schedule(step: Any) -> Any:
        decreased = _steps(step) - transition_begin
        p = decreased / transition_steps
        if staircase:
            p = snp.floor(p)
        value = snp.where(decreased <= 0, init_value, init_value * decay_rate**p)
        if end is not None:
            value = snp.maximum(value, end) if decay_rate < 1 else snp.minimum(value, end)
        return value

    return schedule


def cosine_decay_schedule(init_value: float, decay_steps: int, alpha: float = 0.0, exponent: float = 1.0) -> Schedule:
    """η(t) = init · ((1 − α)·(½(1 + cos(π·min(t, T)/T)))^exponent + α)."""
    what = "cosine_decay_schedule"
    init_value, alpha = number(what, "init_value", init_value), number(what, "alpha", alpha)
    exponent = number(what, "exponent", exponent)
    decay_steps = count(what, "decay_steps", decay_steps, least=1)

    def schedule(step: Any) -> Any:
        c = snp.minimum(_steps(step), decay_steps)
        cosine = 0.5 * (1 + snp.cos(math.pi * c / decay_steps))
        return init_value * ((1 - alpha) * cosine**exponent + alpha)

    return schedule


def join_schedules(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """schedules[0] before boundaries[0], then schedules[k](t − boundaries[k−1]) from it on."""
    what = "join_schedules"
    if not isinstance(schedules, (list, tuple)) or not schedules or not all(callable(s) for s in schedules):
        raise at(ShaxTypeError(f"{what}: schedules must be a list of functions, got {schedules!r}"), current_source())
    if not isinstance(boundaries, (list, tuple)) or len(boundaries) != len(schedules) - 1:
        message = f"{what}: boundaries must be a list of {len(schedules) - 1} step counts, got {boundaries!r}"
        raise at(ShaxValueError(message), current_source())
    bounds = [count(what, "boundaries", b) for b in boundaries]

    def schedule(step: Any) -> Any:
        t = snp.asarray(_count_of(what, step), np.int32)
        value = _value(what, schedules[0](t))
        for boundary, later in zip(bounds, schedules[1:]):
            value = snp.where(t < boundary, value, _value(what, later(t - np.int32(boundary))))
        return value

    return schedule


def warmup_cosine_decay_schedule(
    init_value: float,
    peak_value: float,
    warmup_steps: int,
    decay_steps: int,
    end_value: float = 0.0,
    exponent: float = 1.0,
) -> Schedule:
    """Linear from init_value to peak_value over warmup_steps, then a cosine decay to
    end_value, reached at decay_steps (counted from the start, warmup included)."""
    what = "warmup_cosine_decay_schedule"
    peak, end = number(what, "peak_value", peak_value), number(what, "end_value", end_value)
    warmup_steps = count(what, "warmup_steps", warmup_steps)
    decay_steps = count(what, "decay_steps", decay_steps)
    if decay_steps <= warmup_steps:
        message = f"{what}: decay_steps ({decay_steps}) must exceed warmup_steps ({warmup_steps})"
        raise at(ShaxValueError(message), current_source())
    alpha = 0.0 if peak == 0.0 else end / peak
    return join_schedules(
        [
            linear_schedule(init_value, peak, warmup_steps),
            cosine_decay_schedule(peak, decay_steps - warmup_steps, alpha, exponent),
        ],
        [warmup_steps],
    )


def _steps(step: Any) -> Any:
    """The step count in f32 (as optax's arithmetic on an i32 count gives)."""
    return snp.asarray(_count_of("schedule", step), np.float32)


def _count_of(what: str, step: Any) -> Any:
    """`step` if it is a step count: an int, or an array or tracer of an integer or float dtype."""
    dtype = getattr(step, "dtype", None)
    kind = np.dtype(getattr(dtype, "numpy", dtype)).kind if dtype is not None else None
    if isinstance(step, (bool, np.bool_)) or not (isinstance(step, (int, float)) or kind in ("i", "u", "f")):
        raise at(
            ShaxTypeError(f"{what}: the step count must be an int or an integer array, got {step!r}"), current_source()
        )
    return step


def _value(what: str, value: Any) -> Any:
    """A schedule's rate: a number, an array or a tracer."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number, np.ndarray, Tracer)):
        raise at(ShaxTypeError(f"{what}: a schedule gave {value!r}, not a number"), current_source())
    return value
