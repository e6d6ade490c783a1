"""The typeclass instance of symbolic zero tangents (`shax.rules.linearize.Zero`).

Zeros have the highest level, so a typeclass function with a zero operand runs here. Its
methods are not written one by one: the method of a typeclass function runs the zero
rule (`shax.rules.linearize.zero_rules`) of the primitive implementing it, derived from
that primitive's linearity unless the math needs more (`x + 0 = x`). Default methods
(`dot`, `sinh`) reduce to those.
"""

from __future__ import annotations

import sys
from typing import Any

import attrs

import typeclasses as tc
from shax.primitive import implementing
from shax.rules.linearize import Zero, zero_rules


class ZeroInstance(tc.Instance):
    def level(self, value: Any) -> int:
        return sys.maxsize

    def shape(self, x: Any) -> tuple[int, ...]:
        return x.type.shape

    def __getattr__(self, method: str) -> Any:
        cls = None if method.startswith("_") else implementing(method)
        if cls is None:
            return super().__getattr__(method)
        rule, arity = zero_rules.rule_for_class(cls), cls.arity
        plain = None if attrs.fields(cls) else cls()  # no static parameters: one primitive serves every call

        def run(self: ZeroInstance, *args: Any) -> Any:
            return rule(cls.from_static_args(*args[arity:]) if plain is None else plain, args[:arity])

        run.__name__ = method
        setattr(ZeroInstance, method, run)  # derived once, then a plain method
        return getattr(self, method)


tc.register_instance(ZeroInstance(), Zero)
