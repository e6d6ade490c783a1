"""Arrays: their shapes and products (numpy's signatures), written with the typeclass
functions, so each takes numpy values and tracers alike; and the constructors, which
make numpy arrays (constants, wherever they are used).

Default definitions over reshape, transpose, broadcast, slice and concatenate; only
`concatenate` of two is a primitive (`shax.primitives.concatenate`), which
`concatenate` here applies as a balanced tree, so n arrays cost O(total · log n).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.array_subclasses import refuse_array_subclass
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.types import dtype_of_numpy
from shax.numpy._options import CASTINGS, ORDERS, one_of, unsupported
from shax.tracing.promotion import boolean_product, common_operands, promoted
from shax.tracing.tracer import Tracer, constant_like
from typeclasses.numpy_instance import NUMPY_TYPES

__all__ = [
    "arange", "broadcast_to", "concatenate", "dot", "empty_like", "expand_dims", "eye", "flip", "full", "full_like",
    "inner", "linspace", "matmul", "moveaxis", "ndim", "ones", "ones_like", "outer", "repeat", "reshape", "shape",
    "size", "split", "squeeze", "stack", "swapaxes", "tensordot", "tile", "transpose", "zeros", "zeros_like",
]  # fmt: skip


def _fail(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"{op}: {message}"), current_source())


def _int(op: str, value: Any, what: str) -> int:
    """`value` as an int (numpy's integers and 0-d integer arrays too); not a bool, which
    numpy refuses as most sizes and axes, and shax as all (True is no size, nor axis 1)."""
    try:
        if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype == bool):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise _fail(op, f"{what} must be an int, got {value!r}", ShaxTypeError) from None


def _shape(op: str, shape: Any) -> tuple[int, ...]:
    """numpy's shape argument, an int or a sequence of them, as a tuple."""
    items = [shape] if not isinstance(shape, (tuple, list)) else list(shape)
    return tuple(_int(op, n, "a size") for n in items)


def normalize_axis(op: str, axis: Any, rank: int) -> int:
    """`axis` (negative ones counting from the end, as numpy's) as an axis of a rank-`rank` array."""
    a = _int(op, axis, "an axis")
    if not -rank <= a < rank:
        raise _fail(op, f"axis {a} is out of bounds for an array of rank {rank}")
    return a % rank


def _axes(op: str, axes: Any, rank: int) -> list[int]:
    items = [axes] if not isinstance(axes, (tuple, list)) else list(axes)
    out = [normalize_axis(op, a, rank) for a in items]
    if len(set(out)) != len(out):
        raise _fail(op, f"repeated axis in {axes!r}")
    return out


# Shapes -------------------------------------------------------------------------------


def shape(a: Any) -> tuple[int, ...]:
    return tuple(tc.shape(a))


def ndim(a: Any) -> int:
    return len(tc.shape(a))


def size(a: Any, axis: int | None = None) -> int:
    s = shape(a)
    return math.prod(s) if axis is None else s[normalize_axis("size", axis, len(s))]


def reshape(a: Any, shape: Any, order: str = "C") -> Any:
    """numpy's reshape: one entry of `shape` may be -1, the size the others leave. Only
    numpy's default order, "C" (the elements read and written row by row)."""
    one_of("reshape", "order", order, ("C", "F", "A"))
    unsupported("reshape", "order", order, "C")
    old = tuple(tc.shape(a))
    new = list(_shape("reshape", shape))
    unknown = [k for k, n in enumerate(new) if n == -1]
    if len(unknown) > 1 or any(n < -1 for n in new):
        raise _fail("reshape", f"{tuple(new)} may have one -1 and no other negative size")
    if unknown:
        known = math.prod(n for n in new if n != -1)
        if known == 0 or math.prod(old) % known:
            raise _fail("reshape", f"cannot reshape an array of shape {old} to {tuple(new)}")
        new[unknown[0]] = math.prod(old) // known
    if tuple(new) == old:
        return a
    return tc.reshape(a, new)


def flip(m: Any, axis: Any = None) -> Any:
    """m with its elements in reverse order along `axis` (all axes if None)."""
    rank = len(tc.shape(m))
    return tc.rev(m, list(range(rank)) if axis is None else _axes("flip", axis, rank))


def transpose(a: Any, axes: Any = None) -> Any:
    """numpy's transpose: output axis i is input axis axes[i]; reversed by default."""
    rank = ndim(a)
    perm = list(range(rank))[::-1] if axes is None else _axes("transpose", axes, rank)
    if len(perm) != rank:
        raise _fail("transpose", f"axes {axes!r} do not match an array of rank {rank}")
    return a if perm == list(range(rank)) else tc.transpose(a, perm)


def moveaxis(a: Any, source: Any, destination: Any) -> Any:
    rank = ndim(a)
    src, dst = _axes("moveaxis", source, rank), _axes("moveaxis", destination, rank)
    if len(src) != len(dst):
        raise _fail("moveaxis", "source and destination need the same number of axes")
    order = [k for k in range(rank) if k not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    rank = ndim(a)
    i, j = normalize_axis("swapaxes", axis1, rank), normalize_axis("swapaxes", axis2, rank)
    perm = list(range(rank))
    perm[i], perm[j] = j, i
    return transpose(a, perm)


def expand_dims(a: Any, axis: Any) -> Any:
    old = shape(a)
    rank = len(old) + (len(axis) if isinstance(axis, (tuple, list)) else 1)
    new_axes = _axes("expand_dims", axis, rank)
    rest = iter(old)
    return tc.reshape(a, [1 if k in new_axes else next(rest) for k in range(rank)])


def squeeze(a: Any, axis: Any = None) -> Any:
    old = shape(a)
    if axis is None:
        gone = [k for k, n in enumerate(old) if n == 1]
    else:
        gone = _axes("squeeze", axis, len(old))
        if any(old[k] != 1 for k in gone):
            raise _fail("squeeze", f"cannot squeeze an axis whose size is not 1 (shape {old}, axis {axis!r})")
    return reshape(a, [n for k, n in enumerate(old) if k not in gone])


def tile(A: Any, reps: Any) -> Any:  # noqa: N803 - numpy's name
    """A repeated reps[i] times along axis i (numpy's): A and reps are aligned at the end,
    each axis n becoming the broadcast (r, n) read as r·n."""
    counts = [_int("tile", r, "a repetition count") for r in ([reps] if not isinstance(reps, (tuple, list)) else reps)]
    if any(r < 0 for r in counts):
        raise _fail("tile", f"repetition counts must be at least 0, got {tuple(counts)}")
    rank = max(len(counts), len(tc.shape(A)))
    shape = [1] * (rank - len(tc.shape(A))) + list(tc.shape(A))
    counts = [1] * (rank - len(counts)) + counts
    spread = tc.broadcast(
        tc.reshape(A, shape), [2 * k + 1 for k in range(rank)], [m for pair in zip(counts, shape) for m in pair]
    )
    return tc.reshape(spread, [r * n for r, n in zip(counts, shape)])


def repeat(a: Any, repeats: Any, axis: int | None = None) -> Any:
    """Each element of `a` repeated `repeats` times along `axis` (flattened first if None).
    One count: the axis n becomes the broadcast (n, r) read as n·r. A count per element
    (constants: the result's shape depends on them): a gather of each index repeated."""
    if axis is None:
        a, axis = reshape(a, -1), 0
    shape = list(tc.shape(a))
    k = normalize_axis("repeat", axis, len(shape))
    if isinstance(repeats, (tuple, list)):
        try:
            repeats = np.asarray(repeats)
        except ValueError:  # ragged: numpy reads no array of it
            raise _fail("repeat", f"needs an int count, or one per element of axis {k}, got {repeats!r}") from None
    if isinstance(repeats, np.ndarray) and repeats.ndim > 0 and repeats.size != 1:
        counts = repeats
        if counts.dtype.kind not in "iu" or counts.shape != (shape[k],) or (counts < 0).any():
            message = f"needs one non-negative int count per element of axis {k} (size {shape[k]}), got {repeats!r}"
            raise _fail("repeat", message)
        return tc.gather(a, np.repeat(np.arange(shape[k], dtype=np.int32), counts), k, 0)
    if isinstance(repeats, np.ndarray):
        repeats = repeats.reshape(-1)[0] if repeats.size == 1 else repeats
    r = _int("repeat", repeats, "the repetition count")
    if r < 0:
        raise _fail("repeat", f"the repetition count must be at least 0, got {r}")
    spread = tc.broadcast(a, [m for m in range(len(shape) + 1) if m != k + 1], [*shape[: k + 1], r, *shape[k + 1 :]])
    return tc.reshape(spread, [*shape[:k], shape[k] * r, *shape[k + 1 :]])


def broadcast_to(array: Any, shape: Any) -> Any:
    """numpy's broadcast: `array`'s axes aligned with the end of `shape`, size 1 stretching."""
    old = tuple(tc.shape(array))
    new = list(_shape("broadcast_to", shape))
    if len(new) < len(old):
        raise _fail("broadcast_to", f"cannot broadcast an array of shape {old} to the lower rank {tuple(new)}")
    return tc.broadcast_to(array, new)


# Joining and splitting ----------------------------------------------------------------


def concatenate(
    arrays: Sequence[Any], axis: int | None = 0, out: None = None, *, dtype: None = None, casting: str = "same_kind"
) -> Any:
    """numpy's concatenate; `axis=None` flattens the arrays first."""
    _joining_options("concatenate", out, dtype, casting)
    items = list(common_operands("concatenate", _arrays_of("concatenate", arrays)))
    if axis is None:
        items = [reshape(a, [-1]) for a in items]
        axis = 0
    rank = ndim(items[0])
    if rank == 0:
        raise _fail("concatenate", "zero-dimensional arrays cannot be concatenated")
    k = normalize_axis("concatenate", axis, rank)
    # A balanced tree of pairs: each element is copied O(log n) times.
    while len(items) > 1:
        pairs = [tc.concatenate(x, y, k) for x, y in zip(items[::2], items[1::2])]
        items = pairs + items[len(pairs) * 2 :]
    return items[0]


def stack(
    arrays: Sequence[Any], axis: int = 0, out: None = None, *, dtype: None = None, casting: str = "same_kind"
) -> Any:
    _joining_options("stack", out, dtype, casting)
    items = _arrays_of("stack", arrays)
    first = shape(items[0])
    if any(shape(a) != first for a in items):
        raise _fail("stack", f"all arrays must have the same shape, got {[shape(a) for a in items]}")
    k = normalize_axis("stack", axis, len(first) + 1)
    return concatenate([expand_dims(a, k) for a in items], axis=k)


def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """numpy's split: into equal sections, or at the indices given (clipped, as numpy's)."""
    old = shape(ary)
    k = normalize_axis("split", axis, len(old))
    n = old[k]
    if isinstance(indices_or_sections, (tuple, list)) or np.ndim(indices_or_sections) > 0:
        cuts = [_int("split", i, "an index") for i in indices_or_sections]
    else:
        sections = _int("split", indices_or_sections, "the number of sections")
        if sections <= 0 or n % sections:
            raise _fail("split", f"{sections} sections do not divide an axis of size {n} equally")
        cuts = [n // sections * j for j in range(1, sections)]
    bounds = [0, *(min(max(c + n if c < 0 else c, 0), n) for c in cuts), n]
    pieces = []
    for start, end in zip(bounds, bounds[1:]):
        lo, hi = [0] * len(old), list(old)
        lo[k], hi[k] = start, max(start, end)
        pieces.append(tc.slice(ary, lo, hi))
    return pieces


def _joining_options(op: str, out: Any, dtype: Any, casting: Any) -> None:
    """numpy's keywords of concatenate and stack: no output array, no dtype to convert to
    (the arrays are joined in numpy's common dtype of them), and a valid casting."""
    unsupported(op, "out", out, None)
    unsupported(op, "dtype", dtype, None)
    one_of(op, "casting", casting, CASTINGS)


def _arrays_of(op: str, arrays: Any) -> list[Any]:
    if isinstance(arrays, (tuple, list)):
        items = list(arrays)
    elif isinstance(arrays, np.ndarray) and arrays.ndim > 0:
        items = list(arrays)
    else:
        raise _fail(op, f"expects a sequence of arrays, got {type(arrays).__name__}", ShaxTypeError)
    if not items:
        raise _fail(op, "needs at least one array to join")
    return items


# Products -----------------------------------------------------------------------------


def matmul(x1: Any, x2: Any) -> Any:
    return promoted(np.matmul, "matmul", tc.matmul, x1, x2)


def _strong(*operands: Any) -> tuple[Any, ...]:
    """Python numbers as numpy's products read them: arrays (i64, f64), not weak numbers."""
    return tuple(np.asarray(o) if isinstance(o, (bool, int, float)) else o for o in operands)


def dot(a: Any, b: Any) -> Any:
    """numpy's dot: a product with a number, else a's last axis against b's second-to-last."""
    a, b = common_operands("dot", _strong(a, b))
    if ndim(a) == 0 or ndim(b) == 0:
        return promoted(np.multiply, "dot", tc.mul, a, b)
    return boolean_product(tc.dot, a, b)


def inner(a: Any, b: Any) -> Any:
    """The last axes contracted: a's free axes, then b's (in numpy's common dtype)."""
    a, b = common_operands("inner", _strong(a, b))
    if ndim(a) == 0 or ndim(b) == 0:
        return promoted(np.multiply, "inner", tc.mul, a, b)
    return boolean_product(lambda a, b: tc.dot_general(a, b, ((ndim(a) - 1,), (ndim(b) - 1,), (), ())), a, b)


def outer(a: Any, b: Any) -> Any:
    """Every element of flattened a times every element of flattened b (in numpy's common dtype)."""
    a, b = common_operands("outer", _strong(a, b))
    return boolean_product(lambda a, b: tc.dot_general(reshape(a, [-1]), reshape(b, [-1]), ((), (), (), ())), a, b)


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """a's axes `axes[0]` contracted with b's `axes[1]` (or a's last n with b's first n),
    in numpy's common dtype."""
    a, b = common_operands("tensordot", _strong(a, b))
    ra, rb = ndim(a), ndim(b)
    if isinstance(axes, (tuple, list)):
        if len(axes) != 2:
            raise _fail("tensordot", f"axes must be an int or a pair of axis lists, got {axes!r}")
        lhs, rhs = _axes("tensordot", axes[0], ra), _axes("tensordot", axes[1], rb)
    else:
        n = _int("tensordot", axes, "axes")
        if not 0 <= n <= min(ra, rb):
            raise _fail("tensordot", f"cannot contract {n} axes of arrays of rank {ra} and {rb}")
        lhs, rhs = list(range(ra - n, ra)), list(range(n))
    if len(lhs) != len(rhs):
        raise _fail("tensordot", f"contracts {len(lhs)} axes of a with {len(rhs)} of b")
    return tc.dot_general(a, b, (lhs, rhs, (), ()))


# Constructors: numpy arrays, or (`*_like` of a tracer) constants of its trace ---------


def _numpy(op: str, make: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """numpy's constructor `make` on these arguments, which must be concrete; what numpy
    refuses (a shape that is no sequence of ints, no dtype, too large) is a ShaxError."""
    if any(isinstance(a, Tracer) for a in _flat((args, kwargs))):
        raise _fail(op, "its arguments must be concrete values, not traced arrays", ShaxTypeError)
    try:
        return make(*args, **kwargs)
    except TypeError as error:
        raise _fail(op, f"numpy: TypeError: {error}", ShaxTypeError) from None
    except ZeroDivisionError:  # numpy's arange divides by its step
        raise _fail(op, "the step must not be 0") from None
    except (ValueError, OverflowError, MemoryError, RecursionError) as error:
        raise _fail(op, f"numpy: {type(error).__name__}: {error}") from None


def _flat(value: Any) -> list[Any]:
    """The leaves of nested lists, tuples and dicts (a shape, an argument list)."""
    leaves, todo = [], [value]
    while todo:
        item = todo.pop()
        if isinstance(item, (list, tuple)):
            todo.extend(item)
        elif isinstance(item, dict):
            todo.extend(item.values())
        else:
            leaves.append(item)
    return leaves


# The constructors make numpy arrays: numpy's keywords go to numpy, which honours or
# refuses them; shapes are read here first, so that a bool is no size (numpy's own
# `np.zeros((True, 2))` refuses it too, `np.eye(True)` does not).


def zeros(shape: Any, dtype: Any = float, order: str = "C", *, like: Any = None) -> np.ndarray:
    return _numpy("zeros", np.zeros, _shape("zeros", shape), dtype, order, like=like)


def ones(shape: Any, dtype: Any = float, order: str = "C", *, like: Any = None) -> np.ndarray:
    return _numpy("ones", np.ones, _shape("ones", shape), dtype, order, like=like)


def full(shape: Any, fill_value: Any, dtype: Any = None, order: str = "C", *, like: Any = None) -> np.ndarray:
    return _numpy("full", np.full, _shape("full", shape), fill_value, dtype, order, like=like)


def zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> Any:
    return _full_like("zeros_like", a, 0, dtype, order, subok, shape)


def ones_like(a: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> Any:
    return _full_like("ones_like", a, 1, dtype, order, subok, shape)


def full_like(
    a: Any, fill_value: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None
) -> Any:
    return _full_like("full_like", a, fill_value, dtype, order, subok, shape)


def empty_like(prototype: Any, dtype: Any = None, order: str = "K", subok: bool = True, shape: Any = None) -> Any:
    """numpy's `empty_like`, filled with zeros (as JAX's): a traced array has no uninitialized memory to give."""
    return _full_like("empty_like", prototype, 0, dtype, order, subok, shape)


def _full_like(op: str, a: Any, value: Any, dtype: Any, order: Any, subok: Any, shape: Any) -> Any:
    """`value` in a's shape and dtype (or `dtype`), cast as numpy's `full_like` casts (2.5 fills an
    int array with 2, any nonzero a bool one with True): numpy's array, or a constant of a's trace.
    numpy's `order` and `subok` only say how the result is laid out (validated); a `shape` is refused."""
    refuse_array_subclass(op, a)
    if isinstance(dtype, Tracer):
        raise _fail(op, f"dtype must be a dtype, got the traced array {dtype!r}", ShaxTypeError)
    one_of(op, "order", order, ORDERS)
    one_of(op, "subok", subok, (True, False))
    unsupported(op, "shape", shape, None)
    if isinstance(a, NUMPY_TYPES):
        return _numpy(op, np.full_like, a, value, dtype, order, subok)
    if not isinstance(a, Tracer):
        raise _fail(op, f"expects an array, got {type(a).__name__}", ShaxTypeError)
    try:
        numpy_dtype = a.dtype.numpy if dtype is None else dtype_of_numpy(dtype).numpy
    except ShaxTypeError as error:
        raise _fail(op, str(error), ShaxTypeError) from None
    if _numpy(op, np.ndim, value) != 0:
        raise _fail(op, f"the fill value of a traced array must be a number, got shape {np.shape(value)}")
    return constant_like(a, _numpy(op, np.full, (), value, numpy_dtype))


def arange(*args: Any, dtype: Any = None) -> np.ndarray:
    """arange([start,] stop[, step], dtype=None)"""
    return _numpy("arange", np.arange, *args, dtype=dtype)


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = float) -> np.ndarray:  # noqa: N803 - numpy's names
    sizes = _shape("eye", (N,) if M is None else (N, M))
    return _numpy("eye", np.eye, sizes[0], None if M is None else sizes[1], _int("eye", k, "k"), dtype)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None) -> np.ndarray:
    return _numpy("linspace", np.linspace, start, stop, num, endpoint, dtype=dtype)
