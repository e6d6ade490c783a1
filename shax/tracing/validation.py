"""Checks of definitions that stages and passes share (below both: `shax.stages` imports
`shax.passes`, and both import this).

- `check_parts`, `parts_checked`: a definition built of IR parts (Vars, Bindings,
  Primitives, TensorTypes), for hand-built ones: stages read those parts without looking;
- `binding_types`: the types of a binding's results from its operands' types, by its primitive's type rule;
- `check_types`: a typed definition whose every annotation agrees with the type rules
  (remembered, `shax.core.well_typed`, so a pipeline checks each definition once);
- `check_runnable`: the same for a definition typed or not (what evaluation checks);
- `check_well_formed`: typed, every operand bound before use, every argument declared;
- `check_linearized`: a LinearizedDefinition whose halves fit together;
- `expect_definition`, `expect_linearized`: what a stage, pass or `evaluate` was handed
  is the kind of definition it takes (not a LinearizedDefinition for a Definition, a
  function, None, ...), checked first so nothing else reads a missing attribute.

Errors name the stage or pass, the binding and the user's line that wrote it.
"""

from __future__ import annotations

import reprlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, a_type, at
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, LinearizedDefinition, Var
from shax.core.location import current_source
from shax.core.primitive import Arg, Primitive
from shax.core.types import TensorType
from shax.core.walker import fail, for_each_binding
from shax.core.well_typed import is_well_typed, mark_well_typed
from shax.rules.types import result_types


def check_parts(stage: str, defn: Definition) -> None:
    """Nothing if `defn` is built of IR parts: TensorTypes as argument types, Bindings of a
    Var to a Primitive on a tuple of Vars, Vars returned (a Var: an int id and a TensorType
    or None); else a ShaxTypeError naming `stage` and the part, at the caller's line."""
    _check_argument_types(stage, defn)
    for k, binding in enumerate(defn.bindings):
        problem = _malformed(binding)
        if problem is not None:
            raise at(ShaxTypeError(f"{stage}: {defn.name}: binding {k} {problem}"), current_source())
    bad = [v for v in defn.outputs if not _is_var(v)]
    if bad:
        raise at(ShaxTypeError(f"{stage}: {defn.name}: returns {bad[0]!r}, not a Var"), current_source())


@contextmanager
def parts_checked(stage: str, defn: Definition) -> Iterator[None]:
    """A block walking `defn`, which checks its parts (`check_parts`): its argument types
    at once, its bindings and outputs only if the block fails with an error that is no
    ShaxError (the AttributeError of a var that is not a Var), so that a large, well
    formed definition pays nothing for them. Its errors name the caller's line, where a
    binding has none of its own (a hand-built one)."""
    _check_argument_types(stage, defn)
    try:
        yield
    except ShaxError as error:
        raise at(error, current_source()) from None
    except Exception:
        check_parts(stage, defn)  # names the malformed part, if that is what failed
        raise


def _check_argument_types(stage: str, defn: Definition) -> None:
    """The definition's fields are tuples, its argument types TensorTypes."""
    for field in ("arg_types", "bindings", "outputs"):
        if not isinstance(getattr(defn, field), tuple):
            message = f"{stage}: {defn.name}: {field} must be a tuple, got {reprlib.repr(getattr(defn, field))}"
            raise at(ShaxTypeError(message), current_source())
    for k, t in enumerate(defn.arg_types):
        if not isinstance(t, TensorType):
            message = f"{stage}: {defn.name}: argument type {k} must be a TensorType like f32[2, 3], got {t!r}"
            raise at(ShaxTypeError(message), current_source())


def _is_var(v: Any) -> bool:
    return isinstance(v, Var) and type(v.id) is int and (v.type is None or isinstance(v.type, TensorType))


def _malformed(binding: Any) -> str | None:
    """What makes `binding` no binding of the IR, if anything."""
    if not isinstance(binding, Binding):
        return f"is {a_type(binding)}, not a Binding"
    if not all(_is_var(v) for v in binding.vars):
        shown = binding.vars[0] if len(binding.vars) == 1 else binding.vars
        return f"binds {shown!r}, not a Var (an int id, a TensorType or None)"
    if not isinstance(binding.prim, Primitive):
        return f"applies {binding.prim!r}, which is not a Primitive"
    if not isinstance(binding.args, tuple) or not all(_is_var(a) for a in binding.args):
        return f"has operands {binding.args!r}, not a tuple of Vars"
    if isinstance(binding.prim, Arg) and type(binding.prim.index) is not int:
        return f"reads argument {binding.prim.index!r}, not an int"
    return None


