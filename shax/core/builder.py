"""The one way stages build IR: fresh names from a counter, bindings appended in order.
Linear time. (Hash-consing happens where values are traced, `shax.tracing.tracer`, and in `cse`.)"""

from __future__ import annotations

import enum
from collections.abc import Sequence

from shax.core.ir import Binding, Definition, Var
from shax.core.primitive import Primitive
from shax.core.types import TensorType


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
        self.num_vars = 0  # vars are numbered in the order bindings define them

    def emit(
        self,
        prim: Primitive,
        args: Sequence[Var] = (),
        type: TensorType | None = None,
        source: str | None = None,
        origin: str | None | _Own = OWN,
    ) -> Var:
        var = Var(self.num_vars, type)
        self.num_vars += 1
        self.bindings.append(Binding((var,), prim, tuple(args), source, self.origin if origin is OWN else origin))
        return var

    def emit_results(
        self,
        prim: Primitive,
        args: Sequence[Var],
        types: Sequence[TensorType | None],
        source: str | None = None,
        origin: str | None | _Own = OWN,
    ) -> tuple[Var, ...]:
        """One binding defining a var per entry of `types` (None: untyped), numbered in order."""
        first = self.num_vars
        results = tuple(Var(first + k, t) for k, t in enumerate(types))
        self.num_vars += len(results)
        self.bindings.append(Binding(results, prim, tuple(args), source, self.origin if origin is OWN else origin))
        return results

    def emit_like(self, binding: Binding, args: Sequence[Var], prim: Primitive | None = None) -> tuple[Var, ...]:
        """A binding like `binding` (its types, source and origin; `prim` in place of its
        primitive if given) on operands `args`: its new vars."""
        types = [v.type for v in binding.vars]
        return self.emit_results(binding.prim if prim is None else prim, args, types, binding.source, binding.origin)

    def keep(self, binding: Binding, args: Sequence[Var]) -> Var:
        """`binding`, with operands `args` (vars of this builder), as the next binding.
        The binding itself when it is already that (its number and operand vars
        unchanged: a walk that keeps a definition's first bindings as they are makes no
        copies of them), else a new one like it."""
        (var,) = self.keep_all(binding, args)
        return var

    def keep_all(self, binding: Binding, args: Sequence[Var]) -> tuple[Var, ...]:
        """`keep` for a binding of any number of results: its vars here."""
        if (
            all(v.id == self.num_vars + k for k, v in enumerate(binding.vars))
            and len(args) == len(binding.args)
            and all(a is b for a, b in zip(args, binding.args))
        ):
            self.bindings.append(binding)
            self.num_vars += len(binding.vars)
            return binding.vars
        return self.emit_like(binding, args)

    def build(self, name: str, arg_types: Sequence[TensorType], outputs: Sequence[Var]) -> Definition:
        return Definition(name, tuple(arg_types), tuple(self.bindings), tuple(outputs))
