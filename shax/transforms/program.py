"""`Program`: a definition a transform built, run on tracers by `evaluate` and on values by
its compiled numpy source (`shax.codegen`), compiled only once it has run twice (or at
once, for `jit`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from shax.codegen import Compiled, compile_definition
from shax.core.errors import ShaxError, ShaxValueError, at
from shax.core.ir import Definition
from shax.core.location import current_source
from shax.passes.fold_negations import folded
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer


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
        try:
            if self._compiled is None:
                self._runs += 1
                if self._runs == 1:
                    return _unaliased(evaluate(self.defn, *args), args)
            # The transforms pass as many arguments as the definition takes (they built both),
            # so the generated function is called directly; it checks their types itself.
            return (self._compiled or self.compiled).function(*args)
        except MemoryError as error:
            raise out_of_memory(self.defn, error) from None


def out_of_memory(defn: Definition, error: MemoryError) -> ShaxError:
    """numpy's MemoryError running `defn`, as a ShaxValueError at the caller's line: an array
    within what a type may be (`shax.core.types.MAX_BYTES`) that this machine cannot allocate."""
    return at(ShaxValueError(f"{defn.name}: out of memory: numpy: {error}"), current_source())


def _unaliased(outputs: list[Any], args: Sequence[Any]) -> list[Any]:
    """`outputs`, each that shares memory with an argument copied, as the compiled function
    returns them (`shax.codegen.generator`): writing into a result never changes an argument."""
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return [
        o.copy() if isinstance(o, np.ndarray) and any(np.may_share_memory(o, a) for a in arrays) else o for o in outputs
    ]


def _compile(defn: Definition) -> Compiled:
    # Negations folded into sums: fewer numpy calls, the same values (up to a NaN's sign).
    # An output that is an argument is returned as a copy, as JAX returns new arrays.
    return compile_definition(folded(defn), fresh_outputs=True)
