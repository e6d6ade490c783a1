"""Bind arguments: typed Definition -> typed Definition, with some arguments fixed to values.

`bind_arguments(defn, {k: value})` turns each `xj = argk` binding into `xj = value` (a
constant, which must have argument k's type), and renumbers the arguments left so that
they keep their order (grad fixes the output cotangent of a VJP to one). Vars, bindings
and outputs are otherwise unchanged, so evaluating the result on the other arguments
gives what `defn` gives with those values: one sweep, linear time. Not in the `PASSES`
registry, as it takes values besides the definition.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, ShaxValueError, at
from shax.core.ir import Binding, Definition
from shax.core.location import current_source
from shax.core.well_typed import is_well_typed, mark_well_typed
from shax.primitives import Arg, Constant
from shax.tracing.evaluate import check_argument
from shax.tracing.tracer import Tracer
from shax.tracing.validation import check_runnable


def bind_arguments(defn: Definition, values: dict[int, np.ndarray]) -> Definition:
    """`defn` with the arguments indexed in `values` fixed to those constants; the
    others keep their order (grad fixes the output cotangent of a VJP to one)."""
    check_runnable("bind_arguments", defn)  # (an argument binding it rewrites must read a declared argument)
    if not isinstance(values, dict):
        message = f"bind_arguments: values must be a dict from argument index to value, got {type(values).__name__}"
        raise at(ShaxTypeError(message), current_source())
    try:
        values = {k: _constant(defn, k, v) for k, v in values.items()}
    except ShaxError as error:
        raise at(error, current_source()) from None
    kept = [k for k in range(len(defn.arg_types)) if k not in values]
    position = {k: n for n, k in enumerate(kept)}
    bindings = []
    for b in defn.bindings:
        if isinstance(b.prim, Arg):
            k = b.prim.index
            b = Binding(b.var, Constant(values[k]) if k in values else Arg(position[k]), (), b.source, b.origin)
        bindings.append(b)
    bound = Definition(defn.name, tuple(defn.arg_types[k] for k in kept), tuple(bindings), defn.outputs)
    # Each constant has its argument's type (checked above): a well-typed one stays so.
    return mark_well_typed(bound) if is_well_typed(defn) else bound


def _constant(defn: Definition, k: Any, value: Any) -> np.ndarray:
    """The value to fix argument `k` to, as an array of its declared type."""
    count = len(defn.arg_types)
    if type(k) is not int or not 0 <= k < count:
        raise ShaxValueError(f"bind_arguments: {defn.name} has {count} argument(s), no argument {k!r}")
    what = f"bind_arguments: the value of argument {k} of {defn.name}"
    if isinstance(value, Tracer):
        raise ShaxTypeError(f"{what} is a tracer; a bound argument is a constant (a numpy value)")
    return np.asarray(check_argument(what, defn.arg_types[k], value))
