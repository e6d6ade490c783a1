"""Checkpointing (issue 34, item 5): the gradient of a 32-layer tanh MLP (width 512,
batch 128, float64), plain and with every layer checkpointed under each policy:
residual bytes (`shax.saved_residuals`), peak memory of one gradient call (tracemalloc,
which sees numpy's arrays), the time of a call (best of --repeat, compiled numpy), and
the largest difference from the plain gradient. It measures and never asserts.

    python benchmarks/checkpoint.py [--layers 32] [--width 512] [--batch 128] [--repeat 3]
"""

from __future__ import annotations

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


def loss_of(step: Callable[..., Any], x: np.ndarray) -> Callable[..., Any]:
    def loss(ws: list[Any]) -> Any:
        h = x
        for w in ws:
            h = step(h, w)
        return reduce_sum(h * h, [0, 1])

    return loss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((options.batch, options.width))
    ws = [rng.standard_normal((options.width, options.width)) / np.sqrt(options.width) for _ in range(options.layers)]
    steps: dict[str, Callable[..., Any]] = {
        "plain": layer,
        "nothing_saveable": shax.checkpoint(layer, policy=cp.nothing_saveable),
        "dots_saveable": shax.checkpoint(layer, policy=cp.dots_saveable),
        "everything_saveable": shax.checkpoint(layer, policy=cp.everything_saveable),
    }
    reference = None
    print(f"{'policy':<22}{'residual MiB':>14}{'peak MiB':>12}{'time s':>10}{'max |Δg|':>12}")
    for name, step in steps.items():
        loss = loss_of(step, x)
        residual = sum(r.bytes for r in shax.saved_residuals(loss, ws))
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
        print(f"{name:<22}{residual / 2**20:>14.2f}{peak / 2**20:>12.2f}{best:>10.3f}{error:>12.1e}")


if __name__ == "__main__":
    main()
