"""Staging a Python function for a transform: `stage` traces it at its arguments' types
(`shax.tracing.trace.trace_pytree`) and types the definition (`infer_types`), once per types
and tree structure (see `shax.transforms.cache`).

A function that closes over a tracer of an enclosing trace (the outer variable of a
nested `grad`) reads it through an extra argument: a constant of the inner transform.
The staging lists those tracers (`captured`); what a transform builds from it depends
on them, so it is never cached.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from shax.core.ir import Definition
from shax.core.pytree import TreeDef, unflatten
from shax.core.types import TensorType
from shax.stages.infer_types import infer_types
from shax.tracing.trace import Traced, trace_pytree
from shax.tracing.tracer import Tracer


@attrs.frozen
class Staging:
    """A function traced at some argument types: its typed definition (the declared
    argument leaves, then the captured outer tracers), and how its results nest."""

    typed: Definition
    in_tree: TreeDef
    out_tree: TreeDef
    captured: tuple[Tracer, ...]


def stage(fn: Callable[..., Any], in_tree: TreeDef, types: Sequence[TensorType]) -> Staging:
    """Trace `fn` on tracers of `types` (nested as `in_tree`) and type its definition."""
    traced: Traced = trace_pytree(fn, unflatten(in_tree, types))
    return Staging(infer_types(traced.defn), in_tree, traced.out_tree, traced.captured)
