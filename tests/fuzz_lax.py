"""The fuzz's drivers for `shax.lax` (tests/test_fuzz.py runs them): one good call per
function, called on numpy values and, as shax.numpy's are, traced, compiled and
differentiated (tests/fuzz_numpy.py). Control flow (`cond switch scan fori_loop
while_loop stop_gradient`) is shax's own, whose drivers test_fuzz.py has already."""

from __future__ import annotations

from typing import Any

import numpy as np
from fuzz_numpy import differentiated, jitted, traced
from fuzzing import Call

from shax import lax

A23 = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
I2 = np.array([1, 0], np.int32)
I23 = np.arange(6, dtype=np.int32).reshape(2, 3)
IMAGE = np.linspace(-1.0, 1.0, 2 * 2 * 4 * 3, dtype=np.float32).reshape(2, 2, 4, 3)
KERNEL = np.linspace(-0.5, 0.5, 3 * 2 * 2 * 2, dtype=np.float32).reshape(3, 2, 2, 2)

CONTROL = ("cond", "switch", "scan", "fori_loop", "while_loop", "stop_gradient")

LAX_CALLS: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {
    "map": ((lambda r: r * 2.0, A23), {}),
    "select": ((A23 > 2, A23, -A23), {}),
    **{name: ((A23 / 8,), {}) for name in ("asin", "acos", "atanh")},
    "integer_pow": ((A23, 3), {}),
    "eq": ((A23, A23), {}),
    "broadcast_in_dim": ((A23, (4, 2, 3), (1, 2)), {}),
    "reshape": ((A23, (3, 2)), {}),
    "transpose": ((A23, (1, 0)), {}),
    "slice": ((A23, (0, 1), (2, 3)), {"strides": (1, 2)}),
    "pad": ((A23, 0.0, [(1, 0, 0), (0, -1, 0)]), {}),
    "concatenate": (([A23, A23], 1), {}),
    "rev": ((A23, (1,)), {}),
    "convert_element_type": ((A23, np.float64), {}),
    "dot": ((A23, A23.T), {}),
    "dot_general": ((A23, A23, (((1,), (1,)), ((), ()))), {}),
    **{name: ((A23, (1,)), {}) for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod")},
    **{name: ((A23, 1, np.int32), {}) for name in ("argmax", "argmin")},
    "dynamic_slice": ((A23, (np.int32(1), 1), (1, 2)), {}),
    "dynamic_update_slice": ((A23, A23[:1, :2], I2), {}),
    "conv_general_dilated": ((IMAGE, KERNEL, (1, 2), "SAME"), {"rhs_dilation": (2, 1)}),
    "conv": ((IMAGE, KERNEL, (1, 1), "VALID"), {}),
    "reduce_window": ((A23, -np.inf, lax.max, (2, 2), (1, 1), "VALID"), {}),
    "top_k": ((A23, 2), {}),
    "clamp": ((np.float32(2.0), A23, np.float32(5.0)), {}),
    "round": ((A23 / 4, 1), {}),
    "is_finite": ((A23,), {}),
    **{name: ((I23, I23[::-1]), {}) for name in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "bitwise_not": ((I23,), {}),
    "iota": ((np.int32, 4), {}),
    "expand_dims": ((A23, (0, 3)), {}),
    "slice_in_dim": ((A23, 0, None, 2, 1), {}),
    "dynamic_index_in_dim": ((A23, np.int32(1), 1), {"keepdims": False}),
    "sort": (((A23, -A23),), {"dimension": 1, "num_keys": 1}),
    **{name: ((A23,), {"axis": 1, "reverse": True}) for name in ("cumsum", "cumprod", "cummax", "cummin")},
}


def lax_call(name: str) -> Call:
    function = getattr(lax, name)
    args, kwargs = LAX_CALLS.get(name, (tuple(A23 + 0.5 for _ in range(_arity(name))), {}))
    return Call(function, args, kwargs, variants=(traced(function), jitted(function), differentiated(function)))


BINARY = {"add", "sub", "mul", "div", "atan2", "pow", "max", "min", "rem", "ne", "lt", "le", "gt", "ge"}


def _arity(name: str) -> int:
    return 2 if name in BINARY else 1


LAX: dict[str, Call] = {name: lax_call(name) for name in lax.__all__ if name not in CONTROL}
