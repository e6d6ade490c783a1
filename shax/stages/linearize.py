"""Linearize: typed Definition -> LinearizedDefinition (JVP + partial evaluation, as in
"You Only Linearize Once").

    medium(args)                 -> outputs, then residuals
    dmedium(tangents, residuals) -> output tangents       (linear in the tangents)

`wrt` picks the arguments to differentiate (default: all): the linear program takes
one tangent per picked argument, and the others are constants (zero tangent), as a
transform's captured outer values are.

The primal definition is re-run on the tracers of a primal trace while a linear trace,
opened inside it, records the tangent program: each binding's linearize rule (from
`shax.rules.linearize`) computes its tangent from its operands' tangents. Primal
values reach the linear program only through `shax.rules.linearize.residual`, which makes them
arguments of the linear program; the primal program returns them, in the order the
linear program first used them. Residuals the linear program ends up not using are
dropped. Tangents that depend on no input are symbolic zeros, materialized only where
a value is needed. One pass over the bindings: linear time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np

import shax.rules.zeros  # noqa: F401 - registers the typeclass instance of symbolic zeros
from shax.core.builder import Builder
from shax.core.errors import ShaxTypeError, ShaxValueError, a_type, at
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, LinearizedDefinition, Var
from shax.core.location import current_source
from shax.core.primitive import Arg
from shax.core.types import TensorType
from shax.core.walker import for_each_binding
from shax.core.well_typed import mark_well_typed
from shax.primitives import Broadcast, Constant
from shax.rules.linearize import PrimalAndTangent, Tangent, Zero, linearize_rules, linearizing
from shax.tracing.evaluate import evaluate
from shax.tracing.sharing import recover_sharing
from shax.tracing.tracer import Trace, Tracer, cons_key, emit, emit_all, lift, new_trace
from shax.tracing.validation import check_linearized, check_well_formed


@collector_paused()
def linearize(defn: Definition, wrt: Sequence[int] | None = None) -> LinearizedDefinition:
    check_well_formed("linearize", defn)
    wrt = checked_wrt(defn, range(len(defn.arg_types)) if wrt is None else wrt)
    tangent_types = [defn.arg_types[k] for k in wrt]
    with new_trace(defn.arg_types) as primal, new_trace(tangent_types) as linear:
        cross = Crossing(primal, linear)
        # argument index -> its tangent: a linear argument, or a zero for a constant
        arg_tangents: list[Tangent] = [Zero(t) for t in defn.arg_types]
        for position, k in enumerate(wrt):
            arg_tangents[k] = linear.args[position]
        values: dict[int, Tracer] = {}  # var id -> its value, in the primal trace
        tangents: dict[int, Tangent] = {}  # var id -> its tangent, in the linear trace (or a zero)

        def step(binding: Binding) -> None:
            if isinstance(binding.prim, Arg):
                var = binding.vars[0]
                values[var.id], tangents[var.id] = primal.args[binding.prim.index], arg_tangents[binding.prim.index]
                return
            operands = [values[a.id] for a in binding.args]
            results = linearize_binding(cross, binding, operands, [tangents[a.id] for a in binding.args])
            for var, (value, tangent) in zip(binding.vars, results, strict=True):
                values[var.id], tangents[var.id] = value, tangent

        with linearizing(cross):
            for_each_binding("linearize", defn.bindings, step)
        outputs = [values[v.id] for v in defn.outputs]
        output_tangents = [
            cross.zeros(t.type) if isinstance(t, Zero) else t for t in (tangents[v.id] for v in defn.outputs)
        ]
        order = first_uses(linear, output_tangents)
    return split(
        defn.name, defn.arg_types, tangent_types, outputs, output_tangents, linear.captured, order, primal.effects
    )


def first_uses(linear: Trace, outputs: Sequence[Tracer]) -> list[int]:
    """The argument indices of the values `linear` captured that `outputs` are computed
    from, in the order the trace first used them (its nodes in the order rules recorded
    them, operands left to right): the residuals' order, the same in `linearize` and in
    `unzip`, which reads them off the JVP program in that order."""
    needed = reachable(outputs)
    order: dict[int, None] = {}
    first = len(linear.args)
    for node in linear.table.values():
        if id(node) in needed:
            for a in node.args:
                if isinstance(a.prim, Arg) and a.prim.index >= first and a.owner is linear:
                    order.setdefault(a.prim.index)
    for o in outputs:  # a residual returned as it is (not linear: check_linear names it)
        if isinstance(o.prim, Arg) and o.prim.index >= first and o.owner is linear:
            order.setdefault(o.prim.index)
    return list(order)


def reachable(outputs: Sequence[Tracer]) -> set[int]:
    """The ids of the nodes `outputs` are computed from (and of `outputs`); a result of an
    operation with several brings them all (one binding computes them)."""
    found: set[int] = set()
    stack = list(outputs)
    while stack:
        node = stack.pop()
        if id(node) in found:
            continue
        for result in node.siblings or (node,):
            found.add(id(result))
        stack.extend(operand for operand in node.args if id(operand) not in found)
    return found


def split(
    name: str,
    arg_types: Sequence[TensorType],
    tangent_types: Sequence[TensorType],
    outputs: Sequence[Tracer],
    output_tangents: Sequence[Tracer],
    captured: Sequence[Tracer],
    order: Sequence[int],
    effects: Sequence[Tracer] = (),
) -> LinearizedDefinition:
    """The primal program computing `outputs` (then the residuals) and running `effects`
    (the primal trace's, in order), and the linear one computing `output_tangents` from the
    tangents (then the residuals): the values of a linear trace that `captured` these primal
    values, those used in `order` (argument indices)."""
    num_tangents = len(tangent_types)
    builder = Builder()
    linear_outputs = recover_sharing(builder, output_tangents, typed=True)
    bindings = _renumbered(builder.bindings, num_tangents, order)
    residuals = [captured[k - num_tangents] for k in order]
    linear_defn = Definition(
        "d" + name,
        (*tangent_types, *(r.type for r in residuals)),
        tuple(bindings),
        tuple(Var(v.id) for v in linear_outputs),
    )
    primal_defn = definition_of(name, arg_types, [*outputs, *residuals], effects)
    linear_defn = residuals_marked(linear_defn, primal_defn, num_tangents, len(outputs))
    # Typed by the type rules as the traces recorded them, like definition_of's.
    return LinearizedDefinition(primal_defn, mark_well_typed(linear_defn), len(residuals))


def residuals_marked(linear: Definition, primal: Definition, num_tangents: int, num_outputs: int) -> Definition:
    """`linear` (its first `num_tangents` arguments tangents or cotangents, the others
    residuals) with each residual argument's binding marked with the primal binding whose
    value it receives (its origin, and its user's line)."""
    saved = {v.id: None for v in primal.outputs[num_outputs:]}
    found = {v.id: b for b in primal.bindings for v in b.vars if v.id in saved}

    def marked(b: Binding) -> Binding:
        if not (isinstance(b.prim, Arg) and b.prim.index >= num_tangents):
            return b
        var = primal.outputs[num_outputs + b.prim.index - num_tangents]
        kept = found[var.id]
        return Binding(b.vars, b.prim, b.args, kept.source, f"residual: saves x{var.id} of {primal.name}")

    return attrs.evolve(linear, bindings=tuple(map(marked, linear.bindings)))


def definition_of(
    name: str, arg_types: Sequence[TensorType], outputs: Sequence[Tracer], effects: Sequence[Tracer] = ()
) -> Definition:
    """The typed definition computing `outputs` from the tracers of a trace's arguments,
    and running `effects` (the trace's effectful nodes, in order)."""
    builder = Builder()
    output_vars = recover_sharing(builder, outputs, typed=True, effects=effects)
    # Every binding is typed by the type rules, as the trace recorded it.
    return mark_well_typed(builder.build(name, arg_types, [Var(v.id) for v in output_vars]))


def checked_wrt(defn: Definition, wrt: Any) -> tuple[int, ...]:
    """`wrt` as a tuple of distinct indices of float arguments, or an error at the caller's line."""
    if isinstance(wrt, (str, bytes)) or not isinstance(wrt, Sequence):
        message = f"linearize: wrt must be a list of argument indices, got {type(wrt).__name__} {wrt!r}"
        raise at(ShaxTypeError(message), current_source())
    for k in wrt:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < len(defn.arg_types):
            shown = ", ".join(map(str, defn.arg_types))
            message = f"linearize: {defn.name} has {len(defn.arg_types)} argument(s), no argument {k!r} ({shown})"
            raise at(ShaxValueError(message), current_source())
        if not defn.arg_types[k].dtype.is_float:
            message = f"cannot differentiate {defn.name} with respect to its {defn.arg_types[k]} argument {k}"
            raise at(ShaxTypeError(f"linearize: {message}"), current_source())
    if len(set(wrt)) != len(wrt):
        raise at(ShaxValueError(f"linearize: argument(s) listed twice in wrt={list(wrt)}"), current_source())
    return tuple(int(k) for k in wrt)


def linearize_binding(
    cross: Crossing, binding: Binding, operands: list[Tracer], operand_tangents: list[Tangent]
) -> list[tuple[Tracer, Tangent]]:
    """The value of each result of `binding` (not an argument) in the primal trace, and its tangent."""
    primal, linear = cross.primal, cross.linear
    prim = binding.prim
    values = emit_all(primal, prim, tuple(operands))
    for value, var in zip(values, binding.vars, strict=True):
        # A copy of the binding (perhaps hash-consed with what a rule emitted before): it
        # comes from where the binding came from, not from linearize's rule.
        value.source, value.origin = binding.source, binding.origin
        if value.type != var.type:
            raise ShaxTypeError(f"annotated {var.type}, but the operation gives {value.type}")
    if operand_tangents and all(isinstance(t, Zero) for t in operand_tangents):
        return [(value, Zero(value.type)) for value in values]
    multi = prim.multi_result
    result = linearize_rules[prim](prim, operands, operand_tangents, values if multi else values[0])
    if isinstance(result, PrimalAndTangent):  # the rule computed the primal values its own way
        given, tangents = (result.value, result.tangent) if multi else ([result.value], [result.tangent])
        if len(given) != len(values) or any(
            not isinstance(g, Tracer) or g.type != v.type for g, v in zip(given, values)
        ):
            shown = ", ".join(str(v.type) for v in values)
            raise ShaxTypeError(f"the linearize rule of {prim.name} gave {given!r}, not values of type ({shown})")
        if prim.has_effect() and (not values or given[0] is not values[0]):  # its effects run in the rule's instead
            recorded = primal.table.get(cons_key(prim, tuple(operands)))
            primal.effects = [e for e in primal.effects if e is not recorded]
        values = list(given)
    else:
        tangents = result if multi else [result]
    if len(linear.captured) != cross.crossed:
        raise ShaxTypeError(
            f"the linearize rule of {prim.name} used a primal value in the linear program without residual()"
        )
    if len(tangents) != len(values):
        raise ShaxTypeError(
            f"the linearize rule of {prim.name} gave {len(tangents)} tangents for {len(values)} results"
        )
    for tangent, value in zip(tangents, values):
        tangent_type = tangent.type if isinstance(tangent, (Zero, Tracer)) else None
        if tangent_type != value.type or (isinstance(tangent, Tracer) and tangent.owner is not linear):
            raise ShaxTypeError(f"the linearize rule of {prim.name} gave {tangent!r}, not a {value.type} tangent")
    return list(zip(values, tangents))


class Crossing:
    """The linearization under way (`shax.rules.linearize.Linearization`): a primal value
    becomes an argument of the linear program (once, however often it is used), a
    constant is copied into it instead; a zero tangent becomes zeros in it."""

    def __init__(self, primal: Trace, linear: Trace) -> None:
        self.primal = primal
        self.linear = linear
        self.crossed = 0  # how many primal values have crossed (the linear trace captures nothing else)

    def residual(self, x: Any) -> Any:
        if isinstance(x, Tracer) and x.owner is self.primal:
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

    def zeros(self, t: TensorType) -> Tracer:
        return zeros_in(self.linear, t)


def zeros_in(trace: Trace, t: TensorType) -> Tracer:
    """Zeros of type `t` in `trace`: a constant 0 broadcast to its shape."""
    zero = lift(trace, np.zeros((), t.dtype.numpy), None, "zero")
    return zero if t.shape == () else emit(trace, Broadcast((), t.shape), (zero,))


def _renumbered(bindings: Sequence[Binding], num_tangents: int, order: Sequence[int]) -> list[Binding]:
    """The bindings with the residual arguments in `order` renumbered to follow the
    tangents in that order (the unused ones left out)."""
    if list(order) == list(range(num_tangents, num_tangents + len(order))):  # nothing to renumber
        return list(bindings)
    renumber = {k: num_tangents + position for position, k in enumerate(order)}
    return [
        Binding(b.var, Arg(renumber[b.prim.index]), b.args, b.source, b.origin)
        if isinstance(b.prim, Arg) and b.prim.index in renumber
        else b
        for b in bindings
    ]


def evaluate_linearized(
    lin: LinearizedDefinition, primals: Sequence[Any], linear_args: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """(outputs, linear outputs): the primal definition on `primals`, then the linear one
    on `linear_args` (tangents, or cotangents once transposed) and the residuals."""
    check_linearized("evaluate_linearized", lin)
    primal, linear = lin.primal, lin.linear
    _check_count("primals", primal.arg_types, primals)
    _check_count("linear_args", linear.arg_types[: len(linear.arg_types) - lin.num_residuals], linear_args)
    results = evaluate(primal, *primals)
    split = len(results) - lin.num_residuals
    return results[:split], evaluate(linear, *linear_args, *results[split:])


def _check_count(what: str, types: Sequence[TensorType], values: Any) -> None:
    """`values` is a list or tuple of one value per type (evaluate checks each value)."""
    if not isinstance(values, (list, tuple)) or len(values) != len(types):
        shown = ", ".join(map(str, types))
        given = f"{len(values)} value(s)" if isinstance(values, (list, tuple)) else a_type(values)
        message = f"evaluate_linearized: {what} must be a list of {len(types)} value(s) ({shown}), got {given}"
        raise at(ShaxTypeError(message), current_source())
