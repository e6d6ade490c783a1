"""What B7 and B8 share: one training step (loss, its gradient, one Adam update) in each
framework, from the same parameters, Adam state and minibatch. Each row's call is one
step, returning (new parameters, loss), which the harness checks against the first row's
(JAX jit, the reference) before timing; the Adam state it also returns is left out of
the check, its layout differing between frameworks.

Adam is optax's (b1 0.9, b2 0.999, eps 1e-8: u = m̂ / (√v̂ + eps)), written out in JAX and
PyTorch as they would write it by hand in a functional step; shax runs `shax.optimizers.optax.adam`.
The state is Adam's after WARMUP steps, so that √v̂ is not the first step's |g|: a first
step moves every weight by ±lr, its sign decided by a gradient that may be rounding noise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import shax
import shax.optimizers.optax as optax
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing

B1, B2, EPS = 0.9, 0.999, 1e-8
WARMUP = 5

Params = dict[str, Any]


def shax_step(loss: Callable[..., Any], lr: float) -> tuple[Any, Callable[..., Any]]:
    """(optimizer, the step (params, state, x, y) -> (params, state, loss)) in shax."""
    optimizer = optax.adam(lr)

    def step(params: Params, state: Any, x: Any, y: Any) -> Any:
        value, grads = shax.value_and_grad(loss, argnums=0)(params, x, y)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    return optimizer, step


def warmed(loss: Callable[..., Any], lr: float, params: Params, x: Any, y: Any) -> tuple[Params, Any]:
    """(params, Adam state) after WARMUP shax steps on (x, y)."""
    optimizer, step = shax_step(loss, lr)
    state = optimizer.init(params)
    jitted = shax.jit(step)
    for _ in range(WARMUP):
        params, state, _ = jitted(params, state, x, y)
    return params, state


def adam_moments(state: Any) -> tuple[Params, Params, int]:
    """(m, v, count) of an optax adam state (chain(scale_by_adam, scale))."""
    adam = state[0]
    return dict(adam.mu), dict(adam.nu), int(adam.count)


def rows(
    fw: Frameworks,
    lr: float,
    loss: Callable[..., Any],
    loss_jax: Callable[..., Any] | None,
    loss_torch: Callable[..., Any] | None,
    params: Params,
    state: Any,
    x: np.ndarray,
    y: np.ndarray,
) -> list[Impl | Missing]:
    """JAX jit (the reference), shax jit (numpy and XLA), PyTorch eager."""
    m, v, count = adam_moments(state)
    entries: list[Impl | Missing] = []
    jax = fw.get("jax")
    if jax is None:
        entries.append(Missing("JAX jit", fw.missing("jax")))
    else:
        entries.append(_jax_row(jax, lr, loss_jax, params, m, v, count, x, y))
    _, step = shax_step(loss, lr)
    numpy_step = shax.jit(step)
    entries.append(Impl("shax jit", lambda p, s, a, b: _drop_state(numpy_step(p, s, a, b)), (params, state, x, y)))
    if jax is None:
        entries.append(Missing("shax jit(backend='xla')", fw.missing("jax")))
    else:
        xla_step = shax.jit(step, backend="xla")

        def run_xla(p: Params, s: Any, a: Any, b: Any) -> Any:
            return _drop_state(jax.block_until_ready(xla_step(p, s, a, b)))

        entries.append(Impl("shax jit(backend='xla')", run_xla, (params, state, x, y), numpy_memory=False))
    torch = fw.get("torch")
    if torch is None:
        entries.append(Missing("PyTorch eager", fw.missing("torch")))
    else:
        entries.append(_torch_row(torch, lr, loss_torch, params, m, v, count, x, y))
    return entries


def _drop_state(result: Any) -> tuple[Any, Any]:
    params, _, value = result
    return params, value


def _jax_row(jax: Any, lr: float, loss: Any, params: Params, m: Params, v: Params, count: int, x: Any, y: Any) -> Impl:
    jnp = jax.numpy

    def step(params: Params, m: Params, v: Params, count: Any, x: Any, y: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(params, x, y)
        count = count + 1
        m = {k: B1 * m[k] + (1 - B1) * g for k, g in grads.items()}
        v = {k: B2 * v[k] + (1 - B2) * g * g for k, g in grads.items()}
        c1, c2 = 1 - B1**count, 1 - B2**count
        new = {k: p - lr * (m[k] / c1) / (jnp.sqrt(v[k] / c2) + EPS) for k, p in params.items()}
        return new, m, v, count, value

    jitted = jax.jit(step)

    def run(*args: Any) -> Any:
        new, _, _, _, value = jax.block_until_ready(jitted(*args))
        return new, value

    args = jax.device_put((params, m, v, jnp.asarray(count, jnp.int32), x, y))
    return Impl("JAX jit", run, args, numpy_memory=False)


def _torch_row(
    torch: Any, lr: float, loss: Any, params: Params, m: Params, v: Params, count: int, x: Any, y: Any
) -> Impl:
    def step(params: Params, m: Params, v: Params, count: int, x: Any, y: Any) -> Any:
        value = loss(params, x, y)
        grads = dict(zip(params, torch.autograd.grad(value, list(params.values()))))
        count = count + 1
        c1, c2 = 1 - B1**count, 1 - B2**count
        new = {}
        with torch.no_grad():
            for k, g in grads.items():
                m_k = B1 * m[k] + (1 - B1) * g
                v_k = B2 * v[k] + (1 - B2) * g * g
                new[k] = params[k] - lr * (m_k / c1) / (torch.sqrt(v_k / c2) + EPS)
        return new, value.detach()

    def tensors(tree: Params, grad: bool = False) -> Params:
        return {k: torch.tensor(np.asarray(a), requires_grad=grad) for k, a in tree.items()}

    args = (tensors(params, grad=True), tensors(m), tensors(v), count, torch.tensor(x), torch.tensor(y))
    return Impl("PyTorch eager", step, args, numpy_memory=False)
