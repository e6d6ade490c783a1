"""The distributions of `shax.random`, each from the bits of `shax.random._keys` as
`jax.random` draws it (JAX's argument names, shapes and dtypes; float32 and int32 by
default), so that a key gives JAX's values:

- uniform in [0, 1): a float's 23 (f32) or 52 (f64) mantissa bits from the top of the
  random bits, under the exponent of 1.0, minus 1 (the bits read as the float:
  `bitcast_convert_type`); f64 takes 64 bits per value, as JAX's 64-bit mode;
- normal: √2 · erfinv(u) of u uniform in (−1, 1); erfinv is XLA's f32 polynomial (Giles'),
  refined in f64 by two Newton steps on erf;
- randint: (hi mod span · (2³² mod span) + lo mod span) mod span, hi and lo the bits of the
  two halves of `split(key)`, in u32 arithmetic;
- permutation: a stable sort by random u32 keys (more rounds for ≥ 1626 elements),
  choice and categorical from randint, permutation, uniform and the Gumbel-max trick.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import shax.numpy as snp
import typeclasses as tc
from shax.core.errors import ShaxTypeError
from shax.core.types import describe
from shax.random._keys import U32, check_key, check_shape, fail, float_dtype, random_bits, split, word_pairs
from shax.tracing.tracer import Tracer

# XLA's ErfInv for f32 (Giles, "Approximating the erfinv function"): w = −log(1 − x²),
# erfinv x = x · p(w − 2.5) for w < 5, x · q(√w − 3) beyond, p and q of degree 8
_ERFINV_SMALL = (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
    -0.00417768164, 0.246640727, 1.50140941,
)  # fmt: skip
_ERFINV_LARGE = (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
    0.00943887047, 1.00167406, 2.83297682,
)  # fmt: skip


def _shape_of(value: Any) -> tuple[int, ...]:
    return tuple(value.type.shape) if isinstance(value, Tracer) else np.shape(value)


def _parameter(name: str, value: Any, dtype: np.dtype[Any]) -> Any:
    """A distribution's parameter as a value of `dtype`: a number or an array (numpy's or
    traced), converted as JAX converts it."""
    if isinstance(value, Tracer):
        return value if value.type.dtype == dtype else tc.convert_element_type(value, dtype)
    if isinstance(value, (bool, int, float, np.ndarray, np.generic)):
        return np.asarray(value).astype(dtype)
    raise fail(name, f"a parameter is a number or an array, got {describe(value)}", ShaxTypeError)


def _within(name: str, shape: tuple[int, ...], *parameters: Any) -> None:
    """The parameters broadcast to `shape` (JAX's `_check_shape`)."""
    for value in parameters:
        own = _shape_of(value)
        try:
            joined = np.broadcast_shapes(shape, own)
        except ValueError:
            joined = None
        if joined != shape:
            raise fail(name, f"a parameter of shape {own} does not broadcast to the shape {shape}")


def _unit(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    """Uniform in [0, 1): the top mantissa bits of random bits under 1.0's exponent, minus 1."""
    if dtype == np.float32:
        words = (random_bits(key, shape) >> 9) | 0x3F800000
        return tc.bitcast_convert_type(words, np.float32) - np.float32(1.0)
    # f64 from 64 bits per value (JAX's 64-bit mode: the pair of threefry words, high first)
    high, low = word_pairs(key, shape)
    wide = (tc.convert_element_type(high, np.int64) << 32) | tc.convert_element_type(low, np.int64)
    words = tc.shift_right_logical(wide, np.int64(12)) | 0x3FF0000000000000
    return tc.bitcast_convert_type(words, np.float64) - 1.0


def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0) -> Any:
    """Uniform values in [minval, maxval) of `shape` and the float `dtype` (float32)."""
    key = check_key("uniform", key)
    shape = check_shape("uniform", shape)
    dtype = float_dtype("uniform", dtype)
    return _uniform("uniform", key, shape, dtype, minval, maxval)


def _uniform(name: str, key: Any, shape: tuple[int, ...], dtype: np.dtype[Any], minval: Any, maxval: Any) -> Any:
    low, high = _parameter(name, minval, dtype), _parameter(name, maxval, dtype)
    _within(name, shape, low, high)
    floats = _unit(key, shape, dtype)
    return tc.maximum(low, floats * (high - low) + low)


def _erfinv(x: Any, dtype: np.dtype[Any]) -> Any:
    """erfinv, XLA's f32 polynomial (in f64 refined by Newton's method on erf)."""
    w = -tc.log1p(-(x * x))
    small = w < 5.0
    w = snp.where(small, w - 2.5, tc.sqrt(tc.maximum(w, 0.0)) - 3.0)
    p: Any = snp.where(small, dtype.type(_ERFINV_SMALL[0]), dtype.type(_ERFINV_LARGE[0]))
    for a, b in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:]):
        p = snp.where(small, dtype.type(a), dtype.type(b)) + p * w
    result = p * x
    if dtype == np.float64:  # erfinv' = √π/2 · e^(erfinv²)
        for _ in range(2):
            result = result - (tc.erf(result) - x) * (math.sqrt(math.pi) / 2) * tc.exp(result * result)
    return snp.where(tc.abs(x) == 1.0, x * np.inf, result)


