"""What the loop rules (`shax.primitives.loops`) make of a loop's body, built once per body
and kept while it lives (`shax.callees`' cache): the body's forward and linear parts for a
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
from shax.callees import _cached, batched, build, derivative, pruned, rearranged, transposed, without_prints, wrt
from shax.evaluate import evaluate
from shax.ir import Definition
from shax.passes import cleanup
from shax.primitive import Arg
from shax.stages import check_types
from shax.tracer import Tracer
from shax.types import TensorType, i32


def floats(types: Sequence[TensorType]) -> list[int]:
    """The positions of the float types (those with tangents)."""
    return [k for k, t in enumerate(types) if t.dtype.is_float]


@attrs.frozen
class ScanDerivative:
    """A scan body's derivative: `forward` returns the body's outputs, then the activations
    that vary from one iteration to the next (the scan stacks them); `invariant` (the
    consts) -> the activations that depend on the consts alone (computed once, outside the
    loop); `linear` (tangents of the float consts, carry and x slices, then every
    activation, in `order`) -> (tangents of the float carry, of the float y slices).
    `order[k]` is activation k's place: (False, j) the j-th stacked one, (True, j) the j-th
    invariant one."""

    forward: Definition
    invariant: Definition
    linear: Definition
    order: tuple[tuple[bool, int], ...]


def scan_derivative(body: Definition, num_consts: int, num_carry: int) -> ScanDerivative:
    key = ("scan derivative", num_consts, num_carry)
    return _cached(body, key, lambda: _scan_derivative(body, num_consts, num_carry))


def _scan_derivative(body: Definition, num_consts: int, num_carry: int) -> ScanDerivative:
    d = derivative(body)
    outputs = body.output_types()
    kept = tuple(floats(outputs))  # float carry outputs first: they are the float carries, in order
    # The vars that vary with the iteration: read from the carry or the x slices.
    varying: set[int] = set()
    for b in d.primal.bindings:
        if isinstance(b.prim, Arg) and b.prim.index >= num_consts or any(a.id in varying for a in b.args):
            varying.add(b.var.id)
    n = len(outputs)
    acts = d.primal.outputs[n:]
    stacked: list[int] = []  # output positions of the stacked activations
    fixed: list[int] = []  # and of the invariant ones
    order: list[tuple[bool, int]] = []
    for k, v in enumerate(acts):
        chosen = stacked if v.id in varying else fixed
        order.append((v.id not in varying, len(chosen)))
        chosen.append(n + k)
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
    return ScanDerivative(forward, cleanup(check_types(only_consts)), pruned(d.linear, kept), tuple(order))


def scan_transposed(linear_body: Definition, linear: int, num_consts: int, num_carry: int) -> Definition:
    """The body of the transpose of a linear scan whose body `linear_body` (consts, carry, x
    slices) is linear in its first `linear` arguments, the rest (activations) fixed:

        (acc, ct carry, ct y, acts) -> (acc + ct consts, ct carry before, ct x slices)

    the consts' cotangents summed over the iterations in `acc`."""
    key = ("scan transposed", linear, num_consts, num_carry)
    return _cached(linear_body, key, lambda: _scan_transposed(linear_body, linear, num_consts, num_carry))


def _scan_transposed(body: Definition, linear: int, num_consts: int, num_carry: int) -> Definition:
    t = transposed(body, linear)
    acts = list(body.arg_types[linear:])
    consts, carry = list(body.arg_types[:num_consts]), list(body.arg_types[num_consts : num_consts + num_carry])
    ys = list(body.output_types()[num_carry:])

    def run(args: list[Tracer]) -> list[Any]:
        acc, rest = args[:num_consts], args[num_consts:]
        cts = evaluate(t, *rest)
        return [*(a + c for a, c in zip(acc, cts[:num_consts])), *cts[num_consts:]]

    return build(body.name + "t", [*consts, *carry, *ys, *acts], run)


@attrs.frozen
class WhileJvp:
    """The jvp of a while loop, as a while loop over (consts: dc, c; carry: h, dh)."""

    cond: Definition
    body: Definition


def while_jvp(cond: Definition, body: Definition, num_consts: int) -> WhileJvp:
    return _cached(body, ("while jvp", id(cond), num_consts), lambda: _while_jvp(cond, body, num_consts))


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
    return _cached(body, key, lambda: _while_batched(cond, body, dims, size))


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
