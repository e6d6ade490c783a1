"""`jit`'s static arguments (`static_argnums`, `static_argnames`, JAX's): Python values,
not traced, passed to the function as they are; each distinct value (by type and ==)
stages and compiles the function again, so a static int may pick a loop's count or a
shape. They must be hashable (they are part of the cache key): anything else is a
`ShaxValueError` naming the argument.

As in JAX, a static position names its parameter too and a static name its position
(from the signature), so either way of passing it is static; negative positions count
from the end of the arguments of each call. A keyword argument naming a positional
parameter is bound to its position (`shax.transforms.keywords`); one naming a
keyword-only parameter (or a `**kwargs` entry) must be static.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import attrs
import numpy as np

from shax.core.errors import ShaxTypeError, ShaxValueError, a_type, at
from shax.core.location import current_source
from shax.tracing.trace import function_name
from shax.transforms.keywords import by_position, positional_names


@attrs.frozen
class Statics:
    """The static positions (as given, maybe negative) and names of a jitted function."""

    argnums: tuple[int, ...]
    argnames: tuple[str, ...]

    def split(self, fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> StaticCall:
        """One call's arguments: the static ones (positions, keywords) and the traced ones."""
        names = positional_names(fn) or []
        keywords = {k: v for k, v in kwargs.items() if k in self.argnames and k not in names}
        bound = {k: v for k, v in kwargs.items() if k not in keywords}
        args = by_position("jit", fn, args, bound) if bound else tuple(args)
        count = len(args)
        positions = tuple(sorted({p % count for p in self.argnums if -count <= p < count}))
        constants = tuple((p, args[p]) for p in positions) + tuple(sorted(keywords.items()))
        for where, value in constants:
            try:
                hash(value)
            except TypeError:
                label = f"argument {where}" if isinstance(where, int) else f"argument {where}="
                message = (
                    f"jit: the static {label} of {function_name(fn)} is {a_type(value)}, which is not "
                    "hashable; a static argument must be (it is part of the cache key): use a tuple, not a list, "
                    "and pass arrays as traced arguments"
                )
                raise at(ShaxValueError(message), current_source()) from None
        dynamic = tuple(a for k, a in enumerate(args) if k not in positions)
        key = (count, tuple((where, type(value), value) for where, value in constants))
        return StaticCall(dynamic, positions, dict(keywords), args, key)


@attrs.frozen(eq=False)
class StaticCall:
    """One call of a jitted function with static arguments."""

    dynamic: tuple[Any, ...]  # the traced arguments, in order
    positions: tuple[int, ...]  # the static positions among all `count` positional arguments
    keywords: dict[str, Any]  # the static keyword-only arguments
    args: tuple[Any, ...]  # every positional argument
    key: Hashable  # the number of arguments and the static values, by type and value

    def staged(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """fn of the traced arguments alone, the static ones fixed; its signature is fn's
        without them, so tracing checks the traced ones as it checks fn's."""
        fixed = {p: self.args[p] for p in self.positions}
        count, keywords = len(self.args), self.keywords

        def staged(*dynamic: Any) -> Any:
            given = iter(dynamic)
            return fn(*(fixed[k] if k in fixed else next(given) for k in range(count)), **keywords)

        staged.__name__ = staged.__qualname__ = function_name(fn)
        staged.__wrapped__ = fn  # type: ignore[attr-defined]  # errors point at fn's definition
        staged.__signature__ = _without(fn, self.positions, set(keywords))  # type: ignore[attr-defined]
        return staged


def checked_statics(fn: Callable[..., Any], argnums: Any, argnames: Any) -> Statics | None:
    """The static arguments jit was given (None for none), each position also by its
    name and each name also by its position, as in JAX; a ShaxError for anything else
    than ints and names, or a name fn does not have."""
    nums = _items("static_argnums", argnums, (int, np.integer))
    names = _items("static_argnames", argnames, (str,))
    if not nums and not names:
        return None
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):  # no signature: positions and names stay as given
        parameters = None
    if parameters is not None:
        positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        known = {p.name for p in parameters if p.kind is not inspect.Parameter.VAR_POSITIONAL}
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
        for name in names:
            if name not in known and not takes_any:
                message = f"jit: static_argnames names {name!r}, which is not a parameter of {function_name(fn)}"
                raise at(ShaxValueError(message), current_source())
        names += tuple(positional[p] for p in nums if 0 <= p < len(positional) and positional[p] not in names)
        nums += tuple(positional.index(n) for n in names if n in positional and positional.index(n) not in nums)
    return Statics(tuple(int(n) for n in nums), names)


def _items(option: str, value: Any, kinds: tuple[type, ...]) -> tuple[Any, ...]:
    if value is None:
        return ()
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    for item in items:
        if isinstance(item, bool) or not isinstance(item, kinds):
            what = "an int or a tuple of ints" if str not in kinds else "a parameter name or a tuple of them"
            raise at(ShaxTypeError(f"jit: {option} must be {what}, got {value!r}"), current_source())
    return tuple(int(item) if str not in kinds else item for item in items)


def _without(fn: Callable[..., Any], positions: Sequence[int], keywords: set[str]) -> inspect.Signature:
    """fn's signature without the parameters at `positions` and the keyword-only ones
    `keywords`; a signature taking any positional arguments if fn's is unknown or its
    static positions fall in `*args`."""
    anything = inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL)])
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return anything
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p >= len(positional) for p in positions):
        return anything
    dropped = {positional[p].name for p in positions} | keywords
    return inspect.Signature([p for p in parameters if p.name not in dropped])
