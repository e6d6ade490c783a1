"""Linearize: typed Definition -> LinearizedDefinition (JVP + partial evaluation, as in
"You Only Linearize Once").

    medium(args)                 -> outputs, then residuals
    dmedium(tangents, residuals) -> output tangents       (linear in the tangents)

`wrt` picks the arguments to differentiate (default: all): the linear program takes
one tangent per picked argument, and the others are constants (zero tangent), as a
transform's captured outer values are.

The primal definition is re-run on the tracers of a primal trace while a linear trace,
opened inside it, records the tangent program: each binding's linearize rule (from
`shax.rules.linearize_rules`) computes its tangent from its operands' tangents. Primal
values reach the linear program only through `shax.linear.residual`, which makes them
arguments of the linear program; the primal program returns them, in the order the
linear program first used them. Residuals the linear program ends up not using are
dropped. Tangents that depend on no input are symbolic zeros, materialized only where
a value is needed. One pass over the bindings: linear time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import shax.zeros  # noqa: F401 - registers the typeclass instance of symbolic zeros
from shax.builder import Builder
from shax.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.evaluate import evaluate
from shax.gcpause import collector_paused
from shax.ir import Binding, Definition, LinearizedDefinition, Var
from shax.linear import Zero, crossing
from shax.location import attributed_to
from shax.primitives import Arg, Broadcast, Constant
from shax.printing import show_binding
from shax.rules import rule_for
from shax.sharing import recover_sharing
from shax.tracer import Trace, Tracer, emit, lift, new_trace
from shax.types import TensorType
from shax.well_typed import is_well_typed, mark_well_typed


@collector_paused()
def linearize(defn: Definition, wrt: Sequence[int] | None = None) -> LinearizedDefinition:
    check_well_formed("linearize", defn)
    wrt = tuple(range(len(defn.arg_types)) if wrt is None else wrt)
    _check_wrt(defn, wrt)
    tangent_types = [defn.arg_types[k] for k in wrt]
    with new_trace(defn.arg_types) as primal, new_trace(tangent_types) as linear:
        cross = _Crossing(primal, linear)
        # argument index -> its tangent: a linear argument, or a zero for a constant
        arg_tangents: list[Tracer | Zero] = [Zero(t) for t in defn.arg_types]
        for position, k in enumerate(wrt):
            arg_tangents[k] = linear.args[position]
        values: dict[int, Tracer] = {}  # var id -> its value, in the primal trace
        tangents: dict[int, Tracer | Zero] = {}  # var id -> its tangent, in the linear trace (or a zero)
        with crossing(cross):
            for binding in defn.bindings:
                try:
                    with attributed_to(binding.source):
                        if isinstance(binding.prim, Arg):
                            value, tangent = primal.args[binding.prim.index], arg_tangents[binding.prim.index]
                        else:
                            value, tangent = _linearize_binding(
                                cross,
                                binding,
                                [values[a.id] for a in binding.args],
                                [tangents[a.id] for a in binding.args],
                            )
                        values[binding.var.id], tangents[binding.var.id] = value, tangent
                except ShaxError as error:
                    raise fail("linearize", binding, str(error), type(error)) from None
        outputs = [values[v.id] for v in defn.outputs]
        output_tangents = [materialize(linear, tangents[v.id]) for v in defn.outputs]
    num_tangents = len(wrt)
    builder = Builder()
    linear_outputs = recover_sharing(builder, output_tangents, typed=True)
    bindings, used = _drop_unused_residuals(builder.bindings, num_tangents)
    residuals = [linear.captured[k - num_tangents] for k in used]
    linear_defn = Definition(
        "d" + defn.name,
        (*tangent_types, *(r.type for r in residuals)),
        tuple(bindings),
        tuple(Var(v.id) for v in linear_outputs),
    )
    primal_defn = definition_of(defn.name, defn.arg_types, [*outputs, *residuals])
    # Typed by the type rules as the traces recorded them, like definition_of's.
    return LinearizedDefinition(primal_defn, mark_well_typed(linear_defn), len(residuals))


def definition_of(name: str, arg_types: Sequence[TensorType], outputs: Sequence[Tracer]) -> Definition:
    """The typed definition computing `outputs` from the tracers of a trace's arguments."""
    builder = Builder()
    output_vars = recover_sharing(builder, outputs, typed=True)
    # Every binding is typed by the type rules, as the trace recorded it.
    return mark_well_typed(builder.build(name, arg_types, [Var(v.id) for v in output_vars]))


def _check_wrt(defn: Definition, wrt: Sequence[int]) -> None:
    for k in wrt:
        if not 0 <= k < len(defn.arg_types):
            raise ShaxValueError(f"linearize: {defn.name} has {len(defn.arg_types)} argument(s), no argument {k}")
        if not defn.arg_types[k].dtype.is_float:
            raise ShaxTypeError(
                f"linearize: cannot differentiate {defn.name} with respect to its {defn.arg_types[k]} argument {k}"
            )
    if len(set(wrt)) != len(wrt):
        raise ShaxValueError(f"linearize: argument(s) listed twice in wrt={list(wrt)}")


