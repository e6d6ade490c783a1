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
    return reworded(error, f"{error} (at {where})")


def reworded(error: ShaxError, message: str) -> ShaxError:
    """A copy of `error` saying `message`: its class, and a subclass's fields (`TooLarge.problem`),
    made without calling its `__init__`, whose parameters a subclass may have changed
    (`WeakNumberError(index, message)`)."""
    copied = type(error).__new__(type(error))
    copied.args = (message,)
    copied.__dict__.update(error.__dict__)
    copied.__cause__ = error.__cause__
    return copied


def named(error: ShaxError, operation: str) -> ShaxError:
    """The same error, its message starting with the operation's name (once)."""
    if str(error).startswith(f"{operation}: "):
        return error
    return reworded(error, f"{operation}: {error}")


def a_type(value: object) -> str:
    """`value`'s class with its article, for messages: `an int`, `a str`."""
    name = type(value).__name__
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name
