"""Passes reach into the definitions an operation holds: a cond's branches, a loop's
body, a call's callee (issue 33).

    @reaching_in
    def dce(defn): ...

`reaching_in(pass_)` runs `pass_` on every definition held inside `defn`, innermost first,
then on `defn`. Each held definition is rewritten once (one held twice, as both branches
of a cond, stays one), and the operation holding it is rebuilt through its
`with_rewritten` trait, so this layer names no control operation. A pass keeps a
definition's signature (its arguments and outputs: the holder's interface), so the holder
keeps its type; what a pass leaves as it was stays the same object, and so does its
holder, so what is kept per definition (derivatives, compiled code) is kept.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from shax.core.ir import Binding, Definition
from shax.core.well_typed import is_well_typed, mark_well_typed

Pass = Callable[[Definition], Definition]


def reaching_in(pass_: Pass) -> Pass:
    """`pass_`, run on the definitions held inside its input before the input itself."""

    @functools.wraps(pass_)
    def run(defn: Definition) -> Definition:
        if not isinstance(defn, Definition):  # the pass's own check says what is wrong
            return pass_(defn)
        return pass_(inside_rewritten(defn, pass_))

    return run


def inside_rewritten(defn: Definition, pass_: Pass) -> Definition:
    """`defn` whose held definitions, at every depth, went through `pass_`. The recursion
    is as deep as operations nest in one another (a cond in a scan body: 2), not as long
    as a program."""
    done: dict[int, tuple[Definition, Definition]] = {}  # id of a held definition -> (it, what it became)

    def rewrite(held: Definition) -> Definition:
        if id(held) not in done:
            new = pass_(holders_rebuilt(held))
            done[id(held)] = (held, held if new == held else new)  # `held` kept alive: its id stays its own
        return done[id(held)][1]

    def holders_rebuilt(d: Definition) -> Definition:
        bindings = list(d.bindings)
        for k, b in enumerate(bindings):
            prim = b.prim.with_rewritten(rewrite)
            if prim is not b.prim:
                bindings[k] = Binding(b.vars, prim, b.args, b.source, b.origin)
        if all(new is old for new, old in zip(bindings, d.bindings)):
            return d
        rebuilt = Definition(d.name, d.arg_types, tuple(bindings), d.outputs)
        # the held definitions keep their signatures, so each holder keeps its types
        return mark_well_typed(rebuilt) if is_well_typed(d) else rebuilt

    return holders_rebuilt(defn)
