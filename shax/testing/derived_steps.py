"""Steps derived for the elementwise primitives, so that `shax.testing.strategies.programs()`
draws every `Pointwise` one (each declared by `shax.primitives.elementwise.elementwise`),
a new one too, with no step written for it.

Where a primitive f is applied is found from f itself, numerically. Each operand is a
program value v mapped into a range: a float one to c + r·tanh(v) (within [c − r, c + r]),
an integer one to round(c + r·tanh(v)), a boolean one to v > 0. Of the ranges of
`FLOAT_RANGES` (or `INT_RANGES`), tried for every operand in turn, the first where f runs
on a grid of the closed ranges without a floating point error, its values finite and not
all equal, is taken;
for the step to be smooth (drawn by smooth programs too), f must take float operands,
differentiate in each (no `NON_DIFFERENTIABLE` one) and there also have first and second
differences within `LIMIT`, which no pole, jump or kink near the range allows (a kink of
slope change s makes a second difference of s/h, above `LIMIT` on these grids). A smooth
range is preferred to an earlier one that is not. A result that is not of the program's
float dtype (a comparison's bool, an integer) is cast back to it.

The step's bound is f's largest magnitude on the grid plus its largest difference between
neighbouring points (a Lipschitz function's values between them are no larger).
"""

from __future__ import annotations

import functools
import itertools
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.core.errors import ShaxError
from shax.core.primitive import Linearity, all_primitives
from shax.core.types import DType, bool_, f64, i32
from shax.primitives.elementwise import Pointwise
from shax.testing.strategies import MAX_BOUND, Draw, Step, StepMaker, Value, _broadcast_shape, _fits, _pick
from typeclasses import convert_element_type, gt, round, tanh

Range = tuple[float, float]  # (c, r): the operand lies in [c - r, c + r]

FLOAT_RANGES: tuple[Range, ...] = ((0.0, 1.0), (0.0, 0.5), (2.0, 1.0), (-2.0, 1.0), (1.5, 0.25))
INT_RANGES: tuple[Range, ...] = ((0.0, 3.0), (5.0, 3.0), (-5.0, 3.0))
LIMIT = 20.0  # on |f|, and on its first and second differences, of a smooth step
POINTS = {1: 201, 2: 101}  # grid points per operand, by arity (21 beyond)


@attrs.frozen
class Domain:
    """Where a primitive's step applies it: each operand's dtype and range, a bound on
    the result, and whether it is smooth there."""

    dtypes: tuple[DType, ...]
    ranges: tuple[Range, ...]
    bound: float
    smooth: bool


def _operand_dtype(cls: type[Pointwise], dtype: DType) -> DType | None:
    """The program's float dtype if f takes it, else i32, else bool (None: none of them)."""
    return next((d for d in (dtype, i32, bool_) if d in cls.accepts), None)


def _grid(dtype: DType, span: Range, points: int) -> np.ndarray:
    c, r = span
    if dtype == bool_:
        return np.array([False, True])
    line = c + r * np.linspace(-1.0, 1.0, points)
    return line.astype(dtype.numpy) if dtype.is_float else np.unique(np.rint(line)).astype(dtype.numpy)


def _measure(cls: type[Pointwise], dtypes: Sequence[DType], ranges: Sequence[Range]) -> tuple[float, float] | None:
    """(bound, largest first or second difference over h) of f on the grid, or None where f
    fails, is not finite or is constant there."""
    points = POINTS.get(len(dtypes), 21)
    axes = [_grid(d, s, points) for d, s in zip(dtypes, ranges)]
    grids = np.meshgrid(*axes, indexing="ij")
    try:
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error")
            values = np.asarray(_function(cls)(*grids), np.float64)
    except (ArithmeticError, RuntimeWarning, ShaxError):  # numpy's errors, as the checked instance raises them
        return None
    if not np.all(np.isfinite(values)) or np.ptp(values) == 0:  # constant there: a step that tells nothing
        return None
    steepest, jump = 0.0, 0.0
    for a, line in enumerate(axes):
        if len(line) < 3:
            continue
        h = float(line[1]) - float(line[0])
        first = np.diff(values, axis=a)
        jump = max(jump, float(np.max(np.abs(first))))
        steepest = max(
            steepest, float(np.max(np.abs(first))) / h, float(np.max(np.abs(np.diff(values, 2, axis=a)))) / h**2
        )
    return float(np.max(np.abs(values))) + jump, steepest


