"""`shax.lax`: jax.lax's names and signatures for what shax has, so JAX code runs with its
import changed. Each function takes numpy values and tracers alike (the typeclass
functions underneath dispatch), strict as lax is: no dtype promotion.

- control flow: `cond switch scan fori_loop while_loop map select stop_gradient`;
- elementwise (typeclass functions under lax's names; `div` of integers rounds toward
  zero, `typeclasses.quot`): `add sub mul div neg abs sign
  exp log log1p expm1 sin cos tan tanh sinh cosh asin acos atan atan2 asinh atanh erf
  logistic sqrt rsqrt square pow integer_pow max min rem floor ceil eq ne lt le gt ge`;
- structural: `broadcast_in_dim reshape transpose slice pad concatenate rev
  convert_element_type dot dot_general reduce_sum reduce_max reduce_min reduce_prod
  argmax argmin`;
- slices at traced starts: `dynamic_slice dynamic_update_slice` (primitives: a negative
  start counts from the end, then each is clamped so the block lies inside, as JAX's);
- windows: `conv_general_dilated` and `conv` (a primitive, bilinear), `reduce_window`
  with `add` or `max` as its computation (the primitives reduce_window_sum and
  reduce_window_max), `top_k` (values and i32 indices along the last axis: a stable
  argsort, largest first, ties in order, NaN last; the values a gather, which carries
  the derivative);
- compositions (`elementwise`): `clamp round is_finite cbrt exp2 bitwise_and bitwise_or
  bitwise_xor bitwise_not`; (`arrays`): `iota expand_dims slice_in_dim
  dynamic_index_in_dim sort cumsum cumprod cummax cummin`.

Arguments lax has but shax cannot honour (`precision`, `preferred_element_type`, dilated
windows in `reduce_window`, interior padding in `pad`) are refused unless at their
defaults, never ignored.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax import numpy as snp
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.lax.arrays import (
    cummax,
    cummin,
    cumprod,
    cumsum,
    dynamic_index_in_dim,
    expand_dims,
    iota,
    slice_in_dim,
    sort,
)
from shax.lax.elementwise import (
    bitwise_and,
    bitwise_not,
    bitwise_or,
    bitwise_xor,
    cbrt,
    clamp,
    exp2,
    is_finite,
    round,
)
from shax.lax.windows import conv, conv_general_dilated, reduce_window, top_k
from shax.tracing.indexing import index, traced_type
from shax.transforms.conditionals import cond, switch
from shax.transforms.stop_gradient import stop_gradient
from shax.transforms.structured_loops import fori_loop, scan, while_loop

__all__ = [
    "cond", "switch", "scan", "fori_loop", "while_loop", "map", "select", "stop_gradient",
    "add", "sub", "mul", "div", "neg", "abs", "sign", "exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh",
    "sinh", "cosh", "asin", "acos", "atan", "atan2", "asinh", "atanh", "erf", "logistic", "sqrt", "rsqrt", "square",
    "pow", "integer_pow", "max", "min", "rem", "floor", "ceil", "eq", "ne", "lt", "le", "gt", "ge",
    "broadcast_in_dim", "reshape", "transpose", "slice", "pad", "concatenate", "rev", "convert_element_type",
    "dot", "dot_general", "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "argmax", "argmin",
    "dynamic_slice", "dynamic_update_slice", "conv_general_dilated", "conv", "reduce_window", "top_k",
    "clamp", "round", "is_finite", "cbrt", "exp2", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
    "iota", "expand_dims", "slice_in_dim", "dynamic_index_in_dim", "sort", "cumsum", "cumprod", "cummax", "cummin",
]  # fmt: skip


def _fail(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"lax.{op}: {message}"), current_source())


def _default(op: str, **arguments: Any) -> None:
    """Refuse an argument shax cannot honour, unless it is at lax's default (None)."""
    for name, value in arguments.items():
        if value is not None:
            raise _fail(op, f"{name}={value!r} is not supported (only None)")


def _seq(op: str, name: str, values: Any) -> list[Any]:
    """A sequence argument as a list (its items checked where they are used)."""
    if (
        isinstance(values, (str, bytes, dict))
        or not isinstance(values, (Sequence, np.ndarray))
        or (isinstance(values, np.ndarray) and values.ndim == 0)
    ):
        raise _fail(op, f"{name} must be a sequence, got {values!r}", ShaxTypeError)
    return list(values)


