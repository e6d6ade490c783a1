"""JAX's arrays where shax takes numpy's: a `jax.Array` given to a transform (`grad`, `vmap`,
`jvp`, `vjp`, the numpy `jit`) or to a `shax.numpy` function is read as the numpy array it
holds (`np.asarray`, a copy from the device), so results are numpy arrays. JAX is never
imported here: a value can only be a JAX array if JAX is imported already. (The XLA `jit`
takes JAX arrays as they are, on their device.)
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def from_jax(value: Any) -> Any:
    """`value` as a numpy array if it is a JAX array; anything else as it is."""
    jax = sys.modules.get("jax")
    if jax is not None and isinstance(value, jax.Array) and not _is_traced(value):
        return np.asarray(value)
    return value


def from_jax_arguments(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A function's arguments with each JAX array, or one in a list or tuple among them
    (`concatenate([a, b])`), read as numpy's."""
    if "jax" not in sys.modules:
        return args
    return tuple(type(a)(map(from_jax, a)) if type(a) in (list, tuple) else from_jax(a) for a in args)


def _is_traced(value: Any) -> bool:
    # A JAX tracer (shax called inside jax.jit) has no value to read: left for shax's own error.
    core = sys.modules.get("jax.core")
    return core is not None and isinstance(value, core.Tracer)
