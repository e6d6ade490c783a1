"""A primitive's result type from its operands' types: its type rule, memoized.

Type rules are pure functions of the primitive (with its static parameters) and the
operand types, and a large program asks the same few questions over and over: the
tracer, `infer_types`, `check_types`, linearize and transpose each ask once per
operation, and a 100,000-operation program has a few dozen distinct cases. A rule that
raises is not remembered, so every bad operation gets its own error.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from shax.rules import rule_for

if TYPE_CHECKING:
    from shax.primitives.base import Primitive
    from shax.types import TensorType


def result_type(prim: Primitive, *operand_types: TensorType) -> TensorType:
    """The type `prim` gives on operands of `operand_types` (a ShaxError if it rejects them)."""
    if not operand_types:
        # A constant: compared by identity, and remembering it would keep its array alive.
        return rule_for("type", prim)(prim)
    return _memoized(prim, *operand_types)


# Bounded, so a long session with many shapes does not grow it without end.
@functools.lru_cache(maxsize=4096)
def _memoized(prim: Primitive, *operand_types: TensorType) -> TensorType:
    return rule_for("type", prim)(prim, *operand_types)
