"""Rewrites reach into the definitions an operation holds (issue 33): a dead binding, a
repeat, a double negation and a multiplication by one inside a cond's branch, a scan's
body, a call's callee and a cond nested in a scan body are each removed by the pass that
removes them at the top level, and the program computes what it did."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import shax
from shax import f32, i32
from shax.control.call import Call
from shax.control.cond import Cond
from shax.control.loops import Scan
from shax.core.builder import Builder
from shax.core.ir import Definition
from shax.core.primitive import Primitive
from shax.passes import cleanup, cse, dce, fold_negations, forward_identities
from shax.primitives import Add, Arg, Constant, Cos, Mul, Neg, Sin

T = f32[3]


def wasteful(name: str, extra_args: int = 0) -> Definition:
    """sin(x) * -(-sin(x)) * 1, with a dead cos(x): `extra_args` more arguments unread."""
    b = Builder()
    x = b.emit(Arg(0), (), T)
    for k in range(extra_args):
        b.emit(Arg(1 + k), (), T)
    b.emit(Cos(), (x,), T)  # dead: dce
    s1 = b.emit(Sin(), (x,), T)
    s2 = b.emit(Sin(), (x,), T)  # a repeat: cse
    neg = b.emit(Neg(), (b.emit(Neg(), (s2,), T),), T)  # -(-s2): fold_negations
    one = b.emit(Constant(np.float32(1.0)), (), f32[()])
    product = b.emit(Mul(), (b.emit(Mul(), (s1, neg), T), one), T)  # * 1: forward_identities
    return b.build(name, [T] * (1 + extra_args), [product])


def plain(name: str, extra_args: int = 0) -> Definition:
    b = Builder()
    x = b.emit(Arg(0), (), T)
    for k in range(extra_args):
        b.emit(Arg(1 + k), (), T)
    return b.build(name, [T] * (1 + extra_args), [b.emit(Cos(), (x,), T)])


def holding(prim: Primitive, arg_types: list[shax.TensorType], results: list[shax.TensorType]) -> Definition:
    b = Builder()
    args = [b.emit(Arg(k), (), t) for k, t in enumerate(arg_types)]
    outs = b.emit_results(prim, args, results)
    return b.build("outer", arg_types, list(outs))


def in_a_cond() -> Definition:
    return holding(Cond((plain("f_false"), wasteful("f_true"))), [i32[()], T], [T])


def scan_body(inner: Primitive | None = None) -> Definition:
    """(carry, x) -> (carry + waste(x), waste(x)); with `inner`, waste is that operation on x."""
    b = Builder()
    carry, x = b.emit(Arg(0), (), T), b.emit(Arg(1), (), T)
    if inner is None:
        (y,) = wasteful_inline(b, x)
    else:
        index = b.emit(Constant(np.int32(1)), (), i32[()])
        (y,) = b.emit_results(inner, (index, x), [T])
    return b.build("body", [T, T], [b.emit(Add(), (carry, y), T), y])


def wasteful_inline(b: Builder, x: shax.Var) -> tuple[shax.Var]:
    b.emit(Cos(), (x,), T)
    s = b.emit(Mul(), (b.emit(Sin(), (x,), T), b.emit(Sin(), (x,), T)), T)
    one = b.emit(Constant(np.float32(1.0)), (), f32[()])
    return (b.emit(Mul(), (b.emit(Neg(), (b.emit(Neg(), (s,), T),), T), one), T),)


def in_a_scan() -> Definition:
    return holding(Scan(scan_body(), length=4, consts=0, carry=1), [T, f32[4, 3]], [T, f32[4, 3]])


def cond_in_a_scan() -> Definition:
    cond = Cond((plain("f_false"), wasteful("f_true")))
    return holding(Scan(scan_body(cond), length=4, consts=0, carry=1), [T, f32[4, 3]], [T, f32[4, 3]])


def in_a_call() -> Definition:
    return holding(Call(wasteful("callee", extra_args=1)), [T, T], [T])


PROGRAMS: dict[str, Callable[[], Definition]] = {
    "cond": in_a_cond, "scan": in_a_scan, "cond in scan": cond_in_a_scan, "call": in_a_call,
}  # fmt: skip


def held(defn: Definition) -> list[Definition]:
    """Every definition `defn` holds, at any depth, in order."""
    found, todo = [], [defn]
    while todo:
        subs = [d for b in todo.pop().bindings for d in b.prim.subdefinitions()]
        found += subs
        todo += subs
    return found


def inputs(defn: Definition) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [np.int32(1) if t.dtype == i32 else rng.normal(size=t.shape).astype(np.float32) for t in defn.arg_types]


def primitives(defn: Definition) -> list[str]:
    return [b.prim.name for d in held(defn) for b in d.bindings]


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize(
    ("rewrite", "removes"),
    [(dce, "cos"), (cse, "sin"), (fold_negations, Neg.name), (forward_identities, "mul"), (cleanup, "cos")],
)
def test_a_pass_reaches_inside_and_keeps_meaning(
    program: str, rewrite: Callable[[Definition], Definition], removes: str
) -> None:
    before = PROGRAMS[program]()
    after = rewrite(before)
    assert primitives(after).count(removes) < primitives(before).count(removes), str(after)
    values = inputs(before)
    for got, expected in zip(shax.evaluate(after, *values), shax.evaluate(before, *values), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_a_held_definition_a_pass_leaves_alone_is_the_same_object() -> None:
    """An operation whose definitions a pass leaves as they were is that operation itself,
    so what is kept per definition (derivatives, compiled code) is kept."""
    clean = holding(Cond((plain("f_false"), plain("f_true"))), [i32[()], T], [T])
    assert dce(clean).bindings[-1].prim is clean.bindings[-1].prim
    shared = wasteful("shared")  # one branch held twice is rewritten once, and stays one
    (a, b) = cse(holding(Cond((shared, shared)), [i32[()], T], [T])).bindings[-1].prim.subdefinitions()
    assert a is b and len(a.bindings) < len(shared.bindings)


def test_derivatives_through_a_cond_and_a_scan_still_match_finite_differences() -> None:
    """zip cleans what it builds (`cleanup`), which now reaches into the branches and bodies."""

    def f(x, p):
        y = shax.lax.cond(p > 0, lambda a: shax.numpy.sin(a) * 2.0, lambda a: a * a, x)
        carry, ys = shax.lax.scan(lambda c, xi: (c * xi + 1.0, c), shax.numpy.sum(y), x)
        return carry + shax.numpy.sum(ys)

    x = np.array([0.3, -0.2, 0.7])
    for p in (1.0, -1.0):
        shax.testing.check_grads(lambda x, p=p: f(x, p), [x], order=2, modes=("fwd", "rev"))
