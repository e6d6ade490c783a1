"""numpy's matrix functions: diagonals (`diag`, `diagonal`, `trace`), triangles (`tril`,
`triu`), products (`vdot`, `cross`), grids (`meshgrid`) and the constructors `identity`
and `empty`.

On numpy values numpy's own. Traced, each is a default definition over the shape
primitives: a diagonal is einsum's (the n × n block read as rows of n + 1, whose first
column it is), `diag` of a vector its inverse (each element padded with n zeros, the
n·(n + 1) elements cut to n² and read as n × n), a triangle a `select` with numpy's
constant mask, a cross product its components' slices. All exact, and those that move
elements are linear, so their derivatives, batching and export are the primitives'.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, named
from shax.core.types import dtype_of_numpy
from shax.numpy._arrays import _fail, _int, _numpy, _shape, broadcast_to, moveaxis, normalize_axis, reshape, stack
from shax.numpy._einsum import _diagonal
from shax.numpy._elementwise import as_array
from shax.numpy._options import one_of, unsupported
from shax.tracing.tracer import Tracer

__all__ = ["cross", "diag", "diagonal", "empty", "identity", "meshgrid", "trace", "tril", "triu", "vdot"]


def _traced(*values: Any) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def _call(op: str, function: Any, *args: Any, **kwargs: Any) -> Any:
    """numpy's `function` on numpy values; what it refuses is a ShaxError naming `op`."""
    try:
        return _numpy(op, lambda: function(*args, **kwargs))
    except AttributeError as error:  # numpy's methods of what is no array (vdot's conjugate)
        raise _fail(op, f"numpy: {error}", ShaxTypeError) from None


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The elements a[..., i, ..., i + offset, ...] of axes axis1 and axis2, as a's last axis."""
    a = as_array(a, "diagonal")
    offset = _int("diagonal", offset, "offset")
    if not isinstance(a, Tracer):
        return _call("diagonal", np.diagonal, np.asarray(a), offset, axis1, axis2)
    shape = list(tc.shape(a))
    if len(shape) < 2:
        raise _fail("diagonal", f"needs an array of rank at least 2, got a traced {a.type}")
    i, j = normalize_axis("diagonal", axis1, len(shape)), normalize_axis("diagonal", axis2, len(shape))
    if i == j:
        raise _fail("diagonal", f"axis1 and axis2 cannot be the same axis ({axis1}, {axis2})")
    rest = [k for k in range(len(shape)) if k not in (i, j)]
    block = tc.transpose(a, [*rest, i, j]) if [*rest, i, j] != list(range(len(shape))) else a
    n, m = shape[i], shape[j]
    size = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    row, column = max(0, -offset), max(0, offset)
    kept = [shape[k] for k in rest]
    square = tc.slice(block, [0] * len(rest) + [row, column], [*kept, row + size, column + size])
    if size == 0:
        return tc.reshape(square, [*kept, 0])
    return _diagonal(square, len(rest), len(rest) + 1)


def diag(v: Any, k: int = 0) -> Any:
    """numpy's diag: of a vector, the square matrix with it on diagonal k; of a matrix,
    its diagonal k."""
    v = as_array(v, "diag")
    k = _int("diag", k, "k")
    if not isinstance(v, Tracer):
        return _call("diag", np.diag, v, k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise _fail("diag", f"needs a vector or a matrix, got a traced {v.type}")
    (n,) = tc.shape(v)
    spread = tc.reshape(tc.pad(tc.reshape(v, [n, 1]), [(0, 0), (0, n)], 0), [n * (n + 1)])
    square = tc.reshape(tc.slice(spread, [0], [n * n]), [n, n])
    if k == 0:
        return square
    return tc.pad(square, [(0, k), (k, 0)] if k > 0 else [(-k, 0), (0, -k)], 0)


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None, out: None = None) -> Any:
    """The sum of `diagonal(a, offset, axis1, axis2)` (in `dtype` if given)."""
    unsupported("trace", "out", out, None)
    a = as_array(a, "trace")
    if not isinstance(a, Tracer):
        return _call("trace", np.trace, a, offset, axis1, axis2, dtype)
    if dtype is not None:
        try:
            a = tc.convert_element_type(a, dtype_of_numpy(dtype).numpy)
        except ShaxTypeError as error:
            raise _fail("trace", str(error), ShaxTypeError) from None
    try:
        d = diagonal(a, offset, axis1, axis2)
    except ShaxError as error:  # its axes' error, named for what the user called
        raise named(error, "trace") from None
    return tc.reduce_sum(d, [len(tc.shape(d)) - 1])


