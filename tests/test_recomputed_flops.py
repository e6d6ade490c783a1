"""Recomputed flops (issue 34, item 4): `shax.stats(...).recomputed_flops`, the flops the
backward pass spends recomputing what a checkpoint policy did not save, and
`shax.policy_stats(f, *args)`, the policies side by side.

The counts are checked against hand counts of the model, `layer(h, w) = tanh(h @ w)` on
h: f64[B, K], w: f64[K, N]: the matmul costs 2·B·K·N flops, tanh B·N, and tanh's
derivative 1 − y² (a product and a difference) 2·B·N. Without saving anything, the
backward pass recomputes all of that, the checkpointed forward (its outputs and what its
derivative reads); saving the dots, only the last 3·B·N; saving everything, nothing.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
from shax import checkpoint_policies as cp
from shax.stages import jvp, unzip
from typeclasses import dot, reduce_sum, tanh

B, K, N = 4, 3, 5
H = np.linspace(-1.0, 1.0, B * K).reshape(B, K)
W = np.linspace(-0.5, 0.5, K * N).reshape(K, N)
MATMUL = 2 * B * K * N
FORWARD = MATMUL + B * N + 2 * B * N  # tanh(h @ w), and 1 − y² for its derivative
RECOMPUTED = {cp.nothing_saveable: FORWARD, cp.dots_saveable: 3 * B * N, cp.everything_saveable: 0}


def layer(h: Any, w: Any) -> Any:
    return tanh(dot(h, w))


def loss_of(policy: Any) -> Any:
    checkpointed = shax.checkpoint(layer, policy=policy)
    return lambda w: reduce_sum(checkpointed(H, w), [0, 1])


@pytest.mark.parametrize("policy", list(RECOMPUTED), ids=lambda p: p.__name__)
def test_the_gradient_recomputes_what_the_policy_does_not_save(policy: Any) -> None:
    for transform in (shax.grad, shax.value_and_grad, lambda f: shax.jit(shax.grad(f))):
        s = shax.stats(shax.xpr(transform(loss_of(policy)), W))
        assert s.recomputed_flops == RECOMPUTED[policy]
        assert s.recomputed_flops < s.flops


def test_nothing_saveable_recomputes_the_checkpointed_forward() -> None:
    # the forward of the everything_saveable derivative computes the output and what the
    # derivative reads: the very values nothing_saveable recomputes
    plain = shax.stats(shax.xpr(shax.grad(loss_of(cp.everything_saveable)), W))
    forward = plain.flops_by_primitive["call"] - (2 * B * K * N + B * N)  # minus dW = hᵀ·(ct·(1 − y²))
    assert forward == FORWARD == shax.stats(shax.xpr(shax.grad(loss_of(cp.nothing_saveable)), W)).recomputed_flops


def test_without_a_checkpoint_nothing_is_recomputed() -> None:
    assert shax.stats(shax.xpr(shax.grad(lambda w: reduce_sum(layer(H, w), [0, 1])), W)).recomputed_flops == 0
    assert shax.stats(shax.xpr(layer, H, W)).recomputed_flops == 0


def test_a_scan_recomputes_its_checkpointed_body_each_step() -> None:
    steps, c = 7, shax.checkpoint(layer)
    ws = np.stack([np.eye(K) * (1 + k / 10) for k in range(steps)])

    def f(ws: Any) -> Any:
        h, _ = shax.scan(lambda h, w: (c(h, w), None), H, ws)
        return reduce_sum(h, [0, 1])

    per_step = 2 * B * K * K + 3 * B * K
    assert shax.stats(shax.xpr(shax.grad(f), ws)).recomputed_flops == steps * per_step
    # vmap batches the recomputation, which stays one
    batched = shax.stats(shax.xpr(shax.vmap(shax.grad(f)), np.stack([ws, ws])))
    assert batched.recomputed_flops == 2 * steps * per_step


def test_the_unzipped_linear_program_counts_its_recomputation() -> None:
    defn = shax.xpr(layer, H, W)
    for policy, count in RECOMPUTED.items():
        assert shax.stats(unzip(jvp(defn), policy)).recomputed_flops == count
    assert shax.stats(unzip(jvp(defn))).recomputed_flops == 0


def test_stats_print_the_recomputed_flops() -> None:
    shown = str(shax.stats(shax.xpr(shax.grad(loss_of(cp.nothing_saveable)), W)))
    assert f"of the flops, {FORWARD} recompute what a checkpoint policy did not save" in shown
    assert (
        f"of the flops, {FORWARD} recompute"
        in shax.stats(shax.xpr(shax.grad(loss_of(cp.nothing_saveable)), W))._repr_html_()
    )
    assert "recompute" not in str(shax.stats(shax.xpr(shax.grad(loss_of(cp.everything_saveable)), W)))


def test_policy_stats_sets_the_policies_side_by_side() -> None:
    table = shax.policy_stats(layer, H, W)
    assert list(table.policies) == [
        "nothing_saveable", "dots_saveable", "dots_with_no_batch_dims_saveable", "everything_saveable"
    ]  # fmt: skip
    rows = {row[0]: row for row in table.rows()}
    nothing, dots, everything = rows["nothing_saveable"], rows["dots_saveable"], rows["everything_saveable"]
    assert (nothing[5], dots[5], everything[5]) == (FORWARD, 3 * B * N, 0)
    arguments = H.nbytes + W.nbytes
    # nothing_saveable keeps only the arguments; the others also the dot's result (f64[B, N]),
    # or, everything saved, 1 − y² in its place
    assert (nothing[2], nothing[3]) == (arguments, 0)
    assert (dots[2], dots[3]) == (everything[2], everything[3]) == (arguments + 8 * B * N, 8 * B * N)
    lines = str(table).splitlines()
    assert lines[0].split() == ["policy", "residuals", "residual", "bytes", "saved", "bytes", "flops", "recomputed",
                                "flops", "peak", "live", "bytes"]  # fmt: skip
    assert re.fullmatch(rf"nothing_saveable +2 +{arguments} +0 +\d+ +{FORWARD} +\d+", lines[1])
    assert "<table>" in table._repr_html_() and "recomputed flops" in table._repr_html_()


def test_policy_stats_takes_named_policies_and_types() -> None:
    named = shax.policy_stats(layer, "f64[4, 3]", shax.f64[3, 5], policies={"save nothing": cp.nothing_saveable})
    assert list(named.policies) == ["save nothing"]
    assert named.policies["save nothing"].recomputed_flops == FORWARD
    both = shax.policy_stats(layer, H, W, policies=[cp.save_only_these_names("a"), cp.save_only_these_names("b")])
    assert list(both.policies) == ["policy", "policy 1"]
    assert str(shax.policy_stats(layer, H, W, policies=[])).split() == str(named).splitlines()[0].split()


@typeguard.suppress_type_checks
@pytest.mark.parametrize("policies", ["nothing", [cp.nothing_saveable, 3], {"a": None}, 7])
def test_policy_stats_refuses_what_is_not_a_policy(policies: Any) -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"policy_stats: policies are checkpoint policies") as raised:
        shax.policy_stats(layer, H, W, policies=policies)
    assert "test_recomputed_flops.py:" in str(raised.value)


@typeguard.suppress_type_checks
def test_policy_stats_refuses_what_is_not_a_function() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"policy_stats: expected a function, got int") as raised:
        shax.policy_stats(3, H, W)
    assert "test_recomputed_flops.py:" in str(raised.value)
