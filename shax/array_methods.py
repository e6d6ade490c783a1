"""numpy's array attributes and methods for tracers: `size`, `T`, `mT`, `reshape`,
`transpose`, `astype`, `len()`, iteration over the first axis, and basic indexing (ints,
slices of step 1 or -1, None, ...), lowered to `slice`, `rev` and `reshape`. Each is `shax.numpy`'s
function of the same name, as in numpy."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

import typeclasses as tc
from shax.errors import ShaxTypeError, ShaxValueError, at
from shax.location import current_source


def _snp() -> Any:
    # Imported on use: shax.numpy's modules may import the tracer, which mixes these in.
    import shax.numpy

    return shax.numpy


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
        if not axes or axes == (None,):
            return _snp().transpose(self)
        return _snp().transpose(self, axes[0] if len(axes) == 1 else axes)

    def __len__(self) -> int:
        shape = _shape(self)
        if not shape:
            raise at(ShaxTypeError("len() of a rank-0 tensor, which has no first axis"), current_source())
        return shape[0]

    def __iter__(self) -> Iterator[Any]:
        return (self[k] for k in range(len(self)))

    def __getitem__(self, key: Any) -> Any:
        return index(self, key)


def index(x: Any, key: Any) -> Any:
    """numpy's basic indexing: `slice` of the ranges kept, then `reshape` dropping the
    axes an int picked and adding the ones None asks for."""
    items = list(key) if isinstance(key, tuple) else [key]
    shape = tc.shape(x)
    if sum(k is Ellipsis for k in items) > 1:
        raise _unsupported("an index can only have one ellipsis (...)", ShaxValueError)
    used = sum(k is not None and k is not Ellipsis for k in items)
    if used > len(shape):
        raise _unsupported(f"too many indices ({used}) for a tensor of rank {len(shape)}", ShaxValueError)
    if any(k is Ellipsis for k in items):
        at_ = next(k for k, item in enumerate(items) if item is Ellipsis)
        items[at_ : at_ + 1] = [slice(None)] * (len(shape) - used)
    else:
        items += [slice(None)] * (len(shape) - used)
    start, end, out = [], [], []
    reversed_axes: list[int] = []
    axis = 0
    for item in items:
        if item is None:
            out.append(1)
            continue
        n = shape[axis]
        if isinstance(item, slice):
            if item.step not in (None, 1, -1):
                raise _unsupported(f"slices with step {item.step} are not supported yet (only steps 1 and -1)")
            s, e, step = item.indices(n)
            count = len(range(s, e, step))
            if step == -1:  # s, s - 1, ..., e + 1: the slice [e + 1, s + 1) reversed
                s = e + 1 if count else 0
                reversed_axes.append(axis)
            start.append(s)
            end.append(s + count)
            out.append(count)
        elif isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
            k = int(item)
            if not -n <= k < n:
                raise _unsupported(f"index {k} is out of bounds for axis {axis} of size {n}", ShaxValueError)
            start.append(k % n)
            end.append(k % n + 1)
        else:
            raise _unsupported(
                f"indexing with a {type(item).__name__} is not supported yet "
                "(only ints, slices of step 1 or -1, None and ...)"
            )
        axis += 1
    if start != [0] * len(shape) or end != list(shape):
        x = tc.slice(x, start, end)
    if reversed_axes:
        x = tc.rev(x, reversed_axes)
    return x if tuple(out) == tuple(tc.shape(x)) else tc.reshape(x, out)


def _unsupported(message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxTypeError) -> Exception:
    return at(error(f"indexing: {message}"), current_source())