def _int(op: str, name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise _fail(op, f"{name} must be an int, got {value!r}", ShaxTypeError)
    return int(value)


def _ints(op: str, name: str, values: Any) -> list[int]:
    if (
        isinstance(values, (str, bytes))
        or not isinstance(values, (Sequence, np.ndarray))
        or (isinstance(values, np.ndarray) and values.ndim == 0)
    ):
        raise _fail(op, f"{name} must be a sequence of ints, got {values!r}", ShaxTypeError)
    return [_int(op, name, v) for v in values]


# Control flow ---------------------------------------------------------------------------


def map(f: Callable[[Any], Any], xs: Any, *, batch_size: int | None = None) -> Any:  # noqa: A001
    """`f` of each x along the leading axis of `xs`, the results stacked (a scan)."""
    _default("map", batch_size=batch_size)
    if not callable(f):
        raise _fail("map", f"f must be a function, got {f!r}", ShaxTypeError)
    return scan(lambda carry, x: (carry, f(x)), (), xs)[1]


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    return tc.select(pred, on_true, on_false)


# Elementwise ----------------------------------------------------------------------------

add, sub, mul, neg, abs = tc.add, tc.sub, tc.mul, tc.neg, tc.abs  # noqa: A001
exp, log, log1p, expm1, sin, cos, tan, tanh = tc.exp, tc.log, tc.log1p, tc.expm1, tc.sin, tc.cos, tc.tan, tc.tanh
sinh, cosh, asin, acos, atan, atan2 = tc.sinh, tc.cosh, tc.arcsin, tc.arccos, tc.arctan, tc.arctan2
asinh, atanh, erf, logistic, sqrt, rsqrt, square = (
    tc.arcsinh,
    tc.arctanh,
    tc.erf,
    tc.logistic,
    tc.sqrt,
    tc.rsqrt,
    tc.square,
)
max, min, rem, floor, ceil, pow = tc.max, tc.min, tc.rem, tc.floor, tc.ceil, tc.pow  # noqa: A001
eq, ne, lt, le, gt, ge = tc.eq, tc.ne, tc.lt, tc.le, tc.gt, tc.ge


def div(x: Any, y: Any) -> Any:
    """lax's: x / y, integers rounded toward zero (XLA's integer division, `typeclasses.quot`:
    `div(-7, 2)` is -3, where numpy's `/` is -3.5 and `//` is -4)."""
    t = traced_type(x)
    if t is not None:
        kind = np.dtype(t.dtype.numpy).kind
    elif isinstance(x, (np.ndarray, np.generic)):
        kind = x.dtype.kind
    else:  # a Python int; anything else goes to `div`, whose error names it
        kind = "i" if isinstance(x, int) and not isinstance(x, bool) else "f"
    return tc.quot(x, y) if kind in "iu" else tc.div(x, y)


def sign(x: Any) -> Any:
    return tc.signum(x)


def integer_pow(x: Any, y: int) -> Any:
    """x ** y for a constant int y, by repeated squaring (exact, as JAX's)."""
    n = _int("integer_pow", "y", y)
    result, power, k = None, x, -n if n < 0 else n
    while k:
        if k & 1:
            result = power if result is None else tc.mul(result, power)
        k >>= 1
        if k:
            power = tc.mul(power, power)
    if result is None:
        return snp.ones_like(x)
    return tc.div(1.0, result) if n < 0 else result


# Structural -----------------------------------------------------------------------------


def broadcast_in_dim(
    operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding: Any = None
) -> Any:
    _default("broadcast_in_dim", sharding=sharding)
    return tc.broadcast(
        operand,
        _seq("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions),
        _seq("broadcast_in_dim", "shape", shape),
    )


def reshape(
    operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None, sharding: Any = None
) -> Any:
    _default("reshape", sharding=sharding)
    if dimensions is not None:
        operand = tc.transpose(operand, _seq("reshape", "dimensions", dimensions))
    return tc.reshape(operand, _seq("reshape", "new_sizes", new_sizes))


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    return tc.transpose(operand, _seq("transpose", "permutation", permutation))


def slice(  # noqa: A001
    operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int], strides: Sequence[int] | None = None
) -> Any:
    if strides is None:
        return tc.slice(
            operand, _seq("slice", "start_indices", start_indices), _seq("slice", "limit_indices", limit_indices)
        )
    starts, limits = _ints("slice", "start_indices", start_indices), _ints("slice", "limit_indices", limit_indices)
    steps = _ints("slice", "strides", strides)
    if len(steps) != len(starts) or any(k < 1 for k in steps):
        raise _fail("slice", f"strides {steps} must be positive, one per start")
    return index(tc.slice(operand, starts, limits), tuple(builtins.slice(None, None, k) for k in steps))


def pad(operand: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    """lax.pad with (lo, hi, interior) per axis: interior padding is refused; a negative
    lo or hi crops."""
    config = [_ints("pad", "padding_config", c) for c in _seq("pad", "padding_config", padding_config)]
    if any(len(c) != 3 for c in config):
        raise _fail("pad", f"padding_config must be (lo, hi, interior) triples, got {padding_config!r}")
    if any(c[2] for c in config):
        raise _fail("pad", "interior padding is not supported (only 0)")
    if getattr(padding_value, "type", None) is not None:
        raise _fail("pad", "the padding value must be a constant, not a traced value", ShaxTypeError)
    try:
        value = np.asarray(padding_value)
        number = value.item() if value.ndim == 0 and value.dtype.kind in "biuf" else None
    except (TypeError, ValueError):
        number = None
    if number is None:
        raise _fail("pad", f"the padding value must be a number, got {padding_value!r}", ShaxTypeError)
    if value.ndim:
        raise _fail("pad", f"the padding value must be a scalar, got shape {value.shape}", ShaxTypeError)
    x = tc.pad(operand, [(builtins.max(lo, 0), builtins.max(hi, 0)) for lo, hi, _ in config], number)
    shape = tc.shape(x)
    if any(lo < 0 or hi < 0 for lo, hi, _ in config):
        start = [builtins.max(-lo, 0) for lo, _, _ in config]
        end = [n - builtins.max(-hi, 0) for n, (_, hi, _) in zip(shape, config)]
        x = tc.slice(x, start, [builtins.max(e, s) for s, e in zip(start, end)])
    return x


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    return snp.concatenate(_seq("concatenate", "operands", operands), axis=dimension)


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    return tc.rev(operand, _seq("rev", "dimensions", dimensions))


def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    return tc.convert_element_type(operand, new_dtype)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Vector·vector, matrix·vector, matrix·matrix: lhs's last axis contracted with rhs's first."""
    _default("dot", precision=precision, preferred_element_type=preferred_element_type)
    return tc.dot_general(lhs, rhs, ((len(tc.shape(lhs)) - 1,), (0,), (), ()))


def dot_general(
    lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None, preferred_element_type: Any = None
) -> Any:
    """dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))."""
    _default("dot_general", precision=precision, preferred_element_type=preferred_element_type)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        message = "dimension_numbers must be ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))"
        message += f", got {dimension_numbers!r}"
        raise _fail("dot_general", message, ShaxTypeError) from None
    return tc.dot_general(lhs, rhs, (lc, rc, lb, rb))


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    return tc.reduce_sum(operand, _seq("reduce_sum", "axes", axes))


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    return tc.reduce_max(operand, _seq("reduce_max", "axes", axes))


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    return tc.reduce_min(operand, _seq("reduce_min", "axes", axes))


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    return tc.reduce_prod(operand, _seq("reduce_prod", "axes", axes))


def _index_dtype(op: str, result: Any, index_dtype: Any) -> Any:
    try:
        dtype = np.dtype(index_dtype)
    except (TypeError, ValueError):
        dtype = np.dtype(object)
    if dtype.kind not in "iu":
        raise _fail(op, f"index_dtype must be an integer dtype, got {index_dtype!r}", ShaxTypeError)
    return result if dtype == np.int32 else tc.convert_element_type(result, dtype)


def argmax(operand: Any, axis: int, index_dtype: Any) -> Any:
    return _index_dtype("argmax", tc.argmax(operand, axis), index_dtype)


def argmin(operand: Any, axis: int, index_dtype: Any) -> Any:
    return _index_dtype("argmin", tc.argmin(operand, axis), index_dtype)


# Slices at traced starts ----------------------------------------------------------------


def _start_vector(op: str, starts: Any) -> Any:
    """The starts as one integer vector: an array as it is, a sequence of ints and traced
    integer scalars joined (each traced one as i32)."""
    if getattr(starts, "type", None) is not None or isinstance(starts, np.ndarray):
        return starts if getattr(starts, "type", None) is not None else np.asarray(starts)
    if isinstance(starts, (str, bytes)) or not isinstance(starts, Sequence):
        raise _fail(op, f"start_indices must be a sequence of integer scalars, got {starts!r}", ShaxTypeError)
    parts: list[Any] = []
    for s in starts:
        t = getattr(s, "type", None)
        if t is None:
            # a 0-d numpy array of an integer is its number, as JAX reads it (an argmax's result)
            number = s[()] if isinstance(s, np.ndarray) and s.ndim == 0 else s
            # clamped into range as every start is, so one beyond i32 is its bound
            start = builtins.min(builtins.max(_int(op, "a start index", number), -(2**31)), 2**31 - 1)
            parts.append(np.array([start], np.int32))
        elif t.rank or t.dtype.is_float or t.dtype.name == "bool":
            raise _fail(op, f"a start index must be an integer scalar, got a traced {t}", ShaxTypeError)
        else:
            s = s if t.dtype.name == "i32" else tc.convert_element_type(s, np.int32)
            parts.append(tc.reshape(s, [1]))
    if not parts:
        return np.zeros(0, np.int32)
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)
    return functools.reduce(lambda a, b: tc.concatenate(a, b, 0), parts)


def dynamic_slice(operand: Any, start_indices: Any, slice_sizes: Sequence[int]) -> Any:
    return tc.dynamic_slice(
        operand, _start_vector("dynamic_slice", start_indices), _seq("dynamic_slice", "slice_sizes", slice_sizes)
    )


def dynamic_update_slice(operand: Any, update: Any, start_indices: Any) -> Any:
    return tc.dynamic_update_slice(operand, update, _start_vector("dynamic_update_slice", start_indices))
