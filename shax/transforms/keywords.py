"""Keyword arguments to transformed functions (`grad(f)(x, y=2.0)`, `vmap(f)(xs, w=w)`,
`jit(f)(x, n=3)`): each is bound to its parameter's position by Python's rules, so it is
traced, differentiated (if chosen) and batched exactly as if it had been passed by
position; skipped parameters between take their defaults. A keyword-only parameter
(after `*`) or a `**kwargs` entry has no position: only `jit` takes one, as a static
argument (`static_argnames`). vjp, jvp and linearize take their primals by position (JAX's).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source
from shax.tracing.trace import function_name

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def positional_names(fn: Callable[..., Any]) -> list[str] | None:
    """The names of fn's positional parameters (None if its signature is unknown)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return [p.name for p in parameters if p.kind in _POSITIONAL]


def by_position(what: str, fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """`args`, with each of `kwargs` at its parameter's position (see the module docstring)."""
    fname = function_name(fn)
    try:
        parameters = [p for p in inspect.signature(fn).parameters.values() if p.kind in _POSITIONAL]
    except (TypeError, ValueError):
        message = f"{what}: {fname}'s signature is unknown, so pass its arguments by position, not as {_listed(kwargs)}"
        raise at(ShaxTypeError(message), current_source()) from None
    index = {p.name: k for k, p in enumerate(parameters) if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
    for name in kwargs:
        if name not in index:
            message = (
                f"{what}: {fname} has no parameter {name} that can be given by position; keyword-only "
                "arguments are taken by jit alone, as static arguments (static_argnames)"
            )
            raise at(ShaxTypeError(message), current_source())
        if index[name] < len(args):
            message = f"{what}: {fname} got two values for its parameter {name}, by position and as {name}="
            raise at(ShaxTypeError(message), current_source())
    result = list(args)
    for p in parameters[len(args) : max(index[name] for name in kwargs) + 1]:
        if p.name in kwargs:
            result.append(kwargs[p.name])
        elif p.default is not inspect.Parameter.empty:
            result.append(p.default)
        else:
            message = f"{what}: {fname} is missing its argument {p.name} (given {_listed(kwargs)} by keyword)"
            raise at(ShaxTypeError(message), current_source())
    return tuple(result)


def _listed(kwargs: dict[str, Any]) -> str:
    return ", ".join(f"{name}=" for name in kwargs)
