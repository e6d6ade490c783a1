"""`shax.xpr(f, *args)`: the typed IR of any function, transformed or not, at the types
of `args` (values, or TensorTypes, in pytrees), cleaned by the default passes.

Transformed functions run their definitions through `evaluate`, which inlines them into
the enclosing trace, so tracing `grad(f)` or `jvp`'s caller yields the whole program.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from shax import passes
from shax.errors import ShaxTypeError, at
from shax.ir import Definition
from shax.tracing import function_location, function_name
from shax.transforms.staging import abstract_types, stage


def xpr(fn: Callable[..., Any], *args: Any) -> Definition:
    """The cleaned, typed Definition of `fn` at the types of `args`."""
    in_tree, types = abstract_types("xpr", args)
    staging = stage(fn, in_tree, types)
    if staging.captured:
        message = (
            f"xpr: {function_name(fn)} uses {len(staging.captured)} value(s) traced by an enclosing trace; "
            "pass them as arguments instead"
        )
        raise at(ShaxTypeError(message), function_location(fn))
    return passes.cleanup(staging.typed)