def _can_be_smooth(cls: type[Pointwise], dtypes: Sequence[DType]) -> bool:
    floats = all(d.is_float for d in dtypes) and (cls.result_dtype is None or cls.result_dtype.is_float)
    return floats and Linearity.NON_DIFFERENTIABLE not in cls.linearity


def _function(cls: type[Pointwise]) -> Callable[..., Any]:
    assert cls.function is not None, cls  # only Constant and Arg have none
    return cls.function


_DOMAINS: dict[tuple[type[Pointwise], DType], Domain | None] = {}


def domain(cls: type[Pointwise], dtype: DType) -> Domain | None:
    """Where a step applies `cls` in programs of float `dtype` (None: nowhere found)."""
    if (cls, dtype) not in _DOMAINS:
        _DOMAINS[cls, dtype] = _search(cls, dtype)
    return _DOMAINS[cls, dtype]


def _search(cls: type[Pointwise], dtype: DType) -> Domain | None:
    operand = _operand_dtype(cls, dtype)
    if operand is None:
        return None
    arity = len(cls.linearity)
    dtypes = (operand,) * arity
    smooth = _can_be_smooth(cls, dtypes)
    found: Domain | None = None
    for ranges in itertools.product(FLOAT_RANGES if operand.is_float else INT_RANGES, repeat=arity):
        measured = _measure(cls, dtypes, ranges)
        if measured is None or measured[0] > MAX_BOUND:
            continue
        bound, steepest = measured
        if smooth and bound <= LIMIT and steepest <= LIMIT:
            return Domain(dtypes, ranges, bound, True)
        found = found or Domain(dtypes, ranges, bound, False)
    return found


def _mapped(v: Any, dtype: DType, span: Range) -> Any:
    c, r = span
    if dtype == bool_:
        return gt(v, 0.0)
    x = c + r * tanh(v)
    return x if dtype.is_float else convert_element_type(round(x), dtype.numpy)


def _shown(dtype: DType, span: Range, k: int) -> str:
    c, r = span
    if dtype == bool_:
        return f"{{{k}}} > 0"
    x = f"{c} + {r} * tanh({{{k}}})"
    return x if dtype.is_float else f"{dtype.name}(round({x}))"


def _broadcasts(shape: tuple[int, ...], v: Value) -> bool:
    return _broadcast_shape(shape, v.shape) is not None


def derived_step(cls: type[Pointwise], smooth: bool) -> StepMaker:
    """The step applying `cls` on its domain in the program's dtype (if it is as smooth as
    `smooth` there), to values whose shapes broadcast together."""

    def make(draw: Draw, values: list[Value], dtype: DType) -> tuple[Step, Value] | None:
        found = domain(cls, dtype)
        if found is None or found.smooth != smooth:
            return None
        operands: list[int] = []
        shape: tuple[int, ...] = ()
        for _ in found.dtypes:
            k = _pick(draw, values, functools.partial(_broadcasts, shape))
            if k is None:
                return None
            operands.append(k)
            shape = _broadcast_shape(shape, values[k].shape) or ()
        cast = not all(d.is_float for d in found.dtypes) or cls.result_dtype not in (None, dtype)
        result = Value(shape, found.bound)
        if not _fits(shape, found.bound):
            return None

        def apply(*xs: Any) -> Any:
            out = _function(cls)(*(_mapped(x, d, s) for x, d, s in zip(xs, found.dtypes, found.ranges)))
            return convert_element_type(out, dtype.numpy) if cast else out

        shown = ", ".join(_shown(d, s, j) for j, (d, s) in enumerate(zip(found.dtypes, found.ranges)))
        text = f"{cls.name}({shown})" + (" as its dtype" if cast else "")
        return Step(text, tuple(operands), apply), result

    return make


def pointwise_primitives() -> list[type[Pointwise]]:
    """shax's elementwise primitives (a user's, declared outside shax, are not drawn)."""
    return [p for p in all_primitives() if issubclass(p, Pointwise) and p.__module__.startswith("shax.")]


@functools.cache
def families() -> dict[str, dict[str, StepMaker]]:
    """The derived steps by family, named by primitive: "pointwise" those smooth in f64
    programs, "nonsmooth_pointwise" the others (left out of smooth programs)."""
    smooth: dict[str, StepMaker] = {}
    rough: dict[str, StepMaker] = {}
    for cls in pointwise_primitives():
        found = domain(cls, f64)
        if found is not None:
            (smooth if found.smooth else rough)[cls.__name__] = derived_step(cls, found.smooth)
    return {"pointwise": smooth, "nonsmooth_pointwise": rough}