def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal values of `shape` and the float `dtype` (float32)."""
    key = check_key("normal", key)
    shape = check_shape("normal", shape)
    dtype = float_dtype("normal", dtype)
    low = np.nextafter(dtype.type(-1.0), dtype.type(0.0))
    u = _uniform("normal", key, shape, dtype, low, 1.0)
    return dtype.type(math.sqrt(2)) * _erfinv(u, dtype)


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Standard normal values conditioned on the open interval (lower, upper)."""
    key = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    low, high = _parameter("truncated_normal", lower, dtype), _parameter("truncated_normal", upper, dtype)
    if shape is None:
        shape = np.broadcast_shapes(_shape_of(low), _shape_of(high))
    shape = check_shape("truncated_normal", shape)
    _within("truncated_normal", shape, low, high)
    sqrt2 = dtype.type(math.sqrt(2))
    u = _uniform("truncated_normal", key, shape, dtype, tc.erf(low / sqrt2), tc.erf(high / sqrt2))
    out = sqrt2 * _erfinv(u, dtype)
    return tc.clip(out, _next_float(tc.stop_gradient(low), 1), _next_float(tc.stop_gradient(high), -1))


def _next_float(x: Any, direction: int) -> Any:
    """numpy's nextafter(x, ±inf) of finite floats: one step of the bits away from or toward 0."""
    if not isinstance(x, Tracer):
        x = np.asarray(x)
        return np.nextafter(x, np.array(direction * np.inf, x.dtype))
    wide = np.dtype(f"i{np.dtype(x.type.dtype.numpy).itemsize}")
    bits = tc.bitcast_convert_type(x, wide)
    away = (x > 0.0) if direction > 0 else (x < 0.0)
    moved = tc.bitcast_convert_type(bits + snp.where(away, wide.type(1), wide.type(-1)), x.type.dtype.numpy)
    smallest = direction * np.nextafter(np.zeros((), x.type.dtype.numpy), 1)
    return snp.where(x == 0.0, smallest, moved)


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None) -> Any:
    """Booleans, True with probability p (of `shape`, or p's)."""
    key = check_key("bernoulli", key)
    if isinstance(p, Tracer):
        dtype = np.dtype(p.type.dtype.numpy)
    else:
        dtype = np.asarray(p).dtype if isinstance(p, (np.ndarray, np.generic)) else np.dtype(np.float32)
    if dtype.kind != "f":
        raise fail("bernoulli", f"the probability p must be a float, got {describe(p)}", ShaxTypeError)
    p = _parameter("bernoulli", p, dtype)
    shape = _shape_of(p) if shape is None else check_shape("bernoulli", shape)
    _within("bernoulli", shape, p)
    return _unit(key, shape, dtype) < p


