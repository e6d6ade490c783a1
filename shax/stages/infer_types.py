"""Type inference: untyped Definition -> typed Definition, by the primitives' type rules.

Every binding's var gets the type its rule computes from its operands' types (`arg{k}`
takes the k-th argument type). `check_types` recomputes the types of a typed
definition and fails on any annotation that disagrees. Errors name the stage,
the binding and the user's line that wrote it.
"""

from __future__ import annotations

from shax.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.gcpause import collector_paused
from shax.ir import Binding, Definition, Var
from shax.primitives import Arg
from shax.printing import show_binding
from shax.result_types import result_type
from shax.types import TensorType
from shax.well_typed import mark_well_typed


def _fail(stage: str, binding: Binding, message: str, error: type[ShaxError] = ShaxTypeError) -> ShaxError:
    return at(error(f"{stage}: in `{show_binding(binding)}`: {message}"), binding.source)


def binding_type(stage: str, defn: Definition, binding: Binding, operands: tuple[TensorType | None, ...]) -> TensorType:
    """The type of `binding` given its operands' types (None for an unbound operand).

    Callers pass the operand types, not their whole environment, so that checking the
    call (typeguard, in the tests) costs per operand, not per var of the definition."""
    prim = binding.prim
    if isinstance(prim, Arg):
        if not 0 <= prim.index < len(defn.arg_types):
            raise _fail(stage, binding, f"{defn.name} has {len(defn.arg_types)} arguments", ShaxValueError)
        return defn.arg_types[prim.index]
    unbound = [f"x{a.id}" for a, t in zip(binding.args, operands) if t is None]
    if unbound:
        raise _fail(stage, binding, f"{', '.join(unbound)} used before being bound", ShaxValueError)
    if len(binding.args) != prim.arity:
        raise _fail(stage, binding, f"{prim.name} takes {prim.arity} operand(s), got {len(binding.args)}")
    try:
        return result_type(prim, *operands)
    except ShaxError as error:
        raise _fail(stage, binding, str(error), type(error)) from None


@collector_paused()
def infer_types(defn: Definition) -> Definition:
    env: dict[int, TensorType] = {}  # var id -> its inferred type
    typed_vars: dict[int, Var] = {}  # var id -> the var with that type (one object for all its uses)
    typed = []
    for binding in defn.bindings:
        if binding.var.id in env:
            raise _fail("infer_types", binding, f"x{binding.var.id} is bound twice", ShaxValueError)
        t = binding_type("infer_types", defn, binding, tuple([env.get(a.id) for a in binding.args]))
        env[binding.var.id] = t
        var = typed_vars[binding.var.id] = Var(binding.var.id, t)
        typed.append(Binding(var, binding.prim, tuple([typed_vars[a.id] for a in binding.args]), binding.source))
    _check_outputs("infer_types", defn, env)
    return mark_well_typed(Definition(defn.name, defn.arg_types, tuple(typed), defn.outputs))


@collector_paused()
def check_types(defn: Definition) -> Definition:
    """`defn` itself if every annotation agrees with the type rules; else a ShaxTypeError."""
    env: dict[int, TensorType] = {}
    for binding in defn.bindings:
        if binding.var.id in env:
            raise _fail("check_types", binding, f"x{binding.var.id} is bound twice", ShaxValueError)
        t = binding_type("check_types", defn, binding, tuple([env.get(a.id) for a in binding.args]))
        if binding.var.type != t:
            raise _fail("check_types", binding, f"annotated {binding.var.type}, but the rule gives {t}")
        env[binding.var.id] = t
    _check_outputs("check_types", defn, env)
    return mark_well_typed(defn)


def _check_outputs(stage: str, defn: Definition, env: dict[int, TensorType]) -> None:
    for v in defn.outputs:
        if v.id not in env:
            raise ShaxValueError(f"{stage}: {defn.name} returns x{v.id}, which is never bound")
        if v.type is not None and v.type != env[v.id]:
            raise ShaxTypeError(f"{stage}: {defn.name} returns x{v.id} annotated {v.type}, but it has type {env[v.id]}")
