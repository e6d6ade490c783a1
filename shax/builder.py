"""The one way stages build IR: fresh names from a counter, optional hash-consed
emission (an operation already emitted on the same operands returns its old var),
bindings appended in order. Linear time."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shax.ir import Binding, Definition, Var
from shax.primitives import Primitive
from shax.types import TensorType


class Builder:
    def __init__(self, hash_cons: bool = False) -> None:
        self.bindings: list[Binding] = []
        # (primitive's cons key, operand ids) -> the var that already holds that value
        self._emitted: dict[tuple[Any, ...], Var] | None = {} if hash_cons else None

    def emit(
        self,
        prim: Primitive,
        args: Sequence[Var] = (),
        type: TensorType | None = None,
        source: str | None = None,
    ) -> Var:
        if self._emitted is not None:
            key = (prim.cons_key(), *(a.id for a in args))
            found = self._emitted.get(key)
            if found is not None:
                return found
        var = Var(len(self.bindings), type)
        self.bindings.append(Binding(var, prim, tuple(args), source))
        if self._emitted is not None:
            self._emitted[key] = var
        return var

    def keep(self, binding: Binding, args: Sequence[Var]) -> Var:
        """`binding`, with operands `args` (vars of this builder), as the next binding.
        The binding itself when it is already that (its number and operand vars
        unchanged: a walk that keeps a definition's first bindings as they are makes no
        copies of them), else a new one like it."""
        if (
            self._emitted is None
            and binding.var.id == len(self.bindings)
            and len(args) == len(binding.args)
            and all(a is b for a, b in zip(args, binding.args))
        ):
            self.bindings.append(binding)
            return binding.var
        return self.emit(binding.prim, args, binding.var.type, binding.source)

    def build(self, name: str, arg_types: Sequence[TensorType], outputs: Sequence[Var]) -> Definition:
        return Definition(name, tuple(arg_types), tuple(self.bindings), tuple(outputs))
