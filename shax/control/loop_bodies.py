"""What the loop rules (`shax.control.loops`) make of a loop's body, built once per body
and kept while it lives (`shax.control.callees`' cache): the body's forward and linear parts for a
linearized scan, the body of the transposed scan, the bodies of a jvp while loop and of
a batched while loop.

A body is built by running definitions on the arguments of a fresh trace (`evaluate` on
tracers inlines them) and cleaning up what it records: linear in the bodies' sizes.

Layouts (the loop primitives' operand order, which the bodies' arguments follow):

    scan body     (consts, carry, x slices) -> (carry, y slices)
    while cond    (consts, carry) -> bool[]
    while body    (consts, carry) -> carry
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

import typeclasses as tc
from shax.control.callees import batched, build, derivative, pruned, rearranged, transposed, without_prints, wrt
from shax.core.derived import derived
from shax.core.ir import Definition
from shax.core.primitive import Arg
from shax.core.types import TensorType, i32
from shax.passes import cleanup
from shax.stages import check_types
from shax.tracing.evaluate import evaluate
from shax.tracing.tracer import Tracer


def floats(types: Sequence[TensorType]) -> list[int]:
    """The positions of the float types (those with tangents)."""
    return [k for k, t in enumerate(types) if t.dtype.is_float]


@attrs.frozen
class ScanDerivative:
    """A scan body's derivative: `forward` returns the body's outputs, then the activations
    that vary from one iteration to the next (the scan stacks them); `invariant` (the
    consts) -> the activations that depend on the consts alone (computed once, outside the
    loop); `linear` (the invariant activations, then the tangents of the float consts, carry
    and x slices, then the stacked activations) -> (tangents of the float carry, of the
    float y slices): a linear scan's body, the invariant activations its fixed consts."""

    forward: Definition
    invariant: Definition
    linear: Definition


def scan_derivative(body: Definition, num_consts: int, num_carry: int) -> ScanDerivative:
    key = ("scan derivative", num_consts, num_carry)
    return derived(body, key, lambda: _scan_derivative(body, num_consts, num_carry))


def _scan_derivative(body: Definition, num_consts: int, num_carry: int) -> ScanDerivative:
    d = derivative(body)
    outputs = body.output_types()
    kept = tuple(floats(outputs))  # float carry outputs first: they are the float carries, in order
    # The vars that vary with the iteration: read from the carry or the x slices.
    varying: set[int] = set()
    for b in d.primal.bindings:
        if isinstance(b.prim, Arg) and b.prim.index >= num_consts or any(a.id in varying for a in b.args):
            varying.update(v.id for v in b.vars)
    n = len(outputs)
    acts = d.primal.outputs[n:]
    stacked = [n + k for k, v in enumerate(acts) if v.id in varying]  # output positions of the stacked activations
    fixed = [n + k for k, v in enumerate(acts) if v.id not in varying]  # and of the invariant ones
    forward = pruned(d.primal, (*range(n), *stacked))
    consts = body.arg_types[:num_consts]
    # Computed once, outside the loop: the body's prints run in `forward`, every iteration.
    invariant = pruned(without_prints(d.primal), tuple(fixed))
    # It reads only the consts: the others are unread arguments, dropped.
    invariant = rearranged(invariant, [*consts, *body.arg_types[num_consts:]], range(len(body.arg_types)))
    only_consts = Definition(
        invariant.name + "_invariant",
        tuple(consts),
        tuple(b for b in invariant.bindings if not (isinstance(b.prim, Arg) and b.prim.index >= num_consts)),
        invariant.outputs,
    )
    # The linear part takes (tangents, activations in d's order): the invariant ones go first.
    linear = pruned(d.linear, kept)
    tangents = len(linear.arg_types) - len(acts)
    ahead = {a: k for k, a in enumerate(fixed)}  # output position -> its place among the invariant ones
    behind = {a: len(fixed) + tangents + k for k, a in enumerate(stacked)}
    positions = [
        *range(len(fixed), len(fixed) + tangents),
        *(ahead.get(n + k, behind.get(n + k)) for k in range(len(acts))),
    ]
    types = [linear.arg_types[tangents + a - n] for a in fixed] + list(linear.arg_types[:tangents])
    types += [linear.arg_types[tangents + a - n] for a in stacked]
    return ScanDerivative(forward, cleanup(check_types(only_consts)), rearranged(linear, types, positions))


