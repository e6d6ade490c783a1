"""JAX's functional updates `x.at[key]`: `get()`, and new arrays, x with values
(broadcast to `x[key]`'s shape, cast to x's dtype as JAX casts them) combined into the
elements `x[key]` reads.

`positions = arange(x.size).reshape(x.shape)[key]` (numpy's indexing, `shax/tracing/indexing.py`)
says which element of the flattened x each element of `x[key]` is; a traced index out of
[-n, n) gives x.size, no element, so its update is dropped (JAX's scatters' default mode). `set` writes the
values there with `scatter` (of repeats the last is kept: numpy's assignment, JAX's
`set`), `add` with `scatter_add` (repeats add up).

`multiply`, `min`, `max` combine repeats as JAX's scatter_mul / scatter_min / scatter_max:
with constant positions, each element written gets one row, its own value then every
value written to it, padded with the reduction's identity, and `reduce_prod` /
`reduce_min` / `reduce_max` of the row is scattered back. Traced positions cannot be
grouped while tracing: every element of x gets a row of all values, masked to the
identity where written elsewhere (`_dense`, x.size × values elements). Their derivatives are the
reductions': the product rule (JAX differentiates scatter_mul's updates only for unique
indices), and ties of min/max sharing the cotangent equally (JAX's scatter_min/max).
`divide` and `power` are JAX's: x divided by (to the power of) ones multiplied by the
values; `apply(f)` applies f to each element read, once per time it is read.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxTypeError, ShaxValueError, a_type
from shax.tracing.indexing import as_array, failed, index, traced_type
from shax.tracing.numpy_dispatch import shax_numpy


def _fail(message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxTypeError) -> Exception:
    return failed("indexing", message, error)


class IndexUpdates:
    """`x.at`: indexed by a key, the functional updates of x there."""

    __slots__ = ("x",)

    def __init__(self, x: Any) -> None:
        self.x = x

    def __getitem__(self, key: Any) -> IndexUpdate:
        return IndexUpdate(self.x, key)


class IndexUpdate:
    """`x.at[key]`, x a tracer or shax.numpy's Array (numpy values; an update runs the
    same typeclass functions on them): `get()` is `x[key]`; `set`, `add`, `multiply`,
    `divide`, `power`, `min`, `max` (of values) and `apply` (of a function) new arrays."""

    __slots__ = ("key", "x")

    def __init__(self, x: Any, key: Any) -> None:
        self.x, self.key = x, key

    def get(self) -> Any:
        return self._like_x(index(self.x, self.key))

    def set(self, values: Any) -> Any:
        return self._update(tc.scatter, values)

    def add(self, values: Any) -> Any:
        return self._update(tc.scatter_add, values)

    def multiply(self, values: Any) -> Any:
        return self._combine(tc.reduce_prod, 1, values)

    def min(self, values: Any) -> Any:
        return self._combine(tc.reduce_min, "largest", values)

    def max(self, values: Any) -> Any:
        return self._combine(tc.reduce_max, "smallest", values)

    def divide(self, values: Any) -> Any:
        """JAX's: x divided by ones multiplied by the values there (numpy's true division)."""
        return self._like_x(shax_numpy().divide(self.x, self._ones().at[self.key].multiply(values)))

    def power(self, values: Any) -> Any:
        """JAX's: x to the power of ones multiplied by the values there."""
        return self._like_x(shax_numpy().power(self.x, self._ones().at[self.key].multiply(values)))

    def apply(self, func: Any) -> Any:
        """JAX's: `func` applied to the elements `x[key]` reads, as many times as an
        element is read (once per repeat): each round one scatter of the elements left
        (with traced indices, a select of func of all of x where the count is not reached)."""
        x, positions, _ = self._flat(0)
        if not callable(func):
            raise _fail(f"x.at[...].apply needs a function, got {a_type(func)}")
        dtype = self._dtype()
        if traced_type(positions) is not None:
            n, m = math.prod(tc.shape(x)), math.prod(tc.shape(positions))
            x = _lift(positions, x) if traced_type(x) is None else x
            spots = _lift(positions, np.arange(n, dtype=np.int32)[:, None])
            written = tc.eq(tc.broadcast_to(tc.reshape(positions, [1, m]), [n, m]), spots)
            counts = tc.reduce_sum(tc.convert_element_type(written, np.int32), [1])
            for r in range(1, m + 1):
                x = tc.select(counts >= r, _applied(func, x, dtype), x)
        else:
            unique, counts = np.unique(np.asarray(positions), return_counts=True)
            for r in range(1, int(counts.max(initial=0)) + 1):
                some = unique[counts >= r].astype(np.int32)
                x = tc.scatter(x, some, _applied(func, tc.gather(x, some, 0, 0), dtype), 0, 0)
        return self._like_x(tc.reshape(x, list(tc.shape(self.x))))

    def _combine(self, reduce: Any, identity: Any, values: Any) -> Any:
        """x with each element the key reads replaced by `reduce` of it and every value
        written to it (repeats combine): one row per element written, x's element then
        its values, padded with `identity` (of the reduction), reduced along the row."""
        x, positions, values = self._flat(values)
        dtype = self._dtype()
        if isinstance(identity, str):
            identity = _extreme(dtype, identity == "largest")
        if traced_type(positions) is not None:
            flat = _dense(reduce, np.asarray(identity, dtype), x, positions, values)
            return self._like_x(tc.reshape(flat, list(tc.shape(self.x))))
        pos = np.asarray(positions)
        unique, inverse, counts = np.unique(pos, return_inverse=True, return_counts=True)
        if not unique.size:
            return self._like_x(self.x)
        order = np.argsort(inverse, kind="stable")
        rank = np.arange(pos.size) - np.repeat(np.cumsum(counts) - counts, counts)
        table = np.full((unique.size, int(counts.max())), pos.size, np.int32)
        table[inverse[order], rank] = order
        pad = np.full(1, identity, dtype)
        padded = tc.concatenate(values, _lift(values, pad) if traced_type(values) is not None else pad, 0)
        unique = unique.astype(np.int32)
        rows = tc.concatenate(
            tc.reshape(tc.gather(x, unique, 0, 0), [unique.size, 1]), tc.gather(padded, table, 0, 0), 1
        )
        written = tc.scatter(x, unique, reduce(rows, [1]), 0, 0)
        return self._like_x(tc.reshape(written, list(tc.shape(self.x))))

    def _ones(self) -> Any:
        x_type = traced_type(self.x)
        ones = np.ones(tuple(tc.shape(self.x)), self._dtype())
        return ones.view(type(self.x)) if x_type is None else _lift(self.x, ones)

    def _dtype(self) -> np.dtype:
        x_type = traced_type(self.x)
        return np.dtype(self.x.dtype if x_type is None else x_type.dtype.numpy)

    def _update(self, write: Any, values: Any) -> Any:
        x, positions, values = self._flat(values)
        size = math.prod(tc.shape(self.x))
        if traced_type(positions) is not None:
            # JAX drops the updates at out-of-range indices (its scatters' default mode):
            # `_flat` sends them to x.size, a spare element past x's end, cut off after.
            x = x if traced_type(x) is not None else _lift(positions, np.asarray(x))
            x = tc.concatenate(x, _lift(x, np.zeros(1, self._dtype())), 0)
            written = tc.slice(write(x, positions, values, 0, 0), [0], [size])
        else:
            written = write(x, positions, values, 0, 0)
        return self._like_x(tc.reshape(written, list(tc.shape(self.x))))

    def _flat(self, values: Any) -> tuple[Any, Any, Any]:
        """x flattened, the flat positions the key reads, and the values (cast to x's
        dtype as JAX casts them) broadcast to `x[key]`'s shape and flattened."""
        shape = tuple(tc.shape(self.x))
        x_size = math.prod(shape)
        positions = index(np.arange(x_size, dtype=np.int32).reshape(shape), self.key, dropped=x_size)
        target = tuple(tc.shape(positions))
        x_type = traced_type(self.x)
        dtype = self._dtype()
        t = traced_type(values)
        if t is None:  # a constant: broadcast where it is used, not stored broadcast
            values = as_array("at", values, dtype)
            if x_type is not None:
                values = _lift(self.x, values)
        elif t.dtype != dtype:
            values = tc.convert_element_type(values, dtype)
        own = tuple(tc.shape(values))
        if len(own) > len(target) or any(m not in (1, n) for m, n in zip(own[::-1], target[::-1])):
            raise _fail(f"cannot broadcast values of shape {own} to the indexed shape {target}", ShaxValueError)
        flat = [math.prod(target)]
        values = tc.reshape(tc.broadcast_to(values, target), flat)
        return tc.reshape(self.x, [x_size]), tc.reshape(positions, flat), values

    def _like_x(self, result: Any) -> Any:
        """A numpy result as x's own array class (shax.numpy's Array keeps its `.at`); a
        tracer (x's, or the values' when they are traced) as it is."""
        if isinstance(result, np.ndarray) and isinstance(self.x, np.ndarray):
            return result.view(type(self.x))
        return result


