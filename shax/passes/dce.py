"""Dead-code elimination: typed Definition -> typed Definition.

Keeps the bindings the outputs depend on, and every `xk = argj` binding (they are the
definition's interface, and cost nothing); drops the rest, then renumbers. One
backward sweep marks what is live, one forward sweep rebuilds: linear time.
Idempotent: the output has no dead bindings, so a second run changes nothing.
"""

from __future__ import annotations

from shax.builder import Builder
from shax.ir import Binding, Definition, Var
from shax.passes.rewrite import keep, rewrite
from shax.primitives import Arg


def dce(defn: Definition) -> Definition:
    live = {v.id for v in defn.outputs}  # ids of input vars some output depends on
    for binding in reversed(defn.bindings):
        if binding.var.id in live or isinstance(binding.prim, Arg):
            live.update(a.id for a in binding.args)

    def keep_live(builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var | None:
        if binding.var.id in live or isinstance(binding.prim, Arg):
            return keep(builder, binding, args)
        return None

    return rewrite("dce", defn, keep_live)
