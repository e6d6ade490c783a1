"""The compiled form of loops (issue 35): a Python loop calling the body's function, which
takes its arguments untested (the loop passes values of its types), the carry in locals,
each distinct y stacked once; and the linear scan of a gradient takes the activations of
the consts alone as fixed consts (not broadcast along the loop), on numpy and on XLA."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shax
from shax.control import Scan

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# B6's RNN and its gradient written by hand (a forward loop, then a backward loop)
from benchmarks.b6_loops import rnn_hand as rnn_grads  # noqa: E402 - after the repository root is on the path
from benchmarks.b6_loops import rnn_loss  # noqa: E402

RNG = np.random.default_rng(35)
W = RNG.standard_normal((4, 4)) * 0.5
U = RNG.standard_normal((3, 4)) * 0.5
XS = RNG.standard_normal((5, 3))
H0 = RNG.standard_normal(4) * 0.1


def function_source(source: str, name: str) -> str:
    """The text of the generated function `name` in a compiled source."""
    start = source.index(f"def {name}(")
    end = source.find("\ndef ", start + 1)
    return source[start : end if end >= 0 else len(source)]


def test_a_scan_compiles_to_a_loop_calling_its_body_untested() -> None:
    jitted = shax.jit(shax.grad(rnn_loss, argnums=(0, 1)))
    source = jitted.source(W, U, H0, XS)
    step, main = function_source(source, "step"), function_source(source, "grad_rnn_loss")
    assert "argument(" not in step  # the loop passes values of the body's types: no tests
    assert main.count("argument(") == 4  # the user's arguments are tested
    assert re.search(r"for s\d+_i in range\(5\):\n +\[s\d+_c0, [^\]]*\] = c\d+\(", main)
    assert re.search(r"for s\d+_i in range\(4, -1, -1\):", main)  # the backward loop
    gw, gu = jitted(W, U, H0, XS)
    want_w, want_u = rnn_grads(W, U, H0, XS)
    np.testing.assert_allclose(gw, want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(gu, want_u, rtol=1e-12, atol=1e-14)
    evaluated = shax.grad(rnn_loss, argnums=(0, 1))(W, U, H0, XS)  # evaluate's bits
    assert all(np.array_equal(a, b) for a, b in zip((gw, gu), evaluated))


def test_a_y_that_is_the_x_slice_is_the_xs_and_a_y_returned_twice_is_stacked_once() -> None:
    def f(h0: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> tuple[Any, Any]:
            h = h * 0.5 + x
            return h, (x, h, h)

        return shax.scan(step, h0, xs)

    jitted = shax.jit(f)
    h0, xs = np.float64(0.25), np.linspace(-1.0, 1.0, 6)
    source = jitted.source(h0, xs)
    assert source.count("np.empty((6,), np.float64)") == 1  # h stacked once; x not at all
    carry, (x_ys, h_ys, again) = jitted(h0, xs)
    want_carry, (want_x, want_h, _) = f(h0, xs)  # numpy values: a Python loop
    assert np.array_equal(x_ys, xs) and np.array_equal(h_ys, want_h) and np.array_equal(again, want_h)
    assert carry == want_carry and np.array_equal(want_x, xs)
    x_ys[0] = 7.0  # a result is the program's own, not the argument
    assert xs[0] == -1.0


def test_a_while_loop_compiles_to_a_loop_calling_its_functions_untested() -> None:
    def newton(a: Any) -> Any:
        return shax.while_loop(
            lambda c: abs(c[0] * c[0] - a) > 1e-12, lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1), (a, 0)
        )

    jitted = shax.jit(newton)
    source = jitted.source(np.float64(2.0))
    assert re.search(r"while c\d+\((x\d+, )+s\d+_c0, s\d+_c1\)\[0\]:\n +\[s\d+_c0, s\d+_c1\] = c\d+_1\(", source)
    assert source.count("argument(") == 1  # the user's one argument
    root, steps = jitted(np.float64(2.0))
    assert (root, steps) == tuple(newton(np.float64(2.0)))
    assert abs(root - np.sqrt(2.0)) < 1e-15 and steps.dtype == np.int32


def test_invariant_activations_are_fixed_consts_of_the_backward_scan() -> None:
    grad = shax.grad(rnn_loss, argnums=(0, 1))
    defn = shax.xpr(grad, W, U, H0, XS)
    backward = [b.prim for b in defn.bindings if isinstance(b.prim, Scan) and b.prim.linear]
    # w and u, read by every step's derivative: the fixed consts (the accumulators are carries)
    assert {(p.fixed, p.consts, p.reverse) for p in backward} == {(2, 2, True)}
    assert "fixed=2" in str(defn) and "broadcast" not in str(defn)
    # jvp of the gradient (the transposed scan linearized and transposed again) and vmap of it
    hvp = shax.jvp(lambda w: grad(w, U, H0, XS)[0], (W,), (np.ones_like(W),))[1]
    step = 1e-6
    fd = (rnn_grads(W + step, U, H0, XS)[0] - rnn_grads(W - step, U, H0, XS)[0]) / (2 * step)
    np.testing.assert_allclose(hvp, fd, rtol=1e-6, atol=1e-8)
    ws = np.stack([W, W * 0.5, -W])
    batched = shax.jit(shax.vmap(grad, in_axes=(0, None, None, None)))(ws, U, H0, XS)
    for k, w in enumerate(ws):
        want_w, want_u = rnn_grads(w, U, H0, XS)
        np.testing.assert_allclose(batched[0][k], want_w, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(batched[1][k], want_u, rtol=1e-12, atol=1e-14)


def test_xla_export_of_the_gradient_writes_no_broadcast_along_the_loop() -> None:
    pytest.importorskip("jax")
    xla = shax.jit(shax.grad(rnn_loss, argnums=(0, 1)), backend="xla")
    text = xla.source(W, U, H0, XS)
    assert "tensor<5x4x4xf64>" not in text  # w is a const of the backward loop, not broadcast along it
    gw, gu = xla(W, U, H0, XS)
    want_w, want_u = rnn_grads(W, U, H0, XS)
    np.testing.assert_allclose(np.asarray(gw), want_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(gu), want_u, rtol=1e-12, atol=1e-14)
