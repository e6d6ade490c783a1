"""Evaluation rules: a primitive and its operands' values -> its result's value.

A primitive that implements a typeclass function is evaluated by calling it
(`prim.apply`): numpy operands compute a value through the numpy instance, tracer
operands record the operation (so evaluating a definition on tracers inlines it into
their trace, which is how transforms compose). Only primitives without a typeclass
function (constants) register a rule of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import attrs

from shax.primitive import Primitive
from shax.rules.table import RuleTable


class EvalRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[Any], /) -> Any: ...


def apply_function(prim: Primitive, operands: Sequence[Any]) -> Any:
    """The default rule: the primitive's typeclass function on the operands."""
    return prim.apply(*operands)


def _derive(cls: type[Primitive]) -> EvalRule | None:
    function = cls.function
    if function is None:
        return None
    if attrs.fields(cls):
        return apply_function

    def call(prim: Primitive, operands: Sequence[Any]) -> Any:  # no static arguments: the function alone
        return function(*operands)

    return call


eval_rules: RuleTable[EvalRule] = RuleTable("eval", _derive)
eval_rule = eval_rules.register
