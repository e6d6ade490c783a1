"""Dead-code elimination: typed Definition -> typed Definition.

Keeps the bindings the outputs depend on, every effect (`Primitive.has_effect`: a
`debug_print`, a loop whose body prints) and what it reads, and every `xk = argj` binding
(they are the definition's interface, and cost nothing); drops the rest, then renumbers. One
backward sweep marks what is live, one forward sweep rebuilds: linear time.
A call some of whose results nothing reads calls its callee without them
(`prune_calls`). Idempotent: the output has no dead bindings, so a second run changes
nothing.
"""

from __future__ import annotations

from shax.core.ir import Binding, Definition
from shax.core.primitive import Arg
from shax.core.well_typed import mark_well_typed
from shax.passes.nested import reaching_in
from shax.passes.rewrite import check_input, keep, walk


@reaching_in
def dce(defn: Definition) -> Definition:
    check_input("dce", defn)
    live = {v.id for v in defn.outputs}  # ids of input vars some output depends on
    kept = []  # the live bindings and the argument bindings, last first
    for binding in reversed(defn.bindings):
        if any(v.id in live for v in binding.vars) or isinstance(binding.prim, Arg) or binding.prim.has_effect():
            live.update(a.id for a in binding.args)
            kept.append(binding)
    return prune_calls(walk(Definition(defn.name, defn.arg_types, tuple(reversed(kept)), defn.outputs), keep))


def prune_calls(defn: Definition) -> Definition:
    """`defn` with each operation some of whose results nothing reads computing fewer
    where it can (`Primitive.pruned`: a call calls its callee without those outputs, a
    scan scans its body without those ys, its carries staying). Two sweeps: linear time."""
    read = {v.id for v in defn.outputs} | {a.id for b in defn.bindings for a in b.args}
    bindings, pruned_any = [], False
    for b in defn.bindings:
        if len(b.vars) > 1 or b.prim.multi_result:
            found = b.prim.pruned([v.id in read for v in b.vars])
            if found is not None:
                prim, kept = found
                b = Binding(tuple(b.vars[k] for k in kept), prim, b.args, b.source, b.origin)
                pruned_any = True
        bindings.append(b)
    if not pruned_any:
        return defn
    result = Definition(defn.name, defn.arg_types, tuple(bindings), defn.outputs)
    return walk(mark_well_typed(result), keep)  # renumbered: no gap where a result was
