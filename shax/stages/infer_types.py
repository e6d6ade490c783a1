"""Type inference: untyped Definition -> typed Definition, by the primitives' type rules.

Every binding's var gets the type its rule computes from its operands' types (`arg{k}`
takes the k-th argument type). `check_types` (in `shax.tracing.validation`, which the passes
share) recomputes the types of a typed definition and fails on any annotation that
disagrees. Errors name the stage, the binding and the user's line that wrote it.
"""

from __future__ import annotations

from shax.core.errors import ShaxValueError
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, Var
from shax.core.types import TensorType
from shax.core.walker import for_each_binding
from shax.core.well_typed import mark_well_typed
from shax.tracing.validation import binding_types, check_outputs, expect_definition, parts_checked


@collector_paused()
def infer_types(defn: Definition) -> Definition:
    expect_definition("infer_types", defn)
    env: dict[int, TensorType] = {}  # var id -> its inferred type
    typed_vars: dict[int, Var] = {}  # var id -> the var with that type (one object for all its uses)
    typed: list[Binding] = []

    def infer(binding: Binding) -> None:
        for var in binding.vars:
            if var.id in env:
                raise ShaxValueError(f"x{var.id} is bound twice")
        types = binding_types(defn, binding, tuple([env.get(a.id) for a in binding.args]))
        results = []
        for var, t in zip(binding.vars, types):
            env[var.id] = t
            results.append(typed_vars.setdefault(var.id, Var(var.id, t)))
        args = tuple([typed_vars[a.id] for a in binding.args])
        typed.append(Binding(tuple(results), binding.prim, args, binding.source, binding.origin))

    with parts_checked("infer_types", defn):
        for_each_binding("infer_types", defn.bindings, infer, records=False)
        check_outputs("infer_types", defn, env)
    return mark_well_typed(Definition(defn.name, defn.arg_types, tuple(typed), defn.outputs))
