"""What a checkpoint saves, counted as memory (issue 34): residuals that are the
differentiated function's own arguments (weights passed on, by a checkpointed call too)
cost nothing of their own, so `saved_residuals` marks them and `shax.stats` reports the
bytes a policy saves beyond them; and a call's results are new arrays, which the caller
neither copies again nor lets keep their operands alive."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
from shax import checkpoint_policies as cp
from shax import f32
from shax.stages import infer_types, jvp, unzip
from typeclasses import dot, reduce_sum, tanh

RNG = np.random.default_rng(1)
X = RNG.standard_normal((4, 3))
WS = [RNG.standard_normal((3, 3)) * 0.5 for _ in range(3)]


def layer(h: Any, w: Any) -> Any:
    return tanh(dot(h, w))


def mlp(step: Any) -> Any:
    def loss(ws: Any) -> Any:
        h = X
        for w in ws:
            h = step(h, w)
        return reduce_sum(h * h, [0, 1])

    return loss


def test_weights_are_residuals_from_the_arguments() -> None:
    for step in (layer, shax.checkpoint(layer)):
        found = shax.saved_residuals(mlp(step), WS)
        weights = [r for r in found if r.argument is not None]
        # the first layer's input is a constant: no derivative reaches w0 through it, so w0 is no residual
        assert [r.argument for r in weights] == ([1, 2] if step is layer else [0, 1, 2])
        assert all(str(r.type) == "f64[3, 3]" and f"argument {r.argument}" in str(r) for r in weights)
        assert all(r.argument is None for r in found if str(r.type) != "f64[3, 3]")


def test_nothing_saveable_keeps_only_each_layers_input_beyond_the_weights() -> None:
    def new_bytes(step: Any) -> int:
        return sum(r.bytes for r in shax.saved_residuals(mlp(step), WS) if r.argument is None)

    plain, checkpointed = new_bytes(layer), new_bytes(shax.checkpoint(layer, policy=cp.nothing_saveable))
    h = X.nbytes  # one activation, f64[4, 3]
    # plain: the inputs of layers 1 and 2 (for dW; layer 0's is the constant X, copied into
    # the linear program), tanh's derivative of each layer, the last output (for h * h)
    assert plain == (2 + 3 + 1) * h
    # checkpointed: each call's input (X too: an operand of the call), the last output
    assert checkpointed == (3 + 1) * h


def medium(x0: Any, x8: Any) -> Any:
    from examples.medium import medium as seed

    return seed(x0, x8)


@pytest.mark.parametrize(
    ("policy", "saved"),
    [(None, 240), (cp.everything_saveable, 240), (cp.dots_saveable, 16), (cp.nothing_saveable, 0)],
)
def test_stats_report_the_bytes_each_policy_saves(policy: Any, saved: int) -> None:
    lin = unzip(jvp(infer_types(shax.trace(medium, f32[6], f32[2, 2]))), policy)
    s = shax.stats(lin)
    assert s.residual_argument_bytes == 16 + 24 or policy is None or policy is cp.everything_saveable
    assert s.saved_bytes == saved == s.residual_bytes - s.residual_argument_bytes


def test_a_calls_results_are_not_copied_again() -> None:
    source = shax.jit(shax.grad(mlp(shax.checkpoint(layer)))).source(WS)
    assert ".copy()" not in source.split("def grad_loss")[1]
    got = shax.jit(shax.grad(mlp(shax.checkpoint(layer))))(WS)
    for g, want in zip(got, shax.grad(mlp(layer))(WS)):
        np.testing.assert_allclose(g, want, rtol=1e-12)


def test_a_call_returning_its_argument_or_a_view_returns_a_new_array() -> None:
    passing = shax.subgraph(lambda y: (y, y.T))
    x = np.arange(6.0).reshape(2, 3)
    same, turned = shax.jit(lambda a: passing(a))(x)
    same[0, 0] = turned[0, 1] = 99.0
    np.testing.assert_array_equal(x, np.arange(6.0).reshape(2, 3))


def test_one_array_returned_twice_by_a_callee_is_not_overwritten_by_the_caller() -> None:
    twice = shax.subgraph(lambda y: (y * 2.0, y * 2.0))

    def f(a: Any) -> Any:
        p, q = twice(a)
        return (p + 1.0) * 3.0, q - 1.0

    x = np.arange(6.0)
    got = shax.jit(f)(x)
    np.testing.assert_array_equal(got[0], (x * 2 + 1) * 3)
    np.testing.assert_array_equal(got[1], x * 2 - 1)
