"""check_linear: a linear program -> nothing, or a ShaxTypeError naming the binding that is
not linear in the tangents (the linear types of "You Only Linearize Once", checked
structurally, without running anything).

    dmedium(tangents, residuals) -> output tangents

Each value of the program is one of
    linear:  it depends on the tangent inputs;
    zero:    a constant zero, or a linear operation on zeros;
    a value: it depends only on residuals and constants (a recomputed activation).
The program is linear in its tangents when every binding with a linear operand is linear
in it: the operand sits at a LINEAR position whose companions are linear or zero (no
residual added to a tangent: that is affine), or at a BILINEAR position whose other
factors are not linear (at most one tangent factor in a product); never at a NONLINEAR
or NON_DIFFERENTIABLE one. Every returned value is linear or zero. A call of a linear
callee is checked inside too, once per callee; an operation holding definitions of no
declared linearity (custom_vjp's bwd, called) is linear by its user's contract. The error
names the binding, the rule or pass that emitted it (its `origin`) and the user's line.
One pass: linear time.

`show_linear` prints the program checked in the paper's notation, where a linear value is
used exactly once: explicit `dup` where one is read twice, `drop` where one is never read.
"""

from __future__ import annotations

import enum

import numpy as np

from shax.core.errors import ShaxError, ShaxTypeError, at
from shax.core.ir import Binding, Definition, LinearizedDefinition
from shax.core.location import current_source
from shax.core.primitive import Arg, Linearity
from shax.core.printing import show_binding, show_dup_drop
from shax.primitives import Constant
from shax.tracing.validation import check_well_formed, expect_definition, expect_linearized


class _Kind(enum.Enum):
    LINEAR = "linear"
    ZERO = "zero"
    VALUE = "value"


def check_linear(defn: Definition | LinearizedDefinition, num_linear: int | None = None) -> None:
    """Nothing if `defn` is linear in its first `num_linear` arguments (a
    LinearizedDefinition: its linear part, in the arguments before the residuals; a
    Definition: all of them by default); else a ShaxTypeError naming the binding."""
    _checked("check_linear", defn, num_linear)


def show_linear(defn: Definition | LinearizedDefinition, num_linear: int | None = None) -> str:
    """The linear program `check_linear` checks, printed in the paper's notation: each
    linear value used exactly once, with explicit `dup` and `drop` (`shax.core.printing.show_dup_drop`)."""
    linear, count, kind = _checked("show_linear", defn, num_linear)
    read = {b.prim.index for b in linear.bindings if isinstance(b.prim, Arg)}
    unread = [k for k in range(count) if k not in read]
    return show_dup_drop(linear, {var_id for var_id, k in kind.items() if k is _Kind.LINEAR}, unread)


def _checked(
    what: str, defn: Definition | LinearizedDefinition, num_linear: int | None
) -> tuple[Definition, int, dict[int, _Kind]]:
    """The linear program of `defn`, checked, its number of linear arguments, and the kind
    of each of its values."""
    if isinstance(defn, LinearizedDefinition):
        expect_linearized(what, defn)
        linear = defn.linear
        count = len(linear.arg_types) - defn.num_residuals if num_linear is None else num_linear
    else:
        linear = expect_definition(what, defn)
        count = len(linear.arg_types) if num_linear is None else num_linear
    check_well_formed(what, linear)
    return linear, count, _check(what, linear, count, set())


def _check(what: str, defn: Definition, num_linear: int, checked: set[tuple[int, int]]) -> dict[int, _Kind]:
    kind: dict[int, _Kind] = {}  # var id -> its kind
    for b in defn.bindings:
        found = _kind_of(what, defn, b, num_linear, kind)
        kind.update((v.id, found) for v in b.vars)
        callee, linear = b.prim.callee(), len(b.prim.linear_operands)
        if callee is not None and linear and (id(callee), linear) not in checked:  # a linear call
            checked.add((id(callee), linear))
            _check(what, callee, linear, checked)
    for v in defn.outputs:
        if kind[v.id] is _Kind.VALUE:
            message = f"returns x{v.id}, which does not depend on the tangents and is not zero (an affine map)"
            raise at(ShaxTypeError(f"{what}: {defn.name} is not linear: it {message}"), current_source())
    return kind


def _kind_of(what: str, defn: Definition, b: Binding, num_linear: int, kind: dict[int, _Kind]) -> _Kind:
    """The kind of `b`'s value, or an error if `b` is not linear in its linear operands."""
    prim = b.prim
    if isinstance(prim, Arg):
        return _Kind.LINEAR if prim.index < num_linear else _Kind.VALUE
    if isinstance(prim, Constant):
        return _Kind.VALUE if np.any(prim.value) else _Kind.ZERO
    kinds = [kind[a.id] for a in b.args]
    positions = prim.operand_linearity
    if _Kind.LINEAR not in kinds:
        linear = prim.linear_operands
        zero = bool(linear) and all(
            kinds[k] is _Kind.ZERO if k in linear else positions[k] is Linearity.NON_DIFFERENTIABLE
            for k in range(len(kinds))
        )
        return _Kind.ZERO if zero else _Kind.VALUE
    if prim.subdefinitions() and not prim.linear_operands:
        return _Kind.LINEAR  # a user's derivative rule (custom_vjp's bwd), linear by its contract
    for k, (a, operand) in enumerate(zip(b.args, kinds)):
        if operand is _Kind.LINEAR and positions[k] not in (Linearity.LINEAR, Linearity.BILINEAR):
            raise _fail(what, defn, b, f"applies {prim.name} to the tangent x{a.id} ({positions[k].value} operand {k})")
    factors = [a for k, a in enumerate(b.args) if positions[k] is Linearity.BILINEAR and kinds[k] is _Kind.LINEAR]
    if len(factors) > 1:
        shown = " and ".join(f"x{a.id}" for a in factors)
        raise _fail(what, defn, b, f"multiplies two tangents ({shown}): a product has at most one tangent factor")
    if any(kinds[k] is _Kind.LINEAR for k in prim.linear_operands):
        for k in prim.linear_operands:
            if kinds[k] is _Kind.VALUE:
                added = _what(defn, b.args[k].id, num_linear)
                raise _fail(
                    what, defn, b, f"adds {added}, which does not depend on the tangents, to a tangent (affine)"
                )
    return _Kind.LINEAR


def _what(defn: Definition, var_id: int, num_linear: int) -> str:
    for b in defn.bindings:
        if isinstance(b.prim, Arg) and b.vars[0].id == var_id and b.prim.index >= num_linear:
            return f"the residual x{var_id}"
    return f"x{var_id}"


def _fail(what: str, defn: Definition, b: Binding, message: str) -> ShaxError:
    rule = b.origin or "the user's code"
    text = f"{what}: {defn.name} is not linear: `{show_binding(b)}` (from {rule}) {message}"
    return at(ShaxTypeError(text), b.source or current_source())
