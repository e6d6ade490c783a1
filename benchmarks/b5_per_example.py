"""B5: per-example gradients of logistic regression (issue 6 item 6). w :: f32[64], a batch
of 256 examples x :: f32[256, 64] with labels y = ±1; the loss of one example is
log(1 + exp(-y x·w)), and each example's gradient with respect to w is one row of the
f32[256, 64] result. shax's vmap(grad) (one batched program) against a Python loop of
grad, hand-written vectorized numpy, and the frameworks' own vmap where they have one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import shax
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing
from typeclasses import dot, exp, log

TITLE = "B5  per-example gradients of logistic regression, w: f32[64], batch 256"
IN_AXES = (None, 0, 0)


def loss(w: Any, x: Any, y: Any) -> Any:
    return log(1.0 + exp(-y * dot(x, w)))


def hand(w: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    # d/dw log(1 + exp(-m)) with m = y x·w is -y x / (1 + exp(m)).
    return (-ys / (1 + np.exp(ys * (xs @ w))))[:, None] * xs


def looped(grad: Any) -> Any:
    def per_example(w: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        return np.stack([grad(w, x, y) for x, y in zip(xs, ys)])

    return per_example


def implementations(fw: Frameworks) -> list[Impl | Missing]:
    rng = np.random.default_rng(0)
    w = (rng.standard_normal(64) * 0.2).astype(np.float32)
    xs = rng.standard_normal((256, 64)).astype(np.float32)
    ys = np.where(rng.standard_normal(256) > 0, 1, -1).astype(np.float32)
    args = (w, xs, ys)
    per_example = shax.vmap(shax.grad(loss, wrt=0), in_axes=IN_AXES)
    entries: list[Impl | Missing] = [Impl("hand numpy (vectorized)", hand, args)]
    if hasattr(shax, "jit"):
        entries.append(Impl("shax jit(vmap(grad))", shax.jit(per_example), args))
    else:
        entries.append(Missing("shax jit(vmap(grad))", "not available: shax.jit is not in shax yet"))
    entries.append(Impl("shax vmap(grad)", per_example, args))
    entries.append(Impl("shax loop of grad", looped(shax.grad(loss, wrt=0)), args))

    jax = fw.get("jax")
    if jax is None:
        entries += [Missing("JAX jit(vmap(grad))", fw.missing("jax")), Missing("JAX eager vmap", fw.missing("jax"))]
    else:
        jnp = jax.numpy

        def loss_jax(w: Any, x: Any, y: Any) -> Any:
            return jnp.log(1.0 + jnp.exp(-y * jnp.dot(x, w)))

        eager = jax.vmap(jax.grad(loss_jax), in_axes=IN_AXES)
        jitted = jax.jit(eager)
        entries.append(Impl("JAX jit(vmap(grad))", lambda *a: jax.block_until_ready(jitted(*a)), args))
        entries.append(Impl("JAX eager vmap(grad)", lambda *a: jax.block_until_ready(eager(*a)), args))
        xla = shax.jit(per_example, backend="xla")
        entries.append(Impl("shax jit(backend='xla')", lambda *a: jax.block_until_ready(xla(*a)), args))

    torch = fw.get("torch")
    if torch is None:
        entries.append(Missing("PyTorch func.vmap(grad)", fw.missing("torch")))
    else:

        def loss_torch(w: Any, x: Any, y: Any) -> Any:
            return torch.log(1.0 + torch.exp(-y * torch.dot(x, w)))

        vmapped = torch.func.vmap(torch.func.grad(loss_torch), in_dims=IN_AXES)
        torch_args = tuple(torch.tensor(a) for a in args)
        entries.append(Impl("PyTorch func.vmap(grad)", vmapped, torch_args, numpy_memory=False))

    autograd, anp = fw.get("autograd"), fw.get("autograd.numpy")
    if autograd is None or anp is None:
        entries.append(Missing("autograd loop of grad", fw.missing("autograd")))
    else:

        def loss_autograd(w: Any, x: Any, y: Any) -> Any:
            return anp.log(1.0 + anp.exp(-y * anp.dot(x, w)))

        entries.append(Impl("autograd loop of grad", looped(autograd.grad(loss_autograd)), args))
    return entries


def summarize(medians: dict[str, float]) -> list[str]:
    """Issue 6's ratios: vmap(grad) against the floor and against a loop of grad."""
    vmapped, loop, floor = (medians.get(k) for k in ("shax vmap(grad)", "shax loop of grad", "hand numpy (vectorized)"))
    if not (vmapped and loop and floor):
        return []
    return [
        f"B5 shax vmap(grad): {vmapped / floor:.2f}× vectorized numpy, {loop / vmapped:.0f}× faster than a loop of grad"
    ]
