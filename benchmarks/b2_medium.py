"""B2: the original's `medium` VJP at x = arange(1, 7), y = arange(1, 5).reshape(2, 2)
(float32) with ct = [5, 9], per call: the forward pass and the backward pass, returning
`(medium(x, y), (ct_x, ct_y))`. The issue's reference numbers: hand numpy 19.5 µs,
JAX jit 9.9 µs, PyTorch 197 µs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import shax
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing, Target
from examples.medium import medium

TITLE = "B2  medium VJP (forward + backward), ct = [5, 9], per call"
TARGET = Target("≤ 1.0× hand numpy", lambda seconds, floor: seconds <= floor)

Result = tuple[Any, tuple[Any, Any]]


def hand(x0: np.ndarray, x8: np.ndarray, ct: np.ndarray) -> Result:
    x1 = np.broadcast_to(x0, (2, 6))
    x2 = np.sin(x1)
    x4 = x2 + np.cos(x2)
    x5 = np.exp(x4)
    x7 = x5 @ x4.T
    x9, x10 = x7 * x8, x7 + x8
    out = np.abs(x9 - x10).sum(axis=0)  # max(a, b) - min(a, b) = |a - b|
    # d|a - b| = sign(a - b) (da - db), sign(0) = 0 being the ½–½ split of max and min at a tie.
    s = np.sign(x9 - x10) * ct
    g7 = s * (x8 - 1)  # x9 = x7 x8, x10 = x7 + x8
    g8 = s * (x7 - 1)
    g4 = (g7 @ x4) * x5 + (x5.T @ g7).T  # x7 = exp(x4) x4ᵀ
    g2 = g4 * (1 - np.sin(x2))  # x4 = x2 + cos(x2)
    g0 = (g2 * np.cos(x1)).sum(axis=0)
    return out, (g0, g8)


def shax_vjp(x: Any, y: Any, ct: Any) -> Result:
    out, vjp_fn = shax.vjp(medium, x, y)
    return out, vjp_fn(ct)


def implementations(fw: Frameworks) -> list[Impl | Missing]:
    x = np.arange(1, 7, dtype=np.float32)
    y = np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    ct = np.array([5, 9], dtype=np.float32)
    args = (x, y, ct)
    entries: list[Impl | Missing] = [Impl("hand numpy", hand, args, reference=19.5e-6)]
    if hasattr(shax, "jit"):
        entries.append(Impl("shax jit(vjp)", shax.jit(shax_vjp), args, targeted=True))
    else:
        entries.append(Missing("shax jit(vjp)", "not available: shax.jit is not in shax yet"))
    entries.append(Impl("shax vjp", shax_vjp, args, targeted=True))

    jax = fw.get("jax")
    if jax is None:
        entries += [Missing("JAX jit(vjp)", fw.missing("jax")), Missing("JAX eager vjp", fw.missing("jax"))]
    else:
        jnp = jax.numpy

        def medium_jax(x0: Any, x8: Any) -> Any:
            x2 = jnp.sin(jnp.broadcast_to(x0, (2, 6)))
            x4 = x2 + jnp.cos(x2)
            x7 = jnp.dot(jnp.exp(x4), x4.T)
            x9, x10 = x7 * x8, x7 + x8
            return jnp.sum(jnp.maximum(x9, x10) - jnp.minimum(x9, x10), axis=0)

        def vjp_jax(x: Any, y: Any, ct: Any) -> Any:
            out, vjp_fn = jax.vjp(medium_jax, x, y)
            return out, vjp_fn(ct)

        jitted = jax.jit(vjp_jax)
        entries.append(Impl("JAX jit(vjp)", lambda *a: jax.block_until_ready(jitted(*a)), args, 9.9e-6))
        entries.append(Impl("JAX eager vjp", lambda *a: jax.block_until_ready(vjp_jax(*a)), args))
        xla = shax.jit(shax_vjp, backend="xla")
        entries.append(Impl("shax jit(backend='xla')", lambda *a: jax.block_until_ready(xla(*a)), args))

    torch = fw.get("torch")
    if torch is None:
        entries.append(Missing("PyTorch eager", fw.missing("torch")))
    else:

        def vjp_torch(x0: Any, x8: Any, ct: Any) -> Any:
            x2 = torch.sin(x0.expand(2, 6))
            x4 = x2 + torch.cos(x2)
            x7 = torch.exp(x4) @ x4.T
            x9, x10 = x7 * x8, x7 + x8
            out = torch.sum(torch.maximum(x9, x10) - torch.minimum(x9, x10), dim=0)
            return out, torch.autograd.grad(out, (x0, x8), ct)

        xt, yt = (torch.tensor(v, requires_grad=True) for v in (x, y))
        entries.append(
            Impl("PyTorch eager", vjp_torch, (xt, yt, torch.tensor(ct)), reference=197e-6, numpy_memory=False)
        )

    autograd, anp = fw.get("autograd"), fw.get("autograd.numpy")
    if autograd is None or anp is None:
        entries.append(Missing("autograd", fw.missing("autograd")))
    else:

        def medium_autograd(args: Any) -> Any:
            x0, x8 = args
            x2 = anp.sin(anp.broadcast_to(anp.reshape(x0, (1, 6)), (2, 6)))  # its broadcast_to adds no axes
            x4 = x2 + anp.cos(x2)
            x7 = anp.dot(anp.exp(x4), x4.T)
            x9, x10 = x7 * x8, x7 + x8
            return anp.sum(anp.maximum(x9, x10) - anp.minimum(x9, x10), axis=0)

        def vjp_autograd(x: Any, y: Any, ct: Any) -> Any:
            vjp_fn, out = autograd.make_vjp(medium_autograd)((x, y))
            return out, vjp_fn(ct)

        entries.append(Impl("autograd", vjp_autograd, args))
    return entries
