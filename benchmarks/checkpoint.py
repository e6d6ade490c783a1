"""Checkpointing (issue 34, item 5): the gradient of a 32-layer tanh MLP (width 512,
batch 128, float64), plain and with every layer checkpointed under each policy, and with
segments of --segment layers (4 and 8) checkpointed as one (`nothing_saveable`). Per row:

    residual   the bytes of the residuals (`shax.saved_residuals`), of which
    weights    those that are the loss's own arguments (the caller holds them: no memory
               of their own), and
    saved      the rest, what the policy keeps;
    JAX saved  the same, by `jax.ad_checkpoint.print_saved_residuals` on the same model
               with `jax.checkpoint` and JAX's policy (when JAX is installed);
    held       the bytes the forward pass (`shax.vjp`) leaves allocated for the backward
               pass, and fwd peak, its peak (tracemalloc, which sees numpy's arrays):
               the residuals, weights included, since a compiled program returns an
               output that is one of its arguments as a copy (`shax.transforms.program`);
    peak       the peak of one whole gradient call (tracemalloc);
    cpu s      the CPU time of a gradient call (best of --repeat, compiled numpy, one BLAS
               thread: CPU time, so that other processes on the machine weigh less), and
               its ratio to the plain one;
    recomputed the GFLOP the backward pass recomputes (`shax.stats(...).recomputed_flops`);
    max |Δg|   the largest difference from the plain gradient.

It measures and never asserts.

    python benchmarks/checkpoint.py [--layers 32] [--width 512] [--batch 128] [--segment 4 8] [--repeat 5]

Per layer, the plain gradient keeps the layer's input (for dW = hᵀ·ct; the first
layer's is a constant), tanh's derivative and the weight, and the loss's derivative keeps
the last output: 2n activations of f64[128, 512] (0.5 MiB each) for n layers. A
checkpointed layer must still keep its input (its operand: dW and the recomputation read
it), so per-layer checkpointing drops only tanh's derivative and keeps n + 1 activations,
about half (JAX keeps the same). Checkpointing segments of k layers keeps one input per
segment: n/k + 1 activations, 4.5 MiB of 32 for k = 4 (about 1/7), 2.5 for k = 8 (the √n
schedule). The peak of a whole gradient call is the gradients' own bytes (as many as the
weights') plus a little, whatever the policy: the backward pass frees a layer's residuals
as it makes that layer's dW, which is larger; the residuals show in what the forward pass
holds.
"""

from __future__ import annotations

import sys

if __name__ == "__main__":  # BLAS reads its thread count when numpy loads
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.frameworks import set_threads

    set_threads(1)

import argparse
import contextlib
import io
import re
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


