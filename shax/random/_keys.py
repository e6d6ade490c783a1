"""Keys and bits: JAX's default generator, threefry-2x32, with JAX's default
`jax_threefry_partitionable` (on since JAX 0.5), so that a key gives the bits
`jax.random` gives.

A key is a value, a u32[2] array (JAX's legacy raw key; `key(seed)` returns the same
array, not a typed key), so it passes through `jit`, `vmap` (a batch of keys, u32[n, 2])
and `grad` (an integer value: never differentiated) like any other array; nothing is
drawn when a function is traced. Every function here is written with the typeclass
functions and the tracer's operators, so it runs on numpy values and tracers alike.

- threefry2x32(k1, k2, x1, x2) hashes the counter (x1, x2) under the key (k1, k2): five
  groups of four rounds of add, rotate, xor, the key schedule injected between groups;
- the counter of element i of an array of shape s is (i >> 32, i mod 2³²), i its row-major
  number (JAX's `iota_2x32_shape`);
- `split(key, num)`: key i is the pair threefry(key, counter i); `bits(key, shape)`: the
  xor of the pair at each element's counter; `fold_in(key, data)`: the pair at counter
  (0, data).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.types import describe
from shax.tracing.tracer import Tracer

__all__ = ["PRNGKey", "bits", "fold_in", "key", "split"]

U32 = np.dtype(np.uint32)
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def fail(name: str, message: str, error: type[Exception] = ShaxValueError) -> Exception:
    """A ShaxError of `error`'s kind naming the function `name`, at the user's line."""
    return at(error(f"{name}: {message}"), current_source())  # type: ignore[arg-type]


def _rotate_left(x: Any, r: int) -> Any:
    return (x << r) | (x >> (32 - r))


# threefry2x32: x ← x + key; five groups of four rounds (x₁ += x₂; x₂ = rotl(x₂, r) ^ x₁),
# after group g: x₁ += ks[g + 1], x₂ += ks[g + 2] + g + 1 (indices mod 3), ks = (k₁, k₂, k₁ ^ k₂ ^ C)
def threefry2x32(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """The Threefry-2x32 hash (Salmon et al. 2011, 20 rounds) of counters (x1, x2) under the
    key (k1, k2), u32 values that broadcast together."""
    return _rounds(k1, k2, x1 + k1, x2 + k2)


def _rounds(k1: Any, k2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """threefry2x32 after the key is added to the counters."""
    ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x1 = x1 + x2
            x2 = _rotate_left(x2, r) ^ x1
        x1 = x1 + ks[(group + 1) % 3]
        x2 = x2 + ks[(group + 2) % 3] + (group + 1)
    return x1, x2


def _counters(k1: Any, k2: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """threefry(key, counter) at every element of `shape`. The counter's high word is 0
    (shax's arrays have fewer than 2³² elements), its low word the element's row-major
    number: k₂ plus one small constant per axis (iota · stride), broadcast, as JAX lowers
    it, so that a traced program holds no constant of the result's size."""
    x2, stride = k2, 1
    for axis in reversed(range(len(shape))):
        along = (np.arange(shape[axis], dtype=np.uint64) * stride).astype(U32)
        x2 = x2 + along.reshape((shape[axis],) + (1,) * (len(shape) - axis - 1))
        stride *= shape[axis]
    if not shape:
        x2 = x2 + np.zeros((), U32)
    return _rounds(k1, k2, k1 + np.zeros((), U32), x2)


def check_key(name: str, key: Any) -> Any:
    """`key` if it is one key, a u32[2] array (a tracer or a numpy array), else a ShaxError
    naming `name`: a batch of keys goes through vmap, as in JAX."""
    if isinstance(key, Tracer):
        dtype, shape = key.type.dtype.dtype, key.type.shape
    elif isinstance(key, np.ndarray):
        dtype, shape = key.dtype, key.shape
    else:
        raise fail(name, f"a key is a u32[2] array (shax.random.key(seed)), got {describe(key)}", ShaxTypeError)
    if dtype != U32:
        message = f"a key is a u32[2] array (shax.random.key(seed)), got {describe(key)}: its dtype is not u32"
        raise fail(name, message, ShaxTypeError)
    if shape != (2,):
        batch = " (a batch of keys: use shax.vmap over them)" if len(shape) > 1 and shape[-1] == 2 else ""
        raise fail(name, f"takes one key, a u32[2] array, got {describe(key)}{batch}")
    return key


def check_shape(name: str, shape: Any) -> tuple[int, ...]:
    """A shape given as JAX takes one: a sequence of non-negative ints (or one int)."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool) else shape
    try:
        result = tuple(int(d) for d in dims if isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0)
        complete = len(result) == len(dims) and not isinstance(dims, (str, bytes))
    except TypeError:
        complete = False
    if not complete:
        raise fail(name, f"a shape is a sequence of non-negative ints, got {shape!r}", ShaxTypeError)
    if math.prod(result) >= 2**32:
        raise fail(name, f"cannot draw {math.prod(result)} values from one key (2**32 at most)")
    return result


def key(seed: Any) -> Any:
    """A key from an integer seed: JAX's `PRNGKey(seed)`, the u32[2] array (0, seed mod 2³²),
    as JAX gives it in its default 32-bit mode (JAX's `key` gives a typed key holding it)."""
    return _seed("key", seed)


def PRNGKey(seed: Any) -> Any:  # noqa: N802 - JAX's name
    """JAX's legacy key from an integer seed: the u32[2] array (0, seed mod 2³²)."""
    return _seed("PRNGKey", seed)


def _seed(name: str, seed: Any) -> Any:
    if isinstance(seed, Tracer):
        if seed.type.shape != () or seed.type.dtype.is_float:
            raise fail(name, f"a seed is an integer scalar, got {seed.type}", ShaxTypeError)
        low = tc.convert_element_type(seed, U32)
        return tc.concatenate(tc.reshape(low * 0, [1]), tc.reshape(low, [1]), 0)
    value = np.asarray(seed) if isinstance(seed, (np.ndarray, np.generic, int)) else None
    if value is None or value.shape != () or value.dtype.kind not in "iub":
        raise fail(name, f"a seed is an integer scalar, got {describe(seed)}", ShaxTypeError)
    return np.array([0, int(value) % 2**32], U32)


def split(key: Any, num: int | Sequence[int] = 2) -> Any:
    """`num` new keys (an int, or a shape: keys of shape (*num, 2)), independent of one another."""
    key = check_key("split", key)
    shape = check_shape("split", num)
    with np.errstate(over="ignore"):
        bits1, bits2 = _counters(key[0], key[1], shape)
        return _stack(bits1, bits2, shape)


def fold_in(key: Any, data: Any) -> Any:
    """A new key from `key` and the 32-bit integer `data` (a Python int in [0, 2³²), or an
    integer scalar, its low 32 bits): the pair threefry(key, (0, data))."""
    key = check_key("fold_in", key)
    word: Any
    if isinstance(data, Tracer):
        if data.type.shape != () or data.type.dtype.is_float:
            raise fail("fold_in", f"data is an integer scalar, got {data.type}", ShaxTypeError)
        word = tc.convert_element_type(data, U32)
    else:
        value = np.asarray(data) if isinstance(data, (np.ndarray, np.generic, int)) else None
        if value is None or value.shape != () or value.dtype.kind not in "iub":
            raise fail("fold_in", f"data is an integer scalar, got {describe(data)}", ShaxTypeError)
        if isinstance(data, int) and not 0 <= data < 2**32:
            raise fail("fold_in", f"the Python int {data} does not fit u32")
        word = np.asarray(int(value) % 2**32, U32)
    with np.errstate(over="ignore"):
        bits1, bits2 = threefry2x32(key[0], key[1], np.zeros((), U32), word)
        return _stack(bits1, bits2, ())


def _stack(bits1: Any, bits2: Any, shape: tuple[int, ...]) -> Any:
    """Keys of `shape`: the pairs (bits1, bits2) along a last axis of 2."""
    rank = len(shape)
    first = tc.reshape(bits1, [*shape, 1])
    second = tc.reshape(bits2, [*shape, 1])
    return tc.concatenate(first, second, rank)


def bits(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Uniform random bits of `shape` as unsigned integers: u32 (the default) or u8 (the low
    byte of each u32), JAX's values."""
    key = check_key("bits", key)
    shape = check_shape("bits", shape)
    target = U32 if dtype is None else _unsigned("bits", dtype)
    words = random_bits(key, shape)
    return words if target == U32 else tc.convert_element_type(words, target)


def random_bits(key: Any, shape: tuple[int, ...]) -> Any:
    """u32 bits of a checked key and shape (the samplers' source)."""
    bits1, bits2 = word_pairs(key, shape)
    return bits1 ^ bits2


def word_pairs(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The two threefry words at every element of `shape` (64 bits per element)."""
    with np.errstate(over="ignore"):
        return _counters(key[0], key[1], shape)


def _unsigned(name: str, dtype: Any) -> np.dtype[Any]:
    try:
        asked = np.dtype(dtype)
    except TypeError:
        asked = None
    if asked not in (np.dtype(np.uint32), np.dtype(np.uint8)):
        shown = asked.name if asked is not None else repr(dtype)
        raise fail(name, f"dtype must be an unsigned integer dtype shax has (uint32, uint8), got {shown}")
    return asked


def float_dtype(name: str, dtype: Any) -> np.dtype[Any]:
    """The float dtype asked for (float32 when None), else a ShaxError naming `name`."""
    try:
        asked = np.dtype(np.float32 if dtype is None else dtype)
    except (TypeError, ValueError):  # not a dtype numpy reads ({'': ''}: its ValueError)
        asked = None
    if asked not in (np.dtype(np.float32), np.dtype(np.float64)):
        shown = asked.name if asked is not None else repr(dtype)
        raise fail(name, f"dtype must be a float dtype shax has (float32, float64), got {shown}", ShaxTypeError)
    return asked
