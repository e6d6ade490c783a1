"""B8: one training step of B3's MLP (f32[128, 784] -> 512 tanh -> 10, squared error):
the loss, its gradient, one Adam update, parameters a dict. shax jit (numpy and XLA)
beside JAX jit and PyTorch eager, from the same parameters and Adam state; the first row,
JAX jit, is the reference the ratios divide by.
"""

from __future__ import annotations

from typing import Any

from benchmarks.b3_mlp import data, loss
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing
from benchmarks.training import Params, rows, warmed

TITLE = "B8  MLP training step (784 -> 512 tanh -> 10, batch 128; Adam), × JAX jit"
LR = 1e-3


def implementations(fw: Frameworks) -> list[Impl | Missing]:
    params, x, y = data()
    params, state = warmed(loss, LR, params, x, y)
    return rows(fw, LR, loss, _jax_loss(fw), _torch_loss(fw), params, state, x, y)


def _jax_loss(fw: Frameworks) -> Any:
    jax = fw.get("jax")
    if jax is None:
        return None
    jnp = jax.numpy

    def loss_jax(params: Params, x: Any, y: Any) -> Any:
        d = jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"] - y
        return jnp.sum(d * d) / 128.0

    return loss_jax


def _torch_loss(fw: Frameworks) -> Any:
    torch = fw.get("torch")
    if torch is None:
        return None

    def loss_torch(params: Params, x: Any, y: Any) -> Any:
        d = torch.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"] - y
        return torch.sum(d * d) / 128.0

    return loss_torch
