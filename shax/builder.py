"""The one way stages build IR: fresh names from a counter, bindings appended in order.
Linear time. (Hash-consing happens where values are traced, `shax.tracer`, and in `cse`.)"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from shax.ir import Binding, Definition, Var
from shax.primitives import Primitive
from shax.types import TensorType


class _Own(enum.Enum):
    ORIGIN = enum.auto()


# `emit(..., origin=OWN)`: the binding comes from the builder's own origin (a pass's name).
OWN = _Own.ORIGIN


class Builder:
    """`origin` is what the bindings it emits come from (a pass's name), unless told
    (a copy keeps its binding's origin, None for the user's own code)."""

    def __init__(self, origin: str | None = None) -> None:
        self.bindings: list[Binding] = []
        self.origin = origin

    def emit(
        self,
        prim: Primitive,
        args: Sequence[Var] = (),
        type: TensorType | None = None,
        source: str | None = None,
        origin: str | None | _Own = OWN,
    ) -> Var:
        var = Var(len(self.bindings), type)
        self.bindings.append(Binding(var, prim, tuple(args), source, self.origin if origin is OWN else origin))
        return var

    def keep(self, binding: Binding, args: Sequence[Var]) -> Var:
        """`binding`, with operands `args` (vars of this builder), as the next binding.
        The binding itself when it is already that (its number and operand vars
        unchanged: a walk that keeps a definition's first bindings as they are makes no
        copies of them), else a new one like it."""
        if (
            binding.var.id == len(self.bindings)
            and len(args) == len(binding.args)
            and all(a is b for a, b in zip(args, binding.args))
        ):
            self.bindings.append(binding)
            return binding.var
        return self.emit(binding.prim, args, binding.var.type, binding.source, binding.origin)

    def build(self, name: str, arg_types: Sequence[TensorType], outputs: Sequence[Var]) -> Definition:
        return Definition(name, tuple(arg_types), tuple(self.bindings), tuple(outputs))
