"""`shax.checkpoint(fn, policy=None, static_argnums=())` (alias `shax.remat`), JAX's
rematerialization: a checkpointed function's calls on tracers are calls of one definition
per argument types (as a `subgraph`'s), whose derivative saves only what `policy`
(`shax.checkpoint_policies`; default `nothing_saveable`) saves and recomputes the rest in
the backward pass: `shax.stages.unzip` with that policy, step (ii) of "You Only
Linearize Once". On numpy values it runs `fn` as it is. `shax.checkpoint_name(x, name)`
names a value for `save_only_these_names`; `shax.saved_residuals(f, *args)` lists what
`grad(f)` keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from shax.control.callees import checkpointed
from shax.core.errors import ShaxTypeError, at
from shax.core.location import current_source
from shax.core.pytree import TreeDef
from shax.core.types import TensorType
from shax.primitives.checkpoint_name import CheckpointName
from shax.stages.checkpoint_policies import nothing_saveable
from shax.stages.unzip import Policy
from shax.transforms.static import StaticCall, checked_statics
from shax.transforms.subgraph import Subgraph, _BuiltSubgraph
from shax.transforms.transformed import check_function


def checkpoint_name(x: Any, name: str) -> Any:
    """`x`, named `name` for a checkpoint policy: on a tracer, a `checkpoint_name` binding."""
    if not isinstance(name, str):
        message = f"checkpoint_name: the name must be a string, got {type(name).__name__} {name!r:.60}"
        raise at(ShaxTypeError(message), current_source())
    return CheckpointName(name).apply(x)


class Checkpoint(Subgraph):
    """A function whose traced calls' derivatives recompute what `policy` does not save."""

    kind = "checkpoint"

    def __init__(self, fn: Callable[..., Any], policy: Policy) -> None:
        super().__init__(fn)
        self.policy = policy

    def key(self) -> Hashable:
        return (self.policy,)

    def build(self, in_tree: TreeDef, types: tuple[TensorType, ...]) -> _BuiltSubgraph:
        built = super().build(in_tree, types)
        checkpointed(built.defn, self.policy)
        return built


def checkpoint(
    fn: Callable[..., Any], policy: Policy | None = None, static_argnums: int | tuple[int, ...] = ()
) -> Callable[..., Any]:
    """`fn`, whose derivative saves only what `policy` saves (default: its arguments) and
    recomputes the rest in the backward pass. The arguments at `static_argnums` are
    Python values (hashable), fixed per distinct value, as `jit`'s."""
    check_function("checkpoint", fn)
    if policy is not None and not callable(policy):
        message = f"checkpoint: policy must be a function (prim, *operand_types) -> bool, got {policy!r:.60}"
        raise at(ShaxTypeError(message), current_source())
    chosen = nothing_saveable if policy is None else policy
    statics = checked_statics(fn, static_argnums, None)
    if statics is None:
        return Checkpoint(fn, chosen)
    # the static values (by type and value) -> the checkpoint of fn with them fixed
    fixed: dict[Hashable, Checkpoint] = {}

    def checkpointed_fn(*args: Any, **kwargs: Any) -> Any:
        call: StaticCall = statics.split(fn, args, kwargs)
        found = fixed.get(call.key)
        if found is None:
            found = fixed[call.key] = Checkpoint(call.staged(fn), chosen)
        return found(*call.dynamic)

    checkpointed_fn.__name__ = checkpointed_fn.__qualname__ = f"checkpoint_{getattr(fn, '__name__', 'fn')}"
    return checkpointed_fn


remat = checkpoint
