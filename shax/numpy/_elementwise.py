"""`shax.numpy`'s elementwise functions: numpy's names and positional signatures over the
typeclass functions, so that each runs on numpy values (numpy's results) and on tracers
(one primitive, or a default definition's few). Lists and tuples are read as arrays, as
numpy reads them. numpy's ufunc keywords are taken as `shax.numpy._options` says:
`casting` and `order` validated, `out=`, `where=`, `dtype=` refused unless at their defaults.
"""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np

import typeclasses as tc
from shax.errors import ShaxTypeError, ShaxValueError, at
from shax.location import current_source
from shax.numpy._options import ufunc_options, unsupported

__all__ = [
    "abs", "absolute", "add", "arccos", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "ceil", "clip",
    "cos", "cosh", "divide", "equal", "exp", "expm1", "floor", "greater", "greater_equal", "less", "less_equal", "log",
    "log1p", "logaddexp", "logical_and", "logical_not", "logical_or", "maximum", "minimum", "multiply", "negative",
    "not_equal", "power", "reciprocal", "rint", "round", "sign", "sin", "sinh", "sqrt", "square", "subtract", "tan",
    "tanh", "true_divide", "where", "fmod", "remainder", "mod", "floor_divide", "divmod",
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
    def apply(x: Any, /, **options: Any) -> Any:
        ufunc_options(name, options)
        return function(as_array(x))

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"numpy's `{name}`, elementwise (`typeclasses.{function.__name__}`)."
    return apply


def _binary(function: Any, name: str) -> Any:
    def apply(x1: Any, x2: Any, /, **options: Any) -> Any:
        ufunc_options(name, options)
        return function(as_array(x1), as_array(x2))

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"numpy's `{name}`, elementwise, its operands broadcast (`typeclasses.{function.__name__}`)."
    return apply


sin, cos, tan = _unary(tc.sin, "sin"), _unary(tc.cos, "cos"), _unary(tc.tan, "tan")
sinh, cosh = _unary(tc.sinh, "sinh"), _unary(tc.cosh, "cosh")
arcsin, arccos, arctan = _unary(tc.arcsin, "arcsin"), _unary(tc.arccos, "arccos"), _unary(tc.arctan, "arctan")
tanh = _unary(tc.tanh, "tanh")
arcsinh, arctanh = _unary(tc.arcsinh, "arcsinh"), _unary(tc.arctanh, "arctanh")
exp, expm1 = _unary(tc.exp, "exp"), _unary(tc.expm1, "expm1")
log, log1p = _unary(tc.log, "log"), _unary(tc.log1p, "log1p")
sqrt, square, reciprocal = _unary(tc.sqrt, "sqrt"), _unary(tc.square, "square"), _unary(tc.reciprocal, "reciprocal")
abs = _unary(tc.abs, "abs")  # noqa: A001 - numpy's name
absolute, negative, sign = _unary(tc.abs, "absolute"), _unary(tc.neg, "negative"), _unary(tc.sign, "sign")
floor, ceil, rint = _unary(tc.floor, "floor"), _unary(tc.ceil, "ceil"), _unary(tc.round, "rint")
logical_not = _unary(tc.logical_not, "logical_not")

add, subtract, multiply = _binary(tc.add, "add"), _binary(tc.sub, "subtract"), _binary(tc.mul, "multiply")
divide, true_divide, power = _binary(tc.div, "divide"), _binary(tc.div, "true_divide"), _binary(tc.pow, "power")
arctan2, logaddexp = _binary(tc.arctan2, "arctan2"), _binary(tc.logaddexp, "logaddexp")
maximum, minimum = _binary(tc.maximum, "maximum"), _binary(tc.minimum, "minimum")
equal, not_equal = _binary(tc.eq, "equal"), _binary(tc.ne, "not_equal")
less, less_equal = _binary(tc.lt, "less"), _binary(tc.le, "less_equal")
greater, greater_equal = _binary(tc.gt, "greater"), _binary(tc.ge, "greater_equal")
logical_and, logical_or = _binary(tc.logical_and, "logical_and"), _binary(tc.logical_or, "logical_or")
fmod = _binary(tc.rem, "fmod")


def divmod(x1: Any, x2: Any, /, **options: Any) -> tuple[Any, Any]:  # noqa: A001 - numpy's name
    """numpy's divmod of floats, (x1 // x2, x1 % x2), from fmod as numpy computes it (and
    JAX): q = (x1 − fmod) / x2 rounded, one less and the remainder moved by x2 where the
    remainder's sign is not x2's. Not floor(x1 / x2): 1 // 0.1 is 9, 1 / 0.1 is 10."""
    return _divmod("divmod", x1, x2, options)


def _divmod(op: str, x1: Any, x2: Any, options: dict[str, Any]) -> tuple[Any, Any]:
    ufunc_options(op, options)
    x1, x2 = as_array(x1), as_array(x2)
    if not any(hasattr(v, "type") for v in (x1, x2)):  # numpy values: numpy's own, ints too
        try:
            return np.divmod(x1, x2)
        except OverflowError as error:  # a Python int no dtype of numpy's holds (10**400, 2**63 for i32)
            raise at(ShaxValueError(f"{op}: numpy: {error}"), current_source()) from None
        except (TypeError, ValueError) as error:
            raise at(ShaxTypeError(f"{op}: numpy: {error}"), current_source()) from None
    # A Python number is weak: the other operand's float, as numpy's promotion makes it (its
    # np.sign would otherwise be an f64, or a u64 for 2**63, which no f32 tracer joins).
    if isinstance(x1, (int, float)) or isinstance(x2, (int, float)):
        traced = x2 if isinstance(x1, (int, float)) else x1
        x1, x2 = (_weak(op, x, traced) if isinstance(x, (int, float)) else x for x in (x1, x2))
    mod = tc.rem(x1, x2)
    div = (x1 - mod) / x2
    moved = tc.logical_and(tc.ne(mod, 0.0), tc.ne(tc.signum(x2), tc.signum(mod)))
    return tc.round(tc.where(moved, div - 1.0, div)), tc.where(moved, mod + x2, mod)


def _weak(op: str, number: float, traced: Any) -> Any:
    """`number` in the dtype of the traced operand beside it."""
    try:
        return np.asarray(float(number), np.dtype(traced.dtype.numpy))
    except OverflowError as error:
        message = f"{op}: the Python int {reprlib.repr(number)} is beyond every float ({error})"
        raise at(ShaxValueError(message), current_source()) from None


def floor_divide(x1: Any, x2: Any, /, **options: Any) -> Any:
    """numpy's `//` (of floats, on tracers): `divmod`'s quotient."""
    return _divmod("floor_divide", x1, x2, options)[0]


def remainder(x1: Any, x2: Any, /, **options: Any) -> Any:
    """numpy's `%` (of floats, on tracers): `divmod`'s remainder, with x2's sign."""
    return _divmod("remainder", x1, x2, options)[1]


mod = remainder


def round(a: Any, decimals: int = 0, out: None = None) -> Any:  # noqa: A001 - numpy's name
    """numpy's `round` to whole numbers, halves to the even one; only `decimals=0`."""
    unsupported("round", "out", out, None)
    if decimals != 0:
        raise at(ShaxValueError(f"round: only decimals=0 is supported, got decimals={decimals!r}"), current_source())
    return tc.round(as_array(a))


def clip(a: Any, a_min: Any, a_max: Any, out: None = None, **options: Any) -> Any:
    """numpy's `clip`: min(max(a, a_min), a_max); either bound may be None (not both)."""
    ufunc_options("clip", {"out": out, **options})
    a = as_array(a)
    if a_min is None and a_max is None:
        raise at(ShaxValueError("clip: a_min and a_max are both None: give at least one"), current_source())
    if a_max is None:
        return tc.maximum(a, as_array(a_min))
    if a_min is None:
        return tc.minimum(a, as_array(a_max))
    return tc.clip(a, as_array(a_min), as_array(a_max))


def where(condition: Any, x: Any, y: Any, /) -> Any:
    """numpy's three-argument `where`: x where condition holds, else y, the three broadcast."""
    return tc.where(as_array(condition), as_array(x), as_array(y))
