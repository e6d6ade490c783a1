"""JVP: typed Definition -> one typed Definition computing outputs and output tangents,
forward mode as step (i) of "You Only Linearize Once".

    medium(args)                       -> outputs
    jvp_medium(args, tangents)         -> outputs, then output tangents

`wrt` picks the arguments that get a tangent (default: all; the others are constants).
The definition is re-run on one trace whose arguments are the primals and the tangents:
each binding's linearize rule (`shax.rules.linearize`) computes its tangent from its
operands' tangents, as `linearize` does, but `residual(x)` crosses nowhere (primal and
tangent bindings are interleaved in one program). `shax.stages.unzip` splits it into
the primal and the linear program; `unzip(jvp(f))` is `linearize(f)`. Tangents that
depend on no input are symbolic zeros, materialized only where a value is needed. One
pass over the bindings: linear time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shax.core.builder import Builder
from shax.core.errors import ShaxTypeError
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, Var
from shax.core.primitive import Arg
from shax.core.types import TensorType
from shax.core.walker import for_each_binding
from shax.core.well_typed import mark_well_typed
from shax.primitives import Constant
from shax.rules.linearize import Tangent, Zero, linearizing
from shax.stages.linearize import Crossing, checked_wrt, linearize_binding, reachable
from shax.tracing.sharing import recover_sharing
from shax.tracing.tracer import Trace, Tracer, new_trace
from shax.tracing.validation import check_well_formed


@collector_paused()
def jvp(defn: Definition, wrt: Sequence[int] | None = None) -> Definition:
    check_well_formed("jvp", defn)
    wrt = checked_wrt(defn, range(len(defn.arg_types)) if wrt is None else wrt)
    tangent_types = [defn.arg_types[k] for k in wrt]
    with new_trace([*defn.arg_types, *tangent_types]) as trace:
        # argument index -> its tangent: a tangent argument, or a zero for a constant
        arg_tangents: list[Tangent] = [Zero(t) for t in defn.arg_types]
        for position, k in enumerate(wrt):
            arg_tangents[k] = trace.args[len(defn.arg_types) + position]
        values: dict[int, Tracer] = {}  # var id -> its value
        tangents: dict[int, Tangent] = {}  # var id -> its tangent (or a zero)
        both = _Interleaved(trace)

        def step(binding: Binding) -> None:
            if isinstance(binding.prim, Arg):
                var = binding.vars[0]
                values[var.id], tangents[var.id] = trace.args[binding.prim.index], arg_tangents[binding.prim.index]
                return
            operands = [values[a.id] for a in binding.args]
            results = linearize_binding(both, binding, operands, [tangents[a.id] for a in binding.args])
            for var, (value, tangent) in zip(binding.vars, results, strict=True):
                values[var.id], tangents[var.id] = value, tangent

        with linearizing(both):
            for_each_binding("linearize", defn.bindings, step)  # its rules are linearize rules
        outputs = [values[v.id] for v in defn.outputs]
        output_tangents = [
            both.zeros(t.type) if isinstance(t, Zero) else t for t in (tangents[v.id] for v in defn.outputs)
        ]
        recorded = [*trace.args, *trace.table.values()]
    return _in_order("jvp_" + defn.name, [*defn.arg_types, *tangent_types], recorded, [*outputs, *output_tangents])


def _in_order(name: str, arg_types: Sequence[TensorType], recorded: list[Tracer], outputs: list[Tracer]) -> Definition:
    """The typed definition computing `outputs`, its bindings in the order the rules
    recorded them (which `unzip` reads as the order residuals cross in)."""
    needed = reachable(outputs)
    builder = Builder()
    var_of: dict[int, Var] = {}  # id(node) -> its var
    recover_sharing(builder, [node for node in recorded if id(node) in needed], typed=True, var_of=var_of)
    # Every binding is typed by the type rules, as the trace recorded it.
    return mark_well_typed(builder.build(name, arg_types, [Var(var_of[id(o)].id) for o in outputs]))


class _Interleaved(Crossing):
    """The linearization of `jvp`: primal and tangent values live in one trace, so a
    primal value crosses as itself (a constant as its value, as `linearize` copies it)."""

    def __init__(self, trace: Trace) -> None:
        super().__init__(trace, trace)

    def residual(self, x: Any) -> Any:
        if isinstance(x, Tracer) and x.owner is self.primal:
            return x.prim.value if isinstance(x.prim, Constant) else x
        if isinstance(x, (Tracer, Zero)):
            raise ShaxTypeError(
                f"residual: expected a primal value, got {x!r}, which the primal program does not compute"
            )
        return x