def _integer_dtype(name: str, dtype: Any) -> np.dtype[Any]:
    try:
        asked = np.dtype(np.int32 if dtype is None else dtype)
    except TypeError:
        asked = None
    if asked not in (np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.uint8)):
        shown = asked.name if asked is not None else repr(dtype)
        message = f"dtype must be int32, uint32 or uint8 (64-bit integers need JAX's 64-bit mode), got {shown}"
        raise fail(name, message, ShaxTypeError)
    return asked


def _bound(name: str, value: Any, dtype: np.dtype[Any], high: int) -> Any:
    """An integer bound clipped into [dtype's min, high] and converted (JAX's
    `_convert_and_clip_integer`)."""
    info = np.iinfo(dtype)
    if isinstance(value, Tracer):
        own: Any = value.type.dtype.numpy
        if value.type.dtype.is_float:
            raise fail(name, f"the bounds are integers, got {value.type}", ShaxTypeError)
        source = np.iinfo(own)
        lo, hi = max(int(info.min), int(source.min)), min(high, int(source.max))
        clipped: Any = tc.clip(value, own(lo), own(hi))
        return tc.convert_element_type(clipped, dtype)
    array = np.asarray(value) if isinstance(value, (int, np.ndarray, np.generic)) else None
    if array is None or array.dtype.kind not in "iub":
        raise fail(name, f"the bounds are integers, got {describe(value)}", ShaxTypeError)
    if isinstance(value, int):
        return np.asarray(min(max(value, int(info.min)), high)).astype(dtype)
    return np.clip(array.astype(np.int64), int(info.min), high).astype(dtype)


def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Integers uniform in [minval, maxval) of `shape` and `dtype` (int32; uint32 and uint8
    too), JAX's values: u8 is drawn as i32 and cast, as JAX does."""
    key = check_key("randint", key)
    shape = check_shape("randint", shape)
    target = _integer_dtype("randint", dtype)
    sampling = np.dtype(np.int32) if target == np.uint8 else target
    info = np.iinfo(target)
    # maxval beyond the dtype's range: the span is one larger (randint(key, s, 0, 256, uint8))
    low = _bound("randint", minval, sampling, int(info.max))
    high = _bound("randint", maxval, sampling, int(info.max) + (1 if target == np.uint8 else 0))
    beyond = _beyond("randint", maxval, int(info.max) if target != np.uint8 else int(np.iinfo(sampling).max))
    _within("randint", shape, low, high)
    k1, k2 = (tc.reshape(tc.slice(keys, [i, 0], [i + 1, 2]), [2]) for keys in [split(key)] for i in (0, 1))
    higher, lower = random_bits(k1, shape), random_bits(k2, shape)
    span = tc.convert_element_type(high - low, U32) if sampling != U32 else high - low
    span = snp.where(high <= low, np.uint32(1), span)
    span = snp.where(tc.logical_and(beyond, high > low), span + 1, span)
    multiplier = tc.rem(np.uint32(2**16) + span * 0, span)
    multiplier = tc.rem(multiplier * multiplier, span)
    offset = tc.rem(tc.rem(higher, span) * multiplier + tc.rem(lower, span), span)
    result = low + (offset if sampling == U32 else tc.convert_element_type(offset, sampling))
    return result if sampling == target else tc.convert_element_type(result, target)


