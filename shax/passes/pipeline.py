"""Running passes by name (the original's `applyPasses`) and the default cleanup.

    apply_passes(defn, ["canonicalize_dot_general", "lower_reductions_to_sums_of_slices"])
    cleanup(defn)   # what stages such as zip apply to the programs they build

Passes run left to right (the original composed its list right to left with `foldr (.)`;
a Python list reads in order).

`cleanup` runs forward_identities, cse and dce in one walk:

    cleanup(defn) == dce(cse(forward_identities(defn)))

Stages such as zip clean every program they build, and running the three passes one
after the other would rebuild a large program three times. This makes the same
decisions as the three passes, in the same order, and builds bindings once, for what
survives all three:

    forward  a binding that merely passes an operand on is that operand
             (`forward_identities.forwarded`, with its neutral constants);
    merge    a binding that repeats one kept earlier is that one (`cse.cse_key`);
    drop     a backward sweep keeps what the outputs need and every `xk = argj` (dce).

Forwarding sees each binding's operands as forward_identities would (before merging),
and merging sees the surviving bindings numbered as cse would, so the result is the
three passes' binding for binding. One sweep forward, one back, one to build: linear.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from shax.core.builder import Builder
from shax.core.errors import ShaxTypeError, ShaxValueError, at
from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, Var
from shax.core.location import current_source
from shax.core.primitive import Arg
from shax.core.well_typed import mark_well_typed
from shax.passes.canonicalize_dot_general import canonicalize_dot_general
from shax.passes.cse import cse, cse_key
from shax.passes.dce import dce, prune_calls
from shax.passes.fold_constants import fold_constants
from shax.passes.fold_negations import fold_negations
from shax.passes.forward_identities import forward_identities, forwarded, forwarded_results, neutral_element
from shax.passes.hoist_accumulations import hoist_accumulations
from shax.passes.inline import inline
from shax.passes.lower_reductions import lower_reductions_to_sums_of_slices
from shax.passes.materialize_broadcasts import materialize_broadcasts
from shax.passes.nested import reaching_in
from shax.passes.rewrite import check_input
from shax.tracing.validation import expect_definition

Pass = Callable[[Definition], Definition]

# pass name -> the pass
PASSES: dict[str, Pass] = {
    p.__name__: p
    for p in (
        dce, cse, fold_constants, fold_negations, forward_identities, materialize_broadcasts, canonicalize_dot_general,
        lower_reductions_to_sums_of_slices, inline, hoist_accumulations,
    )
}  # fmt: skip

# Forwarding identities first exposes repeats to cse (`sin (reshape x)` with an identity
# reshape repeats `sin x`); cse and forwarding leave dead bindings for dce.
CLEANUP = ("forward_identities", "cse", "dce")


def apply_passes(defn: Definition, names: Sequence[str]) -> Definition:
    """`defn` through the passes named, in order."""
    expect_definition("apply_passes", defn)
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        message = f"apply_passes: names must be a list of pass names such as ['dce', 'cse'], got {names!r}"
        raise at(ShaxTypeError(message), current_source())
    unknown = [str(name) for name in names if not isinstance(name, str) or name not in PASSES]
    if unknown:
        message = f"apply_passes: unknown pass(es) {', '.join(unknown)}; the passes are {', '.join(PASSES)}"
        raise at(ShaxValueError(message), current_source())
    for name in names:
        defn = PASSES[name](defn)
    return defn


@reaching_in
@collector_paused()
def cleanup(defn: Definition) -> Definition:
    """The default cleanup: forward identities, then cse, then dce."""
    check_input("cleanup", defn)
    entries, operands, results, returned = _forward_and_merge(defn)
    live = _live(entries, operands, returned, results)
    builder = Builder()
    new_var: dict[int, Var] = {}  # value of a live entry -> its var in the output, renumbered in order
    for entry, binding in enumerate(entries):
        if live[entry]:
            kept = builder.keep_all(binding, [new_var[operand] for operand in operands[entry]])
            new_var.update(zip(results[entry], kept))
    # Returned vars keep the input's style: annotated only if they were.
    outputs = [new_var[e] if v.type is not None else Var(new_var[e].id) for v, e in zip(defn.outputs, returned)]
    return prune_calls(mark_well_typed(builder.build(defn.name, defn.arg_types, outputs)))


def _forward_and_merge(
    defn: Definition,
) -> tuple[list[Binding], list[tuple[int, ...]], list[range], list[int]]:
    """The bindings that survive forwarding and merging, as entries numbered in order, their
    results as values numbered in order (cse's numbering of its output): entry -> its
    binding, entry -> its operands' values, entry -> its values, and the values the
    definition returns."""
    forward_to: dict[int, Var] = {}  # input var id -> the input var whose value it has, once forwarded
    neutral: dict[int, int] = {}  # id of a kept constant's var -> 0 or 1, if all its elements are that
    value_of: dict[int, int] = {}  # id of a var kept by forwarding -> its value, once merged
    first: dict[tuple[Any, ...], int] = {}  # cse_key on values -> the entry computing it first
    entries: list[Binding] = []
    operands: list[tuple[int, ...]] = []
    results: list[range] = []
    num_values = 0
    for binding in defn.bindings:
        args = tuple([forward_to[a.id] for a in binding.args])
        if binding.prim.multi_result:
            for var, operand in zip(binding.vars, forwarded_results(binding, args)):
                forward_to[var.id] = operand or var
        else:
            operand = forwarded(binding, args, neutral)
            if operand is not None:
                forward_to[binding.vars[0].id] = operand
                continue
            forward_to[binding.vars[0].id] = binding.vars[0]
            element = neutral_element(binding.prim)
            if element is not None:
                neutral[binding.vars[0].id] = element
        entry_args = tuple([value_of[a.id] for a in args])
        key = cse_key(binding.prim, entry_args)
        entry = first.get(key)
        if entry is None:
            entry = first[key] = len(entries)
            entries.append(binding)
            operands.append(entry_args)
            results.append(range(num_values, num_values + len(binding.vars)))
            num_values += len(binding.vars)
        value_of.update(zip([v.id for v in binding.vars], results[entry]))
    return entries, operands, results, [value_of[forward_to[v.id].id] for v in defn.outputs]


def _live(
    entries: list[Binding], operands: list[tuple[int, ...]], returned: list[int], results: list[range]
) -> list[bool]:
    """entry -> whether dce keeps it: an output needs one of its values, it reads an
    argument, or it is an effect."""
    entry_of = [entry for entry, values in enumerate(results) for _ in values]  # value -> its entry
    live = [False] * len(entries)
    for value in returned:
        live[entry_of[value]] = True
    for entry in reversed(range(len(entries))):
        prim = entries[entry].prim
        if live[entry] or isinstance(prim, Arg) or prim.has_effect():
            live[entry] = True
            for operand in operands[entry]:
                live[entry_of[operand]] = True
    return live
