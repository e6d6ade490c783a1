"""B3: one MLP step's gradient. x :: f32[128, 784] -> 512 tanh -> 10, squared error
summed and divided by 128; the gradient with respect to both weights and both biases,
the parameters being one dict pytree. Also the peak memory of one call. The issue's
reference numbers: hand numpy 1.32 ms, JAX jit 1.98 ms, PyTorch 2.0 ms, autograd 2.4 ms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import shax
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing, Target
from typeclasses import dot, reduce_sum, tanh

TITLE = "B3  MLP 784 -> 512 tanh -> 10, batch 128: gradient w.r.t. {w1, b1, w2, b2}"
TARGET = Target("≤ 1.1× hand numpy", lambda seconds, floor: seconds <= 1.1 * floor)

Params = dict[str, Any]


def loss(params: Params, x: Any, y: Any) -> Any:
    h = tanh(dot(x, params["w1"]) + params["b1"])
    d = dot(h, params["w2"]) + params["b2"] - y
    return reduce_sum(d * d, axes=[0, 1]) / 128.0


def hand(params: Params, x: np.ndarray, y: np.ndarray) -> Params:
    w1, b1, w2, b2 = params["w1"], params["b1"], params["w2"], params["b2"]
    h = np.tanh(x @ w1 + b1)
    g_out = (h @ w2 + b2 - y) * np.float32(2 / 128)
    g_pre = (g_out @ w2.T) * (1 - h * h)  # tanh' = 1 - tanh²
    return {"w1": x.T @ g_pre, "b1": g_pre.sum(axis=0), "w2": h.T @ g_out, "b2": g_out.sum(axis=0)}


def data() -> tuple[Params, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.standard_normal((784, 512)) / 28).astype(np.float32),
        "b1": (rng.standard_normal(512) * 0.1).astype(np.float32),
        "w2": (rng.standard_normal((512, 10)) / 22).astype(np.float32),
        "b2": (rng.standard_normal(10) * 0.1).astype(np.float32),
    }
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.standard_normal((128, 10)).astype(np.float32)
    return params, x, y


def implementations(fw: Frameworks) -> list[Impl | Missing]:
    args = data()
    entries: list[Impl | Missing] = [Impl("hand numpy", hand, args, reference=1.32e-3)]
    if hasattr(shax, "jit"):
        entries.append(Impl("shax jit(grad)", shax.jit(shax.grad(loss, wrt=0)), args, targeted=True))
    else:
        entries.append(Missing("shax jit(grad)", "not available: shax.jit is not in shax yet"))
    entries.append(Impl("shax grad", shax.grad(loss, wrt=0), args, targeted=True))

    jax = fw.get("jax")
    if jax is None:
        entries += [Missing("JAX jit(grad)", fw.missing("jax")), Missing("JAX eager grad", fw.missing("jax"))]
    else:
        jnp = jax.numpy

        def loss_jax(params: Params, x: Any, y: Any) -> Any:
            h = jnp.tanh(x @ params["w1"] + params["b1"])
            d = h @ params["w2"] + params["b2"] - y
            return jnp.sum(d * d) / 128.0

        jitted, eager = jax.jit(jax.grad(loss_jax)), jax.grad(loss_jax)
        jax_args = jax.device_put(args)  # on the device once, as a training loop keeps them
        entries += [
            Impl("JAX jit(grad)", lambda *a: jax.block_until_ready(jitted(*a)), jax_args, 1.98e-3, numpy_memory=False),
            Impl("JAX eager grad", lambda *a: jax.block_until_ready(eager(*a)), jax_args, numpy_memory=False),
        ]
        xla = shax.jit(shax.grad(loss, wrt=0), backend="xla")
        entries.append(
            Impl("shax jit(backend='xla')", lambda *a: jax.block_until_ready(xla(*a)), jax_args, numpy_memory=False)
        )

    torch = fw.get("torch")
    if torch is None:
        entries.append(Missing("PyTorch eager", fw.missing("torch")))
    else:

        def grad_torch(params: Params, x: Any, y: Any) -> Params:
            h = torch.tanh(x @ params["w1"] + params["b1"])
            d = h @ params["w2"] + params["b2"] - y
            grads = torch.autograd.grad(torch.sum(d * d) / 128.0, list(params.values()))
            return dict(zip(params, grads))

        params, x, y = args
        leaves = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
        entries.append(
            Impl("PyTorch eager", grad_torch, (leaves, torch.tensor(x), torch.tensor(y)), 2.0e-3, numpy_memory=False)
        )

    autograd, anp = fw.get("autograd"), fw.get("autograd.numpy")
    if autograd is None or anp is None:
        entries.append(Missing("autograd", fw.missing("autograd")))
    else:

        def loss_autograd(params: Params, x: Any, y: Any) -> Any:
            h = anp.tanh(anp.dot(x, params["w1"]) + params["b1"])
            d = anp.dot(h, params["w2"]) + params["b2"] - y
            return anp.sum(d * d) / 128.0

        entries.append(Impl("autograd", autograd.grad(loss_autograd), args, reference=2.4e-3))
    return entries
