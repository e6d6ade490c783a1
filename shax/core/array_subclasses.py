"""numpy's array subclasses whose operations are not an ndarray's: `np.matrix` (`*` is a
matrix product, every result has two axes) and masked arrays (`np.ma`: masked elements
are skipped). shax computes an ndarray's answer, which is not numpy's for them, and numpy
would wrap it back into the subclass: so they are refused wherever a value enters shax
(typeclass functions on numpy values, `shax.numpy`, `shax.nn`, the transforms'
arguments), by a ShaxTypeError naming the function, the type and what to pass instead.

Other ndarray subclasses (`np.memmap`, a user's subclass that adds attributes) are read
as the ndarray data they hold, as `np.asarray` reads them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source

# refused subclass -> its name and what to pass instead
REFUSED: dict[type, tuple[str, str]] = {
    np.matrix: ("numpy.matrix", "np.asarray(m)"),
    np.ma.MaskedArray: ("numpy.ma.MaskedArray", "m.filled(value) or m.compressed()"),
}


def refusal(op: str | None, value: Any) -> ShaxTypeError | None:
    """The error for `value` given to `op` (None: the caller names it) if it is a refused
    subclass, else None."""
    for cls, (name, instead) in REFUSED.items():
        if isinstance(value, cls):
            message = f"does not take {name} (its operations are not an ndarray's); pass {instead}"
            return ShaxTypeError(message if op is None else f"{op}: {message}")
    return None


def refuse_array_subclass(op: str, *values: Any) -> None:
    """Nothing unless one of `values` (or of a list or tuple among them) is a refused
    subclass: then its ShaxTypeError, at the user's line."""
    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, np.ndarray) and type(item) is not np.ndarray:
                error = refusal(op, item)
                if error is not None:
                    raise at(error, current_source())


class RefusingInstance:
    """The typeclass instance of the refused subclasses: every typeclass function given
    one (alone, or with tracers, whose instance would otherwise lift it as a constant)
    refuses it. Its level is above any trace's, so that it is the one picked."""

    def level(self, value: Any) -> int:
        return 2**31

    def __getattr__(self, method: str) -> Any:
        if method.startswith("__"):  # protocols probed by copy, pickle, ...: not typeclass functions
            raise AttributeError(method)

        def refuse(*operands: Any) -> Any:
            refuse_array_subclass(method, *operands)
            raise AssertionError(f"{method}: no refused subclass among {operands!r}")  # pick chose this instance

        return refuse
