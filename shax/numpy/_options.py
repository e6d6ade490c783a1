"""numpy's keyword arguments that `shax.numpy` takes without changing what it computes:
each is validated as numpy validates it (a bad value is a ShaxValueError naming the
function and the keyword, as numpy's own error names it), or, where shax cannot do what
it asks (an `out` array, a `where` mask, a `dtype` to compute in), refused unless it is
numpy's default. None is silently ignored.
"""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np

from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.location import current_source

CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
ORDERS = ("C", "F", "A", "K")

# numpy's ufunc keywords and their defaults: `order` and `casting` only say how numpy lays
# out or converts a result shax computes the same way (validated); the others change the
# result (refused unless at their default).
UFUNC_DEFAULTS: dict[str, Any] = {
    "out": None, "where": True, "casting": "same_kind", "order": "K", "dtype": None, "subok": True, "signature": None,
}  # fmt: skip


def fail(op: str, message: str, error: type[ShaxTypeError | ShaxValueError] = ShaxValueError) -> Exception:
    return at(error(f"{op}: {message}"), current_source())


def one_of(op: str, keyword: str, value: Any, allowed: tuple[Any, ...]) -> None:
    """Nothing if `value` is one of `allowed` (strings: numpy's own spellings)."""
    if isinstance(value, str) and value in allowed:
        return
    if not isinstance(value, str) and any(value is a for a in allowed):
        return
    kind = ShaxValueError if isinstance(value, str) else ShaxTypeError
    shown = ", ".join(map(repr, allowed))
    raise fail(op, f"{keyword} must be one of {shown} (got {reprlib.repr(value)})", kind)


def unsupported(op: str, keyword: str, value: Any, default: Any) -> None:
    """Nothing if `value` is numpy's default for `keyword`, which shax cannot otherwise do."""
    if not _is_default(value, default):
        raise fail(op, f"{keyword}={reprlib.repr(value)} is not supported (only numpy's default, {default!r})")


def _is_default(value: Any, default: Any) -> bool:
    if default is None or isinstance(default, str):
        return value is None if default is None else isinstance(value, str) and value == default
    # a bool default (where=True, subok=True): numpy's bool scalars mean the same
    return isinstance(value, (bool, np.bool_)) and bool(value) == default


def ufunc_options(op: str, options: dict[str, Any]) -> None:
    """numpy's ufunc keywords given to `op`: `casting` and `order` validated, the others
    refused unless at numpy's defaults, and a keyword numpy does not have refused."""
    for keyword, value in options.items():
        if keyword not in UFUNC_DEFAULTS:
            raise fail(op, f"got an unexpected keyword argument {keyword!r}", ShaxTypeError)
        if keyword == "casting":
            one_of(op, keyword, value, CASTINGS)
        elif keyword == "order":
            one_of(op, keyword, value, ORDERS)
        else:
            unsupported(op, keyword, value, UFUNC_DEFAULTS[keyword])
