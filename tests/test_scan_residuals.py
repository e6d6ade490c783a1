"""A scan's residuals: an activation of the body that is its own x slice is the xs the
scan was given, saved as that argument, not stacked again by the forward loop."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

RNG = np.random.default_rng(0)
W, U = RNG.standard_normal((4, 4)) * 0.4, RNG.standard_normal((3, 4)) * 0.4
H0, XS = RNG.standard_normal(4), RNG.standard_normal((6, 3))


def rnn(reverse: bool) -> Any:
    def loss(w: Any, u: Any, h0: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> tuple[Any, Any]:
            h = snp.tanh(h @ w + x @ u)  # d(x @ u)/du reads x: the x slice is an activation
            return h, h

        return snp.sum(shax.scan(step, h0, xs, reverse=reverse)[1] ** 2)

    return loss


def hand_grads(w: np.ndarray, u: np.ndarray, h0: np.ndarray, xs: np.ndarray, reverse: bool) -> tuple[Any, Any]:
    order = list(range(len(xs)))[::-1] if reverse else list(range(len(xs)))
    hs, prev, h = {}, {}, h0
    for t in order:
        prev[t], h = h, np.tanh(h @ w + xs[t] @ u)
        hs[t] = h
    gw, gu, dh = np.zeros_like(w), np.zeros_like(u), np.zeros_like(h0)
    for t in reversed(order):
        da = (dh + 2 * hs[t]) * (1 - hs[t] ** 2)
        gw, gu, dh = gw + np.outer(prev[t], da), gu + np.outer(xs[t], da), w @ da
    return gw, gu


@pytest.mark.parametrize("reverse", [False, True])
def test_the_xs_are_a_residual_not_a_stack_of_their_slices(reverse: bool) -> None:
    loss = rnn(reverse)
    grad = shax.grad(loss, argnums=(0, 1))
    # The forward loop returns the last h, the hs, and the activations h_{t-1} and 1 - h_t²:
    # not the x slices, which the backward loop reads from the xs themselves.
    defn = shax.xpr(grad, W, U, H0, XS)
    forward, backward = (b for b in defn.bindings if b.prim.name == "scan")
    assert len(forward.vars) == 4
    (xs,) = (b.vars[0] for b in defn.bindings if b.prim.name == "arg" and b.prim.index == 3)
    assert xs in backward.args
    saved = shax.saved_residuals(loss, W, U, H0, XS)
    assert [r.argument for r in saved if r.type == shax.TensorType.of(XS)].count(3) == 1
    for got, want in zip(grad(W, U, H0, XS), hand_grads(W, U, H0, XS, reverse), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    for got, want in zip(shax.jit(grad)(W, U, H0, XS), hand_grads(W, U, H0, XS, reverse), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_saved_bytes_drop_by_the_xs() -> None:
    lin = shax.stages.linearize(shax.xpr(rnn(False), W, U, H0, XS))
    stats = shax.stats(lin)
    assert stats.residual_argument_bytes == W.nbytes + U.nbytes + XS.nbytes
    # h_{t-1} and 1 - h_t², stacked; 2 h_t for the loss' square
    assert stats.saved_bytes == 3 * XS.shape[0] * H0.nbytes


def test_a_value_computed_from_the_x_slice_is_still_stacked() -> None:
    def loss(u: Any, xs: Any) -> Any:
        return snp.sum(shax.scan(lambda h, x: (h, snp.sin(snp.sin(x) @ u)), snp.zeros(4), xs)[1])

    saved = shax.saved_residuals(loss, U, XS)
    assert all(r.argument is None for r in saved if r.type == shax.TensorType.of(XS))
    grad = shax.grad(loss, argnums=0)(U, XS)
    want = np.einsum("ti,tj->ij", np.sin(XS), np.cos(np.sin(XS) @ U))
    np.testing.assert_allclose(grad, want, rtol=1e-12)
