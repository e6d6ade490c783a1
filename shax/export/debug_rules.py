"""The export rule of `debug_print` (`shax.primitives.debug`): `jax.debug.callback` of
the same `print_values` that evaluation and compiled code run, ordered, so that XLA prints once per
execution (once per iteration inside a loop) in program order.

Imports jax: only `shax.export.lowering` imports this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from shax import primitives as P
from shax.core.types import TensorType
from shax.export.rules import export_rule


# debug_print: jax.debug.callback(show, *operands), its empty result made in JAX
@export_rule(P.DebugPrint)
def _debug_print(prim: P.DebugPrint, operands: Sequence[Any], out: TensorType) -> Any:
    def show(*values: Any) -> None:
        prim.print_values(*(np.asarray(v) for v in values))

    jax.debug.callback(show, *operands, ordered=True)
    return jnp.zeros(0, jnp.float32)