def _triangle(op: str, m: Any, k: Any, lower: bool) -> Any:
    m = as_array(m, op)
    k = _int(op, k, "k")
    if not isinstance(m, Tracer):
        return _call(op, np.tril if lower else np.triu, m, k)
    shape = tuple(tc.shape(m))
    if len(shape) < 2:
        raise _fail(op, f"needs an array of rank at least 2, got a traced {m.type}")
    below = np.tri(shape[-2], shape[-1], k if lower else k - 1, dtype=bool)
    zero: Any = np.zeros((), m.dtype.numpy)
    return tc.where(below if lower else ~below, m, zero)


def tril(m: Any, k: int = 0) -> Any:
    """m with the elements above diagonal k zeroed (of the last two axes)."""
    return _triangle("tril", m, k, lower=True)


def triu(m: Any, k: int = 0) -> Any:
    """m with the elements below diagonal k zeroed (of the last two axes)."""
    return _triangle("triu", m, k, lower=False)


def vdot(a: Any, b: Any, /) -> Any:
    """The dot product of a and b flattened (of equal sizes)."""
    a, b = as_array(a, "vdot"), as_array(b, "vdot")
    if not _traced(a, b):
        return _call("vdot", np.vdot, a, b)
    x, y = reshape(a, -1), reshape(b, -1)
    if tc.shape(x) != tc.shape(y):
        raise _fail("vdot", f"a and b need the same size, got {tuple(tc.shape(a))} and {tuple(tc.shape(b))}")
    return tc.dot_general(x, y, ((0,), (0,), (), ()))


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None) -> Any:
    """numpy's cross product of 3-vectors (a 2-vector's third component 0) along axisa and
    axisb, the other axes broadcast, the result's components along axisc; of two 2-vectors
    the scalar z component."""
    a, b = as_array(a, "cross"), as_array(b, "cross")
    if axis is not None:
        axisa = axisb = axisc = axis
    if not _traced(a, b):
        return _call("cross", np.cross, a, b, axisa, axisb, axisc)
    x = moveaxis(a, normalize_axis("cross", axisa, len(tc.shape(a))), -1)
    y = moveaxis(b, normalize_axis("cross", axisb, len(tc.shape(b))), -1)
    sizes = (tc.shape(x)[-1], tc.shape(y)[-1])
    if any(n not in (2, 3) for n in sizes):
        raise _fail("cross", f"incompatible dimensions for cross product (dimension must be 2 or 3), got {sizes}")
    x0, x1, *x2 = _components(x)
    y0, y1, *y2 = _components(y)
    z = x0 * y1 - x1 * y0
    if sizes == (2, 2):
        return z
    zero = np.zeros((), (x if isinstance(x, Tracer) else y).dtype.numpy)
    x2, y2 = (x2 or [zero])[0], (y2 or [zero])[0]
    parts = [x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, z]
    common = np.broadcast_shapes(*(tuple(tc.shape(p)) for p in parts))
    result = stack([broadcast_to(p, common) for p in parts], axis=-1)
    return moveaxis(result, -1, normalize_axis("cross", axisc, len(tc.shape(result))))


def _components(v: Any) -> list[Any]:
    """v[..., 0], v[..., 1], ... of its last axis."""
    *rest, n = tc.shape(v)
    return [tc.reshape(tc.slice(v, [0] * len(rest) + [c], [*rest, c + 1]), rest) for c in range(n)]


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list[Any]:
    """numpy's coordinate grids of the vectors xi (flattened): with indexing "xy" the first
    two axes swapped (Cartesian), "ij" in order (matrix); sparse keeps size-1 axes."""
    one_of("meshgrid", "indexing", indexing, ("xy", "ij"))
    one_of("meshgrid", "sparse", sparse, (True, False))
    one_of("meshgrid", "copy", copy, (True, False))
    items = [as_array(x, "meshgrid") for x in xi]
    if not _traced(*items):
        return list(_call("meshgrid", np.meshgrid, *items, copy=copy, sparse=sparse, indexing=indexing))
    flat = [reshape(x, -1) for x in items]
    sizes = [tc.shape(x)[0] for x in flat]
    axes = list(range(len(flat)))
    if indexing == "xy" and len(flat) > 1:
        axes[0], axes[1] = 1, 0
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for x, k in zip(flat, axes):
        spread = tc.reshape(x, [n if a == k else 1 for a, n in enumerate(sizes)])
        grids.append(spread if sparse else broadcast_to(spread, sizes))
    return grids


def identity(n: int, dtype: Any = None, *, like: Any = None) -> np.ndarray:
    """The n × n identity matrix, f64 by default (numpy's)."""
    return _numpy("identity", np.identity, _int("identity", n, "n"), dtype, like=like)


def empty(shape: Any, dtype: Any = float, order: str = "C", *, like: Any = None) -> np.ndarray:
    """numpy's `empty`, filled with zeros (as JAX's): no uninitialized memory is handed out."""
    return _numpy("empty", np.zeros, _shape("empty", shape), dtype, order, like=like)
