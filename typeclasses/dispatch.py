"""One small registry that maps value types to typeclass instances.

A typeclass function looks at all of its operands and runs the method of the
instance with the highest *level*: plain numpy values are level 0, tracers are
at the depth of their trace. So `2.0 * tracer` and `dot(ndarray, tracer)` both
reach the tracer's instance, which lifts the constant (like a Haskell literal),
and an inner trace wins over an outer one.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any, TypeVar


class Floating(abc.ABC):
    """Haskell's Num + Fractional + Floating: arithmetic, `abs`, `signum`, `**` and the
    elementary functions (`typeclasses.functions` lists them)."""


class Ord(abc.ABC):
    """Elementwise `min` and `max`."""


class HNP(abc.ABC):
    """A numpy-like array API: shapes, reductions, selection, products, comparisons
    (`typeclasses.functions` lists them)."""


class Tensor(Floating, Ord, HNP):
    """All three at once, for constraints like the original's (HNP a, Ord a, Floating a)."""


TYPECLASSES: tuple[type[abc.ABC], ...] = (Floating, Ord, HNP, Tensor)


class NoInstanceError(TypeError):
    """No typeclass instance is registered for an operand's type."""


class MissingMethodError(NoInstanceError, AttributeError):
    """An instance lacks a typeclass function (an AttributeError too, so that `getattr`
    with a default and `hasattr` still work on instances)."""


# method name -> (the typeclass function, the typeclass it belongs to)
FUNCTIONS: dict[str, tuple[Callable[..., Any], type[abc.ABC]]] = {}
# typeclass function -> its method name: what instances implement it as
_METHODS: dict[Callable[..., Any], str] = {}

C = TypeVar("C", bound=Callable[..., Any])


def typeclass_function(typeclass: type[abc.ABC], method: str | None = None) -> Callable[[C], C]:
    """Declare a function of `typeclass`, implemented by every instance's method `method`
    (the function's name by default). Declared functions are what instances are checked
    against, and what shax derives its own instances' methods for."""

    def declare(function: C) -> C:
        name = method or function.__name__
        if name in FUNCTIONS:
            raise ValueError(f"typeclass function {name} is declared twice")
        FUNCTIONS[name] = (function, typeclass)
        _METHODS[function] = name
        return function

    return declare


def method_of(function: Callable[..., Any]) -> str | None:
    """The instance method implementing a declared typeclass function (None if undeclared)."""
    return _METHODS.get(function)


# type -> its instance, as registered
_instances: dict[type, Any] = {}
# type -> the instance found along its MRO (or None): a cache, replaced by a new, empty
# one on each registration. A lookup writes into the cache it started with, so a lookup
# racing a registration in another thread can only fill a cache already dropped.
_resolved: dict[type, Any] = {}


def register_instance(instance: Any, *types: type) -> None:
    """Declare `instance` (an `Instance`) the typeclass instance for `types`,
    and make those types members of every typeclass."""
    global _resolved
    for t in types:
        _instances[t] = instance
        for typeclass in TYPECLASSES:
            typeclass.register(t)
    _resolved = {}


def instance_for_type(t: type) -> Any:
    """The registered instance for `t` (looked up along its MRO), or None."""
    resolved = _resolved  # before reading the registrations: see _resolved
    try:
        return resolved[t]
    except KeyError:
        pass
    found = next((_instances[base] for base in t.__mro__ if base in _instances), None)
    resolved[t] = found
    return found


def pick(function: str, *operands: Any) -> Any:
    """The instance that runs `function` on `operands`: the one of highest level."""
    best = None
    best_level = -1
    for operand in operands:
        # Looked up in the cache first: every typeclass function call comes here.
        instance = _resolved.get(type(operand)) or instance_for_type(type(operand))
        if instance is None:
            kinds = ", ".join(type(o).__name__ for o in operands)
            raise NoInstanceError(
                f"{function}: no typeclass instance for {type(operand).__name__} "
                f"(operands: {kinds}); expected numpy arrays, numbers or tracers"
            )
        level = instance.level(operand)
        if level > best_level:
            best, best_level = instance, level
    return best