def loss_of(
    step: Callable[..., Any], x: np.ndarray, segment: int = 1, reduce: Callable[[Any], Any] | None = None
) -> Callable[..., Any]:
    """The loss of the MLP whose layers, `segment` at a time, are one call of `step`
    (summed by `reduce`, default `reduce_sum` over both axes)."""

    def loss(ws: list[Any]) -> Any:
        h = x
        for k in range(0, len(ws), segment):
            h = step(h, *ws[k : k + segment])
        return reduce_sum(h * h, [0, 1]) if reduce is None else reduce(h * h)

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
    parser.add_argument("--segment", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((options.batch, options.width))
    ws = [rng.standard_normal((options.width, options.width)) / np.sqrt(options.width) for _ in range(options.layers)]
    # row -> (the per-call step or None for plain, its policy's name, layers per call)
    rows = {
        "plain": (None, "", 1),
        "nothing_saveable": (layer, "nothing_saveable", 1),
        "dots_saveable": (layer, "dots_saveable", 1),
        "everything_saveable": (layer, "everything_saveable", 1),
        **{f"nothing, {k} layers": (layers, "nothing_saveable", k) for k in options.segment},
    }
    jax_saved = JaxResiduals(x, ws)
    mib = 2**20
    print(
        f"{'policy':<22}{'residual':>9}{'weights':>8}{'saved':>7}{'JAX saved':>10}{'held':>7}{'fwd peak':>9}"
        f"{'peak':>7}{'cpu s':>8}{'×plain':>7}{'recomputed':>11}{'max |Δg|':>10}"
    )
    print(f"{'':<22}{'MiB':>9}{'MiB':>8}{'MiB':>7}{'MiB':>10}{'MiB':>7}{'MiB':>9}{'MiB':>7}{'':>15}{'GFLOP':>11}")
    reference, plain_time = None, None
    for name, (step, policy, segment) in rows.items():
        checkpointed = layer if step is None else shax.checkpoint(step, policy=getattr(cp, policy))
        loss = loss_of(checkpointed, x, segment)
        residuals = shax.saved_residuals(loss, ws)
        total = sum(r.bytes for r in residuals)
        weights = sum(r.bytes for r in residuals if r.argument is not None)
        grad = shax.grad(loss)
        recomputed = shax.stats(shax.xpr(grad, ws)).recomputed_flops
        grad(ws)  # build and compile
        shax.vjp(loss, ws)
        held, forward_peak = _memory(shax.vjp, loss, ws)
        _, peak = _memory(grad, ws)
        grads = grad(ws)
        best = float("inf")
        for _ in range(options.repeat):
            start = time.process_time()
            grad(ws)
            best = min(best, time.process_time() - start)
        reference = grads if reference is None else reference
        plain_time = best if plain_time is None else plain_time
        error = max(float(np.max(np.abs(g - r))) for g, r in zip(grads, reference))
        theirs = jax_saved(policy, segment)
        print(
            f"{name:<22}{total / mib:>9.2f}{weights / mib:>8.2f}{(total - weights) / mib:>7.2f}"
            f"{'-' if theirs is None else f'{theirs / mib:.2f}':>10}{held / mib:>7.2f}{forward_peak / mib:>9.2f}"
            f"{peak / mib:>7.2f}{best:>8.3f}{best / plain_time:>7.2f}{recomputed / 1e9:>11.3f}{error:>10.1e}"
        )


def _memory(run: Callable[..., Any], *args: Any) -> tuple[int, int]:
    """The bytes `run(*args)`'s result holds (allocated during it and still alive), and the peak while it ran."""
    tracemalloc.start()
    result = run(*args)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return held, peak


class JaxResiduals:
    """The bytes `jax.ad_checkpoint.print_saved_residuals` lists beyond the arguments, for
    the same model in JAX (float64) with each call of `segment` layers checkpointed by
    the JAX policy named `policy` ("" for plain): None without JAX."""

    def __init__(self, x: np.ndarray, ws: list[np.ndarray]) -> None:
        try:
            import jax
            import jax.ad_checkpoint
        except ImportError:
            self.jax = None
            return
        jax.config.update("jax_enable_x64", True)
        self.jax, self.x, self.ws = jax, x, ws

    def __call__(self, policy: str, segment: int) -> int | None:
        jax = self.jax
        if jax is None:
            return None

        def step(h: Any, *ws: Any) -> Any:
            for w in ws:
                h = jax.numpy.tanh(h @ w)
            return h

        checkpointed = step if not policy else jax.checkpoint(step, policy=getattr(jax.checkpoint_policies, policy))
        loss = loss_of(checkpointed, self.x, segment, reduce=jax.numpy.sum)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            jax.ad_checkpoint.print_saved_residuals(loss, self.ws)
        saved = 0
        for line in printed.getvalue().splitlines():  # `f64[128,512] from the argument ws[3]`, ...
            found = re.match(r"\s*(\w+)\[([\d,]*)\]", line)
            if found and "from the argument" not in line:
                size = int(np.prod([int(d) for d in found.group(2).split(",") if d], dtype=np.int64))
                saved += size * np.dtype(found.group(1).replace("f", "float")).itemsize
        return saved


if __name__ == "__main__":
    main()
