"""Batch: typed Definition of per-example types -> typed Definition over a batch
(vmap as a rewrite of the IR).

    batch(f, in_axes, axis_size, out_axes) = vf
    vf(argument k with a batch axis of size axis_size at in_axes[k], or as f takes it
       if in_axes[k] is None: shared by every example)
       -> output j of f for every example, stacked along axis out_axes[j]

The definition is re-run once on the tracers of a trace whose arguments have the
batched types. Every value carries its batch axis: an int, or None when it depends on
no batched argument. A binding whose operands are all unbatched is emitted unchanged;
otherwise its batching rule (`shax.rules.batch`, written with the typeclass
functions) computes it for the whole batch at once and
says where the result's batch axis is. No operation is repeated per example, and the
batched definition has about as many bindings as `f` (a rule may move an axis). An
output that depends on no batched argument is broadcast along the batch; out_axes
None says an output must not depend on one. Axes may be negative, counted from the
end of the batched value (numpy, JAX). One pass over the bindings: linear time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import typeclasses as tc
from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, type_of
from shax.core.location import current_source
from shax.core.primitive import Arg
from shax.core.types import TensorType
from shax.core.walker import for_each_binding
from shax.rules.batch import batch_rules, moveaxis
from shax.stages.linearize import definition_of
from shax.tracing.tracer import Trace, Tracer, emit_all, new_trace
from shax.tracing.validation import check_well_formed

Axes = int | None | Sequence[int | None]


@collector_paused()
def batch(defn: Definition, in_axes: Axes, axis_size: int, out_axes: Axes = 0) -> Definition:
    """`defn` over a batch of `axis_size` examples; `in_axes` and `out_axes` give one
    axis (or None) per argument and per output, or one for all."""
    check_well_formed("batch", defn)
    output_types = defn.output_types()
    try:
        if isinstance(axis_size, bool) or not isinstance(axis_size, (int, np.integer)) or axis_size < 0:
            raise ShaxValueError(f"batch: the batch size must be a non-negative int, got {axis_size!r}")
        size = int(axis_size)
        in_dims = _axes(defn, "in_axes", "argument", defn.arg_types, in_axes)
        out_dims = _axes(defn, "out_axes", "output", output_types, out_axes)
    except ShaxError as error:  # bad arguments: point at the caller's line
        raise at(error, current_source()) from None
    arg_types = [t if d is None else batched_type(t, d, size) for t, d in zip(defn.arg_types, in_dims)]
    with new_trace(arg_types) as trace:
        values: dict[int, Tracer] = {}  # var id -> its value for the whole batch
        dims: dict[int, int | None] = {}  # var id -> the batch axis of that value (None: unbatched)

        def step(binding: Binding) -> None:
            if isinstance(binding.prim, Arg):
                k = binding.prim.index
                results = [_argument(binding, trace.args[k], in_dims[k], size)]
            else:
                operands, operand_dims = [values[a.id] for a in binding.args], [dims[a.id] for a in binding.args]
                results = _batch_binding(trace, binding, operands, operand_dims, size)
            for var, (value, dim) in zip(binding.vars, results, strict=True):
                values[var.id], dims[var.id] = value, dim

        for_each_binding("batch", defn.bindings, step)
        outputs = [
            _output(defn, j, t, values[v.id], dims[v.id], out_dims[j], size)
            for j, (v, t) in enumerate(zip(defn.outputs, output_types))
        ]
    return definition_of("v" + defn.name, arg_types, outputs, trace.effects)


def batched_type(t: TensorType, dim: int, size: int) -> TensorType:
    """`t` with a batch axis of `size` inserted at `dim`."""
    return t.with_shape((*t.shape[:dim], size, *t.shape[dim:]))


def _axes(defn: Definition, what: str, noun: str, types: Sequence[TensorType], axes: Axes) -> list[int | None]:
    """One batch axis (in 0..rank, or None) per argument or output of type `types`."""
    if axes is None or isinstance(axes, (int, np.integer)):
        axes = [axes] * len(types)
    try:
        axes = list(axes)
    except TypeError:
        raise ShaxValueError(f"batch: {what} must be an int, None or one of them per {noun}, got {axes!r}") from None
    if len(axes) != len(types):
        shown = ", ".join(map(str, types))
        raise ShaxValueError(
            f"batch: {what}={axes} gives an axis for {len(axes)} {noun}(s), but {defn.name} has {len(types)} ({shown})"
        )
    normalized: list[int | None] = []
    for k, (t, axis) in enumerate(zip(types, axes)):
        if axis is None:
            normalized.append(None)
            continue
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
            raise ShaxValueError(f"batch: {what}[{k}] must be an int or None, got {axis!r} for {noun} {k} :: {t}")
        if not -t.rank - 1 <= axis <= t.rank:
            raise ShaxValueError(
                f"batch: {what}[{k}] = {axis} is out of range for {noun} {k} :: {t}: with the batch axis it has "
                f"rank {t.rank + 1}, so the batch axis is one of {-t.rank - 1}..{t.rank}"
            )
        normalized.append(int(axis) % (t.rank + 1))
    return normalized


def _argument(binding: Binding, value: Tracer, dim: int | None, size: int) -> tuple[Tracer, int | None]:
    t = type_of(binding.var)
    expected = t if dim is None else batched_type(t, dim, size)
    if value.type != expected:
        raise ShaxTypeError(f"annotated {binding.var.type}, but the argument has type {value.type} with its batch axis")
    return value, dim


def _batch_binding(
    trace: Trace, binding: Binding, operands: list[Tracer], dims: list[int | None], size: int
) -> list[tuple[Tracer, int | None]]:
    """The value of each result of `binding` (not an argument) for the whole batch, and its batch axis."""
    prim = binding.prim
    if all(d is None for d in dims):
        values = emit_all(trace, prim, tuple(operands))
        for value, var in zip(values, binding.vars, strict=True):
            if value.type != var.type:
                raise ShaxTypeError(f"annotated {var.type}, but the operation gives {value.type}")
        return [(value, None) for value in values]
    if prim.multi_result:  # the rule gives a list of values and one of their axes
        values, value_dims = batch_rules[prim](prim, operands, dims)
        if len(values) != len(binding.vars) or len(value_dims) != len(binding.vars):
            raise ShaxTypeError(f"the batching rule of {prim.name} gave {len(values)} results, not {len(binding.vars)}")
    else:
        value, dim = batch_rules[prim](prim, operands, dims)
        values, value_dims = [value], [dim]
    for value, dim, var in zip(values, value_dims, binding.vars):
        t = type_of(var)
        expected: TensorType | None
        if dim is None:
            expected = t
        elif isinstance(dim, int) and 0 <= dim <= t.rank:
            expected = batched_type(t, dim, size)
        else:
            expected = None
        if not isinstance(value, Tracer) or value.owner is not trace or value.type != expected:
            raise ShaxTypeError(
                f"the batching rule of {prim.name} gave {value!r} with batch axis {dim}, not a batch of {size} {t}"
            )
    return list(zip(values, value_dims))


def _output(
    defn: Definition, j: int, t: TensorType, value: Tracer, dim: int | None, out_dim: int | None, size: int
) -> Tracer:
    """Output `j` (of per-example type `t`) with its batch axis at `out_dim`."""
    if out_dim is None:
        if dim is not None:
            message = f"out_axes[{j}] is None, but output {j} of {defn.name} :: {t} depends on a batched argument"
            raise at(ShaxValueError(f"batch: {message}"), current_source())
        return value
    if dim is None:  # the same for every example
        shape = batched_type(t, out_dim, size).shape
        return tc.broadcast(value, [a for a in range(len(shape)) if a != out_dim], shape)
    return moveaxis(value, dim, out_dim)
