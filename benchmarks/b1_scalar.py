"""B1: the gradient of sin(x + y) * cos(x + y) at (0.5, -0.75), per call.

Every implementation takes the same float32 scalars (PyTorch: 0-d tensors that require
gradients, made once) and returns both partial derivatives. The issue's reference
numbers: hand numpy 0.62 µs, JAX jit 8.1 µs, PyTorch 47 µs, autograd 96 µs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import shax
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing, Target
from typeclasses import cos, sin

TITLE = "B1  gradient of sin(x+y)*cos(x+y) at (0.5, -0.75), per call"
TARGET = Target("≤ 3 µs", lambda seconds, floor: seconds <= 3e-6)


def f(x: Any, y: Any) -> Any:
    z = x + y
    return sin(z) * cos(z)


def hand(x: np.float32, y: np.float32) -> tuple[np.float32, np.float32]:
    # d/dz sin(z) cos(z) = cos(z)^2 - sin(z)^2, and dz/dx = dz/dy = 1.
    z = x + y
    s, c = np.sin(z), np.cos(z)
    g = c * c - s * s
    return g, g


def implementations(fw: Frameworks) -> list[Impl | Missing]:
    x, y = np.float32(0.5), np.float32(-0.75)
    entries: list[Impl | Missing] = [Impl("hand numpy", hand, (x, y), reference=0.62e-6)]
    if hasattr(shax, "jit"):
        entries.append(Impl("shax jit(grad)", shax.jit(shax.grad(f)), (x, y), targeted=True))
    else:
        entries.append(Missing("shax jit(grad)", "not available: shax.jit is not in shax yet"))
    entries.append(Impl("shax grad", shax.grad(f), (x, y), targeted=True))

    jax = fw.get("jax")
    if jax is None:
        entries += [Missing("JAX jit(grad)", fw.missing("jax")), Missing("JAX eager grad", fw.missing("jax"))]
    else:
        jnp = jax.numpy

        def f_jax(x: Any, y: Any) -> Any:
            z = x + y
            return jnp.sin(z) * jnp.cos(z)

        jitted, eager = jax.jit(jax.grad(f_jax, argnums=(0, 1))), jax.grad(f_jax, argnums=(0, 1))
        entries.append(Impl("JAX jit(grad)", lambda *a: jax.block_until_ready(jitted(*a)), (x, y), 8.1e-6))
        entries.append(Impl("JAX eager grad", lambda *a: jax.block_until_ready(eager(*a)), (x, y)))
        xla = shax.jit(shax.grad(f), backend="xla")
        entries.append(Impl("shax jit(backend='xla')", lambda *a: jax.block_until_ready(xla(*a)), (x, y)))

    torch = fw.get("torch")
    if torch is None:
        entries.append(Missing("PyTorch eager", fw.missing("torch")))
    else:

        def torch_grad(x: Any, y: Any) -> Any:
            z = x + y
            return torch.autograd.grad(torch.sin(z) * torch.cos(z), (x, y))

        xt, yt = (torch.tensor(v, requires_grad=True) for v in (x, y))
        entries.append(Impl("PyTorch eager", torch_grad, (xt, yt), reference=47e-6, numpy_memory=False))

    autograd, anp = fw.get("autograd"), fw.get("autograd.numpy")
    if autograd is None or anp is None:
        entries.append(Missing("autograd", fw.missing("autograd")))
    else:

        def f_autograd(x: Any, y: Any) -> Any:
            z = x + y
            return anp.sin(z) * anp.cos(z)

        entries.append(Impl("autograd", autograd.grad(f_autograd, argnum=(0, 1)), (x, y), reference=96e-6))
    return entries
