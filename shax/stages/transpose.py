"""Transpose: LinearizedDefinition -> LinearizedDefinition whose linear part runs backwards.

    dmedium(tangents, residuals)         -> output tangents
    dmediumt(output cotangents, residuals) -> one cotangent per tangent input

The primal definition is kept. In the linear definition, a value is *linear* if it
depends on the tangent inputs (a constant zero counts too: it is the zero map, how
linearize fills a zero tangent); every other value depends only on residuals and
constants and is recomputed forward in the transposed definition. Then, from the last
binding to the first, each linear binding with a cotangent hands it to its operands by
its transpose rule (`shax.rules.transpose_rules`); cotangents reaching the same value
add up. Tangent inputs no cotangent reaches get zeros. A binding that is not linear in
the operands that depend on the tangents is an error naming it. One pass each way:
linear time.
"""

from __future__ import annotations

import numpy as np

from shax.errors import ShaxError, ShaxTypeError, at
from shax.ir import Binding, LinearizedDefinition
from shax.linear import Linear, Zero
from shax.primitives import Arg, Constant
from shax.printing import show_binding
from shax.rules import rule_for
from shax.stages.linearize import definition_of, materialize
from shax.tracer import Trace, Tracer, emit, new_trace
from shax.types import TensorType


def transpose(lin: LinearizedDefinition) -> LinearizedDefinition:
    linear = lin.linear
    for binding in linear.bindings:
        if binding.var.type is None:
            raise _fail(binding, "the definition is untyped; run shax.stages.infer_types first")
    num_tangents = len(linear.arg_types) - lin.num_residuals
    residual_types = linear.arg_types[num_tangents:]
    output_types = linear.output_types()
    types = {b.var.id: b.var.type for b in linear.bindings}  # var id -> its type
    with new_trace([*output_types, *residual_types]) as trace:
        is_linear: dict[int, bool] = {}  # var id -> whether it depends on the tangent inputs
        values: dict[int, Tracer] = {}  # var id of a non-linear value -> its value, recomputed forward
        for binding in linear.bindings:
            try:
                _forward(trace, num_tangents, len(output_types), binding, is_linear, values)
            except ShaxError as error:
                raise _fail(binding, str(error), type(error)) from None

        cotangents: dict[int, Tracer] = {}  # var id of a linear value -> its cotangent so far
        for k, v in enumerate(linear.outputs):
            if is_linear[v.id]:
                _accumulate(cotangents, v.id, trace.args[k])
            else:
                message = f"returns x{v.id}, which does not depend on the tangent inputs (it is not linear in them)"
                raise ShaxTypeError(f"transpose: {linear.name} {message}")
        arg_cotangents: dict[int, Tracer] = {}  # tangent input index -> its cotangent so far
        for binding in reversed(linear.bindings):
            ct = cotangents.pop(binding.var.id, None)
            if ct is None or not is_linear[binding.var.id]:
                continue
            if isinstance(binding.prim, Arg):
                _accumulate(arg_cotangents, binding.prim.index, ct)
                continue
            try:
                _backward(binding, ct, types, is_linear, values, cotangents)
            except ShaxError as error:
                raise _fail(binding, str(error), type(error)) from None
        results = [
            arg_cotangents[k] if k in arg_cotangents else materialize(trace, Zero(t))
            for k, t in enumerate(linear.arg_types[:num_tangents])
        ]
    transposed = definition_of(linear.name + "t", [*output_types, *residual_types], results)
    return LinearizedDefinition(lin.primal, transposed, lin.num_residuals)


def _forward(
    trace: Trace,
    num_tangents: int,
    num_cotangents: int,
    binding: Binding,
    is_linear: dict[int, bool],
    values: dict[int, Tracer],
) -> None:
    """Classify `binding` as linear or not; recompute it forward if it is not."""
    prim = binding.prim
    if isinstance(prim, Arg):
        if prim.index < num_tangents:
            if not binding.var.type.dtype.is_float:
                raise ShaxTypeError(f"a tangent input must be a float tensor, not {binding.var.type}")
            is_linear[binding.var.id] = True
            return
        is_linear[binding.var.id] = False
        values[binding.var.id] = trace.args[num_cotangents + prim.index - num_tangents]
        return
    if isinstance(prim, Constant):
        is_linear[binding.var.id] = prim.value.dtype.kind == "f" and not np.any(prim.value)
        values[binding.var.id] = emit(trace, prim, ())
        return
    is_linear[binding.var.id] = any(is_linear[a.id] for a in binding.args)
    if not is_linear[binding.var.id]:
        values[binding.var.id] = rule_for("eval", prim)(prim, *(values[a.id] for a in binding.args))


def _backward(
    binding: Binding,
    ct: Tracer,
    types: dict[int, TensorType],
    is_linear: dict[int, bool],
    values: dict[int, Tracer],
    cotangents: dict[int, Tracer],
) -> None:
    """Hand the cotangent `ct` of a linear binding's result to its linear operands."""
    prim = binding.prim
    operands = [Linear(types[a.id]) if is_linear[a.id] else values[a.id] for a in binding.args]
    operand_cts = rule_for("transpose", prim)(prim, ct, *operands)
    for a, operand_ct in zip(binding.args, operand_cts, strict=True):
        if operand_ct is None or not is_linear[a.id]:
            continue
        if operand_ct.type != types[a.id]:
            raise ShaxTypeError(f"the transpose rule of {prim.name} gave a {operand_ct.type} cotangent for x{a.id}")
        _accumulate(cotangents, a.id, operand_ct)


def _accumulate(cotangents: dict[int, Tracer], key: int, ct: Tracer) -> None:
    cotangents[key] = cotangents[key] + ct if key in cotangents else ct


def _fail(binding: Binding, message: str, error: type[ShaxError] = ShaxTypeError) -> ShaxError:
    return at(error(f"transpose: in `{show_binding(binding)}`: {message}"), binding.source)
