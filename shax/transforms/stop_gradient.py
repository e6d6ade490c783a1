"""`shax.stop_gradient(x)` (JAX's `lax.stop_gradient`): x's value, with a zero derivative,
leaf by leaf over a pytree. Each tracer leaf goes through the `stop_gradient` primitive
(`shax.primitives.stop_gradient`); arrays and numbers, constants of every transform
already, come back as they are."""

from __future__ import annotations

from typing import Any

import typeclasses as tc
from shax.core.errors import ShaxError, reworded
from shax.core.pytree import flatten, unflatten


def stop_gradient(x: Any) -> Any:
    """x, as a constant of differentiation: `grad(lambda x: stop_gradient(x) * x)(3.0)` is 3."""
    try:
        leaves, tree = flatten(x)
    except ShaxError as error:
        raise reworded(error, f"stop_gradient: {error}") from None
    return unflatten(tree, [tc.stop_gradient(leaf) for leaf in leaves])
