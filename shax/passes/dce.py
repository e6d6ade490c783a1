"""Dead-code elimination: typed Definition -> typed Definition.

Keeps the bindings the outputs depend on, and every `xk = argj` binding (they are the
definition's interface, and cost nothing); drops the rest, then renumbers. One
backward sweep marks what is live, one forward sweep rebuilds: linear time.
Idempotent: the output has no dead bindings, so a second run changes nothing.
"""

from __future__ import annotations

from shax.ir import Definition
from shax.passes.rewrite import check_input, keep, walk
from shax.primitive import Arg


def dce(defn: Definition) -> Definition:
    check_input("dce", defn)
    live = {v.id for v in defn.outputs}  # ids of input vars some output depends on
    kept = []  # the live bindings and the argument bindings, last first
    for binding in reversed(defn.bindings):
        if binding.var.id in live or isinstance(binding.prim, Arg):
            live.update(a.id for a in binding.args)
            kept.append(binding)
    return walk(Definition(defn.name, defn.arg_types, tuple(reversed(kept)), defn.outputs), keep)
