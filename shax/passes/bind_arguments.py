"""Bind arguments: typed Definition -> typed Definition, with some arguments fixed to values.

`bind_arguments(defn, {k: value})` turns each `xj = argk` binding into `xj = value` (a
constant, which must have argument k's type), and renumbers the arguments left so that
they keep their order (grad fixes the output cotangent of a VJP to one). Vars, bindings
and outputs are otherwise unchanged, so evaluating the result on the other arguments
gives what `defn` gives with those values: one sweep, linear time. Not in the `PASSES`
registry, as it takes values besides the definition.
"""

from __future__ import annotations

import numpy as np

from shax.ir import Binding, Definition
from shax.primitives import Arg, Constant


def bind_arguments(defn: Definition, values: dict[int, np.ndarray]) -> Definition:
    """`defn` with the arguments indexed in `values` fixed to those constants; the
    others keep their order (grad fixes the output cotangent of a VJP to one)."""
    kept = [k for k in range(len(defn.arg_types)) if k not in values]
    position = {k: n for n, k in enumerate(kept)}
    bindings = []
    for b in defn.bindings:
        if isinstance(b.prim, Arg):
            k = b.prim.index
            b = Binding(b.var, Constant(values[k]) if k in values else Arg(position[k]), (), b.source)
        bindings.append(b)
    return Definition(defn.name, tuple(defn.arg_types[k] for k in kept), tuple(bindings), defn.outputs)
