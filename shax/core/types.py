"""Element types and tensor types: `f32[2, 6]` is a `TensorType`, printed as `f32[2, 6]`.

Also the types of Python numbers, which are weak: `x * 2` keeps x's dtype (`weak_dtype`),
and how an error message shows a value (`describe`).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

from shax.core.array_subclasses import refusal
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source


@attrs.frozen(repr=False, eq=False)
class DType:
    """An element type. It stands in for its numpy dtype where numpy users pass one:
    `x.dtype == np.float32` holds for an f32 tracer, and numpy reads it as a dtype
    (`np.zeros(3, x.dtype)`, `np.issubdtype(x.dtype, np.floating)`) through `dtype`."""

    name: str
    numpy: type[np.generic]
    is_float: bool

    @property
    def dtype(self) -> np.dtype[Any]:
        """The numpy dtype (numpy's `np.dtype(obj)` reads an object's `dtype` attribute)."""
        return np.dtype(self.numpy)

    def __eq__(self, other: object) -> bool:
        if other is self:  # the common case: the dtypes are the module's constants
            return True
        if isinstance(other, DType):
            return self.name == other.name
        if isinstance(other, np.dtype) or (isinstance(other, type) and issubclass(other, np.generic)):
            return bool(np.dtype(other) == np.dtype(self.numpy))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)

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
i64 = DType("i64", np.int64, False)
u8 = DType("u8", np.uint8, False)
u32 = DType("u32", np.uint32, False)
bool_ = DType("bool", np.bool_, False)
DTYPES: tuple[DType, ...] = (f32, f64, i32, i64, u8, u32, bool_)
INTEGERS: tuple[DType, ...] = (i32, i64, u8, u32)
_BY_NAME = {d.name: d for d in DTYPES}
_BY_NUMPY = {np.dtype(d.numpy): d for d in DTYPES}


def dtype_of_numpy(dtype: Any) -> DType:
    """The shax dtype of a numpy dtype; a clear error for the ones shax lacks."""
    try:
        return _BY_NUMPY[np.dtype(dtype)]
    except (KeyError, TypeError, ValueError):
        supported = ", ".join(f"{d.name} ({np.dtype(d.numpy)})" for d in DTYPES)
        raise ShaxTypeError(f"dtype {_numpy_name(dtype)} is not supported; use one of {supported}") from None


def _numpy_name(dtype: Any) -> str:
    """numpy's name of a dtype given any way numpy takes it (np.int16 is `int16`)."""
    try:
        return np.dtype(dtype).name
    except (TypeError, ValueError):  # ({"": ""}: numpy's ValueError)
        return repr(dtype)


def _dtype(dtype: Any) -> DType:
    if isinstance(dtype, DType):
        return dtype
    names = ", ".join(d.name for d in DTYPES)
    message = f"TensorType: the dtype must be one of {names} (shax.f32, ...), got {dtype!r}"
    raise at(ShaxTypeError(message), current_source())


def _shape(shape: Any) -> tuple[int, ...]:
    if type(shape) is tuple and all(type(d) is int and d >= 0 for d in shape):
        return shape
    # A str or bytes is a sequence too, but not of sizes (b"2" would be (50,)).
    if isinstance(shape, (str, bytes, bytearray)):
        raise _bad_shape(shape, "be a sequence of ints")
    try:
        dims = tuple(shape)
    except TypeError:
        raise _bad_shape(shape, "be a sequence of ints") from None
    if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) and d >= 0 for d in dims):
        raise _bad_shape(shape, "hold non-negative ints")
    return tuple(int(d) for d in dims)


def _bad_shape(shape: Any, must: str) -> ShaxError:
    return at(ShaxValueError(f"TensorType: a shape must {must}, got {shape!r}"), current_source())