def _applied(func: Any, v: Any, dtype: np.dtype) -> Any:
    """func(v), checked to be an array of v's shape, cast to x's dtype."""
    out = func(v)
    t = traced_type(out)
    if t is None and not isinstance(out, np.ndarray) or tuple(tc.shape(out)) != tuple(tc.shape(v)):
        raise _fail(f"x.at[...].apply: func must map an array to one of its shape, it gave {a_type(out)}")
    return out if (t.dtype.numpy if t is not None else out.dtype) == dtype else tc.convert_element_type(out, dtype)


def _dense(reduce: Any, identity: Any, x: Any, positions: Any, values: Any) -> Any:
    """The flat x combined with values at traced positions: one row per element of x, its
    value then every value, those written elsewhere masked to `identity` (a 0-d array of
    x's dtype); x.size × values elements."""
    n, m = math.prod(tc.shape(x)), math.prod(tc.shape(positions))
    if not m:
        return x

    def lifted(value: Any) -> Any:
        return value if traced_type(value) is not None else _lift(positions, np.asarray(value))

    written = tc.eq(
        tc.broadcast_to(tc.reshape(positions, [1, m]), [n, m]), lifted(np.arange(n, dtype=np.int32)[:, None])
    )
    pad = tc.broadcast_to(lifted(np.reshape(identity, (1, 1))), [n, m])
    grid = tc.select(written, tc.broadcast_to(tc.reshape(lifted(values), [1, m]), [n, m]), pad)
    return reduce(tc.concatenate(tc.reshape(lifted(x), [n, 1]), grid, 1), [1])


def _extreme(dtype: np.dtype, largest: bool) -> Any:
    """The largest (smallest) value of a dtype: what min (max) of nothing is."""
    if dtype == np.bool_:
        return largest
    if dtype.kind == "f":
        return np.inf if largest else -np.inf
    info = np.iinfo(dtype)
    return info.max if largest else info.min


def _lift(x: Any, value: np.ndarray) -> Any:
    """`value` as a constant of x's trace."""
    from shax.tracing.tracer import lift  # on use: the tracer mixes in array methods, which import this module

    return lift(x.owner, value, None, "at")
