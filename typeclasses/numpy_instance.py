"""The typeclass instance for plain values: numpy arrays, numpy scalars, Python numbers.

Results follow numpy, including NEP 50 weak Python scalars (`f32_array * 2.0`
stays f32). Reductions keep the input dtype, as the IR's type rules say. Elementary
functions of a float32 number go through the C library (`typeclasses.libm` says why).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from typeclasses import libm, numpy_gather, numpy_windows
from typeclasses.dispatch import register_instance
from typeclasses.functions import DotDims
from typeclasses.instance import Instance

# Elementary functions of a float32 number go through C's float functions (`typeclasses.libm`).
_sin, _cos, _tan = (
    libm.float32_unary(np.sin, "sinf"),
    libm.float32_unary(np.cos, "cosf"),
    libm.float32_unary(np.tan, "tanf"),
)
_exp, _log = libm.float32_unary(np.exp, "expf"), libm.float32_unary(np.log, "logf")
_tanh = libm.float32_unary(np.tanh, "tanhf")


def logistic(x: Any) -> Any:
    """1 / (1 + e^-x) as e^-|x| makes it, which never overflows: 1 / (1 + e^-x) for x >= 0,
    e^x / (1 + e^x) below (accurate in both tails). Compiled code calls this same function."""
    x = np.asarray(x)
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))[()]


# numpy has no erf: C's (Python's math.erf) on each element, in double precision, rounded
# to the operand's float dtype (an integer's erf is a float64, as numpy's functions give).
_erf_objects = np.frompyfunc(math.erf, 1, 1)


def erf(x: Any) -> Any:
    """The error function elementwise, numpy-style. Compiled code calls this same function."""
    x = np.asarray(x)
    dtype = x.dtype if x.dtype.kind == "f" else np.dtype(np.float64)
    return np.asarray(_erf_objects(x), dtype=dtype)[()]


def shift(ufunc: Any, kind: str, x: Any, y: Any) -> Any:
    """numpy's shift `ufunc` of x's bits read as `kind` ("u" unsigned, "i" signed) integers of
    x's width, by y read as unsigned (XLA's: beyond the width, every bit is shifted out), in
    x's dtype. Compiled code calls this same function."""
    x = np.asarray(x)
    y = np.asarray(y, x.dtype) if isinstance(y, int) else np.asarray(y)
    bits = np.dtype(f"{kind}{x.dtype.itemsize}")
    amount = np.minimum(y.view(f"u{y.dtype.itemsize}"), 8 * x.dtype.itemsize)  # numpy's limit is the width too
    return ufunc(x.view(bits), amount.astype(bits)).view(x.dtype)[()]


def quot(x: Any, y: Any) -> Any:
    """trunc(x / y) of integers, 0 where y is 0 (with numpy's warning). numpy has no truncating
    integer division: its floor, one more where a nonzero remainder's sign is not the quotient's
    (never overflowing: that floor is below the truncation). Compiled code calls this same function."""
    floor = np.floor_divide(x, y)
    return floor + ((np.fmod(x, y) != 0) & (np.less(x, 0) != np.less(y, 0)))