def _beyond(name: str, maxval: Any, largest: int) -> Any:
    """Where maxval exceeds the largest value of the dtype drawn."""
    if isinstance(maxval, Tracer):
        own: Any = maxval.type.dtype.numpy
        info = np.iinfo(own)
        if int(info.max) <= largest:
            return snp.zeros_like(maxval, dtype=bool)
        return maxval > own(largest)
    return np.asarray(np.asarray(maxval).astype(object) > largest, bool)


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """x shuffled along `axis` (an int n: a permutation of arange(n), int32); `independent`
    shuffles each slice along the axis on its own."""
    key = check_key("permutation", key)
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        if x < 0:
            raise fail("permutation", f"x is a size or an array, got the int {x}")
        return _shuffle(key, np.arange(int(x), dtype=np.int32), 0)
    shape = _shape_of(x) if isinstance(x, (Tracer, np.ndarray)) else None
    if not shape:
        raise fail("permutation", f"x is an int or an array of rank ≥ 1, got {describe(x)}", ShaxTypeError)
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) or not -len(shape) <= axis < len(shape):
        raise fail("permutation", f"axis {axis!r} is not an axis of a rank-{len(shape)} array")
    axis = int(axis) % len(shape)
    if independent or len(shape) == 1:
        return _shuffle(key, x, axis)
    order = _shuffle(key, np.arange(shape[axis], dtype=np.int32), 0)
    return snp.take(x, order, axis=axis)


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    """x sorted along `axis` by random u32 keys, in as many rounds as JAX takes (a round's
    ties keep their order: the sort is stable)."""
    shape = _shape_of(x)
    size = math.prod(shape)
    rounds = math.ceil(3 * math.log(max(1, size)) / math.log(2**32 - 1))
    for _ in range(rounds):
        keys = split(key)
        key, subkey = (tc.reshape(tc.slice(keys, [i, 0], [i + 1, 2]), [2]) for i in (0, 1))
        order = tc.argsort(random_bits(subkey, shape), axis)
        x = snp.take_along_axis(x, order, axis=axis)
    return x


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None, axis: int = 0) -> Any:
    """A sample of `shape` from the elements of `a` along `axis` (an int n: from arange(n)),
    with or without replacement, uniformly or with the probabilities p."""
    key = check_key("choice", key)
    shape = check_shape("choice", shape)
    scalar = isinstance(a, (int, np.integer)) and not isinstance(a, bool)
    if not scalar and not isinstance(a, (Tracer, np.ndarray)):
        raise fail("choice", f"a is an int or an array, got {describe(a)}", ShaxTypeError)
    a_shape = () if scalar else _shape_of(a)
    if not scalar and not a_shape:
        raise fail("choice", "a is an int or an array of rank ≥ 1 (a scalar array is not a population)")
    if not scalar and not -len(a_shape) <= axis < len(a_shape):
        raise fail("choice", f"axis {axis!r} is not an axis of a rank-{len(a_shape)} array")
    axis = axis % max(len(a_shape), 1)
    n = int(a) if scalar else a_shape[axis]
    draws = math.prod(shape)
    if draws == 0:
        return np.zeros(shape, np.int32 if scalar else np.dtype(_dtype_of(a)))
    if n <= 0:
        raise fail("choice", "a must be greater than 0 unless no samples are taken")
    if not replace and draws > n:
        raise fail(
            "choice", f"cannot take a larger sample (size {draws}) than the population ({n}) without replacement"
        )
    if p is None:
        if replace:
            index = randint(key, shape, 0, n)
            return index if scalar else snp.take(a, index, axis=axis)
        shuffled = permutation(key, n if scalar else a, axis)
        taken = tc.slice(
            shuffled, [0] * max(len(a_shape), 1), [draws if k == axis else s for k, s in enumerate(a_shape or (n,))]
        )
        out_shape = shape if scalar else (*a_shape[:axis], *shape, *a_shape[axis + 1 :])
        return tc.reshape(taken, list(out_shape))
    probabilities = _parameter(
        "choice", p, np.dtype(np.float32) if not isinstance(p, (Tracer, np.ndarray)) else np.dtype(_dtype_of(p))
    )
    if _shape_of(probabilities) != (n,):
        raise fail("choice", f"p must be a vector of a.shape[axis] = {n} probabilities, got {describe(p)}")
    dtype = np.dtype(_dtype_of(probabilities))
    if replace:
        # searchsorted(cumsum p, r): the number of partial sums below r
        partial = tc.dot(probabilities, np.triu(np.ones((n, n), dtype)))
        total = tc.slice(partial, [n - 1], [n])
        r = tc.reshape(total, []) * (1 - _unit(key, shape, dtype))
        below = tc.lt(tc.reshape(partial, [1] * len(shape) + [n]), snp.expand_dims(r, -1))
        index = tc.reduce_sum(tc.convert_element_type(below, np.int32), [len(shape)])
    else:
        scores = _gumbel(key, (n,), dtype) + tc.log(probabilities)
        index = tc.slice(tc.argsort(-scores, 0), [0], [draws])
        index = tc.reshape(tc.convert_element_type(index, np.int32), list(shape))
    return index if scalar else snp.take(a, index, axis=axis)


