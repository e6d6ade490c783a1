"""Fold negations: typed Definition -> typed Definition with no more numpy calls, often fewer.

Reverse mode is full of negations: the transpose of `a - b` hands b the cotangent `-ct`,
which later products carry along (`w * -ct`) until a sum adds it. This pass carries a
negation as a sign instead of a value, and lets the sum absorb it:

    a + -u  ->  a - u        -u + b  ->  b - u        a - -u  ->  a + u
    -(-u)  ->  u             -u - b  ->  -(u + b)     -u * b  ->  -(u * b)   (also u / b, b / u)

A negated value is never computed when every use of it absorbs its sign, or passes it
on to a value all of whose uses do in turn (`_absorbing`); so no negation is ever added,
and each negation whose value is carried as a sign is one numpy call fewer. What the
rewrites make equal is merged as `cse` merges it: `w * -ct` and `w * ct` become one
product.

Every rewrite is exact in IEEE arithmetic (negation only flips a sign bit, and rounding
is symmetric), and in integers' wrap-around: results equal the input's, bit for bit,
up to the sign of a NaN. Three sweeps (forward, back, forward): linear time.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from shax.core.gcpause import collector_paused
from shax.core.ir import Binding, Definition, Var
from shax.core.primitive import Primitive
from shax.core.types import bool_
from shax.core.well_typed import is_well_typed, mark_well_typed
from shax.passes.cse import cse_key
from shax.passes.nested import reaching_in
from shax.passes.rewrite import check_input, keep, walk
from shax.primitives import Add, Div, Mul, Neg, Sub

# The operations that can carry a negated operand (`-u` in, a negated result out or
# none), by kind.
_NEG, _ADD, _SUB, _PRODUCT = "negate", "add", "sub", "product"
_KINDS: dict[type[Primitive], str] = {Neg: _NEG, Add: _ADD, Sub: _SUB, Mul: _PRODUCT, Div: _PRODUCT}


@reaching_in
def fold_negations(defn: Definition) -> Definition:
    check_input("fold_negations", defn)
    return walk(folded(defn), keep)  # renumbered, as every pass's output is


@collector_paused()
def folded(defn: Definition) -> Definition:
    """`fold_negations` of the typed `defn` without renumbering (what compiling needs, for
    less): a binding the folding leaves as it was stays the same object, the bindings it
    makes take new numbers after the largest. Well typed if `defn` is: each new binding
    has the type of the one it replaces, on operands of the same types."""
    if not any(type(b.prim) is Neg for b in defn.bindings):
        return defn
    result = _Folding(defn, _absorbing(defn)).run()
    return mark_well_typed(result) if is_well_typed(defn) else result


class _Folding:
    """The forward sweep. A value the folding changed is read through `renamed`; a value
    held as a sign is -`negated[id]`, never computed."""

    def __init__(self, defn: Definition, absorbing: set[int]) -> None:
        self.defn, self.absorbing = defn, absorbing
        self.renamed: dict[int, Var] = {}  # input var id -> the output var holding its value
        self.negated: dict[int, Var] = {}  # input var id -> u, for each value held as -u
        self.first: dict[tuple[Any, ...], Var] = {}  # cse_key on output var ids -> the var computing it first
        self.bindings: list[Binding] = []
        self.fresh = itertools.count(max((v.id for b in defn.bindings for v in b.vars), default=-1) + 1)

    def run(self) -> Definition:
        renamed, negated = self.renamed, self.negated
        for binding in self.defn.bindings:
            kind = _KINDS.get(type(binding.prim))
            if renamed and any(a.id in renamed for a in binding.args):
                binding = Binding(
                    binding.vars, binding.prim, tuple([renamed.get(a.id, a) for a in binding.args]),
                    binding.source, binding.origin,
                )  # fmt: skip
            if kind is None:
                self.bindings.append(binding)
            elif negated and any(a.id in negated for a in binding.args):
                self.fold(binding, kind)
            elif kind is _NEG and binding.var.id in self.absorbing:  # -a, carried as a sign
                negated[binding.var.id] = binding.args[0]
            else:
                self.emit(binding, binding.prim, binding.args)
        # Returned vars keep the input's style: annotated only if they were (never held as signs).
        outputs = [renamed.get(v.id, v) for v in self.defn.outputs]
        outputs = [r if v.type is not None else Var(r.id) for v, r in zip(self.defn.outputs, outputs)]
        return Definition(self.defn.name, self.defn.arg_types, tuple(self.bindings), tuple(outputs))

    def fold(self, binding: Binding, kind: str) -> None:
        """`binding`, an operand of which is held as a sign."""
        prim, negated = binding.prim, self.negated
        signs = [a.id in negated for a in binding.args]
        plain = [negated.get(a.id, a) for a in binding.args]  # the operands with their signs dropped
        if kind is _NEG:
            self.renamed[binding.var.id] = plain[0]  # -(-u) = u
            return
        if kind is _PRODUCT:  # -a * b = -(a * b), -a * -b = a * b
            if signs[0] == signs[1]:
                self.emit(binding, prim, plain)
            else:
                self.negative(binding, prim, plain)
            return
        (a, b), (neg_a, neg_b) = plain, signs
        if kind is _ADD:
            if neg_a and neg_b:  # -a + -b = -(a + b)
                self.negative(binding, prim, plain)
            else:  # -a + b = b - a, a + -b = a - b
                self.emit(binding, Sub(), [b, a] if neg_a else [a, b])
        elif neg_a and neg_b:  # -a - -b = b - a
            self.emit(binding, prim, [b, a])
        elif neg_b:  # a - -b = a + b
            self.emit(binding, Add(), plain)
        else:  # -a - b = -(a + b)
            self.negative(binding, Add(), plain)

    def emit(self, binding: Binding, prim: Primitive, args: Sequence[Var], var: Var | None = None) -> Var:
        """`binding`'s value (or `var`'s, of its type) as `prim` on `args`, unless an
        earlier binding computes that (`cse`'s key: the rewrites make repeats)."""
        key = cse_key(prim, [a.id for a in args])
        found = self.first.get(key)
        if found is None:
            if var is None and prim is binding.prim and tuple(args) == binding.args:
                found = binding.var
                self.bindings.append(binding)
            else:
                found = binding.var if var is None else var
                self.bindings.append(Binding(found, prim, tuple(args), binding.source, binding.origin))
            self.first[key] = found
        if var is None and found is not binding.var:
            self.renamed[binding.var.id] = found
        return found

    def negative(self, binding: Binding, prim: Primitive, args: Sequence[Var]) -> None:
        """`binding`'s value as -(`prim` on `args`): held as a sign where its uses take
        one, else computed."""
        value = self.emit(binding, prim, args, var=Var(next(self.fresh), binding.var.type))
        if binding.var.id in self.absorbing:
            self.negated[binding.var.id] = value
        else:
            self.emit(binding, Neg(), [value])


def _absorbing(defn: Definition) -> set[int]:
    """The ids of the values every use of which takes their negation as a sign: a negate,
    a sum (which subtracts instead), the subtrahend of a difference; or, when the result
    is itself such a value, the minuend, a factor of a product or either side of a
    quotient. A sum of two negated values is negated, so a summand counts only if the
    result is such a value or the other summand is never negated. Backwards: a value's
    uses come after it."""
    # Forwards, the values that may be held negated (a superset): negates, products and
    # quotients of one, differences from one, sums of two.
    negatable: set[int] = set()
    for binding in defn.bindings:
        kind = _KINDS.get(type(binding.prim))
        if kind is None:
            continue
        signs = [a.id in negatable for a in binding.args]
        if kind is _NEG or (kind is _SUB and signs[0]) or (kind is _PRODUCT and any(signs)) or all(signs):
            negatable.add(binding.var.id)
    absorbing: set[int] = set()
    blocked: set[int] = {v.id for v in defn.outputs}  # values some use of which needs them computed
    for binding in reversed(defn.bindings):
        kind = _KINDS.get(type(binding.prim))
        if kind is None:  # needs its operands computed
            blocked.update([a.id for a in binding.args if a.id in negatable])
            continue
        v = binding.var.id
        if v in negatable and v not in blocked and binding.var.type is not None and binding.var.type.dtype != bool_:
            absorbing.add(v)
        if kind is _NEG or v in absorbing:  # takes a negated operand, or passes its sign on
            continue
        a, b = binding.args
        if kind is _ADD:  # -a + -b = -(a + b): a summand's sign is absorbed if the other's is not negated
            blocked.update([x.id for x, other in ((a, b), (b, a)) if other.id in negatable])
        elif kind is _SUB:  # a - -b = a + b, but -a - b = -(a + b)
            blocked.add(a.id)
        else:  # -a * b = -(a * b)
            blocked.update((a.id, b.id))
    return absorbing
