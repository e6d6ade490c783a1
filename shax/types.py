"""Element types and tensor types: `f32[2, 6]` is a `TensorType`, printed as `f32[2, 6]`."""

from __future__ import annotations

import re
from typing import Any

import attrs
import numpy as np

from shax.errors import ShaxTypeError, ShaxValueError


@attrs.frozen(repr=False)
class DType:
    name: str
    numpy: type[np.generic] = attrs.field(eq=False)
    is_float: bool = attrs.field(eq=False)

    def __getitem__(self, shape: int | tuple[int, ...]) -> TensorType:
        return TensorType(self, shape if isinstance(shape, tuple) else (shape,))

    # Not a sequence: without this, `list(f32)` would iterate through `__getitem__`
    # (f32[0], f32[1], ...) and never end.
    __iter__ = None

    def __repr__(self) -> str:
        return self.name


f32 = DType("f32", np.float32, True)
f64 = DType("f64", np.float64, True)
i32 = DType("i32", np.int32, False)
bool_ = DType("bool", np.bool_, False)
DTYPES: tuple[DType, ...] = (f32, f64, i32, bool_)
_BY_NAME = {d.name: d for d in DTYPES}
_BY_NUMPY = {np.dtype(d.numpy): d for d in DTYPES}


def dtype_of_numpy(dtype: Any) -> DType:
    """The shax dtype of a numpy dtype; a clear error for the ones shax lacks."""
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError):
        supported = ", ".join(f"{d.name} ({np.dtype(d.numpy)})" for d in DTYPES)
        raise ShaxTypeError(f"dtype {dtype} is not supported; use one of {supported}") from None


def _shape(shape: Any) -> tuple[int, ...]:
    if type(shape) is tuple and all(type(d) is int and d >= 0 for d in shape):
        return shape
    try:
        dims = tuple(shape)
    except TypeError:
        raise ShaxValueError(f"a shape must be a sequence of ints, got {shape!r}") from None
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise ShaxValueError(f"a shape must hold non-negative ints, got {shape!r}")
    return tuple(int(d) for d in dims)


_PRINTED = re.compile(r"\s*(\w+)\s*\[\s*([0-9,\s]*)\]\s*")


# The hash is cached: types key the memo of type rules (`shax.rules.types.result_type`).
@attrs.frozen(repr=False, cache_hash=True)
class TensorType:
    dtype: DType
    shape: tuple[int, ...] = attrs.field(converter=_shape)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def with_shape(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(self.dtype, shape)

    def __str__(self) -> str:
        return f"{self.dtype.name}[{', '.join(map(str, self.shape))}]"

    __repr__ = __str__

    @staticmethod
    def parse(text: str) -> TensorType:
        """Read the printed form, e.g. `f32[2, 6]` or `f32[]`."""
        match = _PRINTED.fullmatch(text)
        if match is None or match.group(1) not in _BY_NAME:
            names = ", ".join(_BY_NAME)
            raise ShaxValueError(f"cannot read a tensor type from {text!r}; expected e.g. f32[2, 6] ({names})")
        dims = [d for d in match.group(2).replace(",", " ").split()]
        return TensorType(_BY_NAME[match.group(1)], tuple(int(d) for d in dims))

    @staticmethod
    def of(value: Any) -> TensorType:
        """The type of a numpy array or scalar (Python floats are f32, ints i32)."""
        if isinstance(value, (np.ndarray, np.generic)):  # first: np.float64 is a Python float too
            return TensorType(dtype_of_numpy(value.dtype), value.shape)
        if isinstance(value, bool):
            return TensorType(bool_, ())
        if isinstance(value, int):
            return TensorType(i32, ())
        if isinstance(value, float):
            return TensorType(f32, ())
        raise ShaxTypeError(f"expected a tensor (numpy array or number), got {type(value).__name__}")
