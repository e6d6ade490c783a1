"""typeclasses' errors raised as ShaxErrors: a typeclass function given a value no instance
takes (`sin(None)`), arguments its signature does not take (`reshape(x)`), or an instance
lacking a method. Each is a ShaxTypeError and still the typeclasses error it stands for
(`typeclasses.NoInstanceError`, ...), names the function and the arguments' types, and
points at the user's line. Installed as typeclasses' error hook when shax is imported
(typeclasses knows nothing of shax).
"""

from __future__ import annotations

from typing import Any

import typeclasses as tc
from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source
from shax.core.types import describe


class NoInstanceError(ShaxTypeError, tc.NoInstanceError):
    """No typeclass instance takes an argument's type."""


class ArgumentsError(ShaxTypeError, tc.ArgumentsError):
    """A typeclass function called with arguments its signature does not take."""


class MissingMethodError(ShaxTypeError, tc.MissingMethodError):
    """A typeclass instance lacks the method of a function (no primitive implements it)."""


# typeclasses' error class -> the ShaxError raised for it
_RAISED_AS: dict[type[TypeError], type[ShaxTypeError]] = {
    tc.NoInstanceError: NoInstanceError,
    tc.ArgumentsError: ArgumentsError,
    tc.MissingMethodError: MissingMethodError,
}


def as_shax_error(kind: type[TypeError], function: str, arguments: tuple[Any, ...], reason: str) -> Exception:
    """typeclasses' error hook: the ShaxError for its error `kind`, at the user's line."""
    shown = ", ".join(map(describe, arguments))
    message = f"{function}: {reason}" + (f" (arguments: {shown})" if arguments else "")
    return at(_RAISED_AS[kind](message), current_source())


tc.set_error_hook(as_shax_error)
