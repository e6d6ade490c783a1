"""numpy's dtype names, constants and dtype functions: `float32`, `int32`, `bool_`, ...
(numpy's own scalar types, which every shax function takes as dtypes; shax computes in
`shax.DTYPES`, and another is a ShaxTypeError where it is used), `pi e inf nan newaxis
euler_gamma`, and `result_type`, `promote_types`, `issubdtype`, `broadcast_shapes`.

The dtype functions are numpy's, a tracer standing for its dtype (its shape where a shape
is asked), so they answer the same for numpy values and tracers of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shax.core.errors import ShaxTypeError
from shax.numpy._arrays import _fail, _shape
from shax.tracing.tracer import Tracer

__all__ = ["broadcast_shapes", "finfo", "iinfo", "issubdtype", "promote_types", "result_type"]

# Names only (not functions): in shax.numpy's namespace, not its __all__ of functions.
DTYPE_NAMES = [
    "bool_", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "dtype", "generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger",
    "bool", "int_", "complexfloating",
]  # fmt: skip
CONSTANTS = ["e", "euler_gamma", "inf", "nan", "newaxis", "pi", "index_exp"]

bool_, float16, float32, float64 = np.bool_, np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
dtype, generic, number, inexact, floating = np.dtype, np.generic, np.number, np.inexact, np.floating
integer, signedinteger, unsignedinteger = np.integer, np.signedinteger, np.unsignedinteger
e, euler_gamma, inf, nan, newaxis, pi = np.e, np.euler_gamma, np.inf, np.nan, None, np.pi
# JAX's spellings: `bool` the boolean dtype (bound in shax.numpy's namespace only, not to
# shadow the builtin here), `float_` and `int_` the default float and int (numpy's, 64-bit;
# `float_` is no longer numpy 2's, so it is an attribute only, not in `__all__`),
# `complexfloating` the kind (no shax dtype is of it); `index_exp` numpy's.
float_, int_, complexfloating, index_exp = np.float64, np.int64, np.complexfloating, np.index_exp


def _numpy_dtype(value: Any) -> Any:
    """What numpy reads for a value: a tracer's dtype, a Python number as it is (weak)."""
    return np.dtype(value.dtype.numpy) if isinstance(value, Tracer) else value


def _dtype_of(value: Any) -> Any:
    """A dtype, or an array's or tracer's dtype (finfo and iinfo take either, as JAX's)."""
    return value.dtype if isinstance(value, np.ndarray) else _numpy_dtype(value)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """numpy's result dtype of the arrays (tracers too), dtypes and Python numbers (weak, NEP 50)."""
    try:
        return np.result_type(*(_numpy_dtype(v) for v in arrays_and_dtypes))
    except (TypeError, ValueError) as error:
        raise _fail("result_type", f"numpy: {error}", ShaxTypeError) from None


def promote_types(type1: Any, type2: Any) -> np.dtype:
    """numpy's smallest dtype both dtypes convert to safely."""
    try:
        return np.promote_types(_numpy_dtype(type1), _numpy_dtype(type2))
    except (TypeError, ValueError) as error:
        raise _fail("promote_types", f"numpy: {error}", ShaxTypeError) from None


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """numpy's: whether dtype arg1 is arg2 or below it in numpy's hierarchy (`floating`)."""
    try:
        return bool(np.issubdtype(_numpy_dtype(arg1), _numpy_dtype(arg2)))
    except (TypeError, ValueError) as error:
        raise _fail("issubdtype", f"numpy: {error}", ShaxTypeError) from None


def finfo(dtype: Any) -> np.finfo:
    """numpy's limits of a float dtype (or of an array's or tracer's): eps, max, tiny, ..."""
    try:
        return np.finfo(_dtype_of(dtype))
    except (TypeError, ValueError) as error:
        raise _fail("finfo", f"numpy: {error}", ShaxTypeError) from None


def iinfo(int_type: Any) -> np.iinfo:
    """numpy's limits of an integer dtype (or of an array's or tracer's): min, max, bits."""
    try:
        return np.iinfo(_dtype_of(int_type))
    except (TypeError, ValueError) as error:
        raise _fail("iinfo", f"numpy: {error}", ShaxTypeError) from None


def broadcast_shapes(*shapes: Any) -> tuple[int, ...]:
    """numpy's shape of arrays of these shapes broadcast together."""
    read = [_shape("broadcast_shapes", s) for s in shapes]
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*read))
    except ValueError as error:
        raise _fail("broadcast_shapes", f"numpy: {error}") from None
