"""A small recurrent network, written with `shax.scan`, learns a sequence task: at each
step, output the sum of the current and the previous input (it must remember one step).

    h_t = tanh(h_{t-1} W + x_t U + b),   ŷ_t = h_t · v,   loss = mean_t,n (ŷ_t − x_t − x_{t-1})²

The scan is one operation whatever the sequence length: its gradient is a scan of the
step's derivative forwards (stacking what the derivative needs) and a scan of its
transpose backwards. Adam fits the weights; the loss goes down.

    python examples/rnn.py
"""

from typing import Any

import numpy as np

import shax
import shax.numpy as snp
from shax.optimizers import adam

HIDDEN, STEPS, SEQUENCES = 8, 12, 32


def data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(inputs f32[steps, sequences, 1], targets f32[steps, sequences]): targets x_t + x_{t-1}."""
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-1.0, 1.0, size=(STEPS, SEQUENCES, 1)).astype(np.float32)
    previous = np.concatenate([np.zeros_like(xs[:1]), xs[:-1]])
    return xs, (xs + previous)[:, :, 0]


def init(seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "w": (rng.normal(size=(HIDDEN, HIDDEN)) * 0.3).astype(np.float32),
        "u": (rng.normal(size=(1, HIDDEN)) * 0.5).astype(np.float32),
        "b": np.zeros(HIDDEN, np.float32),
        "v": (rng.normal(size=HIDDEN) * 0.3).astype(np.float32),
    }


def loss(params: dict[str, Any], xs: np.ndarray, targets: np.ndarray) -> Any:
    """The mean squared error of the network's outputs over every step and sequence."""

    def step(h: Any, x: Any) -> Any:
        h = snp.tanh(h @ params["w"] + x @ params["u"] + params["b"])
        return h, h @ params["v"]

    h0 = np.zeros((SEQUENCES, HIDDEN), np.float32)
    _, outputs = shax.scan(step, h0, xs)
    return snp.mean((outputs - targets) ** 2)


def main(iters: int = 150, log: Any = print) -> tuple[float, float]:
    """Train; returns (the loss before, the loss after)."""
    xs, targets = data()
    params = init()
    before = float(loss(params, xs, targets))
    every = max(iters // 6, 1)

    def progress(line: str) -> None:  # adam logs "Iteration k: loss" at every step
        k = int(line.split()[1].rstrip(":"))
        if log is not None and (k == 1 or k % every == 0):
            log(line)

    params, after = adam(lambda p: loss(p, xs, targets), params, lr=0.03, iters=iters, log=progress)
    if log is not None:
        gradient = shax.xpr(shax.grad(lambda p: loss(p, xs, targets)), params)
        log(f"loss {before:.4f} before training, {float(after):.4f} after {iters} Adam steps")
        log(f"the gradient's program: {len(gradient.bindings)} bindings for {STEPS} steps")
    return before, float(after)


if __name__ == "__main__":
    main()
