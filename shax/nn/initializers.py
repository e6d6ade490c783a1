"""`shax.nn.initializers`: jax.nn.initializers' weight initializers, with its signatures
and, for the same key, its values. Each is a function `init(key, shape, dtype=float32)`
(`zeros` and `ones` themselves; the others made by a constructor holding their scale),
drawing from `shax.random`, so an initializer runs on numpy values, under `jit` and
`vmap` (a batch of keys) alike.

`variance_scaling(scale, mode, distribution)` is the family: variance = scale / n, n the
fan-in, fan-out, their mean or geometric mean, the fans counted over `in_axis` and
`out_axis` times the receptive field (the other axes but `batch_axis`), and values
drawn from a normal truncated to (−2, 2) rescaled to that variance (its standard
deviation is .8796...), a normal, or a uniform on [−√(3·variance), √(3·variance)).

`orthogonal(scale, column_axis)` is JAX's (`jax.random.orthogonal`, Mezzadri's method): Q of
the QR decomposition of a normal matrix (the longer side first), each column times the
sign of R's diagonal entry, transposed back if the rows are fewer; Q being unique once R's
diagonal is positive, it is JAX's matrix for the same key, to rounding.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import shax.numpy as snp
import shax.random as random
from shax.core.errors import ShaxTypeError
from shax.random._keys import check_key, check_shape, fail, float_dtype

__all__ = [
    "constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "lecun_normal", "lecun_uniform",
    "normal", "ones", "truncated_normal", "uniform", "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
    "kaiming_normal", "kaiming_uniform", "orthogonal",
]  # fmt: skip

Initializer = Callable[..., Any]
Axes = int | Sequence[int]


def _number(name: str, value: Any) -> float:
    """A scale: a real number (a Python or numpy number, or a 0-d array)."""
    array = np.asarray(value) if isinstance(value, (int, float, np.ndarray, np.generic)) else None
    if array is None or array.shape != () or array.dtype.kind not in "iuf" or isinstance(value, bool):
        raise fail(name, f"a scale is a real number, got {value!r:.60}", ShaxTypeError)
    return float(array)


def zeros(key: Any, shape: Any, dtype: Any = None) -> Any:
    """Zeros of `shape` (the key is not used, but checked)."""
    check_key("zeros", key)
    return np.zeros(check_shape("zeros", shape), float_dtype("zeros", dtype))


def ones(key: Any, shape: Any, dtype: Any = None) -> Any:
    """Ones of `shape` (the key is not used, but checked)."""
    check_key("ones", key)
    return np.ones(check_shape("ones", shape), float_dtype("ones", dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling with `value`."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        check_key("constant", key)
        shape, chosen = check_shape("constant", shape), float_dtype("constant", dtype)
        try:
            return np.full(shape, value, chosen)
        except (TypeError, ValueError) as error:  # a value numpy cannot read as numbers of that shape
            raise fail("constant", f"cannot fill {shape} with {value!r:.60}: numpy: {error}", ShaxTypeError) from None

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform values on [0, scale)."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        chosen = float_dtype("uniform", dtype)
        factor = _number("uniform", scale)
        return random.uniform(key, shape, chosen) * np.asarray(factor, chosen)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Normal values of standard deviation `stddev`."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        chosen = float_dtype("normal", dtype)
        factor = _number("normal", stddev)
        return random.normal(key, shape, chosen) * np.asarray(factor, chosen)

    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0) -> Initializer:
    """Normal values truncated to (lower, upper), times `stddev`."""

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        chosen = float_dtype("truncated_normal", dtype)
        factor = _number("truncated_normal", stddev)
        return random.truncated_normal(key, lower, upper, shape, chosen) * np.asarray(factor, chosen)

    return init


def _size(name: str, shape: tuple[int, ...], axes: Axes) -> int:
    picked = (axes,) if isinstance(axes, int) else tuple(axes)
    if not all(isinstance(a, int) and -len(shape) <= a < len(shape) for a in picked):
        raise fail(name, f"the axes {axes!r} are not axes of the shape {shape}")
    return math.prod(shape[a] for a in picked)


def _fans(name: str, shape: tuple[int, ...], in_axis: Axes, out_axis: Axes, batch_axis: Axes) -> tuple[float, float]:
    """(fan_in, fan_out): the sizes of the in and out axes times the receptive field."""
    if in_axis == -2 and len(shape) <= 1:
        raise fail(name, f"cannot count the fans of a rank-{len(shape)} shape with the default in_axis")
    sizes = [_size(name, shape, axes) for axes in (in_axis, out_axis, batch_axis)]
    if 0 in sizes:
        raise fail(name, f"the shape {shape} has an empty fan axis")
    receptive = math.prod(shape) / sizes[0] / sizes[1] / sizes[2]
    return sizes[0] * receptive, sizes[1] * receptive


def variance_scaling(
    scale: Any,
    mode: str,
    distribution: str,
    in_axis: Axes = -2,
    out_axis: Axes = -1,
    batch_axis: Axes = (),
    dtype: Any = None,
) -> Initializer:
    """Values of variance scale / n (n from `mode`: "fan_in", "fan_out", "fan_avg",
    "fan_geo_avg") drawn from `distribution`: "truncated_normal", "normal" or "uniform"."""
    if not isinstance(mode, str) or mode not in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        raise fail("variance_scaling", f"invalid mode {mode!r}")
    if not isinstance(distribution, str) or distribution not in ("truncated_normal", "normal", "uniform"):
        raise fail("variance_scaling", f"invalid distribution {distribution!r}")
    scale = _number("variance_scaling", scale)

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        chosen = float_dtype("variance_scaling", dtype)
        shape = check_shape("variance_scaling", shape)
        fan_in, fan_out = _fans("variance_scaling", shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}.get(mode)
        variance = np.asarray(scale / (n if n is not None else (fan_in * fan_out) ** 0.5), chosen)
        if distribution == "truncated_normal":
            stddev = np.sqrt(variance) / np.asarray(0.87962566103423978, chosen)
            return random.truncated_normal(key, -2, 2, shape, chosen) * stddev
        if distribution == "normal":
            return random.normal(key, shape, chosen) * np.sqrt(variance)
        return random.uniform(key, shape, chosen, -1) * np.sqrt(3 * variance)

    return init


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Matrices with orthonormal rows or columns (whichever are fewer), the columns along
    `column_axis` and the other axes flattened into the rows, times `scale`."""
    factor = _number("orthogonal", scale)

    def init(key: Any, shape: Any, dtype: Any = dtype) -> Any:
        chosen = float_dtype("orthogonal", dtype)
        shape = check_shape("orthogonal", shape)
        if len(shape) < 2:
            raise fail("orthogonal", f"needs a shape of at least 2 axes, got {shape}")
        axis_ok = isinstance(column_axis, int) and not isinstance(column_axis, bool)
        if not (axis_ok and -len(shape) <= column_axis < len(shape)):
            raise fail("orthogonal", f"column_axis {column_axis!r} is not an axis of the shape {shape}")
        check_key("orthogonal", key)
        if 0 in shape:
            return np.zeros(shape, chosen)
        columns = shape[column_axis]
        rows = math.prod(shape) // columns
        q, r = snp.linalg.qr(random.normal(key, (max(rows, columns), min(rows, columns)), chosen))
        q = q * snp.sign(snp.diagonal(r, axis1=-2, axis2=-1))[None, :]
        if rows < columns:
            q = snp.transpose(q)
        q = snp.reshape(q, (*np.delete(np.array(shape), column_axis).tolist(), columns))
        return snp.moveaxis(q, -1, column_axis) * np.asarray(factor, chosen)

    return init


def _scaled(scale: float, mode: str, distribution: str) -> Callable[..., Initializer]:
    def make(in_axis: Axes = -2, out_axis: Axes = -1, batch_axis: Axes = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    return make


glorot_uniform = xavier_uniform = _scaled(1.0, "fan_avg", "uniform")
glorot_normal = xavier_normal = _scaled(1.0, "fan_avg", "truncated_normal")
lecun_uniform = _scaled(1.0, "fan_in", "uniform")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal")
he_uniform = kaiming_uniform = _scaled(2.0, "fan_in", "uniform")
he_normal = kaiming_normal = _scaled(2.0, "fan_in", "truncated_normal")
for _name in ("glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal"):
    globals()[_name].__name__ = _name
    globals()[_name].__doc__ = f"jax.nn.initializers.{_name}: variance_scaling with its scale, mode and distribution."
