"""Which parameters `grad` and `value_and_grad` differentiate: `wrt` (shax's: an index, a
parameter name, or a tuple of them; every float parameter by default) or `argnums`
(JAX's: an index or a tuple of indices, negative ones counted from the end). An int gives
one gradient, a tuple a tuple of them. Both are checked when the transform is made, and
resolved against the arguments of each call (their number, their names, their dtypes).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source
from shax.core.pytree import TreeDef
from shax.core.types import TensorType, describe
from shax.tracing.trace import function_name

# An int, a parameter name (wrt only), a tuple (or list) of them, or None (every float parameter).
Wrt = Any


@attrs.frozen
class Choice:
    """The parameters asked for: `wrt` (ints, names, tuples of them, None), and whether it
    was given as `argnums` (ints only, negative ones counted from the end). Hashable: it is
    part of the cache key."""

    wrt: Wrt
    argnums: bool = False

    @property
    def option(self) -> str:
        return "argnums" if self.argnums else "wrt"


def checked_choice(what: str, wrt: Wrt, argnums: Wrt, fn: Callable[..., Any] | None = None) -> Choice:
    """`wrt` or `argnums` as a `Choice` (a list as a tuple, numpy ints as ints), or a
    ShaxError if both are given or either is not what it may be (the parameters' values
    instead of their names or positions: an error saying to name them, `fn`'s names)."""
    if wrt is not None and argnums is not None:
        raise at(ShaxValueError(f"{what}: give wrt or argnums, not both"), current_source())
    if argnums is not None:
        return Choice(_checked(what, "argnums", argnums, names=False, fn=fn), argnums=True)
    return Choice(_checked(what, "wrt", wrt, names=True, fn=fn))


def _checked(what: str, option: str, wrt: Wrt, names: bool, fn: Callable[..., Any] | None) -> Wrt:
    if wrt is None:
        return None
    several = isinstance(wrt, (tuple, list))
    items = tuple(wrt) if several else (wrt,)
    allowed = (int, np.integer, str) if names else (int, np.integer)
    for item in items:
        if _is_value(item):
            raise at(_values_given(what, option, items, several, fn), current_source())
        if isinstance(item, bool) or not isinstance(item, allowed):
            kinds = "an int, a parameter name or a tuple of them" if names else "an int or a tuple of ints"
            raise at(ShaxTypeError(f"{what}: {option} must be {kinds}, got {wrt!r}"), current_source())
    checked = tuple(item if isinstance(item, str) else int(item) for item in items)
    return checked if several else checked[0]


def _is_value(item: Any) -> bool:
    """Whether `item` is a parameter's value (a float array, a tracer, a dict of them) rather
    than its name or position (a Python float or an int array stays an ill-typed `wrt`)."""
    if isinstance(item, dict):
        return True
    dtype = getattr(item, "dtype", None)
    try:
        return dtype is not None and np.dtype(dtype).kind == "f"
    except TypeError:
        return False


def _values_given(what: str, option: str, items: tuple[Any, ...], several: bool, fn: Callable[..., Any] | None) -> Any:
    """The error for `wrt=(w, b)`, the parameters' values: name them, or give their positions."""
    names = [n for n in parameter_names(fn, len(items)) if n] if fn is not None else []
    positions = tuple(range(len(items))) if several else 0
    named = f"wrt={tuple(names)!r}" if several and len(names) == len(items) else f"wrt={names[0]!r}" if names else ""
    name_it = f"name them ({named}) or " if named else 'name them (wrt="w") or '
    shown = ", ".join(describe(item) for item in items)
    message = (
        f"{what}: {option} takes the parameters' names or positions, not their values (got {shown}): "
        f"{name_it}give their positions (argnums={positions!r}, as in JAX)"
    )
    return ShaxTypeError(message)


def leaf_starts(in_tree: TreeDef) -> list[int]:
    """The index of each parameter's first leaf, and the number of leaves at the end."""
    starts = [0]
    for child in in_tree.children:
        starts.append(starts[-1] + child.num_leaves)
    return starts


def resolve(
    what: str, fn: Callable[..., Any], choice: Choice, in_tree: TreeDef, types: tuple[TensorType, ...]
) -> tuple[tuple[int, ...], bool]:
    """(parameter positions to differentiate, whether one gradient is returned bare)."""
    fname = function_name(fn)
    starts = leaf_starts(in_tree)
    count = len(in_tree.children)
    names = parameter_names(fn, count)

    def is_float(p: int) -> bool:
        return any(types[k].dtype.is_float for k in range(starts[p], starts[p + 1]))

    def describe(p: int) -> str:
        shown = ", ".join(str(t) for t in types[starts[p] : starts[p + 1]]) or "no tensors"
        return f"parameter {names[p] or p} ({shown})"

    wrt = choice.wrt
    if wrt is None:
        chosen = tuple(p for p in range(count) if is_float(p))
        if not chosen:
            listed = "; ".join(describe(p) for p in range(count)) or "none"
            message = f"{what}: {fname} has no float parameter to differentiate (parameters: {listed})"
            raise at(ShaxTypeError(message), current_source())
        return chosen, len(chosen) == 1
    single = not isinstance(wrt, tuple)
    chosen = tuple(_position(what, fname, choice, item, names, count) for item in ((wrt,) if single else wrt))
    if len(set(chosen)) != len(chosen):
        raise at(ShaxValueError(f"{what}: {choice.option}={wrt!r} names a parameter twice"), current_source())
    for p in chosen:
        # A parameter with no leaves at all (None, ()) is differentiable: its gradient is itself, as in JAX.
        if not is_float(p) and starts[p] != starts[p + 1]:
            message = (
                f"{what}: {choice.option} names {describe(p)} of {fname}, which holds no float tensor; only f32 and "
                "f64 values can be differentiated (write 2.0, not 2, for a float number)"
            )
            raise at(ShaxTypeError(message), current_source())
    return chosen, single


def parameter_names(fn: Callable[..., Any], count: int) -> list[str | None]:
    """The name of each of the `count` positional parameters (None past *args)."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [None] * count
    positional = [p.name for p in parameters if p.kind in (inspect.Parameter.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (positional + [None] * count)[:count]


def _position(what: str, fname: str, choice: Choice, item: Any, names: list[str | None], count: int) -> int:
    listed = ", ".join(f"{k}: {n}" if n else str(k) for k, n in enumerate(names)) or "none"
    if isinstance(item, str):
        if item not in names:
            raise at(
                ShaxValueError(f"{what}: {fname} has no parameter {item!r} (parameters: {listed})"), current_source()
            )
        return names.index(item)
    lowest = -count if choice.argnums else 0  # argnums counts negative ones from the end (JAX's)
    if not lowest <= item < count:
        message = (
            f"{what}: {choice.option}={item} is out of range: {fname} was called with {count} argument(s) ({listed})"
        )
        raise at(ShaxValueError(message), current_source())
    return item % count
