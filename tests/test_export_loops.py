"""The export of loops and conds to JAX: a scan, a while loop and a cond become
`lax.scan`, `lax.while_loop` and `lax.switch` with their bodies and branches traced inline,
so the jaxpr is JAX's own for the same program (no nested `jit` per step), and they
compute what `shax.evaluate` computes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax.export import to_jax

jax = pytest.importorskip("jax")
jnp, lax = jax.numpy, jax.lax

W = np.linspace(-0.5, 0.5, 9, dtype=np.float32).reshape(3, 3)
H0 = np.linspace(0.1, 0.3, 3, dtype=np.float32)
XS = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)


def _inner(jaxpr: Any) -> list[list[str]]:
    """Per loop body, cond and branch of `jaxpr`'s loops and conds: its primitives' names."""
    found = []
    for eqn in jaxpr.jaxpr.eqns:
        params = eqn.params
        for name in ("jaxpr", "body_jaxpr", "cond_jaxpr"):
            if name in params:
                found.append([e.primitive.name for e in params[name].jaxpr.eqns])
        for branch in params.get("branches", ()):
            found.append([e.primitive.name for e in branch.jaxpr.eqns])
    return found


def _exported_jaxpr(fn: Any, *args: Any) -> Any:
    defn = shax.xpr(fn, *args)
    exported = to_jax(defn)
    for got, expected in zip(exported(*args), shax.evaluate(defn, *args)):
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6, atol=1e-7)
    return jax.make_jaxpr(exported)(*args)


def test_a_scan_body_is_traced_inline_as_in_jax() -> None:
    def rnn(h0: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> tuple[Any, Any]:
            h = snp.tanh(h @ W + x)
            return h, h

        return shax.scan(step, h0, xs)

    def rnn_jax(h0: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> tuple[Any, Any]:
            h = jnp.tanh(h @ W + x)
            return h, h

        return lax.scan(step, h0, xs)

    got = _inner(_exported_jaxpr(rnn, H0, XS))
    assert got == _inner(jax.make_jaxpr(rnn_jax)(H0, XS)) == [["dot_general", "add", "tanh"]]


def test_a_while_loop_and_a_cond_trace_their_functions_inline() -> None:
    def loop(x: Any) -> Any:
        return shax.lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, snp.sin(c[1])), (0, x))

    assert _inner(_exported_jaxpr(loop, H0)) == [["add", "sin"], ["lt"]]

    def branches(p: Any, x: Any) -> Any:
        return shax.lax.cond(p, snp.sin, snp.cos, x)

    assert _inner(_exported_jaxpr(branches, np.bool_(True), H0)) == [["cos"], ["sin"]]


def test_the_gradient_of_a_scan_has_no_nested_jit() -> None:
    def loss(w: Any, xs: Any) -> Any:
        _, hs = shax.scan(lambda h, x: (snp.tanh(h @ w + x),) * 2, H0, xs)
        return snp.sum(hs * hs)

    jaxpr = _exported_jaxpr(shax.grad(loss), W, XS)
    bodies = _inner(jaxpr)
    assert len(bodies) == 2 and not any("jit" in name or "pjit" in name for body in bodies for name in body)