# The largest array a type may describe. Programs are traced without allocating, so the bound is
# not this machine's memory but what no machine can allocate: a rank of 32, numpy's limit for
# the functions that broadcast (`np.broadcast`, `np.broadcast_shapes`; arrays themselves may
# have 64), and 2**48 bytes (256 TiB), more than the 47-bit user address space of an x86-64
# or arm64 process. Beyond them a program would fail deep inside numpy or XLA, or run for hours.
MAX_RANK = 32
MAX_BYTES = 2**48


class TooLarge(ShaxValueError):
    """A shape beyond MAX_RANK or MAX_BYTES; `problem` says which, without the operation
    (a type rule puts its primitive's name in front)."""

    def __init__(self, message: str, problem: str = "") -> None:
        super().__init__(message)
        self.problem = problem


def _size_problem(dtype: DType, shape: tuple[int, ...]) -> str | None:
    """What makes an array of `shape` and `dtype` too large to exist, or None."""
    shown = f"{dtype.name}[{', '.join(map(str, shape))}]"
    if len(shape) > MAX_RANK:
        return f"{shown:.200} has rank {len(shape)}, more than numpy broadcasts ({MAX_RANK})"
    nbytes = math.prod(shape) * np.dtype(dtype.numpy).itemsize
    if nbytes > MAX_BYTES:
        return f"{shown:.200} would take {show_bytes(nbytes)}, more than the 2**48 bytes (256 TiB) an array may take"
    return None


def show_bytes(nbytes: int) -> str:
    """A byte count as numpy's messages show one: `8.00 TiB`."""
    units = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    power = min(max(nbytes.bit_length() - 1, 0) // 10, len(units) - 1)
    return f"{nbytes} bytes" if power == 0 else f"{nbytes / 2 ** (10 * power):.2f} {units[power]}"


# The printed form: a dtype's name, then sizes separated by commas in brackets (`f32[2, 6]`, `f32[]`).
_PRINTED = re.compile(r"\s*(\w+)\s*\[\s*(\d+(?:\s*,\s*\d+)*)?\s*\]\s*")


# The hash is cached: types key the memo of type rules (`shax.rules.types.result_type`).
@attrs.frozen(repr=False, cache_hash=True)
class TensorType:
    dtype: DType = attrs.field(converter=_dtype)
    shape: tuple[int, ...] = attrs.field(converter=_shape)

    def __attrs_post_init__(self) -> None:
        # First a cheap test (8 bytes is the widest element): every type made passes here.
        if len(self.shape) <= MAX_RANK and math.prod(self.shape) <= MAX_BYTES // 8:
            return
        problem = _size_problem(self.dtype, self.shape)
        if problem is not None:
            raise at(TooLarge(f"TensorType: {problem}", problem), current_source())

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)  # Python ints: no overflow, however large the sizes

    def with_shape(self, shape: tuple[int, ...]) -> TensorType:
        return TensorType(self.dtype, shape)

    def __str__(self) -> str:
        return f"{self.dtype.name}[{', '.join(map(str, self.shape))}]"

    __repr__ = __str__

    @staticmethod
    def parse(text: str) -> TensorType:
        """Read the printed form, e.g. `f32[2, 6]` or `f32[]`."""
        if not isinstance(text, str):
            message = f"TensorType.parse: reads the printed form, a str like 'f32[2, 6]', got {text!r}"
            raise at(ShaxTypeError(message), current_source())
        match = _PRINTED.fullmatch(text)
        if match is None or match.group(1) not in _BY_NAME:
            names = ", ".join(_BY_NAME)
            message = f"TensorType.parse: cannot read a tensor type from {text!r}; expected e.g. f32[2, 6] ({names})"
            raise at(ShaxValueError(message), current_source())
        dims = match.group(2).split(",") if match.group(2) else []
        return TensorType(_BY_NAME[match.group(1)], tuple(int(d) for d in dims))

    @staticmethod
    def of(value: Any) -> TensorType:
        """The type of a numpy array or scalar, or of a Python number alone (a float is f32,
        an int i32: one that does not fit is an error)."""
        if isinstance(value, (np.ndarray, np.generic)):  # first: np.float64 is a Python float too
            if type(value) is not np.ndarray and isinstance(value, np.ndarray):
                refused = refusal(None, value)
                if refused is not None:
                    raise refused
            return _array_type(value.dtype, value.shape)
        if isinstance(value, (bool, int, float)):
            return TensorType(weak_dtype(value, None), ())
        raise ShaxTypeError(f"expected a tensor (numpy array or number), got {type(value).__name__}")


