"""`shax.lax`'s elementwise functions that are compositions, with jax.lax's signatures:
`clamp`, `round` (both of lax's rounding methods), `is_finite`, `cbrt`, `exp2`, and the
bitwise typeclass functions under lax's names (`bitwise_and bitwise_or bitwise_xor
bitwise_not`).

`clamp` is min(max(x, lo), hi), differentiated as JAX's clamp: the gradient goes to the
operand that is strictly picked (x strictly inside, lo strictly above x and below hi, hi
strictly below x), and to none of them at a tie."""

from __future__ import annotations

from typing import Any

import numpy as np

import typeclasses as tc
from shax import numpy as snp
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.tracing.indexing import traced_type
from shax.transforms.stop_gradient import stop_gradient

__all__ = ["bitwise_and", "bitwise_not", "bitwise_or", "bitwise_xor", "cbrt", "clamp", "exp2", "is_finite", "round"]

bitwise_and, bitwise_or, bitwise_xor, bitwise_not = tc.bitwise_and, tc.bitwise_or, tc.bitwise_xor, tc.bitwise_not


def _fail(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"lax.{op}: {message}"), current_source())


def _float(op: str, x: Any) -> Any:
    """x, refused unless of a float dtype (lax's functions of floats do not promote)."""
    t = traced_type(x)
    try:
        dtype = np.dtype(t.dtype.numpy) if t is not None else np.asarray(x).dtype
    except (TypeError, ValueError) as error:
        raise _fail(op, f"cannot read {type(x).__name__} {x!r:.80} as an array: {error}", ShaxTypeError) from None
    if dtype.kind != "f":
        raise _fail(op, f"needs a float operand, got {t if t is not None else dtype}", ShaxTypeError)
    return x


def _accuracy(op: str, accuracy: Any) -> None:
    if accuracy is not None:
        raise _fail(op, f"accuracy={accuracy!r} is not supported (only None)")


def clamp(min: Any, x: Any, max: Any) -> Any:  # noqa: A002 - lax's names
    """min(max(x, lo), hi) elementwise, lo and hi scalars or of x's shape (lax's); NaN x
    stays NaN."""
    shape = tuple(tc.shape(x))
    for name, bound in (("min", min), ("max", max)):
        bound_shape = tuple(tc.shape(bound))
        if bound_shape not in ((), shape):
            message = f"{name} must be a scalar or of x's shape {shape}, got shape {bound_shape}"
            raise _fail("clamp", message, ShaxTypeError)
    clamped = stop_gradient(tc.minimum(tc.maximum(x, min), max))
    inside = tc.logical_and(tc.gt(x, min), tc.lt(x, max))
    at_lo = tc.logical_and(tc.gt(min, x), tc.lt(min, max))
    return snp.where(tc.lt(max, x), max, snp.where(at_lo, min, snp.where(inside, x, clamped)))


def round(x: Any, rounding_method: Any = 0) -> Any:  # noqa: A001 - lax's name
    """x rounded to an integer value: halves away from zero (rounding_method 0, lax's
    default AWAY_FROM_ZERO) or to the even one (1, TO_NEAREST_EVEN). Away from zero is
    t = trunc(x) moved one toward x's sign where |x − t| ≥ ½ (x − t is exact)."""
    if isinstance(rounding_method, (bool, np.bool_)) or not isinstance(rounding_method, (int, np.integer)):
        raise _fail("round", f"rounding_method must be 0 or 1, got {rounding_method!r}", ShaxTypeError)
    if int(rounding_method) not in (0, 1):
        message = f"rounding_method must be 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN), got {rounding_method}"
        raise _fail("round", message)
    x = _float("round", x)
    if int(rounding_method) == 1:
        return tc.round(x)
    t = snp.trunc(x)
    return snp.where(tc.ge(tc.abs(tc.sub(x, t)), 0.5), tc.add(t, tc.sign(x)), t)


def is_finite(x: Any) -> Any:
    """Whether x is neither infinite nor NaN (floats only, as lax's)."""
    return snp.isfinite(_float("is_finite", x))


def cbrt(x: Any, *, accuracy: Any = None) -> Any:
    """The real cube root, sign(x) · |x|^(1/3)."""
    _accuracy("cbrt", accuracy)
    return snp.cbrt(_float("cbrt", x))


def exp2(x: Any, *, accuracy: Any = None) -> Any:
    """2^x, exp(x ln 2)."""
    _accuracy("exp2", accuracy)
    return snp.exp2(_float("exp2", x))