def binding_types(
    defn: Definition, binding: Binding, operands: tuple[TensorType | None, ...]
) -> tuple[TensorType, ...]:
    """The types of `binding`'s results given its operands' types (None for an unbound
    operand); as many as it binds vars, or an error.

    Callers pass the operand types, not their whole environment, so that checking the
    call (typeguard, in the tests) costs per operand, not per var of the definition."""
    for var in binding.vars:
        if type(var.id) is not int:  # (its other parts are checked when they fail: `parts_checked`)
            raise ShaxTypeError(f"binds a var numbered {var.id!r}, not by an int")
    prim = binding.prim
    if isinstance(prim, Arg):
        if not 0 <= prim.index < len(defn.arg_types):
            raise ShaxValueError(f"{defn.name} has {len(defn.arg_types)} argument(s)")
        types: tuple[TensorType, ...] = (defn.arg_types[prim.index],)
    else:
        types = _operation_types(binding, operands)
    if len(types) != len(binding.vars):
        raise ShaxTypeError(f"{prim.name} has {len(types)} result(s), but the binding defines {len(binding.vars)}")
    return types


def _operation_types(binding: Binding, operands: tuple[TensorType | None, ...]) -> tuple[TensorType, ...]:
    prim = binding.prim
    types = [t for t in operands if t is not None]
    if len(types) < len(operands):
        unbound = [f"x{a.id}" for a, t in zip(binding.args, operands) if t is None]
        raise ShaxValueError(f"{', '.join(unbound)} used before being bound")
    if len(binding.args) != prim.arity:
        raise ShaxTypeError(f"{prim.name} takes {prim.arity} operand(s), got {len(binding.args)}")
    return result_types(prim, *types)


def check_types(defn: Definition, stage: str = "check_types") -> Definition:
    """`defn` itself if every annotation agrees with the type rules; else a ShaxTypeError
    naming `stage` (the pass or function that checks on entry what it was handed)."""
    expect_definition(stage, defn)
    _check_types(stage, defn, annotated=True)
    return mark_well_typed(defn)


def check_runnable(stage: str, defn: Definition) -> None:
    """Nothing if every binding of `defn`, typed or not, is well formed and fits its
    primitive's type rule (and its annotation, where it has one); else a ShaxError naming
    `stage` and the binding. A typed definition that passes is remembered as check_types'."""
    expect_definition(stage, defn)
    if is_well_typed(defn):
        return
    _check_types(stage, defn, annotated=False)
    if defn.is_typed:
        mark_well_typed(defn)


@collector_paused()
def _check_types(stage: str, defn: Definition, annotated: bool) -> None:
    """`annotated`: every binding must be annotated with its type; else only those that are."""
    env: dict[int, TensorType] = {}  # var id -> its type

    def check(binding: Binding) -> None:
        for var in binding.vars:
            if var.id in env:
                raise ShaxValueError(f"x{var.id} is bound twice")
        types = binding_types(defn, binding, tuple([env.get(a.id) for a in binding.args]))
        for var, t in zip(binding.vars, types):
            if var.type is None and annotated:
                raise ShaxTypeError(f"untyped binding (it has {t}); run shax.stages.infer_types first")
            if var.type != t and (annotated or var.type is not None):
                raise ShaxTypeError(f"annotated {var.type!r}, but the rule gives {t}")
            env[var.id] = t

    with parts_checked(stage, defn):
        for_each_binding(stage, defn.bindings, check, records=False)
        check_outputs(stage, defn, env)


def check_outputs(stage: str, defn: Definition, env: dict[int, TensorType]) -> None:
    """Every returned var is bound (in `env`, var id -> type) and has its annotated type."""
    for v in defn.outputs:
        if v.id not in env:
            raise ShaxValueError(f"{stage}: {defn.name} returns x{v.id}, which is never bound")
        if v.type is not None and v.type != env[v.id]:
            raise ShaxTypeError(f"{stage}: {defn.name} returns x{v.id} annotated {v.type}, but it has type {env[v.id]}")


