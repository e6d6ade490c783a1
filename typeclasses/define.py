"""Declaring a new typeclass function, with its numpy instance, at run time.

    cumsum = define_function("cumsum", lambda x, axis: np.cumsum(x, axis=axis), operands=1)
    cumsum(np.arange(3.0), 0)        # the numpy implementation
    cumsum(tracer, 0)                # the tracer's instance (shax derives it from the
                                     # primitive that declares `function = cumsum`)

The first `operands` parameters of the implementation are the operands the function
dispatches on; the others are static parameters, passed through. Each declaration is a
new function: declaring the same name again (rerunning a notebook cell) gives another
function, implemented by another method of the instances (`name`, `name_2`, ...).
"""

from __future__ import annotations

import abc
import inspect
import itertools
from collections.abc import Callable
from typing import Any

from typeclasses.dispatch import FUNCTIONS, ArgumentsError, Floating, error, pick, typeclass_function
from typeclasses.numpy_instance import NumpyInstance


def define_function(
    name: str, numpy: Callable[..., Any], operands: int | None = None, typeclass: type[abc.ABC] = Floating
) -> Callable[..., Any]:
    """A new function of `typeclass` whose numpy instance is `numpy` (see the module docstring);
    `operands` defaults to all of `numpy`'s positional parameters."""
    if not name.isidentifier():
        raise ValueError(f"define_function: the name must be an identifier, got {name!r}")
    if not callable(numpy):
        raise TypeError(f"define_function: {name}'s numpy implementation must be callable, got {numpy!r}")
    parameters = positional_parameters(numpy)
    count = len(parameters) if operands is None else operands
    if not 1 <= count <= len(parameters):
        raise ValueError(f"define_function: {name} needs between 1 and {len(parameters)} operand(s), got {count}")
    candidates = itertools.chain([name], (f"{name}_{k}" for k in itertools.count(2)))
    method = next(m for m in candidates if m not in FUNCTIONS)

    def function(*args: Any) -> Any:
        if len(args) != len(parameters):
            raise error(ArgumentsError, name, args, f"takes {len(parameters)} argument(s), got {len(args)}")
        return getattr(pick(name, *args[:count]), method)(*args)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`{name}`, a typeclass function declared with its numpy implementation."
    function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]  # read by inspect.signature
        [p.replace(kind=p.POSITIONAL_ONLY, annotation=p.empty) for p in parameters]
    )
    setattr(NumpyInstance, method, lambda self, *args: numpy(*args))
    return typeclass_function(typeclass, method)(function)


def positional_parameters(function: Callable[..., Any]) -> list[inspect.Parameter]:
    """`function`'s positional parameters without defaults (none if they cannot be read)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature
        return []
    return [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
