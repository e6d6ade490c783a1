"""`shax.numpy`'s elementwise functions: numpy's names and positional signatures over the
typeclass functions, so that each runs on numpy values (numpy's results) and on tracers
(one primitive, or a default definition's few). Lists and tuples are read as arrays, as
numpy reads them. numpy's ufunc keywords are taken as `shax.numpy._options` says:
`casting` and `order` validated, `out=`, `where=`, `dtype=` refused unless at their defaults.
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, a_type, at, named
from shax.core.location import current_source
from shax.core.primitive import all_primitives
from shax.core.types import weak_dtype
from shax.numpy._arrays import _int
from shax.numpy._options import ufunc_options, unsupported
from shax.primitives.elementwise import Pointwise
from shax.tracing.promotion import common_operands, promoted, ufunc_operands
from shax.tracing.tracer import Tracer

WRITTEN = [
    "around", "clip", "logaddexp", "reciprocal", "round", "square", "fmod", "remainder", "mod", "floor_divide",
    "divmod",
]  # fmt: skip


def as_array(x: Any, op: str | None = None) -> Any:
    """A list or tuple as the array numpy makes of it; any other operand as it is. What
    numpy cannot read is a ShaxError naming `op`: a ragged list (numpy's ValueError) a
    ShaxValueError, values of no number type a ShaxTypeError."""
    if not isinstance(x, (list, tuple)):
        return x
    try:
        return np.asarray(x)
    except (TypeError, ValueError) as error:
        kind = ShaxValueError if isinstance(error, ValueError) else ShaxTypeError
        message = f"cannot read {reprlib.repr(x)} as an array: numpy: {error}"
        raise at(kind(message if op is None else f"{op}: {message}"), current_source()) from None


def _unary(function: Any, name: str) -> Any:
    ufunc = getattr(np, name)

    def apply(x: Any, /, **options: Any) -> Any:
        ufunc_options(name, options)
        return promoted(ufunc, name, function, as_array(x))

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"numpy's `{name}`, elementwise (`typeclasses.{function.__name__}`)."
    return apply


def _binary(function: Any, name: str) -> Any:
    ufunc = getattr(np, name)

    def apply(x1: Any, x2: Any, /, **options: Any) -> Any:
        ufunc_options(name, options)
        return promoted(ufunc, name, function, as_array(x1), as_array(x2))

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"numpy's `{name}`, elementwise, its operands broadcast (`typeclasses.{function.__name__}`)."
    return apply


# numpy's ufuncs that are one primitive come from the primitives' declarations
# (`numpy="sin"` in `shax/primitives/`); the others are written below or elsewhere.
DECLARED: dict[str, Any] = {
    name: (_unary if len(cls.linearity) == 1 else _binary)(cls.function, name)
    for cls in all_primitives()
    if issubclass(cls, Pointwise) and cls.__module__.startswith("shax.primitives.")
    for name in cls.numpy_names
}
globals().update(DECLARED)
if TYPE_CHECKING:  # they are not written here: static checkers see them as functions

    def __getattr__(name: str) -> Callable[..., Any]: ...


square, reciprocal = _unary(tc.square, "square"), _unary(tc.reciprocal, "reciprocal")
logaddexp = _binary(tc.logaddexp, "logaddexp")


def fmod(x1: Any, x2: Any, /, **options: Any) -> Any:
    """numpy's `fmod`: x1 − trunc(x1 / x2) · x2, the sign of x1; of integers 0 where x2 is 0."""
    ufunc_options("fmod", options)
    return tc.rem(*ufunc_operands(np.fmod, "fmod", as_array(x1), as_array(x2)))


def divmod(x1: Any, x2: Any, /, **options: Any) -> tuple[Any, Any]:  # noqa: A001 - numpy's name
    """numpy's divmod, (x1 // x2, x1 % x2): the remainder has x2's sign, the quotient is floored.
    Of integers, from the truncated quotient and remainder, one less and the remainder moved by x2
    where their signs differ; division by 0 gives (0, 0), numpy's values (numpy warns; shax's
    evaluation, numpy's arithmetic, warns too; compiled code may not)."""
    return _divmod("divmod", x1, x2, options)


def _divmod(op: str, x1: Any, x2: Any, options: dict[str, Any]) -> tuple[Any, Any]:
    ufunc_options(op, options)
    x1, x2 = as_array(x1), as_array(x2)
    if not any(isinstance(v, Tracer) for v in (x1, x2)):  # numpy values: numpy's own
        try:
            return np.divmod(x1, x2)
        except OverflowError as error:  # a Python int no dtype of numpy's holds (10**400, 2**63 for i32)
            raise at(ShaxValueError(f"{op}: numpy: {error}"), current_source()) from None
        except (TypeError, ValueError) as error:
            raise at(ShaxTypeError(f"{op}: numpy: {error}"), current_source()) from None
    x1, x2 = ufunc_operands(np.divmod, op, x1, x2)
    dtype = (x1 if isinstance(x1, Tracer) else x2).dtype
    # A Python number as a scalar of that dtype (weakly: 10**400 is no f32): below, it meets other numbers (x2 < 0).
    try:
        x1, x2 = (np.asarray(v, weak_dtype(v, dtype, op).numpy) if isinstance(v, (int, float)) else v for v in (x1, x2))
    except ShaxError as error:
        raise at(named(error, op), current_source()) from None
    if not dtype.is_float:
        quotient, rest = tc.quot(x1, x2), tc.rem(x1, x2)
        moved = tc.logical_and(tc.ne(rest, 0), tc.ne(tc.lt(rest, 0), tc.lt(x2, 0)))
        return tc.where(moved, quotient - 1, quotient), tc.where(moved, rest + x2, rest)
    return _float_divmod(x1, x2)


def _float_divmod(x1: Any, x2: Any) -> tuple[Any, Any]:
    """numpy's divmod of floats (`npy_divmod`), as JAX computes it from fmod, then numpy's edges:
    q = (x1 − fmod) / x2, one less and the remainder moved by x2 where the remainder's sign is
    not x2's, rounded down unless above a half (so 1 // 0.1 is 9, not ⌊1 / 0.1⌋ = 10); a zero
    remainder takes x2's sign, a zero quotient x1 / x2's; by 0, (x1 / x2, NaN). The quotient is
    a floor (derivative 0, JAX's); the remainder's derivative is 1 in x1 and −⌊x1 / x2⌋ in x2."""
    rest = tc.rem(x1, x2)
    div = (x1 - rest) / x2
    below = tc.lt(x2, 0)
    moved = tc.logical_and(tc.ne(rest, 0), tc.ne(tc.lt(rest, 0), below))
    # ±0 with x2's sign, whose tangent is still the remainder's: z − (stop(r) − r) is z, r's derivative.
    zero = tc.abs(tc.stop_gradient(rest))
    signed_zero = tc.where(below, -zero, zero) - (tc.stop_gradient(rest) - rest)
    rest = tc.where(moved, rest + x2, tc.where(tc.eq(rest, 0), signed_zero, rest))
    div = tc.where(moved, div - 1.0, div)
    floor = tc.floor(div)
    floor = tc.where(tc.gt(div - floor, 0.5), floor + 1.0, floor)
    ratio = x1 / x2
    quotient = tc.where(tc.eq(x2, 0), ratio, tc.where(tc.eq(div, 0), 0.0 * ratio, floor))
    return tc.floor(quotient), rest


def floor_divide(x1: Any, x2: Any, /, **options: Any) -> Any:
    """numpy's `//`: `divmod`'s quotient."""
    return _divmod("floor_divide", x1, x2, options)[0]


def remainder(x1: Any, x2: Any, /, **options: Any) -> Any:
    """numpy's `%`: `divmod`'s remainder, with x2's sign."""
    return _divmod("remainder", x1, x2, options)[1]


mod = remainder


def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001 - numpy's name
    """numpy's `round` to `decimals` places (negative: to tens, hundreds, ...), halves to
    the even one, computed as numpy computes it, with the scale in a's dtype:
    rint(a · 10^d) / 10^d, or rint(a / 10^-d) · 10^-d. Integers are their own rounding."""
    return _round("round", a, decimals, out)


def around(a: Any, decimals: int = 0, out: None = None) -> Any:
    """numpy's `around`, its other name of `round`."""
    return _round("around", a, decimals, out)


def _round(op: str, a: Any, decimals: Any, out: None) -> Any:
    unsupported(op, "out", out, None)
    decimals = _int(op, decimals, "decimals")
    a = as_array(a, op)
    if not isinstance(a, Tracer) and np.asarray(a).dtype.kind not in "biuf":
        raise at(ShaxTypeError(f"{op}: a must be an array or a number, got {a_type(a)}"), current_source())
    if _is_integer(a):
        if decimals < 0:
            message = f"{op}: decimals={decimals} of integers is not supported (only decimals >= 0)"
            raise at(ShaxValueError(message), current_source())
        return a
    if decimals == 0:
        return tc.round(a)
    scale = 10.0 ** (decimals if decimals > 0 else -decimals)  # not abs: this module's abs is numpy's
    return tc.round(a * scale) / scale if decimals > 0 else tc.round(a / scale) * scale


def _is_integer(a: Any) -> bool:
    # A tracer's dtype stands in for numpy's, which np.dtype reads.
    return np.dtype(getattr(a, "dtype", None) or np.asarray(a).dtype).kind in "iub"


def clip(
    a: Any, a_min: Any = None, a_max: Any = None, out: None = None, *, min: Any = None, max: Any = None, **options: Any
) -> Any:
    """numpy's `clip`: min(max(a, a_min), a_max); either bound may be None (not both);
    `min` and `max` are numpy 2's names for them (not both names for one bound)."""
    ufunc_options("clip", {"out": out, **options})
    for old, new, name in ((a_min, min, "min"), (a_max, max, "max")):
        if old is not None and new is not None:
            raise at(ShaxValueError(f"clip: a_{name} and {name} given together"), current_source())
    a_min, a_max = (min if a_min is None else a_min), (max if a_max is None else a_max)
    if a_min is None and a_max is None:
        raise at(ShaxValueError("clip: a_min and a_max are both None: give at least one"), current_source())
    bounds = [as_array(b) for b in (a_min, a_max) if b is not None]
    a, *bounds = common_operands("clip", (as_array(a), *bounds))  # numpy's dtype of the three (NEP 50)
    if a_max is None:
        return tc.maximum(a, *bounds)
    if a_min is None:
        return tc.minimum(a, *bounds)
    return tc.clip(a, *bounds)


__all__ = [*sorted(DECLARED), *WRITTEN]
