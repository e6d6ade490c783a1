"""`Control`: what every operation holding definitions shares.

Its static parameters are definitions (a callee, branches, a loop's body, a rule), held
and compared by identity (hashing a definition would walk its bindings); it has several
results (`multi_result`: one binding defines them all), as many operands as its
definitions take (`variadic`), and is linear jointly in the operands at
`linear_positions` (a linear callee's tangents, a transposed loop's cotangents), the
others held fixed; with none, it is a user's operation, nonlinear in every operand.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import attrs

from shax.core.ir import Definition
from shax.core.primitive import Linearity, Primitive
from shax.core.printing import show_static


class Control(Primitive):
    multi_result: ClassVar[bool] = True
    variadic: ClassVar[bool] = True
    linearity: ClassVar[tuple[Linearity, ...]] = ()  # per operation: see `operand_linearity`

    @property
    def arity(self) -> int:  # type: ignore[override]  # per operation: its definitions' arguments
        return self.operand_count()

    def operand_count(self) -> int:
        """How many operands this operation takes (`arity`)."""
        raise NotImplementedError

    @property
    def num_results(self) -> int:
        raise NotImplementedError

    @property
    def linear_positions(self) -> tuple[int, ...]:
        """The operands it is linear in, jointly (none: a user's, nonlinear operation)."""
        return ()

    @property
    def operand_linearity(self) -> tuple[Linearity, ...]:
        linear = set(self.linear_positions)
        if not linear:
            return (Linearity.NONLINEAR,) * self.arity
        return tuple(Linearity.LINEAR if k in linear else Linearity.NON_DIFFERENTIABLE for k in range(self.arity))

    @property
    def linear_operands(self) -> tuple[int, ...]:  # type: ignore[override]  # per operation
        return self.linear_positions

    @property
    def bilinear_operands(self) -> tuple[int, ...]:  # type: ignore[override]  # per operation
        return ()

    def show(self, names: Mapping[int, str]) -> str | None:
        """Its name, then its static parameters (a definition by its printed name)."""
        params = [show_static(getattr(self, f.name), names) for f in attrs.fields(type(self)) if f.init]
        return " ".join([self.name, *params])

    def pruned(self, read: Sequence[bool]) -> tuple[Primitive, tuple[int, ...]] | None:
        """An operation computing fewer results, when some are not `read`, and the
        positions of the results it keeps (None: it computes them all, whatever is read)."""
        return None

    def callee(self) -> Definition | None:
        """The definition that computes its results from its operands as they are (a
        call's), which inlining copies in its place."""
        return None

    def with_rewritten(self, rewrite: Callable[[Definition], Definition]) -> Primitive:
        """Its definition fields (a definition, or a tuple of them: branches) rewritten; a
        rule traced on demand (a custom derivative's) is not a definition yet, and stays."""
        changes: dict[str, Definition | tuple[Definition, ...]] = {}
        for field in attrs.fields(type(self)):
            held = getattr(self, field.name) if field.init else None
            if isinstance(held, Definition):
                new = rewrite(held)
                if new is not held:
                    changes[field.name] = new
            elif isinstance(held, tuple) and held and all(isinstance(d, Definition) for d in held):
                news = tuple(map(rewrite, held))
                if any(n is not d for n, d in zip(news, held)):
                    changes[field.name] = news
        return attrs.evolve(self, **changes) if changes else self
