"""`shax.saved_residuals(f, *args)` (JAX's `print_saved_residuals`): what the gradient of
`f` at arguments like `args` keeps from its forward pass for its backward pass: each
residual of its linearization, with its type, its size, the user's line that computed it
and the rule that saved it (the first linear binding reading it). A checkpointed call
(`shax.checkpoint`) keeps only what its policy saves.

    for r in shax.saved_residuals(f, x, w): print(r)
    f64[128, 512]  524288 bytes  model.py:7  linearize rule of tanh
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from shax.core.ir import Definition, LinearizedDefinition
from shax.core.primitive import Arg
from shax.core.types import TensorType
from shax.passes.forward_identities import forwarded, forwarded_results
from shax.stages.linearize import linearize
from shax.transforms.arguments import abstract_types
from shax.transforms.staging import stage
from shax.transforms.transformed import check_function


@attrs.frozen
class SavedResidual:
    """One residual: its type, its size in bytes, where it was computed, what saved it, and
    `argument`, the position of f's (flattened) argument it is, if it is one (passed on
    unchanged, through a checkpointed call too): the caller holds that array, so keeping
    it costs no memory of its own (JAX's "from the argument")."""

    type: TensorType
    bytes: int
    source: str | None
    rule: str | None
    argument: int | None = None

    def __str__(self) -> str:
        where = f"argument {self.argument}" if self.argument is not None else self.source or "an argument"
        return f"{self.type}  {self.bytes} bytes  {where}  {self.rule or ''}".rstrip()


def saved_residuals(f: Callable[..., Any], *args: Any) -> list[SavedResidual]:
    """The residuals `grad(f)` saves at arguments like `args` (values, or their types),
    in the order its linear program takes them."""
    check_function("saved_residuals", f)
    in_tree, types = abstract_types("saved_residuals", args)
    defn = stage(f, in_tree, types).typed
    lin = linearize(defn, [k for k, t in enumerate(defn.arg_types) if t.dtype.is_float])
    arguments = residual_arguments(lin)
    found = residuals_of(lin.linear, len(lin.linear.arg_types) - lin.num_residuals)
    return [attrs.evolve(r, argument=k) for r, k in zip(found, arguments)]


def residual_arguments(lin: LinearizedDefinition) -> list[int | None]:
    """For each residual of `lin`, the primal program's argument it is (passed on unchanged:
    `forward_identities`' rules, a call's output that is its operand), or None."""
    primal = lin.primal
    binding = {v.id: (b, k) for b in primal.bindings for k, v in enumerate(b.vars)}  # var id -> its binding, result
    found: list[int | None] = []
    for var in primal.outputs[len(primal.outputs) - lin.num_residuals :]:
        b, k = binding[var.id]
        while not isinstance(b.prim, Arg):
            passed = forwarded_results(b, b.args)[k] if b.prim.multi_result else forwarded(b, b.args)
            if passed is None:
                break
            b, k = binding[passed.id]
        found.append(b.prim.index if isinstance(b.prim, Arg) else None)
    return found


def residuals_of(linear: Definition, num_tangents: int) -> list[SavedResidual]:
    """The residual arguments of `linear` (those after its `num_tangents` tangents)."""
    reader: dict[int, str | None] = {}  # residual var id -> the origin of its first reader
    residual_vars = {b.vars[0].id for b in linear.bindings if isinstance(b.prim, Arg) and b.prim.index >= num_tangents}
    for b in linear.bindings:
        for a in b.args:
            if a.id in residual_vars:
                reader.setdefault(a.id, b.origin)
    found = []
    for b in linear.bindings:
        var = b.vars[0] if isinstance(b.prim, Arg) else None
        if var is not None and var.id in residual_vars and var.type is not None:
            t = var.type
            size = int(np.prod(t.shape, dtype=np.int64)) * np.dtype(t.dtype.numpy).itemsize
            found.append((b.prim.index, SavedResidual(t, size, b.source, reader.get(var.id))))  # type: ignore[attr-defined]
    return [r for _, r in sorted(found, key=lambda pair: pair[0])]
