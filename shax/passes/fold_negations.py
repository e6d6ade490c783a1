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
up to the sign of a NaN. Two sweeps, one back and one forward: linear time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from shax.builder import Builder
from shax.ir import Binding, Definition, Var
from shax.passes.cse import cse_key
from shax.passes.rewrite import check_input, walk
from shax.primitive import Primitive
from shax.primitives import Add, Div, Mul, Neg, Sub
from shax.types import bool_

# The operations that can carry a negated operand: `-u` in, a negated result out or none.
_CARRIERS = (Neg, Add, Sub, Mul, Div)


def fold_negations(defn: Definition) -> Definition:
    check_input("fold_negations", defn)
    return _Folding(_absorbing(defn)).run(defn)


class _Folding:
    """The forward sweep: each binding rebuilt on its operands' output vars, with a
    negated operand held as a sign (a stand-in var, see `held`)."""

    def __init__(self, absorbing: set[int]) -> None:
        self.absorbing = absorbing
        self.negated: dict[int, Var] = {}  # stand-in var id -> u, for each value held as the sign of -u
        self.first: dict[tuple[Any, ...], Var] = {}  # cse_key on output var ids -> the var computing it first

    def run(self, defn: Definition) -> Definition:
        return walk(defn, self.fold, "fold_negations")

    def fold(self, builder: Builder, binding: Binding, args: tuple[Var, ...]) -> Var:
        prim, negated = binding.prim, self.negated
        if not isinstance(prim, _CARRIERS) or not any(a.id in negated for a in args):
            if isinstance(prim, Neg) and binding.var.id in self.absorbing:  # -a, carried as a sign
                return self.held(binding, args[0])
            return self.emit(builder, binding, prim, args)
        signs = [a.id in negated for a in args]
        plain = [negated.get(a.id, a) for a in args]  # the operands with their signs dropped
        if isinstance(prim, Neg):
            return plain[0]  # -(-u) = u
        if isinstance(prim, (Mul, Div)):  # -a * b = -(a * b), -a * -b = a * b
            value = self.emit(builder, binding, prim, plain)
            return value if signs[0] == signs[1] else self.negative(builder, binding, value)
        (a, b), (neg_a, neg_b) = plain, signs
        if isinstance(prim, Add):
            if neg_a and neg_b:  # -a + -b = -(a + b)
                return self.negative(builder, binding, self.emit(builder, binding, prim, plain))
            return self.emit(builder, binding, Sub(), [b, a] if neg_a else [a, b])  # -a + b = b - a, a + -b = a - b
        if neg_a and neg_b:  # -a - -b = b - a
            return self.emit(builder, binding, prim, [b, a])
        if neg_b:  # a - -b = a + b
            return self.emit(builder, binding, Add(), plain)
        return self.negative(builder, binding, self.emit(builder, binding, Add(), plain))  # -a - b = -(a + b)

    def emit(self, builder: Builder, binding: Binding, prim: Primitive, args: Sequence[Var]) -> Var:
        """`prim` on `args` in place of `binding` (its type and provenance), unless an
        earlier binding computes it (`cse`'s key): the rewrites make repeats."""
        key = cse_key(prim, [a.id for a in args])
        found = self.first.get(key)
        if found is None:
            if prim is binding.prim:
                found = builder.keep(binding, args)
            else:
                found = builder.emit(prim, args, binding.var.type, binding.source, binding.origin)
            self.first[key] = found
        return found

    def negative(self, builder: Builder, binding: Binding, u: Var) -> Var:
        """-u as `binding`'s value: held as a sign where its uses take one, else computed."""
        return self.held(binding, u) if binding.var.id in self.absorbing else self.emit(builder, binding, Neg(), [u])

    def held(self, binding: Binding, u: Var) -> Var:
        """A stand-in for `binding`'s value, -u, which is never computed: a var no binding
        binds (numbered below zero), read only by uses that take the sign."""
        stand_in = Var(-1 - len(self.negated), binding.var.type)
        self.negated[stand_in.id] = u
        return stand_in


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
        prim, signs = binding.prim, [a.id in negatable for a in binding.args]
        if (
            isinstance(prim, Neg)
            or (isinstance(prim, (Mul, Div)) and any(signs))
            or (isinstance(prim, Sub) and signs[0])
            or (isinstance(prim, Add) and all(signs))
        ):
            negatable.add(binding.var.id)
    absorbing: set[int] = set()
    blocked: set[int] = {v.id for v in defn.outputs}  # values some use of which needs them computed
    for binding in reversed(defn.bindings):
        v = binding.var.id
        if v not in blocked and v in negatable and binding.var.type is not None and binding.var.type.dtype != bool_:
            absorbing.add(v)
        prim, passes_on = binding.prim, v in absorbing
        for k, a in enumerate(binding.args):
            if isinstance(prim, Neg) or (isinstance(prim, Sub) and k == 1):
                continue
            if isinstance(prim, Add) and (passes_on or binding.args[1 - k].id not in negatable):
                continue
            if isinstance(prim, (Sub, Mul, Div)) and passes_on:
                continue
            blocked.add(a.id)
    return absorbing
