"""Inlining: typed Definition -> typed Definition without calls.

Each call is replaced by its callee's bindings, on the call's operands, and the
callee's calls by theirs in turn: the result computes what the calls computed, with
the same operations. The bindings of one call (its outputs) share one copy of the
callee. No other pass inlines: a call stays a call (and its callee is differentiated,
batched and compiled once) unless this pass is asked for. An explicit stack of the
callees being copied, not recursion: linear in the size of the result, however deep
the calls nest.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from shax.builder import Builder
from shax.ir import Binding, Definition, Var
from shax.passes.rewrite import check_input
from shax.primitive import Arg
from shax.primitives import Call
from shax.well_typed import mark_well_typed


class _Frame:
    """A definition being copied: its operands' vars in the result, and its vars'."""

    def __init__(self, defn: Definition, operands: list[Var], waiting: Binding | None) -> None:
        self.defn = defn
        self.operands = operands
        self.waiting = waiting  # the caller's call binding this copy computes
        self.bindings: Iterator[Binding] = iter(defn.bindings)
        self.env: dict[int, Var] = {}  # var id here -> its var in the result
        # (callee, linear, operand var ids) -> the outputs of that call, copied once
        self.calls: dict[tuple[Any, ...], list[Var]] = {}


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
                frame.env[binding.var.id] = builder.keep(binding, ())
            elif isinstance(prim, Arg):
                frame.env[binding.var.id] = frame.operands[prim.index]
            elif isinstance(prim, Call):
                args = [frame.env[a.id] for a in binding.args]
                outputs = frame.calls.get(_site(prim, args))
                if outputs is None:  # copy the callee first, then come back to this binding
                    stack.append(_Frame(prim.defn, args, binding))
                    break
                frame.env[binding.var.id] = outputs[prim.output]
            else:
                args = [frame.env[a.id] for a in binding.args]
                frame.env[binding.var.id] = builder.emit(prim, args, binding.var.type, binding.source, binding.origin)
        else:  # the frame is done
            stack.pop()
            outputs = [frame.env[v.id] for v in frame.defn.outputs]
            if frame.waiting is None:
                continue
            caller, waiting = stack[-1], frame.waiting
            assert isinstance(waiting.prim, Call)
            args = [caller.env[a.id] for a in waiting.args]
            caller.calls[_site(waiting.prim, args)] = outputs
            caller.env[waiting.var.id] = outputs[waiting.prim.output]
    result = [top.env[v.id] if v.type is not None else Var(top.env[v.id].id) for v in defn.outputs]
    return mark_well_typed(builder.build(defn.name, defn.arg_types, result))


def _site(prim: Call, args: list[Var]) -> tuple[Any, ...]:
    return (prim.key, prim.linear, *(a.id for a in args))