# Remembered: shax's numpy instance asks for the types of the same few arrays over and over.
@functools.lru_cache(maxsize=1024)
def _array_type(dtype: np.dtype, shape: tuple[int, ...]) -> TensorType:
    return TensorType(dtype_of_numpy(dtype), shape)


# Python numbers ------------------------------------------------------------------


def fits(number: bool | int | float, dtype: DType) -> bool:
    """Whether a Python number stands for a `dtype` scalar without a change of kind or
    value: a bool for bool; an int for an integer dtype within its range (0 to 255 for u8),
    or for a float dtype if it converts to a float; a float for a float dtype (beyond f32's
    range it is ±inf, as in numpy)."""
    if isinstance(number, bool):
        return dtype == bool_
    if isinstance(number, int):
        if dtype in _INTEGER_RANGES:
            low, high = _INTEGER_RANGES[dtype]
            return low <= number <= high
        return dtype.is_float and abs(number) < _FLOAT_LIMIT
    return dtype.is_float


_INTEGER_RANGES = {d: (int(np.iinfo(np.dtype(d.numpy)).min), int(np.iinfo(np.dtype(d.numpy)).max)) for d in INTEGERS}


# The smallest int that does not convert to a float: 2^1024 less half an ulp of the largest float.
_FLOAT_LIMIT = 2**1024 - 2**970


def weak_dtype(number: bool | int | float, reference: DType | None, op: str | None = None) -> DType:
    """The dtype of a Python number next to tensors of dtype `reference` (None: no tensor).
    Numbers are weakly typed: `x * 2` keeps x's dtype (an i64's, a u8's too); alone or
    next to bools a float is f32 and an int i32. A float next to an integer tensor is an
    error, not a silent truncation, and so is a number the dtype cannot hold (2**40 as an
    i32, 300 or -1 as a u8: numpy 2 refuses them too)."""
    prefix = f"{op}: " if op else ""
    if isinstance(number, bool):
        return bool_
    if reference is None or reference == bool_:
        dtype = f32 if isinstance(number, float) else i32
    elif isinstance(number, float) and not reference.is_float:
        raise ShaxTypeError(f"{prefix}cannot combine the Python float {number} with a {reference.name} tensor")
    else:
        dtype = reference
    if not fits(number, dtype):
        raise ShaxValueError(f"{prefix}the Python int {number} does not fit {dtype.name}")
    return dtype


def reference_dtype(dtypes: Sequence[DType]) -> DType | None:
    """The dtype weak numbers adopt next to tensors of `dtypes`: the first that is not
    bool, else bool; None without tensors."""
    return next((d for d in dtypes if d != bool_), dtypes[0] if dtypes else None)


def describe(value: Any) -> str:
    """How an error message shows a value: its tensor type (an array's, a tracer's), a
    Python number with its value, anything else by its Python type."""
    t = getattr(value, "type", None)  # tracers and symbolic zeros carry their type
    if isinstance(t, TensorType):
        return str(t)
    if isinstance(value, (np.ndarray, np.generic)):
        dtype = _BY_NUMPY.get(value.dtype)
        return f"{dtype.name if dtype else value.dtype}[{', '.join(map(str, value.shape))}]"
    if isinstance(value, (bool, int, float)) and len(repr(value)) <= 24:
        return f"{type(value).__name__} {value!r}"
    return type(value).__name__
