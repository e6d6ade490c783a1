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

from shax.ir import Definition
from shax.primitive import Arg
from shax.stages.linearize import linearize
from shax.transforms.arguments import abstract_types
from shax.transforms.staging import stage
from shax.transforms.transformed import check_function
from shax.types import TensorType


@attrs.frozen
class SavedResidual:
    """One residual: its type, its size in bytes, where it was computed, what saved it."""

    type: TensorType
    bytes: int
    source: str | None
    rule: str | None

    def __str__(self) -> str:
        return f"{self.type}  {self.bytes} bytes  {self.source or 'an argument'}  {self.rule or ''}".rstrip()


def saved_residuals(f: Callable[..., Any], *args: Any) -> list[SavedResidual]:
    """The residuals `grad(f)` saves at arguments like `args` (values, or their types),
    in the order its linear program takes them."""
    check_function("saved_residuals", f)
    in_tree, types = abstract_types("saved_residuals", args)
    defn = stage(f, in_tree, types).typed
    lin = linearize(defn, [k for k, t in enumerate(defn.arg_types) if t.dtype.is_float])
    return residuals_of(lin.linear, len(lin.linear.arg_types) - lin.num_residuals)


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
