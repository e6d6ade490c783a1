"""The typeclass instance of symbolic zero tangents (`shax.rules.linearize.Zero`).

Zeros have the highest level, so a typeclass function with a zero operand runs here. Its
methods are not written one by one: the method of a typeclass function runs the zero
rule (`shax.rules.linearize.zero_rules`) of the primitive implementing it, derived from
that primitive's linearity unless the math needs more (`x + 0 = x`). Default methods
(`dot`, `sinh`) reduce to those.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import typeclasses as tc
from shax.core.primitive import DerivedInstance, Primitive, primitive_method
from shax.rules.linearize import Zero, zero_rules


class ZeroInstance(DerivedInstance):
    def level(self, value: Any) -> int:
        return sys.maxsize

    def shape(self, x: Any) -> tuple[int, ...]:
        return x.type.shape

    def derive(self, cls: type[Primitive], method: str) -> Callable[..., Any]:
        return primitive_method(cls, method, zero_rules.rule_for_class(cls))


tc.register_instance(ZeroInstance(), Zero)