def _linearize_binding(
    cross: _Crossing, binding: Binding, operands: list[Tracer], operand_tangents: list[Tracer | Zero]
) -> tuple[Tracer, Tracer | Zero]:
    """The value of `binding` (not an argument) in the primal trace, and its tangent."""
    primal, linear = cross.primal, cross.linear
    prim = binding.prim
    value = emit(primal, prim, tuple(operands))
    if value.type != binding.var.type:
        raise ShaxTypeError(f"annotated {binding.var.type}, but the operation gives {value.type}")
    if operand_tangents and all(isinstance(t, Zero) for t in operand_tangents):
        return value, Zero(value.type)
    tangent = rule_for("linearize", prim)(prim, operands, operand_tangents, value)
    if len(linear.captured) != cross.crossed:
        raise ShaxTypeError(
            f"the linearize rule of {prim.name} used a primal value in the linear program without residual()"
        )
    tangent_type = tangent.type if isinstance(tangent, (Zero, Tracer)) else None
    if tangent_type != value.type or (isinstance(tangent, Tracer) and tangent.trace is not linear):
        raise ShaxTypeError(f"the linearize rule of {prim.name} gave {tangent!r}, not a {value.type} tangent")
    return value, tangent


class _Crossing:
    """`residual` while linearizing: a primal value becomes an argument of the linear
    program (once, however often it is used); a constant is copied into it instead."""

    def __init__(self, primal: Trace, linear: Trace) -> None:
        self.primal = primal
        self.linear = linear
        self.crossed = 0  # how many primal values have crossed (the linear trace captures nothing else)

    def __call__(self, x: Any) -> Any:
        if isinstance(x, Tracer) and x.trace is self.primal:
            if isinstance(x.prim, Constant):
                return x.prim.value
            captured = self.linear.capture(x)
            self.crossed = len(self.linear.captured)
            return captured
        if isinstance(x, (Tracer, Zero)):
            raise ShaxTypeError(
                f"residual: expected a primal value, got {x!r}, which the primal program does not compute"
            )
        return x


def materialize(trace: Trace, tangent: Tracer | Zero) -> Tracer:
    """`tangent` as a tracer of `trace`: a zero becomes a constant 0 broadcast to its shape."""
    if not isinstance(tangent, Zero):
        return tangent
    zero = lift(trace, np.zeros((), tangent.type.dtype.numpy), None, "zero")
    return zero if tangent.type.shape == () else emit(trace, Broadcast((), tangent.type.shape), (zero,))


def _drop_unused_residuals(bindings: Sequence[Binding], num_tangents: int) -> tuple[list[Binding], list[int]]:
    """The bindings with residual arguments renumbered to leave out the unused ones, and
    the argument indices of the used residuals (in order)."""
    used = sorted({b.prim.index for b in bindings if isinstance(b.prim, Arg) and b.prim.index >= num_tangents})
    if used == list(range(num_tangents, num_tangents + len(used))):  # none unused: nothing to renumber
        return list(bindings), used
    renumber = {k: num_tangents + position for position, k in enumerate(used)}
    renumbered = [
        Binding(b.var, Arg(renumber[b.prim.index]), b.args, b.source)
        if isinstance(b.prim, Arg) and b.prim.index in renumber
        else b
        for b in bindings
    ]
    return renumbered, used


def fail(stage: str, binding: Binding, message: str, error: type[ShaxError] = ShaxTypeError) -> ShaxError:
    return at(error(f"{stage}: in `{show_binding(binding)}`: {message}"), binding.source)


def check_well_formed(stage: str, defn: Definition) -> None:
    """Nothing if every binding of `defn` is typed, reads a declared argument or vars bound
    before it, and every returned var is bound; else a ShaxError naming `stage` and the binding.
    (Types themselves are checked as the stage recomputes each operation.)"""
    if is_well_typed(defn):  # check_types has seen all this, or a stage built it so
        return
    bound: set[int] = set()
    for binding in defn.bindings:
        if binding.var.type is None:
            raise fail(stage, binding, "the definition is untyped; run shax.stages.infer_types first")
        unbound = [f"x{a.id}" for a in binding.args if a.id not in bound]
        if unbound:
            raise fail(stage, binding, f"{', '.join(unbound)} used before being bound", ShaxValueError)
        if isinstance(binding.prim, Arg) and not 0 <= binding.prim.index < len(defn.arg_types):
            raise fail(stage, binding, f"{defn.name} has {len(defn.arg_types)} argument(s)", ShaxValueError)
        bound.add(binding.var.id)
    unbound = [f"x{v.id}" for v in defn.outputs if v.id not in bound]
    if unbound:
        raise ShaxValueError(f"{stage}: {defn.name} returns {', '.join(unbound)}, never bound")


def check_linearized(stage: str, lin: LinearizedDefinition) -> None:
    """Both definitions well formed, and the primal's last `num_residuals` results are the
    linear definition's last `num_residuals` arguments."""
    check_well_formed(stage, lin.primal)
    check_well_formed(stage, lin.linear)
    primal, linear, count = lin.primal, lin.linear, lin.num_residuals
    if not 0 <= count <= min(len(primal.outputs), len(linear.arg_types)):
        message = (
            f"{primal.name} returns {len(primal.outputs)} value(s) and {linear.name} takes {len(linear.arg_types)}"
        )
        raise ShaxValueError(f"{stage}: {count} residual(s) do not fit: {message}")
    returned = primal.output_types()[len(primal.outputs) - count :]
    taken = linear.arg_types[len(linear.arg_types) - count :]
    if returned != taken:
        shown = ", ".join(map(str, returned)), ", ".join(map(str, taken))
        raise ShaxTypeError(
            f"{stage}: {primal.name} returns residuals ({shown[0]}) but {linear.name} takes ({shown[1]})"
        )


def evaluate_linearized(
    lin: LinearizedDefinition, primals: Sequence[Any], linear_args: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """(outputs, linear outputs): the primal definition on `primals`, then the linear one
    on `linear_args` (tangents, or cotangents once transposed) and the residuals."""
    results = evaluate(lin.primal, *primals)
    split = len(results) - lin.num_residuals
    return results[:split], evaluate(lin.linear, *linear_args, *results[split:])
