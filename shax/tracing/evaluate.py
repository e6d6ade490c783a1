"""`shax.evaluate`: run a Definition, polymorphically.

Each primitive runs through the typeclass functions, so numpy arguments compute
values and tracer arguments inline the definition into the enclosing trace (which
is how transforms compose). Python numbers take the declared argument dtype;
numpy values keep theirs and must match the declared type. Inputs are never mutated.

A definition is checked before it runs, as `check_types` checks it (typed or not, and
once: a typed one that passes is remembered), so a malformed or ill-typed one is a
ShaxError naming the binding. On numpy values the operations then run typeclasses'
numpy methods directly (`shax.rules.evaluate.numpy_rules`), without a check per call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, a_type, at, reworded
from shax.core.ir import Binding, Definition
from shax.core.jax_arrays import from_jax
from shax.core.location import current_source
from shax.core.primitive import Arg
from shax.core.types import INTEGERS, TensorType, fits
from shax.core.walker import for_each_binding
from shax.rules.evaluate import eval_rules, numpy_rules
from shax.tracing.tracer import Tracer
from shax.tracing.validation import check_runnable


def evaluate(defn: Definition, *args: Any) -> list[Any]:
    """The values of `defn`'s outputs on `args`, one list entry per output."""
    check_runnable("evaluate", defn)  # so every var is bound once, before it is read
    try:
        if len(args) != len(defn.arg_types):
            expected = ", ".join(map(str, defn.arg_types))
            raise ShaxTypeError(
                f"evaluate: {defn.name} takes {len(defn.arg_types)} argument(s) ({expected}), got {len(args)}"
            )
        values = [
            check_argument(f"evaluate: argument {k} of {defn.name}", t, a)
            for k, (t, a) in enumerate(zip(defn.arg_types, args))
        ]
    except ShaxError as error:  # bad arguments: point at the caller's line
        raise at(error, current_source()) from None
    # On tracers, evaluation records the operations into their trace (inlining).
    records = any(type(v) is Tracer for v in values)
    rules = eval_rules if records else numpy_rules
    env: dict[int, Any] = {}  # var id -> its value

    def run(binding: Binding) -> None:
        prim = binding.prim
        if isinstance(prim, Arg):
            env[binding.vars[0].id] = values[prim.index]
        elif prim.multi_result:  # every result of the operation, from one run of it
            results = rules[prim](prim, [env[a.id] for a in binding.args])
            env.update(zip([v.id for v in binding.vars], results, strict=True))
        else:
            env[binding.vars[0].id] = rules[prim](prim, [env[a.id] for a in binding.args])

    for_each_binding("evaluate", defn.bindings, run, foreign_errors=True, records=records, rules=False)
    return [env[v.id] for v in defn.outputs]


def check_argument(what: str, declared: TensorType, value: Any) -> Any:
    """`value` as an argument of type `declared`: tracers and arrays must match it (a JAX
    array is read as numpy's), Python numbers are weakly typed and take its dtype."""
    if isinstance(value, Tracer):
        given = value.type
    elif (
        isinstance(value, (bool, int, float))
        and not isinstance(value, np.generic)  # numpy scalars keep their dtype
        and declared.shape == ()
        and fits(value, declared.dtype)
    ):
        return np.asarray(value, declared.dtype.numpy)
    elif type(value) is int and declared.shape == () and declared.dtype in INTEGERS:
        raise ShaxValueError(f"{what}: the Python int {value} does not fit {declared}")
    elif isinstance(value, (np.ndarray, np.generic, bool, int, float)):
        try:
            given = TensorType.of(value)
        except ShaxError as error:  # a dtype shax lacks, an int beyond i32
            raise reworded(error, f"{what}: {error}") from None
    else:
        array = from_jax(value)  # a JAX tangent or cotangent: read as numpy's
        if array is not value:
            return check_argument(what, declared, array)
        raise ShaxTypeError(f"{what} must be a tensor of type {declared}, got {a_type(value)}")
    if given != declared:
        raise ShaxTypeError(f"{what} has type {given}, but {declared} was declared")
    return value
