"""`shax.xpr(f, *args)`: the typed IR of any function, transformed or not, at the types
of `args` (values, or TensorTypes, in pytrees), cleaned by the default passes.

Transformed functions run their definitions through `evaluate`, which inlines them into
the enclosing trace, so tracing `grad(f)` or `jvp`'s caller yields the whole program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shax import passes
from shax.core.ir import Definition
from shax.core.pytree import unflatten
from shax.stages.infer_types import infer_types
from shax.tracing.trace import check_function, trace
from shax.transforms.arguments import abstract_types


def xpr(fn: Callable[..., Any], *args: Any) -> Definition:
    """The cleaned, typed Definition of `fn` at the types of `args`."""
    check_function("xpr", fn)
    in_tree, types = abstract_types("xpr", args)
    return passes.cleanup(infer_types(trace(fn, *unflatten(in_tree, types))))