def check_well_formed(stage: str, defn: Definition) -> None:
    """Nothing if every binding of `defn` is typed, reads a declared argument or vars bound
    before it, and every returned var is bound; else a ShaxError naming `stage` and the binding.
    (Types themselves are checked as the stage recomputes each operation.)
    A binding with no source of its own (an argument, a hand-built one) is reported at
    the caller's line."""
    expect_definition(stage, defn)
    if is_well_typed(defn):  # check_types has seen all this, or a stage built it so
        return
    try:
        _check_well_formed(stage, defn)
    except ShaxError as error:
        raise at(error, current_source()) from None


def _check_well_formed(stage: str, defn: Definition) -> None:
    check_parts(stage, defn)
    bound: dict[int, TensorType] = {}  # var id -> its type
    for binding in defn.bindings:
        if any(v.type is None for v in binding.vars):
            raise fail(stage, binding, "the definition is untyped; run shax.stages.infer_types first")
        unbound = [f"x{a.id}" for a in binding.args if a.id not in bound]
        if unbound:
            raise fail(stage, binding, f"{', '.join(unbound)} used before being bound", ShaxValueError)
        for var in binding.vars:
            if var.id in bound:
                raise fail(stage, binding, f"x{var.id} is bound twice", ShaxValueError)
        if isinstance(binding.prim, Arg) and not 0 <= binding.prim.index < len(defn.arg_types):
            raise fail(stage, binding, f"{defn.name} has {len(defn.arg_types)} argument(s)", ShaxValueError)
        # (a stage's rule is called with the operands: a wrong count would fail inside it)
        if len(binding.args) != binding.prim.arity:
            message = f"{binding.prim.name} takes {binding.prim.arity} operand(s), got {len(binding.args)}"
            raise fail(stage, binding, message)
        bound.update((v.id, v.type) for v in binding.vars if v.type is not None)
    unbound = [f"x{v.id}" for v in defn.outputs if v.id not in bound]
    if unbound:
        raise ShaxValueError(f"{stage}: {defn.name} returns {', '.join(unbound)}, never bound")
    check_outputs(stage, defn, bound)  # their annotations


def check_linearized(stage: str, lin: LinearizedDefinition) -> None:
    """Both definitions well formed, and the primal's last `num_residuals` results are the
    linear definition's last `num_residuals` arguments."""
    expect_linearized(stage, lin)
    check_well_formed(stage, lin.primal)
    check_well_formed(stage, lin.linear)
    primal, linear, count = lin.primal, lin.linear, lin.num_residuals
    if type(count) is not int or not 0 <= count <= min(len(primal.outputs), len(linear.arg_types)):
        message = (
            f"{primal.name} returns {len(primal.outputs)} value(s) and {linear.name} takes {len(linear.arg_types)}"
        )
        raise at(ShaxValueError(f"{stage}: {count!r} residual(s) do not fit: {message}"), current_source())
    returned = primal.output_types()[len(primal.outputs) - count :]
    taken = linear.arg_types[len(linear.arg_types) - count :]
    if returned != taken:
        shown = ", ".join(map(str, returned)), ", ".join(map(str, taken))
        message = f"{stage}: {primal.name} returns residuals ({shown[0]}) but {linear.name} takes ({shown[1]})"
        raise at(ShaxTypeError(message), current_source())


def expect_definition(stage: str, value: Any) -> Definition:
    """`value` if it is a Definition; else a ShaxTypeError naming `stage`, what it was
    given and how to get a Definition, at the caller's line."""
    if isinstance(value, Definition):
        return value
    raise at(ShaxTypeError(f"{stage}: expected a Definition, got {_described(value)}"), current_source())


def expect_linearized(stage: str, value: Any) -> LinearizedDefinition:
    """`value` if it is a LinearizedDefinition; else a ShaxTypeError as `expect_definition`'s."""
    if isinstance(value, LinearizedDefinition):
        return value
    message = f"{stage}: expected a LinearizedDefinition (from shax.stages.linearize), got {_described(value)}"
    raise at(ShaxTypeError(message), current_source())


def _described(value: Any) -> str:
    """What was given instead, with a hint where the mix-up is a common one."""
    if isinstance(value, LinearizedDefinition):
        return (
            "a LinearizedDefinition: its halves are .primal and .linear, and "
            "shax.stages.zip_definitions joins them into one Definition"
        )
    if isinstance(value, Definition):
        return f"the Definition {reprlib.repr(value.name)}: shax.stages.linearize makes a LinearizedDefinition of it"
    if callable(value):
        return f"the function {reprlib.repr(value)}: shax.trace(f, *arg_types) makes a Definition of it"
    return f"{a_type(value)} ({reprlib.repr(value)})"
