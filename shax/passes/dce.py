"""Dead-code elimination: typed Definition -> typed Definition.

Keeps the bindings the outputs depend on, and every `xk = argj` binding (they are the
definition's interface, and cost nothing); drops the rest, then renumbers. One
backward sweep marks what is live, one forward sweep rebuilds: linear time.
A call none of whose bindings reads some of its callee's outputs calls the callee
without them (`prune_calls`). Idempotent: the output has no dead bindings, so a second
run changes nothing.
"""

from __future__ import annotations

from typing import Any

from shax.ir import Binding, Definition
from shax.passes.rewrite import check_input, keep, walk
from shax.primitive import Arg
from shax.primitives import Call
from shax.well_typed import is_well_typed, mark_well_typed


def dce(defn: Definition) -> Definition:
    check_input("dce", defn)
    live = {v.id for v in defn.outputs}  # ids of input vars some output depends on
    kept = []  # the live bindings and the argument bindings, last first
    for binding in reversed(defn.bindings):
        if binding.var.id in live or isinstance(binding.prim, Arg):
            live.update(a.id for a in binding.args)
            kept.append(binding)
    return prune_calls(walk(Definition(defn.name, defn.arg_types, tuple(reversed(kept)), defn.outputs), keep))


def prune_calls(defn: Definition) -> Definition:
    """`defn` with each call whose bindings read only some of its callee's outputs
    calling the callee without the others (`shax.callees.pruned`, built once per callee
    and outputs kept). Two sweeps: linear time."""
    read: dict[tuple[Any, ...], set[int]] = {}  # call (callee, operand var ids) -> the outputs read
    whole = True  # every call's every output is read
    for b in defn.bindings:
        if isinstance(b.prim, Call):
            outputs = read.setdefault(_call_site(b), set())
            outputs.add(b.prim.output)
            whole = whole and len(outputs) == b.prim.num_outputs
    if whole or all(len(outputs) == n for (_, n, _), outputs in ((k[0], v) for k, v in read.items())):
        return defn
    from shax.callees import pruned

    bindings = []
    for b in defn.bindings:
        prim = b.prim
        if isinstance(prim, Call):
            kept = tuple(sorted(read[_call_site(b)]))
            if len(kept) < prim.num_outputs:
                callee = pruned(prim.defn, kept)
                b = Binding(b.var, Call(callee, kept.index(prim.output), prim.linear), b.args, b.source, b.origin)
        bindings.append(b)
    result = Definition(defn.name, defn.arg_types, tuple(bindings), defn.outputs)
    return mark_well_typed(result) if is_well_typed(defn) else result


def _call_site(b: Binding) -> tuple[Any, ...]:
    prim = b.prim
    assert isinstance(prim, Call)
    return ((prim.key, prim.num_outputs, prim.linear), *(a.id for a in b.args))
