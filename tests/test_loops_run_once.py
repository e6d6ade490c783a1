"""Each loop, call and cond runs once per direction under grad: one forward run that saves
what the backward one reads, and one backward run, whichever arguments are differentiated.

Runs are counted, not timed: the forward body's runs by a primitive whose numpy function
counts its calls, the operations of the program by the distinct operations its bindings
make (the bindings of one operation on the same operands run once)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax.control import Call, Scan, While
from shax.control.cond import Cond
from shax.core.ir import Definition

_calls = [0]


def _counted_tanh(x: Any) -> Any:
    _calls[0] += 1
    return np.tanh(x)


ctanh = shax.extend.elementwise_primitive("ctanh", numpy=_counted_tanh, derivative=lambda x, out: 1.0 - out * out)

W = (np.arange(16, dtype=np.float32).reshape(4, 4) - 8) / 20
U = (np.arange(16, dtype=np.float32).reshape(4, 4)[::-1] - 8) / 30
XS = np.linspace(-1, 1, 28, dtype=np.float32).reshape(7, 4)
X = np.linspace(-0.5, 0.5, 4, dtype=np.float32)


def runs(fn: Callable[..., Any], *args: Any) -> int:
    """How often `ctanh` runs in one call of `fn` (compiled and run once before)."""
    fn(*args)
    _calls[0] = 0
    fn(*args)
    return _calls[0]


def operations(defn: Definition, kind: type) -> int:
    """The runs of operations of `kind` the bindings of `defn` make: one per operation and
    operands, however many of its outputs are read."""
    return len({(b.prim.key, tuple(a.id for a in b.args)) for b in defn.bindings if isinstance(b.prim, kind)})


def rnn(W: Any, U: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> Any:
        h = ctanh(h @ W + x @ U)
        return h, h

    h, hs = shax.scan(step, np.zeros(4, np.float32), xs)
    return snp.sum(hs) + snp.sum(h)


@pytest.mark.parametrize("argnums", [0, 1, 2, (0, 1), (0, 1, 2)])
def test_grad_of_a_scan_runs_one_forward_and_one_backward_loop(argnums: Any) -> None:
    assert runs(shax.jit(shax.grad(rnn, argnums=argnums)), W, U, XS) == len(XS)
    assert runs(shax.grad(rnn, argnums=argnums), W, U, XS) == len(XS)
    assert operations(shax.xpr(shax.grad(rnn, argnums=argnums), W, U, XS), Scan) == 2


def fori(W: Any, x: Any) -> Any:
    return snp.sum(shax.fori_loop(0, 5, lambda i, h: ctanh(h @ W) + x, x))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_grad_of_a_fori_loop_runs_one_forward_and_one_backward_loop(argnums: Any) -> None:
    assert runs(shax.jit(shax.grad(fori, argnums=argnums)), W, X) == 5
    assert operations(shax.xpr(shax.grad(fori, argnums=argnums), W, X), Scan) == 2


def branches(p: Any, x: Any, w: Any) -> Any:
    y, z = shax.cond(p > 0, lambda x, w: (ctanh(x * w), x * 2.0), lambda x, w: (ctanh(x) * w, x + w), x, w)
    return snp.sum(y * z)


@pytest.mark.parametrize("argnums", [1, 2, (1, 2)])
def test_grad_of_a_cond_runs_the_taken_branch_once_each_way(argnums: Any) -> None:
    assert runs(shax.jit(shax.grad(branches, argnums=argnums)), np.float32(1.0), X, W[0]) == 1
    assert operations(shax.xpr(shax.grad(branches, argnums=argnums), np.float32(1.0), X, W[0]), Cond) == 2


@shax.subgraph
def layer(x: Any, w: Any) -> Any:
    h = ctanh(x @ w)
    return h, h * 2.0


def layers(x: Any, w: Any) -> Any:
    a, b = layer(x, w)
    c, d = layer(a + b, w)
    return snp.sum(c * d)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_grad_of_calls_runs_each_callee_once_each_way(argnums: Any) -> None:
    assert runs(shax.jit(shax.grad(layers, argnums=argnums)), X, W) == 2
    assert operations(shax.xpr(shax.grad(layers, argnums=argnums), X, W), Call) == 4


def test_a_while_loop_runs_once_under_jvp() -> None:
    def f(x: Any) -> Any:
        return shax.while_loop(lambda c: c[1] < 3, lambda c: (ctanh(c[0]), c[1] + 1), (x, np.int32(0)))[0]

    def tangent(x: Any) -> Any:
        return shax.jvp(f, (x,), (np.ones_like(x),))[1]

    assert runs(shax.jit(tangent), X) == 3
    assert operations(shax.xpr(tangent, X), While) == 1
