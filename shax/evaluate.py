"""`shax.evaluate`: run a Definition, polymorphically.

Each primitive runs through the typeclass functions, so numpy arguments compute
values and tracer arguments inline the definition into the enclosing trace (which
is how transforms compose). Python numbers take the declared argument dtype;
numpy values keep theirs and must match the declared type. Inputs are never mutated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shax.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.ir import Binding, Definition
from shax.location import current_source
from shax.primitive import Arg
from shax.rules.evaluate import eval_rules
from shax.tracer import Tracer
from shax.types import DType, TensorType, bool_
from shax.validation import expect_definition
from shax.walker import for_each_binding


def evaluate(defn: Definition, *args: Any) -> list[Any]:
    """The values of `defn`'s outputs on `args`, one list entry per output."""
    expect_definition("evaluate", defn)
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
    env: dict[int, Any] = {}  # var id -> its value

    def run(binding: Binding) -> None:
        prim = binding.prim
        if binding.var.id in env:
            raise ShaxValueError(f"x{binding.var.id} is bound twice")
        if isinstance(prim, Arg):
            if not 0 <= prim.index < len(values):
                raise ShaxValueError(f"{defn.name} has {len(values)} argument(s)")
            env[binding.var.id] = values[prim.index]
            return
        try:
            operands = [env[a.id] for a in binding.args]
        except KeyError:
            unbound = ", ".join(f"x{a.id}" for a in binding.args if a.id not in env)
            raise ShaxValueError(f"{unbound} used before being bound") from None
        env[binding.var.id] = eval_rules[prim](prim, operands)

    # On tracers, evaluation records the operations into their trace (inlining).
    records = any(type(v) is Tracer for v in values)
    for_each_binding("evaluate", defn.bindings, run, foreign_errors=True, records=records)
    missing = [f"x{v.id}" for v in defn.outputs if v.id not in env]
    if missing:
        raise ShaxValueError(f"evaluate: {defn.name} returns {', '.join(missing)}, never bound")
    return [env[v.id] for v in defn.outputs]


def check_argument(what: str, declared: TensorType, value: Any) -> Any:
    """`value` as an argument of type `declared`: tracers and arrays must match it,
    Python numbers are weakly typed and take its dtype."""
    if isinstance(value, Tracer):
        given = value.type
    elif (
        isinstance(value, (bool, int, float))
        and not isinstance(value, np.generic)  # numpy scalars keep their dtype
        and declared.shape == ()
        and _fits(value, declared.dtype)
    ):
        return np.asarray(value, declared.dtype.numpy)
    elif isinstance(value, (np.ndarray, np.generic, bool, int, float)):
        try:
            given = TensorType.of(value)
        except ShaxError as error:  # a dtype shax lacks
            raise type(error)(f"{what}: {error}") from None
    else:
        raise ShaxTypeError(f"{what} must be a tensor of type {declared}, got a {type(value).__name__}")
    if given != declared:
        raise ShaxTypeError(f"{what} has type {given}, but {declared} was declared")
    return value


def _fits(number: bool | int | float, dtype: DType) -> bool:
    """Whether a Python number may stand for a scalar of `dtype` (no silent truncation)."""
    if isinstance(number, bool):
        return dtype == bool_
    return dtype.is_float or isinstance(number, int) and dtype != bool_