def _dtype_of(value: Any) -> Any:
    return value.type.dtype.numpy if isinstance(value, Tracer) else np.asarray(value).dtype


def _gumbel(key: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    """−log(−log u), u uniform in [tiny, 1) (JAX's "low" mode)."""
    u = _uniform("gumbel", key, shape, dtype, np.finfo(dtype).tiny, 1.0)
    return -tc.log(-tc.log(u))


def gumbel(key: Any, shape: Any = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Gumbel values (density e^−(x + e^−x)) of `shape` and the float `dtype` (float32);
    `mode` "low" (the default) or "high" (twice the bits: the largest value ~32, not ~16)."""
    key = check_key("gumbel", key)
    shape = check_shape("gumbel", shape)
    dtype = float_dtype("gumbel", dtype)
    if mode not in (None, "low", "high"):
        raise fail("gumbel", f"mode must be 'low' or 'high', got {mode!r}")
    if mode != "high":
        return _gumbel(key, shape, dtype)
    both = _uniform("gumbel", key, (2, *shape), dtype, 0.0, 1.0)
    high = tc.reshape(tc.slice(both, [0] * (len(shape) + 1), [1, *shape]), list(shape))
    low = tc.reshape(tc.slice(both, [1] + [0] * len(shape), [2, *shape]), list(shape))
    info = np.finfo(dtype)
    x = snp.where(high >= 0.5, high, high + dtype.type(2.0**-info.nmant) * low + info.tiny)
    return -tc.log(-tc.log1p(-x))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None, replace: bool = True) -> Any:
    """Samples (int32 indices along `axis`) of the categorical distributions softmax(logits)
    by the Gumbel-max trick (without replacement, Gumbel top-k)."""
    key = check_key("categorical", key)
    if not isinstance(logits, (Tracer, np.ndarray)):
        raise fail("categorical", f"logits is an array, got {describe(logits)}", ShaxTypeError)
    logits_shape = _shape_of(logits)
    dtype = np.dtype(_dtype_of(logits))
    if dtype.kind != "f" or not logits_shape:
        raise fail("categorical", f"logits is a float array of rank ≥ 1, got {describe(logits)}", ShaxTypeError)
    rank = len(logits_shape)
    if not isinstance(axis, (int, np.integer)) or not -rank <= axis < rank:
        raise fail("categorical", f"axis {axis!r} is not an axis of a rank-{rank} array")
    axis = int(axis) % rank
    batch = logits_shape[:axis] + logits_shape[axis + 1 :]
    shape = batch if shape is None else check_shape("categorical", shape)
    if shape[len(shape) - len(batch) :] != batch and batch:
        raise fail("categorical", f"the shape {shape} does not end with the logits' batch shape {batch}")
    prefix = shape[: len(shape) - len(batch)]
    if replace:
        values: Any = logits
        spread = tc.reshape(values, [1] * len(prefix) + list(logits_shape))
        noisy = _gumbel(key, (*prefix, *logits_shape), dtype) + spread
        return snp.argmax(noisy, axis=len(prefix) + axis)
    k = math.prod(prefix)
    if k > logits_shape[axis]:
        raise fail("categorical", f"{k} samples without replacement exceed the {logits_shape[axis]} categories")
    noisy = snp.moveaxis(logits + _gumbel(key, logits_shape, dtype), axis, -1)
    order = tc.slice(tc.argsort(-noisy, rank - 1), [0] * rank, [*batch, k])
    moved = snp.moveaxis(tc.convert_element_type(order, np.int32), -1, 0)
    return tc.reshape(moved, list(shape))
