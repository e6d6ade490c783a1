"""More of numpy's elementwise functions, each a composition of shax's (issue 31's most-used
missing names): `log10 log2 exp2 radians degrees deg2rad rad2deg fabs cbrt arccosh fmin fmax
invert isneginf isposinf`, `trunc logical_xor heaviside copysign hypot sinc`, shax's
real-only `real imag conj conjugate`, and `polyval`.

On numpy values each is numpy's own ufunc (numpy's rounding, its dtypes); traced, the
operands are promoted as numpy's ufunc promotes them (`shax.tracing.promotion.ufunc_operands`)
and the composition runs on them, so its derivative, batching and export are those of
the functions it is made of (`log2' = 1 / (x ln 2)`, JAX's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, a_type
from shax.numpy._arrays import _fail, zeros_like
from shax.numpy._elementwise import as_array
from shax.numpy._options import ufunc_options, unsupported
from shax.tracing.promotion import ufunc_operands
from shax.tracing.tracer import Tracer

__all__ = [
    "arccosh", "cbrt", "conj", "conjugate", "copysign", "deg2rad", "degrees", "exp2", "fabs", "fmax", "fmin",
    "heaviside", "hypot", "imag", "invert", "isneginf", "isposinf", "log10", "log2", "logical_xor", "polyval",
    "rad2deg", "radians", "real", "sinc", "trunc",
]  # fmt: skip


def _ufunc(name: str, composition: Callable[..., Any], doc: str) -> Callable[..., Any]:
    """numpy's ufunc `name` of one or two operands: numpy's own on numpy values,
    `composition` of the promoted operands traced."""
    ufunc = getattr(np, name)

    def run(options: dict[str, Any], *operands: Any) -> Any:
        ufunc_options(name, options)
        operands = tuple(as_array(o, name) for o in operands)
        if not any(isinstance(o, Tracer) for o in operands):
            return _numpy(name, ufunc, *operands)
        return composition(*ufunc_operands(ufunc, name, *operands))

    def unary(x: Any, /, **options: Any) -> Any:
        return run(options, x)

    def binary(x1: Any, x2: Any, /, **options: Any) -> Any:
        return run(options, x1, x2)

    apply = unary if ufunc.nin == 1 else binary
    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"numpy's `{name}`, elementwise: {doc}."
    return apply


_LN10, _LN2 = float(np.log(10.0)), float(np.log(2.0))
_DEGREE = float(np.pi / 180.0)

log10 = _ufunc("log10", lambda x: tc.log(x) / _LN10, "log(x) / ln 10")
log2 = _ufunc("log2", lambda x: tc.log(x) / _LN2, "log(x) / ln 2")
exp2 = _ufunc("exp2", lambda x: tc.exp(x * _LN2), "exp(x ln 2)")
radians = _ufunc("radians", lambda x: x * _DEGREE, "x · π / 180")
deg2rad = _ufunc("deg2rad", lambda x: x * _DEGREE, "x · π / 180")
degrees = _ufunc("degrees", lambda x: x / _DEGREE, "x · 180 / π")
rad2deg = _ufunc("rad2deg", lambda x: x / _DEGREE, "x · 180 / π")
fabs = _ufunc("fabs", tc.abs, "|x| (of floats)")
# ∛x = sign(x) · |x|^(1/3): the real cube root of a negative x too.
cbrt = _ufunc("cbrt", lambda x: tc.sign(x) * tc.abs(x) ** (1.0 / 3.0), "sign(x) · |x|^(1/3)")
# arccosh x = log(x + √(x² − 1)) = log x + log1p(√((x − 1)(x + 1)) / x): no overflow of x²,
# and accurate near 1; NaN below 1, as numpy's.
arccosh = _ufunc(
    "arccosh", lambda x: tc.log(x) + tc.log1p(tc.sqrt((x - 1.0) * (x + 1.0)) / x), "log x + log1p(√(x² − 1) / x)"
)

# trunc rounds toward zero: ⌈x⌉ below 0, ⌊x⌋ above (zero derivative, as floor's); integers
# and booleans are their own truncation (numpy 2 keeps their dtype).
trunc = _ufunc(
    "trunc",
    lambda x: tc.where(tc.lt(x, 0.0), tc.ceil(x), tc.floor(x)) if _is_float(x) else x,
    "⌈x⌉ for x < 0, ⌊x⌋ otherwise",
)
# numpy's loops read both operands as truths (x ≠ 0): xor is their inequality.
logical_xor = _ufunc("logical_xor", lambda x, y: tc.ne(_truth(x), _truth(y)), "(x1 ≠ 0) xor (x2 ≠ 0)")
# heaviside: 0 below 0, 1 above, x2 at 0, NaN at NaN (numpy's); zero derivative in x1.


def _heaviside(x1: Any, x2: Any) -> Any:
    x, h = _alike("heaviside", x1, x2)
    return tc.where(tc.ne(x, x), x, tc.where(tc.lt(x, 0.0), 0.0, tc.where(tc.gt(x, 0.0), 1.0, h)))


heaviside = _ufunc("heaviside", _heaviside, "0 for x1 < 0, x2 at 0, 1 for x1 > 0")
# copysign: |x1| with x2's sign bit, read from its bits, so −0.0 and a negative NaN count as
# negative, as numpy reads them (JAX's: where(signbit(x2), −|x1|, |x1|)).
copysign = _ufunc("copysign", lambda *xy: _copysign(*_alike("copysign", *xy)), "|x1| with the sign of x2")


def _copysign(x: Any, y: Any) -> Any:
    return tc.where(_signbit(y), -tc.abs(x), tc.abs(x))


def _alike(op: str, *operands: Any) -> list[Any]:
    """The operands not traced as numpy arrays of the traced ones' dtype (the dtype numpy's
    loop computes in), so the typeclass functions, which do not promote, take them."""
    dtype = next(o.dtype.numpy for o in operands if isinstance(o, Tracer))
    return [o if isinstance(o, Tracer) else np.asarray(_number(op, o), dtype) for o in operands]


def _number(op: str, x: Any) -> Any:
    """x, an operand beside a tracer, refused unless numpy reads it as numbers."""
    kind = np.asarray(x).dtype.kind if isinstance(x, (np.ndarray, np.generic, bool, int, float)) else "O"
    if kind not in "biuf":
        raise _fail(op, f"an operand must be an array or a number, got {a_type(x)}", ShaxTypeError)
    return x


def _signbit(x: Any) -> Any:
    if not isinstance(x, Tracer):
        return np.signbit(x)
    width: Any = np.int32 if x.dtype.numpy == np.float32 else np.int64
    bits: Any = tc.bitcast_convert_type(x, width)
    return tc.lt(bits, width(0))


def _hypot(x: Any, y: Any) -> Any:
    """√(x² + y²) as m·√(1 + (n/m)²), m = max(|x|, |y|), n = min: no overflow of x²; 0 at
    (0, 0); ∞ if either is infinite, even beside a NaN (numpy's)."""
    a, b = (tc.abs(v) for v in _alike("hypot", x, y))
    m, n = tc.maximum(a, b), tc.minimum(a, b)
    ratio = n / tc.where(tc.eq(m, 0.0), 1.0, m)
    infinite = tc.logical_or(tc.eq(a, np.inf), tc.eq(b, np.inf))
    return tc.where(infinite, np.inf, m * tc.sqrt(1.0 + ratio * ratio))


hypot = _ufunc("hypot", _hypot, "√(x1² + x2²)")


def _sinc(x: Any) -> Any:
    """sin(πx) / (πx), 1 at 0: the quotient taken at a safe x there, so the derivative at 0
    is the select's, 0 (sinc's own; its higher derivatives at 0 are not sinc's)."""
    zero = tc.eq(x, 0.0)
    safe = tc.where(zero, 1.0, x) * float(np.pi)
    return tc.where(zero, 1.0, tc.sin(safe) / safe)


def sinc(x: Any) -> Any:
    """numpy's `sinc` (no ufunc): sin(πx) / (πx), 1 at 0; integers and booleans read as f64."""
    x = as_array(x, "sinc")
    if not isinstance(x, Tracer):
        return _numpy("sinc", np.sinc, x)
    return _sinc(x if _is_float(x) else tc.convert_element_type(x, np.float64))


def _kind(x: Any) -> str:
    return str(np.dtype(x.dtype.numpy if isinstance(x, Tracer) else np.asarray(x).dtype).kind)


def _is_float(x: Any) -> bool:
    return _kind(x) == "f"


def _truth(x: Any) -> Any:
    """x ≠ 0, a boolean (x itself if boolean)."""
    if not isinstance(x, Tracer):
        return np.asarray(_number("logical_xor", x)) != 0
    zero: Any = 0
    return x if _kind(x) == "b" else tc.ne(x, zero)


def isneginf(x: Any, out: None = None) -> Any:
    """numpy's `isneginf`: x = −∞."""
    return _infinite("isneginf", np.isneginf, -np.inf, x, out)


def isposinf(x: Any, out: None = None) -> Any:
    """numpy's `isposinf`: x = +∞."""
    return _infinite("isposinf", np.isposinf, np.inf, x, out)


def _infinite(op: str, numpy: Callable[..., Any], infinity: float, x: Any, out: None) -> Any:
    unsupported(op, "out", out, None)
    x = as_array(x, op)
    return x == infinity if isinstance(x, Tracer) and x.dtype.is_float else _numpy(op, numpy, x)


def _numpy(op: str, function: Callable[..., Any], *args: Any) -> Any:
    """numpy's own `function`; what it refuses a ShaxError naming `op`."""
    try:
        return function(*args)
    except (TypeError, AttributeError) as error:  # numpy's loop of objects calls x.hypot()
        raise _fail(op, f"numpy: {error}", ShaxTypeError) from None
    except ValueError as error:
        raise _fail(op, f"numpy: {error}") from None


def _nan_ignoring(pick: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """fmin/fmax: `pick` of the two, or the one that is not NaN (NaN if both are)."""

    def apply(x: Any, y: Any) -> Any:
        return tc.where(tc.ne(x, x), y, tc.where(tc.ne(y, y), x, pick(x, y)))

    return apply


fmin = _ufunc("fmin", _nan_ignoring(tc.minimum), "the smaller, ignoring a NaN")
fmax = _ufunc("fmax", _nan_ignoring(tc.maximum), "the larger, ignoring a NaN")


def invert(x: Any, /, **options: Any) -> Any:
    """numpy's `invert` (`~x`): bitwise not of integers, logical not of booleans."""
    ufunc_options("invert", options)
    x = as_array(x, "invert")
    return ~x if isinstance(x, Tracer) else _numpy("invert", np.invert, x)


# shax has real dtypes only: a value is its own real part and conjugate, its imaginary part 0.


def real(val: Any) -> Any:
    """numpy's `real`: the value itself (shax's dtypes are real)."""
    val = as_array(val, "real")
    return val if isinstance(val, Tracer) else _numpy("real", np.real, val)


def imag(val: Any) -> Any:
    """numpy's `imag`: zeros of the value's type (shax's dtypes are real)."""
    val = as_array(val, "imag")
    return zeros_like(val) if isinstance(val, Tracer) else _numpy("imag", np.imag, val)


def conj(x: Any, /, **options: Any) -> Any:
    """numpy's `conj`: the value itself (shax's dtypes are real)."""
    ufunc_options("conj", options)
    x = as_array(x, "conj")
    return x if isinstance(x, Tracer) else _numpy("conj", np.conj, x)


def conjugate(x: Any, /, **options: Any) -> Any:
    """numpy's `conjugate`: the value itself (shax's dtypes are real)."""
    ufunc_options("conjugate", options)
    x = as_array(x, "conjugate")
    return x if isinstance(x, Tracer) else _numpy("conjugate", np.conjugate, x)


def polyval(p: Any, x: Any) -> Any:
    """numpy's `polyval`: p[0]·x^(n−1) + ... + p[n−1], by Horner's rule (((p0·x + p1)·x + ...)),
    p a 1-D array of coefficients, highest power first."""
    p, x = as_array(p, "polyval"), as_array(x, "polyval")
    if not isinstance(p, Tracer) and not isinstance(x, Tracer):
        return _numpy("polyval", np.polyval, p, x)
    for name, value in (("p", p), ("x", x)):
        # an object array (of None, say) would reach `y * x` and fail there, as Python's TypeError
        numeric = isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf"
        if not (numeric or isinstance(value, (Tracer, bool, int, float))):
            raise _fail("polyval", f"{name} must be an array or a number, got {a_type(value)}", ShaxTypeError)
    shape = tuple(tc.shape(p))
    if len(shape) != 1:
        raise _fail("polyval", f"p must be a 1-D array of coefficients, got shape {shape}", ShaxTypeError)
    y: Any = x * 0
    for k in range(shape[0]):
        y = y * x + p[k]
    return y
