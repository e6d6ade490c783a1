"""What a typed definition costs to run: its flops, by each binding's cost rule
(`shax.rules.cost`), and the bytes of its values. `shax.stats` reports them.

An operation with several outputs (a call) is one binding; it runs, and its flops
count, once.

`recomputed_flops` counts, of those, the backward pass's recomputation: the bindings a
checkpoint policy recomputes rather than saves (`Binding.recomputed`, marked by
`shax.stages.unzip` and kept by `transpose`), whole, and the recomputed ones inside an
operation's definitions (a call's callee, a loop's body), scaled as its cost rule scales
them (a scan's body `length` times).
"""

from __future__ import annotations

from collections import Counter
from contextvars import ContextVar

import numpy as np

from shax.core.ir import Binding, Definition, type_of
from shax.core.types import TensorType
from shax.rules.cost import cost_rules


def nbytes(t: TensorType) -> int:
    """The bytes of a value of type `t` (booleans take one byte, as in numpy)."""
    return t.size * np.dtype(t.dtype.numpy).itemsize


def flops(defn: Definition) -> int:
    """The flops of one run of the typed definition `defn`."""
    return sum(flops_by_primitive(defn).values())


# Whether the flops counted are only the recomputed ones (`recomputed_flops`). A control
# operation's cost rule counts its definitions' flops through `shax.control.callees.flops`,
# which reads this (`counting_recomputed`), so the choice reaches callees and loop bodies
# whatever scaling their rules apply.
_only_recomputed: ContextVar[bool] = ContextVar("only_recomputed", default=False)


def counting_recomputed() -> bool:
    """Whether flops are being counted for `recomputed_flops` (only recomputed bindings)."""
    return _only_recomputed.get()


def flops_by_primitive(defn: Definition) -> Counter[str]:
    """Primitive name -> the flops of `defn`'s bindings of it (while `recomputed_flops`
    counts, only of those recomputed)."""
    types = {v.id: type_of(v) for b in defn.bindings for v in b.vars}
    total: Counter[str] = Counter()
    only_recomputed = _only_recomputed.get()
    for b in defn.bindings:
        if not only_recomputed or (b.prim.subdefinitions() and not b.recomputed):
            total[b.prim.name] += _cost(b, types)
        elif b.recomputed:  # all of it, its callee's bindings too
            token = _only_recomputed.set(False)
            try:
                total[b.prim.name] += _cost(b, types)
            finally:
                _only_recomputed.reset(token)
    return +total  # without the primitives that count 0


def recomputed_flops(defn: Definition) -> int:
    """The flops `defn` spends recomputing values a checkpoint policy did not save."""
    token = _only_recomputed.set(True)
    try:
        return sum(flops_by_primitive(defn).values())
    finally:
        _only_recomputed.reset(token)


def _cost(b: Binding, types: dict[int, TensorType]) -> int:
    out = tuple(types[v.id] for v in b.vars) if b.prim.multi_result else types[b.vars[0].id]
    # a primitive with no cost rule, written or derived, is "name: no cost rule for this primitive"
    return cost_rules[b.prim](b.prim, [types[a.id] for a in b.args], out)


def peak_bytes(defn: Definition) -> int:
    """The most bytes live at once while `defn` runs its bindings in order: a value is live
    from its binding to its last use (an output to the end), the arguments throughout."""
    return max([sum(map(nbytes, defn.arg_types)), *live_bytes(defn)])


def live_bytes(defn: Definition, held: int = 0) -> list[int]:
    """The bytes live as each binding of `defn` runs (before the values it reads last are
    freed), `held` more held by its caller: the arguments throughout, each value from its
    binding to its last use (an output to the end)."""
    n = len(defn.bindings)
    last_use = {a.id: i for i, b in enumerate(defn.bindings) for a in b.args}  # var id -> last reader
    last_use.update((v.id, n) for v in defn.outputs)
    live = held + sum(map(nbytes, defn.arg_types))
    freed: Counter[int] = Counter()  # binding index -> bytes whose last use it is
    timeline = []
    for i, b in enumerate(defn.bindings):
        if not b.prim.structural:  # an argument, counted above
            for var in b.vars:
                size = nbytes(type_of(var))
                live += size
                freed[last_use.get(var.id, i)] += size
        timeline.append(live)
        live -= freed.pop(i, 0)
    return timeline
