"""Type rules: a primitive and its operands' types -> its result's type, or a ShaxError
naming the primitive and the types (`prim.fail`). Used by the tracer as it records each
operation (so a shape error points at the user's line), by `infer_types`, `check_types`,
and every stage that builds operations.

    @type_rule(Reshape)
    def _reshape_type(prim: Reshape, operands: Sequence[TensorType]) -> TensorType:
        (x,) = operands
        ...

`result_type` memoizes them: a rule is a pure function of the primitive (with its static
parameters) and the operand types, and a large program asks the same few questions over
and over (a 100,000-operation program has a few dozen distinct cases). A rule that raises
is not remembered, so every bad operation gets its own error.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol, cast

import numpy as np

from shax.core.errors import ShaxValueError
from shax.core.primitive import Primitive
from shax.core.types import TensorType, TooLarge
from shax.rules.table import RuleTable


class TypeRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[TensorType], /) -> Any:
        """The result's TensorType; a tuple of them for a `multi_result` primitive."""


type_rules: RuleTable[TypeRule] = RuleTable("type")
type_rule = type_rules.register


def result_type(prim: Primitive, *operand_types: TensorType) -> TensorType:
    """The type `prim` gives on operands of `operand_types` (a ShaxError if it rejects them,
    or if the result would be larger than any array can be)."""
    if prim.multi_result:
        raise prim.fail("has several results: ask for result_types", *operand_types)
    return cast(TensorType, _checked(prim, operand_types))


def result_types(prim: Primitive, *operand_types: TensorType) -> tuple[TensorType, ...]:
    """The types of each of `prim`'s results (one for most primitives)."""
    types = _checked(prim, operand_types)
    return types if prim.multi_result else (types,)


def _checked(prim: Primitive, operand_types: tuple[TensorType, ...]) -> Any:
    try:
        if not operand_types:
            # A constant: compared by identity, and remembering it would keep its array alive.
            return type_rules[prim](prim, ())
        return _memoized(prim, *operand_types)
    except TooLarge as error:
        raise prim.fail(error.problem, *operand_types, error=ShaxValueError) from None


# Bounded, so a long session with many shapes does not grow it without end.
@functools.lru_cache(maxsize=4096)
def _memoized(prim: Primitive, *operand_types: TensorType) -> Any:
    return type_rules[prim](prim, operand_types)


def broadcast_shapes(prim: Primitive, *types: TensorType) -> tuple[int, ...]:
    """numpy's broadcasting of the operands' shapes, or an error naming the operation."""
    shapes = {t.shape for t in types if t.shape}
    if len(shapes) <= 1:
        return next(iter(shapes), ())
    try:
        return tuple(np.broadcast_shapes(*(t.shape for t in types)))
    except ValueError:
        raise prim.fail("shapes do not broadcast together", *types) from None
