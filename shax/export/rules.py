"""Export rules: how each primitive is written in `jax.lax` (`shax.export.to_jax` runs
a Definition with them). One more `RuleTable`, keyed by primitive class like the
stages' tables (`shax.rules`):

    rule(prim, operands, out) -> a JAX value        e.g. lax.sin(x), lax.add(x, y)

`operands` are JAX values (tracers under `jax.jit`, arrays otherwise; an argument may
still be a numpy array) and `out` is the binding's result type, which the rules use to
make shax's implicit numpy broadcasting explicit for lax. A `multi_result` primitive
(`call`) gets the tuple of its results' types and returns all its results.

This module does not import jax: the rules themselves are registered in
`shax.export.lax_rules`, which does, and is imported only when a program is exported.
A primitive without a rule (nothing is derived) is a ShaxError naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from shax.core.primitive import Primitive
from shax.rules.table import RuleTable


class ExportRule(Protocol):
    def __call__(self, prim: Any, operands: Sequence[Any], out: Any, /) -> Any: ...


def _derive(cls: type[Primitive]) -> ExportRule | None:
    """An elementwise primitive's rule from the `jax.lax` function its declaration names
    (`export="sin"`): that function on the operands broadcast to the result's shape."""
    name = getattr(cls, "lax_name", None)
    return None if name is None else _lax_elementwise(name)


def _lax_elementwise(name: str) -> ExportRule:
    def rule(prim: Any, operands: Sequence[Any], out: Any) -> Any:
        from shax.export.lax_rules import elementwise_on  # imports jax: only when a program is exported

        return elementwise_on(name, operands, out)

    return rule


export_rules: RuleTable[ExportRule] = RuleTable("export to JAX", _derive)
export_rule = export_rules.register
