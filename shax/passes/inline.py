"""Inlining: typed Definition -> typed Definition without calls.

Each call is replaced by its callee's bindings, on the call's operands, and the
callee's calls by theirs in turn: the result computes what the calls computed, with
the same operations. No other pass inlines: a call stays a call (and its callee is differentiated,
batched and compiled once) unless this pass is asked for. An explicit stack of the
callees being copied, not recursion: linear in the size of the result, however deep
the calls nest.
"""

from __future__ import annotations

from collections.abc import Iterator

from shax.core.builder import Builder
from shax.core.ir import Binding, Definition, Var
from shax.core.primitive import Arg
from shax.core.well_typed import mark_well_typed
from shax.passes.nested import reaching_in
from shax.passes.rewrite import check_input


class _Frame:
    """A definition being copied: its operands' vars in the result, and its vars'."""

    def __init__(self, defn: Definition, operands: list[Var], waiting: Binding | None) -> None:
        self.defn = defn
        self.operands = operands
        self.waiting = waiting  # the caller's call binding this copy computes
        self.bindings: Iterator[Binding] = iter(defn.bindings)
        self.env: dict[int, Var] = {}  # var id here -> its var in the result


@reaching_in
def inline(defn: Definition) -> Definition:
    check_input("inline", defn)
    builder = Builder()
    top = _Frame(defn, [], None)
    stack = [top]
    while stack:
        frame = stack[-1]
        for binding in frame.bindings:
            prim = binding.prim
            if isinstance(prim, Arg) and frame is top:
                frame.env[binding.vars[0].id] = builder.keep(binding, ())
            elif isinstance(prim, Arg):
                frame.env[binding.vars[0].id] = frame.operands[prim.index]
            elif (callee := prim.callee()) is not None:  # copy the callee, then go on after this binding
                stack.append(_Frame(callee, [frame.env[a.id] for a in binding.args], binding))
                break
            else:
                args = [frame.env[a.id] for a in binding.args]
                frame.env.update(zip([v.id for v in binding.vars], builder.emit_like(binding, args)))
        else:  # the frame is done
            stack.pop()
            if frame.waiting is not None:
                outputs = [frame.env[v.id] for v in frame.defn.outputs]
                stack[-1].env.update(zip([v.id for v in frame.waiting.vars], outputs))
    result = [top.env[v.id] if v.type is not None else Var(top.env[v.id].id) for v in defn.outputs]
    return mark_well_typed(builder.build(defn.name, defn.arg_types, result))
