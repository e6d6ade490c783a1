"""Cost rules: how many floating-point operations (flops) one binding performs, for
`shax.stats`:

    rule(prim, operand_types, result_type) -> int

The count is of arithmetic on elements, the textbook convention: a multiply-add is two
flops, moving or reshaping data is free. Derived from a primitive's traits when not
written: an `elementwise` one costs one flop per result element; a `shape_only` one
(reshape, broadcast, transpose, slice, pad, gather, convert, ...) and the structural
`arg` cost nothing. Any other primitive writes its rule under its declaration
(`dot_general`, the reductions, `call`); one with neither is a ShaxError naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from shax.core.primitive import Primitive
from shax.core.types import TensorType
from shax.rules.table import RuleTable


class CostRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[TensorType], out: Any, /) -> int:
        """The flops of one run; `out` is the result's type (for a `multi_result`
        primitive, the tuple of its results' types)."""


# elementwise: one operation per result element
def per_result_element(prim: Primitive, operands: Sequence[TensorType], out: TensorType) -> int:
    return out.size


# data movement: no arithmetic
def free(prim: Primitive, operands: Sequence[TensorType], out: TensorType) -> int:
    return 0


# a reduction over some axes: one operation per input element (n - 1 per reduced group, rounded up)
def per_input_element(prim: Primitive, operands: Sequence[TensorType], out: TensorType) -> int:
    return operands[0].size


def _derived(cls: type[Primitive]) -> CostRule | None:
    if cls.structural or cls.shape_only:
        return free
    if cls.elementwise:
        return per_result_element
    return None


cost_rules: RuleTable[CostRule] = RuleTable("cost", _derived)
cost_rule = cost_rules.register
