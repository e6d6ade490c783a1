"""`Program`: a definition a transform built, run on tracers by `evaluate` and on values by
its compiled numpy source (`shax.codegen`), compiled only once it has run twice (or at
once, for `jit`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shax.codegen import Compiled, compile_definition
from shax.evaluate import evaluate
from shax.ir import Definition
from shax.passes.fold_negations import folded
from shax.tracer import Tracer


class Program:
    """A definition a transform built, and how it runs: on tracers through `evaluate`,
    which inlines it into their trace; on values through its compiled numpy source
    (`shax.codegen`) — at once if `compile_now`, else from its second run on values, so
    a program run once (a one-off vjp) does not pay for compiling. Threads running it
    for the first times at once may each compile it: the same source, either one kept."""

    __slots__ = ("defn", "_compiled", "_runs")

    def __init__(self, defn: Definition, compile_now: bool = False) -> None:
        self.defn = defn
        self._compiled: Compiled | None = _compile(defn) if compile_now else None
        self._runs = 0

    @property
    def compiled(self) -> Compiled:
        if self._compiled is None:
            self._compiled = _compile(self.defn)
        return self._compiled

    def __call__(self, args: Sequence[Any]) -> list[Any]:
        for a in args:  # (a loop: this runs on every call of every transformed function)
            if type(a) is Tracer:
                return evaluate(self.defn, *args)
        if self._compiled is None:
            self._runs += 1
            if self._runs == 1:
                return evaluate(self.defn, *args)
        # The transforms pass as many arguments as the definition takes (they built both),
        # so the generated function is called directly; it checks their types itself.
        return (self._compiled or self.compiled).function(*args)


def _compile(defn: Definition) -> Compiled:
    # Negations folded into sums: fewer numpy calls, the same values (up to a NaN's sign).
    return compile_definition(folded(defn))