def scan_transposed(linear_body: Definition, fixed: int, linear: int, num_consts: int, num_carry: int) -> Definition:
    """The body of the transpose of a linear scan whose body `linear_body` (consts, carry, x
    slices) is linear in the `linear` arguments after its first `fixed` (consts), the rest
    (activations) fixed:

        (fixed consts, acc, ct carry, ct y, acts) -> (acc + ct consts, ct carry before, ct x slices)

    the linear consts' cotangents summed over the iterations in `acc`."""
    key = ("scan transposed", fixed, linear, num_consts, num_carry)
    return derived(linear_body, key, lambda: _scan_transposed(linear_body, fixed, linear, num_consts, num_carry))


def _scan_transposed(body: Definition, fixed: int, linear: int, num_consts: int, num_carry: int) -> Definition:
    types = body.arg_types
    # transposed() takes a definition linear in its leading arguments: the fixed consts go behind.
    moved = [*range(linear, linear + fixed), *range(linear), *range(fixed + linear, len(types))]
    ahead = [*types[fixed : fixed + linear], *types[:fixed], *types[fixed + linear :]]
    t = transposed(rearranged(body, ahead, moved), linear)
    consts = list(types[fixed:num_consts])
    carry = list(types[num_consts : num_consts + num_carry])
    ys = list(body.output_types()[num_carry:])
    acts = list(types[fixed + linear :])
    n = len(consts)

    def run(args: list[Tracer]) -> list[Any]:
        invariant, acc, rest = args[:fixed], args[fixed : fixed + n], args[fixed + n :]
        cts = evaluate(t, *rest[: len(carry) + len(ys)], *invariant, *rest[len(carry) + len(ys) :])
        return [*(a + c for a, c in zip(acc, cts[:n])), *cts[n:]]

    return build(body.name + "t", [*types[:fixed], *consts, *carry, *ys, *acts], run)


@attrs.frozen
class WhileJvp:
    """The jvp of a while loop, as a while loop over (consts: dc, c; carry: h, dh)."""

    cond: Definition
    body: Definition


def while_jvp(cond: Definition, body: Definition, num_consts: int) -> WhileJvp:
    return derived(body, ("while jvp", id(cond), num_consts), lambda: _while_jvp(cond, body, num_consts))


def _while_jvp(cond: Definition, body: Definition, num_consts: int) -> WhileJvp:
    d = derivative(body)
    types = body.arg_types
    consts, carry = types[:num_consts], types[num_consts:]
    dc = [consts[k] for k in floats(consts)]
    dh = [carry[k] for k in floats(carry)]
    linear = pruned(d.linear, tuple(floats(carry)))
    arg_types = [*dc, *consts, *carry, *dh]
    nd, n = len(dc), len(types)

    def jcond(args: list[Tracer]) -> list[Any]:
        return evaluate(cond, *args[nd : nd + n])

    def jbody(args: list[Tracer]) -> list[Any]:
        outputs = evaluate(d.primal, *args[nd : nd + n])
        tangents = evaluate(linear, *args[:nd], *args[nd + n :], *outputs[len(carry) :])
        return [*outputs[: len(carry)], *tangents]

    return WhileJvp(build(cond.name + "_jvp", arg_types, jcond), build(body.name + "_jvp", arg_types, jbody))


def while_batched(cond: Definition, body: Definition, dims: tuple[int | None, ...], size: int) -> WhileJvp:
    """A while loop over a batch (carries at axis 0): it runs while any member's predicate
    holds; a member whose predicate fails keeps its carry (select)."""
    key = ("while batched", id(cond), dims, size)
    return derived(body, key, lambda: _while_batched(cond, body, dims, size))


def _while_batched(cond: Definition, body: Definition, dims: tuple[int | None, ...], size: int) -> WhileJvp:
    vcond, vbody = batched(cond, dims, size), batched(body, dims, size)
    num_consts = len(dims) - len(body.output_types())
    arg_types = list(vbody.arg_types)

    def any_member(args: list[Tracer]) -> list[Any]:
        (pred,) = evaluate(vcond, *args)
        return [tc.reduce_max(tc.convert_element_type(pred, i32), [0]) > 0]

    def step(args: list[Tracer]) -> list[Any]:
        (pred,) = evaluate(vcond, *args)
        new = evaluate(vbody, *args)
        kept = []
        for h, old in zip(new, args[num_consts:]):
            shape = tc.shape(h)
            kept.append(tc.select(tc.broadcast(pred, [0], shape) if len(shape) > 1 else pred, h, old))
        return kept

    return WhileJvp(build(cond.name + "_any", arg_types, any_member), build(body.name + "_v", arg_types, step))


__all__ = ["build", "rearranged", "scan_derivative", "scan_transposed", "while_jvp", "while_batched", "wrt"]