class NumpyInstance(Instance):
    def level(self, value: Any) -> int:
        return 0

    def add(self, x: Any, y: Any) -> Any:
        return np.add(x, y)

    def sub(self, x: Any, y: Any) -> Any:
        return np.subtract(x, y)

    def mul(self, x: Any, y: Any) -> Any:
        return np.multiply(x, y)

    def div(self, x: Any, y: Any) -> Any:
        return np.divide(x, y)

    def neg(self, x: Any) -> Any:
        return np.negative(x)

    def abs(self, x: Any) -> Any:
        return np.abs(x)

    def signum(self, x: Any) -> Any:
        return np.sign(x)

    def pow(self, x: Any, y: Any) -> Any:
        return np.power(x, y)

    def sin(self, x: Any) -> Any:
        return _sin(x)

    def cos(self, x: Any) -> Any:
        return _cos(x)

    def tan(self, x: Any) -> Any:
        return _tan(x)

    def exp(self, x: Any) -> Any:
        return _exp(x)

    def log(self, x: Any) -> Any:
        return _log(x)

    def sqrt(self, x: Any) -> Any:
        return np.sqrt(x)

    def tanh(self, x: Any) -> Any:
        return _tanh(x)

    def sinh(self, x: Any) -> Any:
        return np.sinh(x)

    def cosh(self, x: Any) -> Any:
        return np.cosh(x)

    def log1p(self, x: Any) -> Any:
        return np.log1p(x)

    def expm1(self, x: Any) -> Any:
        return np.expm1(x)

    def logistic(self, x: Any) -> Any:
        return logistic(x)

    def arcsin(self, x: Any) -> Any:
        return np.arcsin(x)

    def arccos(self, x: Any) -> Any:
        return np.arccos(x)

    def arctan(self, x: Any) -> Any:
        return np.arctan(x)

    def rem(self, x: Any, y: Any) -> Any:
        return np.fmod(x, y)

    def quot(self, x: Any, y: Any) -> Any:
        return quot(x, y)

    def arctan2(self, y: Any, x: Any) -> Any:
        return np.arctan2(y, x)

    def arcsinh(self, x: Any) -> Any:
        return np.arcsinh(x)

    def arctanh(self, x: Any) -> Any:
        return np.arctanh(x)

    def erf(self, x: Any) -> Any:
        return erf(x)

    # numpy's own, where the default definition (`typeclasses.instance`) computes the same
    # function but numpy's C loop may differ in the last bit.
    def logaddexp(self, x: Any, y: Any) -> Any:
        return np.logaddexp(x, y)

    def floor(self, x: Any) -> Any:
        return np.floor(x)

    def ceil(self, x: Any) -> Any:
        return np.ceil(x)

    def round(self, x: Any) -> Any:
        return np.rint(x)  # np.round with no decimals: halves to even

    def min(self, x: Any, y: Any) -> Any:
        return np.minimum(x, y)

    def max(self, x: Any, y: Any) -> Any:
        return np.maximum(x, y)

    def lt(self, x: Any, y: Any) -> Any:
        return np.less(x, y)

    def le(self, x: Any, y: Any) -> Any:
        return np.less_equal(x, y)

    def gt(self, x: Any, y: Any) -> Any:
        return np.greater(x, y)

    def ge(self, x: Any, y: Any) -> Any:
        return np.greater_equal(x, y)

    def shape(self, x: Any) -> tuple[int, ...]:
        return np.shape(x)

    def reshape(self, x: Any, shape: Sequence[int]) -> Any:
        return np.reshape(x, tuple(shape))

    def broadcast(self, x: Any, dims: Sequence[int], shape: Sequence[int]) -> Any:
        # Put input axis i at output axis dims[i], size 1 everywhere else, then stretch.
        x = np.asarray(x)
        placed = [1] * len(shape)
        for axis, size in zip(dims, x.shape):
            placed[axis] = size
        return np.broadcast_to(x.reshape(placed), tuple(shape))

    def transpose(self, x: Any, perm: Sequence[int]) -> Any:
        return np.transpose(x, tuple(perm))

    def slice(self, x: Any, start: Sequence[int], end: Sequence[int]) -> Any:
        return np.asarray(x)[tuple(slice(s, e) for s, e in zip(start, end))]

    def pad(self, x: Any, lohi: Sequence[tuple[int, int]], value: float) -> Any:
        x = np.asarray(x)
        if x.ndim == 0 and not lohi:  # np.pad rejects rank 0; there is nothing to pad
            return x.copy()
        return np.pad(x, [tuple(p) for p in lohi], constant_values=np.asarray(value, x.dtype))

    def concatenate(self, x: Any, y: Any, axis: int) -> Any:
        return np.concatenate((x, y), axis=axis)

    def reduce_sum(self, x: Any, axes: Sequence[int]) -> Any:
        x = np.asarray(x)
        return np.sum(x, axis=tuple(axes), dtype=x.dtype)

    def reduce_max(self, x: Any, axes: Sequence[int]) -> Any:
        return np.max(x, axis=tuple(axes))

    def reduce_min(self, x: Any, axes: Sequence[int]) -> Any:
        return np.min(x, axis=tuple(axes))

    def reduce_prod(self, x: Any, axes: Sequence[int]) -> Any:
        x = np.asarray(x)
        return np.prod(x, axis=tuple(axes), dtype=x.dtype)

    # The index as i32, JAX's default int (numpy's is int64).
    def argmax(self, x: Any, axis: int) -> Any:
        return np.argmax(x, axis=axis).astype(np.int32)[()]

    def argmin(self, x: Any, axis: int) -> Any:
        return np.argmin(x, axis=axis).astype(np.int32)[()]

    def argsort(self, x: Any, axis: int) -> Any:
        return np.argsort(x, axis=axis, kind="stable").astype(np.int32)

    def select(self, pred: Any, on_true: Any, on_false: Any) -> Any:
        return np.where(pred, on_true, on_false)

    def eq(self, x: Any, y: Any) -> Any:
        return np.equal(x, y)

    def rev(self, x: Any, axes: Sequence[int]) -> Any:
        return np.flip(x, tuple(axes)) if axes else np.asarray(x)

    def convert_element_type(self, x: Any, dtype: Any) -> Any:
        return np.asarray(x).astype(dtype)

    def ne(self, x: Any, y: Any) -> Any:
        return np.not_equal(x, y)

    def matmul(self, x: Any, y: Any) -> Any:
        return np.matmul(x, y)

    def logical_and(self, x: Any, y: Any) -> Any:
        return np.logical_and(x, y)

    def logical_or(self, x: Any, y: Any) -> Any:
        return np.logical_or(x, y)

    def logical_not(self, x: Any) -> Any:
        return np.logical_not(x)

    def bitwise_and(self, x: Any, y: Any) -> Any:
        return np.bitwise_and(x, y)

    def bitwise_or(self, x: Any, y: Any) -> Any:
        return np.bitwise_or(x, y)

    def bitwise_xor(self, x: Any, y: Any) -> Any:
        return np.bitwise_xor(x, y)

    def bitwise_not(self, x: Any) -> Any:
        return np.invert(x)

    def shift_left(self, x: Any, y: Any) -> Any:
        return shift(np.left_shift, "u", x, y)

    def shift_right_logical(self, x: Any, y: Any) -> Any:
        return shift(np.right_shift, "u", x, y)

    def shift_right_arithmetic(self, x: Any, y: Any) -> Any:
        return shift(np.right_shift, "i", x, y)

    def bitcast_convert_type(self, x: Any, dtype: Any) -> Any:
        return np.asarray(x).view(dtype)

    def stop_gradient(self, x: Any) -> Any:
        return x

    def gather(self, x: Any, indices: Any, axis: int, batch_dims: int) -> Any:
        return numpy_gather.gather(x, indices, axis, batch_dims)

    def scatter_add(self, x: Any, indices: Any, updates: Any, axis: int, batch_dims: int) -> Any:
        return numpy_gather.scatter_add(x, indices, updates, axis, batch_dims)

    def scatter(self, x: Any, indices: Any, updates: Any, axis: int, batch_dims: int) -> Any:
        return numpy_gather.scatter(x, indices, updates, axis, batch_dims)

    def dynamic_slice(self, x: Any, starts: Any, sizes: Sequence[int]) -> Any:
        return numpy_windows.dynamic_slice(x, starts, sizes)

    def dynamic_update_slice(self, x: Any, update: Any, starts: Any) -> Any:
        return numpy_windows.dynamic_update_slice(x, update, starts)

    def conv_general_dilated(
        self,
        lhs: Any,
        rhs: Any,
        window_strides: Sequence[int],
        padding: Sequence[tuple[int, int]],
        lhs_dilation: Sequence[int],
        rhs_dilation: Sequence[int],
        dimension_numbers: tuple[Sequence[int], Sequence[int], Sequence[int]],
        feature_group_count: int,
        batch_group_count: int,
    ) -> Any:
        return numpy_windows.conv_general_dilated(
            lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
            feature_group_count, batch_group_count,
        )  # fmt: skip

    def reduce_window_sum(
        self,
        x: Any,
        window_dimensions: Sequence[int],
        window_strides: Sequence[int],
        padding: Sequence[tuple[int, int]],
    ) -> Any:
        return numpy_windows.reduce_window("sum", x, window_dimensions, window_strides, padding)

    def reduce_window_max(
        self,
        x: Any,
        window_dimensions: Sequence[int],
        window_strides: Sequence[int],
        padding: Sequence[tuple[int, int]],
    ) -> Any:
        return numpy_windows.reduce_window("max", x, window_dimensions, window_strides, padding)

    def dot_general(self, x: Any, y: Any, dims: DotDims) -> Any:
        # Bring x to (batch, free, contracting) and y to (batch, contracting, free),
        # so one batched matmul computes the result; then restore the free axes.
        x, y = np.asarray(x), np.asarray(y)
        lc, rc, lb, rb = (tuple(d) for d in dims)
        lf = [a for a in range(x.ndim) if a not in lc and a not in lb]
        rf = [a for a in range(y.ndim) if a not in rc and a not in rb]
        batch = [x.shape[a] for a in lb]
        k = int(np.prod([x.shape[a] for a in lc], dtype=np.int64))
        m = [x.shape[a] for a in lf]
        n = [y.shape[a] for a in rf]
        xm = np.transpose(x, (*lb, *lf, *lc)).reshape(*batch, int(np.prod(m, dtype=np.int64)), k)
        ym = np.transpose(y, (*rb, *rc, *rf)).reshape(*batch, k, int(np.prod(n, dtype=np.int64)))
        # Nothing summed (an outer product): one broadcast multiply, the same products,
        # where a matmul would loop over a length-1 axis.
        product = np.multiply(xm, ym) if k == 1 else np.matmul(xm, ym)
        return product.reshape((*batch, *m, *n))


# The value types of this instance: arrays, numpy scalars and Python numbers.
NUMPY_TYPES: tuple[type, ...] = (np.ndarray, np.generic, float, int, bool)
numpy_instance = NumpyInstance()
register_instance(numpy_instance, *NUMPY_TYPES)
