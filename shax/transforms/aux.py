"""`has_aux=True` (JAX's): the function returns a pair `(out, aux)`; only `out` is
differentiated, `aux` (any pytree) comes back as it is, computed by the same program.

The staged function is split in two definitions over the same arguments, the one
computing `out` (which is linearized) and the one computing `aux`; the transform's
program and the aux definition are then `merged` into one program, whose shared work
(the forward computation) the trace's hash-consing and `cse` compute once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from shax import passes
from shax.core.errors import ShaxTypeError, at
from shax.core.ir import Definition
from shax.core.location import current_source
from shax.core.pytree import TreeDef
from shax.stages.infer_types import infer_types
from shax.tracing.evaluate import evaluate
from shax.tracing.trace import function_location, function_name, trace_pytree
from shax.transforms.staging import Staging


def checked_has_aux(what: str, has_aux: Any) -> bool:
    """`has_aux`, which must be a bool (it is part of the cache key)."""
    if not isinstance(has_aux, bool):
        raise at(ShaxTypeError(f"{what}: has_aux must be True or False, got {has_aux!r}"), current_source())
    return has_aux


@attrs.frozen
class Aux:
    """What a function returns beside its differentiated output: a definition over the
    staged function's arguments, and how its results nest."""

    defn: Definition
    tree: TreeDef

    @property
    def num_leaves(self) -> int:
        return self.tree.num_leaves


def split_aux(what: str, fn: Callable[..., Any], staging: Staging) -> tuple[Staging, Aux]:
    """(the staging of `out`, the `aux` part) of a function returning `(out, aux)`."""
    tree = staging.out_tree
    if tree.kind not in ("tuple", "list") or len(tree.children) != 2:
        shapes = {"leaf": "a single value", "none": "None"}
        returned = shapes.get(tree.kind, f"a {tree.kind} of {len(tree.children)}: {tree}")
        message = f"{what}: has_aux=True requires {function_name(fn)} to return a pair (output, aux), but it returns "
        message += returned
        raise at(ShaxTypeError(message), function_location(fn) or current_source())
    out_tree, aux_tree = tree.children
    typed, split = staging.typed, out_tree.num_leaves
    out = passes.dce(attrs.evolve(typed, outputs=typed.outputs[:split]))
    aux = passes.dce(attrs.evolve(typed, outputs=typed.outputs[split:]))
    return Staging(out, staging.in_tree, out_tree, staging.captured), Aux(aux, aux_tree)


def merged(first: Definition, second: Definition) -> Definition:
    """One definition over `first`'s arguments returning `first`'s outputs, then `second`'s
    (whose arguments are a prefix of `first`'s), the work they share done once."""

    def both(*args: Any) -> list[Any]:
        return [*evaluate(first, *args), *evaluate(second, *args[: len(second.arg_types)])]

    traced = trace_pytree(both, first.arg_types, first.name)
    return passes.cleanup(infer_types(traced.defn))
