"""Zip: LinearizedDefinition -> one Definition running the primal, then the linear part.

    medium(args) -> outputs, residuals      dmediumt(cts, residuals) -> arg cotangents
    medium_dmediumt(args, cts) -> outputs, arg cotangents

On a transposed LinearizedDefinition this is the VJP definition; on one straight from
`linearize`, the JVP definition (primals and tangents in, outputs and tangents out).
The residuals become plain variables shared by the two halves. The result goes through
the default cleanup passes (`shax.passes.cleanup`). One pass over each half: linear time.
"""

from __future__ import annotations

from shax.core.builder import Builder
from shax.core.gcpause import collector_paused
from shax.core.ir import Definition, LinearizedDefinition, Var
from shax.core.primitive import Arg
from shax.core.well_typed import is_well_typed, mark_well_typed
from shax.passes import cleanup
from shax.tracing.validation import check_linearized


@collector_paused()
def zip_definitions(lin: LinearizedDefinition) -> Definition:
    check_linearized("zip_definitions", lin)
    primal, linear = lin.primal, lin.linear
    num_outputs = len(primal.outputs) - lin.num_residuals
    num_linear_args = len(linear.arg_types) - lin.num_residuals
    builder = Builder()
    primal_var: dict[int, Var] = {}  # primal var id -> its var in the zipped definition
    for b in primal.bindings:
        primal_var.update(zip([v.id for v in b.vars], builder.keep_all(b, [primal_var[a.id] for a in b.args])))
    residuals = [primal_var[v.id] for v in primal.outputs[num_outputs:]]
    linear_var: dict[int, Var] = {}  # linear var id -> its var in the zipped definition
    for b in linear.bindings:
        prim = b.prim
        if isinstance(prim, Arg) and prim.index >= num_linear_args:
            linear_var[b.vars[0].id] = residuals[prim.index - num_linear_args]
            continue
        if isinstance(prim, Arg):
            prim = Arg(len(primal.arg_types) + prim.index)
        emitted = builder.emit_like(b, [linear_var[a.id] for a in b.args], prim)
        linear_var.update(zip([v.id for v in b.vars], emitted))
    outputs = [primal_var[v.id] for v in primal.outputs[:num_outputs]] + [linear_var[v.id] for v in linear.outputs]
    zipped = builder.build(
        f"{primal.name}_{linear.name}",
        [*primal.arg_types, *linear.arg_types[:num_linear_args]],
        [Var(v.id) for v in outputs],
    )
    if is_well_typed(primal) and is_well_typed(linear):
        # Their bindings, renamed; the residuals they share have the same types (checked above).
        mark_well_typed(zipped)
    return cleanup(zipped)
