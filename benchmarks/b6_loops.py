"""B6: loops (issue 35). Three tables, each a gradient w.r.t. two weight matrices, float64:

- the RNN `h = tanh(h @ W + x @ U)` written with `shax.scan`, hidden size 32, inputs of 32,
  loss `sum(hs * hs)` over the stacked hidden states, at 1,000 and 10,000 steps;
- a `fori_loop` fixed-point iteration `z = tanh(z @ A + b)` (1,000 iterations, A a
  contraction), loss `sum(z * z)` of the last iterate, gradient w.r.t. A and b.

Rows: hand-written numpy (a forward loop storing the states, a backward loop: the floor),
shax jit (numpy backend, target ≤ 1.3× the floor), shax jit(backend='xla') beside JAX jit
(target ≤ 1.1× JAX jit: a summary line), PyTorch eager. The issue's reference numbers (1,000
steps): hand numpy 6.7 ms, shax jit 42.5 ms, shax xla 6.4 ms, JAX jit 1.09 ms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import shax
import shax.numpy as snp
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Impl, Missing, Outcome, Settings, Target, run_task, show_time

TARGET = Target("≤ 1.3× hand numpy", lambda seconds, floor: seconds <= 1.3 * floor)
XLA_TARGET = 1.1  # shax jit(backend='xla') / JAX jit
HIDDEN = 32
REFERENCE = {
    "hand numpy": 6.7e-3,
    "shax jit(grad)": 42.5e-3,
    "shax jit(backend='xla')": 6.4e-3,
    "JAX jit(grad)": 1.09e-3,
}


def rnn_loss(w: Any, u: Any, h0: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = snp.tanh(h @ w + x @ u)
        return h, h

    _, hs = shax.scan(step, h0, xs)
    return snp.sum(hs * hs)


def rnn_hand(w: np.ndarray, u: np.ndarray, h0: np.ndarray, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hs = np.empty((len(xs), len(h0)))
    h = h0
    for t in range(len(xs)):
        h = hs[t] = np.tanh(h @ w + xs[t] @ u)
    gw, gu, dh = np.zeros_like(w), np.zeros_like(u), np.zeros_like(h0)
    for t in range(len(xs) - 1, -1, -1):
        da = (dh + 2 * hs[t]) * (1 - hs[t] * hs[t])  # tanh' = 1 - tanh²
        gw += np.outer(hs[t - 1] if t else h0, da)
        gu += np.outer(xs[t], da)
        dh = w @ da
    return gw, gu


def rnn_data(steps: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    w = rng.standard_normal((HIDDEN, HIDDEN)) * 0.9 / np.sqrt(HIDDEN)
    u = rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)
    return w, u, np.zeros(HIDDEN), rng.standard_normal((steps, HIDDEN))


ITERATIONS = 1000


def fixed_point_loss(a: Any, b: Any, z0: Any) -> Any:
    z = shax.fori_loop(0, ITERATIONS, lambda i, z: snp.tanh(z @ a + b), z0)
    return snp.sum(z * z)


def fixed_point_hand(a: np.ndarray, b: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    zs = np.empty((ITERATIONS + 1, len(z0)))
    zs[0] = z = z0
    for i in range(ITERATIONS):
        z = zs[i + 1] = np.tanh(z @ a + b)
    ga, gb, dz = np.zeros_like(a), np.zeros_like(b), 2 * z
    for i in range(ITERATIONS, 0, -1):
        dp = dz * (1 - zs[i] * zs[i])
        ga += np.outer(zs[i - 1], dp)
        gb += dp
        dz = a @ dp
    return ga, gb


def fixed_point_data() -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((HIDDEN, HIDDEN)) * 0.5 / np.sqrt(HIDDEN)
    return a, rng.standard_normal(HIDDEN), rng.standard_normal(HIDDEN)


def implementations(
    fw: Frameworks, loss: Callable[..., Any], hand: Callable[..., Any], args: tuple[np.ndarray, ...], reference: bool
) -> list[Impl | Missing]:
    """The rows of one table; `loss` is the shax function, differentiated w.r.t. its first two arguments."""
    ref = REFERENCE if reference else {}
    entries: list[Impl | Missing] = [Impl("hand numpy", hand, args, ref.get("hand numpy"))]
    grad = shax.grad(loss, argnums=(0, 1))
    entries.append(Impl("shax jit(grad)", shax.jit(grad), args, ref.get("shax jit(grad)"), targeted=True))
    jax = fw.get("jax")
    if jax is None:
        entries += [Missing("shax jit(backend='xla')", fw.missing("jax")), Missing("JAX jit(grad)", fw.missing("jax"))]
    else:
        with jax.enable_x64(True):
            jax_args = jax.device_put(args)  # on the device once, as a training loop keeps them
        xla = shax.jit(grad, backend="xla")
        jitted = jax.jit(jax.grad(_jax_loss(jax, loss), argnums=(0, 1)))

        def jax_jit(*a: Any) -> Any:
            with jax.enable_x64(True):
                return jax.block_until_ready(jitted(*a))

        name = "shax jit(backend='xla')"
        entries.append(
            Impl(name, lambda *a: jax.block_until_ready(xla(*a)), jax_args, ref.get(name), numpy_memory=False)
        )
        entries.append(Impl("JAX jit(grad)", jax_jit, jax_args, ref.get("JAX jit(grad)"), numpy_memory=False))
    torch = fw.get("torch")
    if torch is None:
        entries.append(Missing("PyTorch eager", fw.missing("torch")))
    else:
        entries.append(_torch_row(torch, loss, args))
    return entries


def _jax_loss(jax: Any, loss: Callable[..., Any]) -> Callable[..., Any]:
    jnp, lax = jax.numpy, jax.lax
    if loss is rnn_loss:

        def rnn(w: Any, u: Any, h0: Any, xs: Any) -> Any:
            def step(h: Any, x: Any) -> tuple[Any, Any]:
                h = jnp.tanh(h @ w + x @ u)
                return h, h

            return jnp.sum(lax.scan(step, h0, xs)[1] ** 2)

        return rnn

    def fixed_point(a: Any, b: Any, z0: Any) -> Any:
        z = lax.fori_loop(0, ITERATIONS, lambda i, z: jnp.tanh(z @ a + b), z0)
        return jnp.sum(z * z)

    return fixed_point


def _torch_row(torch: Any, loss: Callable[..., Any], args: tuple[np.ndarray, ...]) -> Impl:
    tensors = tuple(torch.tensor(a, requires_grad=k < 2) for k, a in enumerate(args))
    if loss is rnn_loss:

        def rnn(w: Any, u: Any, h0: Any, xs: Any) -> Any:
            h, hs = h0, []
            for x in xs:
                h = torch.tanh(h @ w + x @ u)
                hs.append(h)
            return torch.autograd.grad(torch.sum(torch.stack(hs) ** 2), (w, u))

        return Impl("PyTorch eager", rnn, tensors, numpy_memory=False)

    def fixed_point(a: Any, b: Any, z: Any) -> Any:
        for _ in range(ITERATIONS):
            z = torch.tanh(z @ a + b)
        return torch.autograd.grad(torch.sum(z * z), (a, b))

    return Impl("PyTorch eager", fixed_point, tensors, numpy_memory=False)


def run(fw: Frameworks, settings: Settings, quick: bool = False) -> list[str]:
    """The three tables; the summary lines (targets met or not)."""
    tables: list[tuple[str, Callable[..., Any], Callable[..., Any], tuple[np.ndarray, ...], bool]] = [
        (
            "B6-1k   RNN scan, 1,000 steps, hidden 32, f64: gradient w.r.t. W, U",
            rnn_loss,
            rnn_hand,
            rnn_data(1000),
            True,
        ),
        (
            "B6-10k  RNN scan, 10,000 steps, hidden 32, f64: gradient w.r.t. W, U",
            rnn_loss,
            rnn_hand,
            rnn_data(10_000),
            False,
        ),
        (
            f"B6-fori fori_loop fixed point z = tanh(z @ A + b), {ITERATIONS:,} iterations, f64: gradient w.r.t. A, b",
            fixed_point_loss,
            fixed_point_hand,
            fixed_point_data(),
            False,
        ),
    ]
    if quick:
        settings = Settings(max(3, settings.rounds // 3), settings.min_seconds, 1, settings.profile)
    lines: list[str] = []
    for title, loss, hand, args, reference in tables:
        outcome = run_task(title, implementations(fw, loss, hand, args, reference), settings, TARGET)
        lines += outcome.lines + xla_summary(title, outcome)
    return lines


def xla_summary(title: str, outcome: Outcome) -> list[str]:
    xla, jax = outcome.medians.get("shax jit(backend='xla')"), outcome.medians.get("JAX jit(grad)")
    if not (xla and jax):
        return []
    verdict = "met" if xla <= XLA_TARGET * jax else "NOT MET"
    shown = f"{show_time(xla)} ({xla / jax:.2f}× JAX jit)"
    return [f"{title.split()[0]} shax jit(backend='xla'): {shown}, target ≤ {XLA_TARGET}× JAX jit: {verdict}"]
