"""Dead-code elimination: typed Definition -> typed Definition.

Keeps the bindings the outputs depend on, every effect (`Primitive.has_effect`: a
`debug_print`, a loop whose body prints) and what it reads, and every `xk = argj` binding
(they are the definition's interface, and cost nothing); drops the rest, then renumbers. One
backward sweep marks what is live, one forward sweep rebuilds: linear time.
A call none of whose bindings reads some of its callee's outputs calls the callee
without them (`prune_calls`). Idempotent: the output has no dead bindings, so a second
run changes nothing.
"""

from __future__ import annotations

from typing import Any

import attrs

from shax.ir import Binding, Definition
from shax.passes.rewrite import check_input, keep, walk
from shax.primitive import Arg
from shax.primitives import Call, Scan
from shax.well_typed import is_well_typed, mark_well_typed


def dce(defn: Definition) -> Definition:
    check_input("dce", defn)
    live = {v.id for v in defn.outputs}  # ids of input vars some output depends on
    kept = []  # the live bindings and the argument bindings, last first
    for binding in reversed(defn.bindings):
        if binding.var.id in live or isinstance(binding.prim, Arg) or binding.prim.has_effect():
            live.update(a.id for a in binding.args)
            kept.append(binding)
    return prune_calls(walk(Definition(defn.name, defn.arg_types, tuple(reversed(kept)), defn.outputs), keep))


def prune_calls(defn: Definition) -> Definition:
    """`defn` with each call whose bindings read only some of its callee's outputs
    calling the callee without the others (`shax.callees.pruned`, built once per callee
    and outputs kept), and each scan whose bindings read only some of its ys scanning its
    body without the others (its carries stay: the next iteration reads them). Two sweeps:
    linear time."""
    read: dict[tuple[Any, ...], set[int]] = {}  # operation (group key, operand var ids) -> the outputs read
    for b in defn.bindings:
        if isinstance(b.prim, (Call, Scan)):
            read.setdefault(_site(b), set(range(_kept_always(b.prim)))).add(b.prim.output)
    if all(len(outputs) == _outputs_of(site) for site, outputs in read.items()):
        return defn
    from shax.callees import pruned

    bindings = []
    for b in defn.bindings:
        prim = b.prim
        if isinstance(prim, (Call, Scan)):
            kept = tuple(sorted(read[_site(b)]))
            if len(kept) < prim.num_outputs:
                if isinstance(prim, Call):
                    pruned_prim: Call | Scan = Call(pruned(prim.defn, kept), kept.index(prim.output), prim.linear)
                else:
                    pruned_prim = attrs.evolve(prim, body=pruned(prim.body, kept), output=kept.index(prim.output))
                b = Binding(b.var, pruned_prim, b.args, b.source, b.origin)
        bindings.append(b)
    result = Definition(defn.name, defn.arg_types, tuple(bindings), defn.outputs)
    return mark_well_typed(result) if is_well_typed(defn) else result


def _kept_always(prim: Call | Scan) -> int:
    """The leading outputs kept whether read or not: a scan's carries."""
    return prim.carry if isinstance(prim, Scan) else 0


def _site(b: Binding) -> tuple[Any, ...]:
    prim = b.prim
    assert isinstance(prim, (Call, Scan))
    return (prim.group_key(), prim.num_outputs, *(a.id for a in b.args))


def _outputs_of(site: tuple[Any, ...]) -> int:
    count: int = site[1]
    return count
