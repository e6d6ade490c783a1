"""One small registry that maps value types to typeclass instances.

A typeclass function looks at all of its operands and runs the method of the
instance with the highest *level*: plain numpy values are level 0, tracers are
at the depth of their trace. So `2.0 * tracer` and `dot(ndarray, tracer)` both
reach the tracer's instance, which lifts the constant (like a Haskell literal),
and an inner trace wins over an outer one.

Its errors (no instance for an operand, a call a function's signature does not take, an
instance lacking a method) are raised through one hook, `error`: as themselves by
default; a library built on typeclasses installs its own (`set_error_hook`), so that
they come out as that library's errors (shax: ShaxErrors at the user's line).
"""

from __future__ import annotations

import abc
import functools
import inspect
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


class ArgumentsError(TypeError):
    """A typeclass function called with arguments its signature does not take."""


class MissingMethodError(NoInstanceError, AttributeError):
    """An instance lacks a typeclass function (an AttributeError too, so that `getattr`
    with a default and `hasattr` still work on instances)."""


# (the error's class, the function's name, the arguments it was given, what is wrong) -> the error to raise
ErrorHook = Callable[[type[TypeError], str, tuple[Any, ...], str], Exception]


def plain_error(kind: type[TypeError], function: str, arguments: tuple[Any, ...], reason: str) -> Exception:
    """The error as typeclasses raises it on its own: `kind`, naming the arguments' Python types."""
    kinds = ", ".join(type(a).__name__ for a in arguments)
    return kind(f"{function}: {reason}" + (f" (arguments: {kinds})" if arguments else ""))


_error_hook: ErrorHook = plain_error


def set_error_hook(hook: ErrorHook) -> None:
    """Raise typeclasses' errors as `hook` makes them (it should return a subclass of the kind it is given)."""
    global _error_hook
    _error_hook = hook


def error(kind: type[TypeError], function: str, arguments: tuple[Any, ...], reason: str) -> Exception:
    """The error to raise: `raise error(NoInstanceError, "sin", (None,), "no typeclass instance for NoneType")`."""
    return _error_hook(kind, function, arguments, reason)


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
        checked = checking_arguments(function)
        FUNCTIONS[name] = (checked, typeclass)
        _METHODS[checked] = name
        return checked

    return declare


def checking_arguments(function: C) -> C:
    """`function`, whose calls with arguments its signature does not take (`reshape(x)`)
    raise an `ArgumentsError` through the hook instead of Python's own TypeError."""
    parameters = ", ".join(inspect.signature(function).parameters)

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except TypeError as failure:
            # Raised here, by the call itself (no frame of `function` under this one):
            # the arguments do not bind to its parameters. Its own TypeErrors pass on.
            if failure.__traceback__ is None or failure.__traceback__.tb_next is not None:
                raise
            reason = str(failure).removeprefix(f"{function.__qualname__}() ")
            given = (*args, *kwargs.values())
            signature = f"{function.__name__}({parameters})"
            raise error(ArgumentsError, function.__name__, given, f"{reason}; it is {signature}") from None

    return call  # type: ignore[return-value]  # the same signature, by functools.wraps


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
            reason = f"no typeclass instance for {type(operand).__name__}; expected numpy arrays, numbers or tracers"
            raise error(NoInstanceError, function, operands, reason)
        level = instance.level(operand)
        if level > best_level:
            best, best_level = instance, level
    return best
