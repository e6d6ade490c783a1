"""numpy's array attributes and methods for tracers: `size`, `T`, `mT`, `reshape`,
`transpose`, `astype`, `all`, `any`, `cumsum`, `cumprod`, `diagonal`, `trace`, `sort` (JAX's: a new
array), `nonzero` and `searchsorted` (JAX's `size=`), `len()`, iteration over the first axis, numpy's indexing and JAX's
`.at[...]` updates (`shax.tracing.indexing`). Each is `shax.numpy`'s function of the same name, as
in numpy."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.types import describe
from shax.tracing.at_updates import IndexUpdates
from shax.tracing.indexing import index
from shax.tracing.numpy_dispatch import shax_numpy as _snp


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(tc.shape(x))


class ArrayMethods:
    """Mixed into Tracer (whose shape these read with `tc.shape`)."""

    __slots__ = ()

    @property
    def size(self) -> int:
        return math.prod(_shape(self))

    @property
    def T(self) -> Any:  # noqa: N802 - numpy's name
        return _snp().transpose(self)

    @property
    def mT(self) -> Any:  # noqa: N802 - numpy's name
        rank = len(_shape(self))
        if rank < 2:
            raise at(ShaxValueError(f"mT: needs rank at least 2, this is rank {rank}"), current_source())
        return _snp().swapaxes(self, -1, -2)

    def reshape(self, *shape: Any) -> Any:
        """`x.reshape(2, 3)` or `x.reshape((2, 3))`; one size may be -1."""
        return _snp().reshape(self, shape[0] if len(shape) == 1 else shape)

    def astype(self, dtype: Any) -> Any:
        """x's elements as the numpy `dtype` (numpy's rounding: floats to ints toward zero)."""
        this: Any = self  # a Tracer: the mixin's own type is no tensor to mypy
        return tc.convert_element_type(this, dtype)

    def transpose(self, *axes: Any) -> Any:
        """`x.transpose()` reverses the axes; `x.transpose(1, 0, 2)` or `x.transpose((1, 0, 2))`."""
        if not axes or (len(axes) == 1 and axes[0] is None):
            return _snp().transpose(self)
        return _snp().transpose(self, axes[0] if len(axes) == 1 else axes)

    @property
    def itemsize(self) -> int:
        this: Any = self
        return int(this.type.dtype.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def flatten(self, order: str = "C") -> Any:
        _row_major("flatten", order)
        return _snp().reshape(self, -1)

    def ravel(self, order: str = "C") -> Any:
        _row_major("ravel", order)
        return _snp().reshape(self, -1)

    def squeeze(self, axis: Any = None) -> Any:
        return _snp().squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return _snp().swapaxes(self, axis1, axis2)

    def repeat(self, repeats: Any, axis: int | None = None) -> Any:
        return _snp().repeat(self, repeats, axis)

    def take(self, indices: Any, axis: int | None = None, out: None = None, mode: str | None = None) -> Any:
        if out is not None:
            raise at(ShaxValueError("take: out= is not supported (only numpy's default)"), current_source())
        return _snp().take(self, indices, axis, mode)

    def argsort(self, axis: int | None = -1, kind: str | None = None, order: Any = None, *, stable: Any = None) -> Any:
        return _snp().argsort(self, axis, kind, order, stable=stable)

    def clip(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002 - numpy's names
        return _snp().clip(self, min, max)

    def dot(self, b: Any) -> Any:
        return _snp().dot(self, b)

    def all(self, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = True) -> Any:
        return _snp().all(self, axis, out, keepdims, where=where)

    def any(self, axis: Any = None, out: None = None, keepdims: bool = False, *, where: Any = True) -> Any:
        return _snp().any(self, axis, out, keepdims, where=where)

    def cumsum(self, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
        return _snp().cumsum(self, axis, dtype, out)

    def cumprod(self, axis: int | None = None, dtype: Any = None, out: None = None) -> Any:
        return _snp().cumprod(self, axis, dtype, out)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
        return _snp().diagonal(self, offset, axis1, axis2)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: None = None) -> Any:
        """The sum of the diagonal (numpy's; the Trace recording a tracer is its `owner`)."""
        return _snp().trace(self, offset, axis1, axis2, dtype, out)

    def sort(self, axis: int | None = -1, kind: str | None = None, order: Any = None, *, stable: Any = None) -> Any:
        """The sorted array (JAX's: a new array; numpy's sorts in place, which no traced value can)."""
        return _snp().sort(self, axis, kind, order, stable=stable)

    def nonzero(self, *, size: int | None = None, fill_value: Any = None) -> Any:
        return _snp().nonzero(self, size=size, fill_value=fill_value)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> Any:
        return _snp().searchsorted(self, v, side, sorter)

    # shax has real dtypes only: a value is its own real part and conjugate.

    @property
    def real(self) -> Any:
        return self

    @property
    def imag(self) -> Any:
        return _snp().zeros_like(self)

    def conj(self) -> Any:
        return self

    def conjugate(self) -> Any:
        return self

    def __len__(self) -> int:
        return self._first_axis("len()")

    def __iter__(self) -> Iterator[Any]:
        return (self[k] for k in range(self._first_axis("iter()")))

    def _first_axis(self, what: str) -> int:
        shape = _shape(self)
        if not shape:
            this: Any = self
            raise at(ShaxTypeError(f"{what}: a traced {this.type} has rank 0, so no first axis"), current_source())
        return shape[0]

    def __getitem__(self, key: Any) -> Any:
        return index(self, key)

    @property
    def at(self) -> IndexUpdates:
        """JAX's functional updates: `x.at[key].set(v)`, `.add(v)`, `.get()`."""
        return IndexUpdates(self)

    # numpy's bitwise operators: of integers the bitwise functions, of booleans the logical
    # ones ((x > 0) & (x < 1)); numpy's shifts of integers (`>>` fills with the sign bit of
    # signed integers, with zeros of unsigned ones).

    def __and__(self, other: Any) -> Any:
        return _bitwise("&", tc.logical_and, tc.bitwise_and, self, other)

    def __rand__(self, other: Any) -> Any:
        return _bitwise("&", tc.logical_and, tc.bitwise_and, other, self)

    def __or__(self, other: Any) -> Any:
        return _bitwise("|", tc.logical_or, tc.bitwise_or, self, other)

    def __ror__(self, other: Any) -> Any:
        return _bitwise("|", tc.logical_or, tc.bitwise_or, other, self)

    def __xor__(self, other: Any) -> Any:
        return _bitwise("^", tc.ne, tc.bitwise_xor, self, other)

    def __rxor__(self, other: Any) -> Any:
        return _bitwise("^", tc.ne, tc.bitwise_xor, other, self)

    def __invert__(self) -> Any:
        return _bitwise("~", tc.logical_not, tc.bitwise_not, self)

    def __lshift__(self, other: Any) -> Any:
        return _bitwise("<<", None, tc.shift_left, self, other)

    def __rlshift__(self, other: Any) -> Any:
        return _bitwise("<<", None, tc.shift_left, other, self)

    def __rshift__(self, other: Any) -> Any:
        return _bitwise(">>", None, _shift_right, self, other)

    def __rrshift__(self, other: Any) -> Any:
        return _bitwise(">>", None, _shift_right, other, self)

    # numpy's // and % (floats; `shax.numpy.divmod` says how).

    def __floordiv__(self, other: Any) -> Any:
        return _snp().floor_divide(self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _snp().floor_divide(other, self)

    def __mod__(self, other: Any) -> Any:
        return _snp().remainder(self, other)

    def __rmod__(self, other: Any) -> Any:
        return _snp().remainder(other, self)

    def __divmod__(self, other: Any) -> Any:
        return _snp().divmod(self, other)

    def __rdivmod__(self, other: Any) -> Any:
        return _snp().divmod(other, self)


def _row_major(op: str, order: str) -> None:
    """numpy's `order` must read the elements in C order, as shax's reshape does (a traced
    value has no memory layout, so "A" and "K" are C)."""
    if order not in ("C", "A", "K"):
        raise at(ShaxValueError(f"{op}: order={order!r} is not supported (only C order)"), current_source())


def _bitwise(symbol: str, logical: Any, bitwise: Any, *operands: Any) -> Any:
    """numpy's operator `symbol`: `logical` of booleans (None: not of booleans), `bitwise` of
    integers; of floats an error naming it (numpy's `TypeError`)."""
    dtypes = [_operand_dtype(o) for o in operands]
    if logical is not None and all(d == "b" for d in dtypes):
        return logical(*operands)
    if any(d not in "iu" for d in dtypes if d != "b") or all(d == "b" for d in dtypes):
        got = " and ".join(describe(o) for o in operands)
        takes = "integers and booleans" if logical is not None else "integers"
        message = f"{symbol}: shax has it for {takes} only (numpy's bitwise operator), got {got}"
        raise at(ShaxTypeError(message), current_source())
    return bitwise(*operands)


def _operand_dtype(operand: Any) -> str:
    """numpy's kind of an operand's dtype: "b", "i", "u", "f", ... ("?" for what has none)."""
    if isinstance(operand, bool):
        return "b"
    if isinstance(operand, int):
        return "i"
    dtype = getattr(operand, "dtype", None)
    try:
        return str(np.dtype(dtype).kind) if dtype is not None else "?"
    except TypeError:
        return "?"


def _shift_right(x: Any, y: Any) -> Any:
    """numpy's `>>`: arithmetic of signed integers, logical of unsigned ones (x's dtype decides)."""
    signed = _operand_dtype(x) == "i" and not (isinstance(x, int) and _operand_dtype(y) == "u")
    return tc.shift_right_arithmetic(x, y) if signed else tc.shift_right_logical(x, y)
