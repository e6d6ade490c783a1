"""Checkpointing (issue 34, item 5): the gradient of a 32-layer tanh MLP (width 512,
batch 128, float64), plain and with every layer checkpointed under each policy, and with
segments of --segment layers checkpointed as one (`nothing_saveable`): residual bytes
(`shax.saved_residuals`), of which the weights (residuals that are the loss's own
arguments, which the caller holds: no memory of their own), the bytes saved beyond them,
peak memory of one gradient call (tracemalloc, which sees numpy's arrays), the time of a
call (best of --repeat, compiled numpy, one BLAS thread), and the largest difference from
the plain gradient. It measures and never asserts.

    python benchmarks/checkpoint.py [--layers 32] [--width 512] [--batch 128] [--segment 4] [--repeat 3]

Per layer, the plain gradient keeps the layer's input (for dW = hᵀ·ct), tanh's derivative
and the weight; checkpointing a layer can drop only tanh's derivative, so it keeps about
half the plain bytes beyond the weights. Checkpointing segments of k layers keeps one
input per segment, 1/(2k) of them (the √n schedule).
"""

from __future__ import annotations

import sys

if __name__ == "__main__":  # BLAS reads its thread count when numpy loads
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.frameworks import set_threads

    set_threads(1)

import argparse
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import shax
from shax import checkpoint_policies as cp
from typeclasses import dot, reduce_sum, tanh


def layer(h: Any, w: Any) -> Any:
    return tanh(dot(h, w))


def loss_of(step: Callable[..., Any], x: np.ndarray, segment: int = 1) -> Callable[..., Any]:
    """The loss of the MLP whose layers, `segment` at a time, are one call of `step`."""

    def loss(ws: list[Any]) -> Any:
        h = x
        for k in range(0, len(ws), segment):
            h = step(h, *ws[k : k + segment])
        return reduce_sum(h * h, [0, 1])

    return loss


def layers(h: Any, *ws: Any) -> Any:
    for w in ws:
        h = layer(h, w)
    return h


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--segment", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((options.batch, options.width))
    ws = [rng.standard_normal((options.width, options.width)) / np.sqrt(options.width) for _ in range(options.layers)]
    k = options.segment
    losses: dict[str, Callable[..., Any]] = {
        "plain": loss_of(layer, x),
        "nothing_saveable": loss_of(shax.checkpoint(layer, policy=cp.nothing_saveable), x),
        "dots_saveable": loss_of(shax.checkpoint(layer, policy=cp.dots_saveable), x),
        "everything_saveable": loss_of(shax.checkpoint(layer, policy=cp.everything_saveable), x),
        f"nothing, {k} layers": loss_of(shax.checkpoint(layers, policy=cp.nothing_saveable), x, k),
    }
    reference = None
    print(f"{'policy':<22}{'residual MiB':>14}{'weights':>9}{'saved':>8}{'peak MiB':>10}{'time s':>9}{'max |Δg|':>10}")
    for name, loss in losses.items():
        residuals = shax.saved_residuals(loss, ws)
        total = sum(r.bytes for r in residuals)
        weights = sum(r.bytes for r in residuals if r.argument is not None)
        grad = shax.grad(loss)
        grad(ws)  # build and compile
        grad(ws)
        tracemalloc.start()
        grads = grad(ws)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        best = float("inf")
        for _ in range(options.repeat):
            start = time.perf_counter()
            grad(ws)
            best = min(best, time.perf_counter() - start)
        if reference is None:
            reference = grads
        error = max(float(np.max(np.abs(g - r))) for g, r in zip(grads, reference))
        mib = 2**20
        print(
            f"{name:<22}{total / mib:>14.2f}{weights / mib:>9.2f}{(total - weights) / mib:>8.2f}"
            f"{peak / mib:>10.2f}{best:>9.3f}{error:>10.1e}"
        )


if __name__ == "__main__":
    main()
