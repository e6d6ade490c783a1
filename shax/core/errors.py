"""One error hierarchy. Every message names the operation, the types involved and,
where the value came from user code, the user's file and line."""

from __future__ import annotations

import re


class ShaxError(Exception):
    """Base of every error shax raises on bad input."""


class ShaxTypeError(ShaxError, TypeError):
    """A type or shape does not fit an operation."""


class ShaxValueError(ShaxError, ValueError):
    """A static parameter or argument value is not acceptable."""


class ShaxAttributeError(ShaxError, AttributeError):
    """An attribute numpy's arrays have that a traced value has not (its memory's `flags`):
    an AttributeError, so `hasattr` and `getattr(x, name, default)` still work."""


# A location `at` appended: a file:line, or the command line (not a message's "(at least ...)").
_LOCATED = re.compile(r" \(at ([^()]+:\d+|the command line[^()]*)\)")


def at(error: ShaxError, where: str | None) -> ShaxError:
    """The same error with the user's source location appended (once)."""
    if where is None or _LOCATED.search(str(error)):
        return error
    located = type(error)(f"{error} (at {where})")
    located.__dict__.update(error.__dict__)  # a subclass's fields (`TooLarge.problem`)
    located.__cause__ = error.__cause__
    return located


def named(error: ShaxError, operation: str) -> ShaxError:
    """The same error, its message starting with the operation's name (once)."""
    if str(error).startswith(f"{operation}: "):
        return error
    renamed = type(error)(f"{operation}: {error}")
    renamed.__dict__.update(error.__dict__)
    renamed.__cause__ = error.__cause__
    return renamed


def a_type(value: object) -> str:
    """`value`'s class with its article, for messages: `an int`, `a str`."""
    name = type(value).__name__
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name
