"""Transpose: LinearizedDefinition -> LinearizedDefinition whose linear part runs backwards.

    dmedium(tangents, residuals)           -> output tangents
    dmediumt(output cotangents, residuals) -> one cotangent per tangent input

The primal definition is kept. Each value of the linear definition is one of
    linear:  it depends on the tangent inputs;
    zero:    a constant zero, or a linear operation on zeros (how linearize fills a zero
             tangent where a value is needed): the zero map, which passes no cotangent on;
    a value: it depends only on residuals and constants.
Zeros and values are recomputed forward in the transposed definition. Then, from the last
binding to the first, each linear binding with a cotangent hands it to its operands by its
transpose rule (`shax.rules.transpose`); cotangents reaching the same value add up.
Tangent inputs no cotangent reaches get zeros. A binding that is not linear in the
operands that depend on the tangents, or a returned value that does, is an error naming it.
One pass each way: linear time.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, LinearizedDefinition, Var, type_of
from shax.core.primitive import Arg, Linearity, Primitive
from shax.core.types import TensorType
from shax.core.walker import for_each_binding
from shax.core.well_typed import mark_well_typed
from shax.primitives import Constant
from shax.rules.linearize import linearizing
from shax.rules.transpose import Linear, check_linear_operands, transpose_rules
from shax.stages.linearize import definition_of, residuals_marked, zeros_in
from shax.tracing.tracer import Trace, Tracer, emit, emit_all, new_trace
from shax.tracing.validation import check_linearized


class Kind(enum.Enum):
    LINEAR = "linear"
    ZERO = "zero"
    VALUE = "value"


@collector_paused()
def transpose(lin: LinearizedDefinition) -> LinearizedDefinition:
    check_linearized("transpose", lin)
    linear = lin.linear
    num_tangents = len(linear.arg_types) - lin.num_residuals
    residual_types = linear.arg_types[num_tangents:]
    output_types = linear.output_types()
    with new_trace([*output_types, *residual_types]) as trace:
        state = _State(linear, trace, num_tangents)
        for_each_binding("transpose", linear.bindings, state.forward)
        for k, v in enumerate(linear.outputs):
            if state.kind[v.id] is Kind.VALUE:
                message = f"returns x{v.id}, which does not depend on the tangent inputs and is not zero"
                raise ShaxTypeError(f"transpose: {linear.name} is not linear: it {message}")
            if state.kind[v.id] is Kind.LINEAR:
                _accumulate(state.cotangents, v.id, trace.args[k])
        # Backwards, the bindings a cotangent reaches (not residuals, values, zeros).
        reached = (b for b in reversed(linear.bindings) if any(v.id in state.cotangents for v in b.vars))
        with linearizing(_Transposing(trace)):  # rules may apply linear operations to zeros
            for_each_binding("transpose", reached, state.backward)
        results = [
            state.arg_cotangents[k] if k in state.arg_cotangents else zeros_in(trace, t)
            for k, t in enumerate(linear.arg_types[:num_tangents])
        ]
    transposed = definition_of(linear.name + "t", [*output_types, *residual_types], results, trace.effects)
    num_outputs = len(lin.primal.outputs) - lin.num_residuals
    transposed = mark_well_typed(residuals_marked(transposed, lin.primal, len(output_types), num_outputs))
    return LinearizedDefinition(lin.primal, transposed, lin.num_residuals)


class _State:
    def __init__(self, linear: Definition, trace: Trace, num_tangents: int) -> None:
        self.trace = trace
        self.num_tangents = num_tangents
        # Arguments of the transposed definition: the output cotangents, then the residuals.
        self.first_residual = len(linear.outputs)
        self.types: dict[int, TensorType] = {
            v.id: type_of(v) for b in linear.bindings for v in b.vars
        }  # var id -> type
        self.kind: dict[int, Kind] = {}  # var id -> its kind
        self.values: dict[int, Tracer] = {}  # var id of a zero or a value -> it, recomputed forward
        self.cotangents: dict[int, Tracer] = {}  # var id of a linear value -> its cotangent so far
        self.arg_cotangents: dict[int, Tracer] = {}  # tangent input index -> its cotangent so far

    def forward(self, binding: Binding) -> None:
        """Classify `binding`'s results (all of one kind); recompute them forward unless linear."""
        prim = binding.prim
        if not prim.multi_result:
            self._forward_one(binding, binding.vars[0])
            return
        kinds = [self.kind[a.id] for a in binding.args]
        kind = Kind.LINEAR if Kind.LINEAR in kinds else self._kind_of(prim, kinds)
        for var in binding.vars:
            self.kind[var.id] = kind
        if kind is not Kind.LINEAR:
            values = emit_all(self.trace, prim, tuple(self.values[a.id] for a in binding.args))
            self.values.update(zip([v.id for v in binding.vars], values))

    def _forward_one(self, binding: Binding, var: Var) -> None:
        prim = binding.prim
        if isinstance(prim, Arg) and prim.index < self.num_tangents:
            if not type_of(var).dtype.is_float:
                raise ShaxTypeError(f"a tangent input must be a float tensor, not {var.type}")
            self.kind[var.id] = Kind.LINEAR
            return
        if isinstance(prim, Arg):
            self.kind[var.id] = Kind.VALUE
            self.values[var.id] = self.trace.args[self.first_residual + prim.index - self.num_tangents]
            return
        if isinstance(prim, Constant):
            self.kind[var.id] = Kind.VALUE if np.any(prim.value) else Kind.ZERO
            self.values[var.id] = emit(self.trace, prim, ())
            return
        kinds = [self.kind[a.id] for a in binding.args]
        if Kind.LINEAR in kinds:
            self.kind[var.id] = Kind.LINEAR
            return
        self.kind[var.id] = self._kind_of(prim, kinds)
        self.values[var.id] = emit(self.trace, prim, tuple(self.values[a.id] for a in binding.args))

    def _kind_of(self, prim: Primitive, kinds: list[Kind]) -> Kind:
        """ZERO or VALUE, for an operation none of whose operands is linear: a linear
        operation on zeros is zero, whatever its non-differentiable operands are (a
        select's predicate)."""
        linear = prim.linear_operands
        linear_in_zeros = bool(linear) and all(
            kinds[k] is Kind.ZERO if k in linear else prim.operand_linearity[k] is Linearity.NON_DIFFERENTIABLE
            for k in range(len(kinds))
        )
        return Kind.ZERO if linear_in_zeros else Kind.VALUE

    def backward(self, binding: Binding) -> None:
        """Hand the cotangents of a binding's results (one has one) to its linear operands;
        an operation of several results gets a list of them, None where none reached."""
        cts = [self.cotangents.pop(v.id, None) for v in binding.vars]
        prim = binding.prim
        if isinstance(prim, Arg):
            assert cts[0] is not None, "a binding is reached only with a cotangent"
            _accumulate(self.arg_cotangents, prim.index, cts[0])
            return
        ct: Any = cts if prim.multi_result else cts[0]
        operands = [self._operand(prim, k, a.id) for k, a in enumerate(binding.args)]
        check_linear_operands(prim, operands)
        operand_cts = transpose_rules[prim](prim, ct, operands)
        for a, operand_ct in zip(binding.args, operand_cts, strict=True):
            if operand_ct is None or self.kind[a.id] is not Kind.LINEAR:
                continue
            if operand_ct.type != self.types[a.id]:
                raise ShaxTypeError(f"the transpose rule of {prim.name} gave a {operand_ct.type} cotangent for x{a.id}")
            _accumulate(self.cotangents, a.id, operand_ct)

    def _operand(self, prim: Primitive, position: int, var_id: int) -> Any:
        """How a transpose rule sees operand `position`: a `Linear` marker, or its value. A
        zero where the operation is linear (`dx + 0`, a select's zero branch) is linear too."""
        kind = self.kind[var_id]
        if kind is Kind.LINEAR or kind is Kind.ZERO and prim.operand_linearity[position] is Linearity.LINEAR:
            return Linear(self.types[var_id])
        return self.values[var_id]


class _Transposing:
    """What linear operations on symbolic zeros see while transpose rules run: zeros
    become zeros of the transposed program; no primal value crosses (rules see them)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace

    def residual(self, x: Any) -> Any:
        raise ShaxError("residual: transpose rules see primal values as they are; residual is for linearize rules")

    def zeros(self, t: TensorType) -> Tracer:
        return zeros_in(self.trace, t)


def _accumulate(cotangents: dict[int, Tracer], key: int, ct: Tracer) -> None:
    cotangents[key] = cotangents[key] + ct if key in cotangents else ct
