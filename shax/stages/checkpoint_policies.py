"""Checkpoint policies (JAX's `jax.checkpoint_policies`): which values of a checkpointed
function its derivative saves, as residuals, instead of recomputing them in the backward
pass. `shax.stages.unzip` asks `policy(prim, *operand_types)` for each primal value the
linear program reads; the function's arguments are always saved.

    nothing_saveable                   save only the arguments: recompute everything else
    everything_saveable                save every residual (no checkpointing)
    dots_saveable                      save the results of dot_general, recompute the rest
    dots_with_no_batch_dims_saveable   the same, for dot_generals without batch dimensions
    save_only_these_names(*names)      save the values named by `shax.checkpoint_name`
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source
from shax.core.primitive import Primitive
from shax.primitives import CheckpointName, DotGeneral

__all__ = [
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    "nothing_saveable",
    "save_only_these_names",
]


def nothing_saveable(prim: Primitive, *operand_types: Any) -> bool:
    return False


def everything_saveable(prim: Primitive, *operand_types: Any) -> bool:
    return True


def dots_saveable(prim: Primitive, *operand_types: Any) -> bool:
    return isinstance(prim, DotGeneral)


def dots_with_no_batch_dims_saveable(prim: Primitive, *operand_types: Any) -> bool:
    return isinstance(prim, DotGeneral) and not prim.lhs_batch


def save_only_these_names(*names: str) -> Callable[..., bool]:
    """The policy saving only the values `shax.checkpoint_name(x, name)` named, for these names."""
    for name in names:
        if not isinstance(name, str):
            message = f"save_only_these_names: names must be strings, got {type(name).__name__} {name!r:.60}"
            raise at(ShaxTypeError(message), current_source())
    wanted = frozenset(names)

    def policy(prim: Primitive, *operand_types: Any) -> bool:
        return isinstance(prim, CheckpointName) and prim.label in wanted

    return policy
