"""B4: the time from a Python function to its VJP definition, for programs of 1k, 10k and
100k operations, and how it scales.

The program is the `chain` of benchmarks/vjp.py (about 12 operations a block on
x :: f32[4, 4], y :: f32[4]: nonlinear functions, products, broadcasting, matrix products,
reductions, min/max). shax takes it through its stages: trace, infer_types, linearize,
transpose and zip_definitions (which runs the cleanup passes). JAX, for comparison, builds
the same chain's `make_jaxpr(grad(f))`. The two alternate within each size; the scaling
exponent is the log-log slope of time against operations. The issue's reference: JAX
make_jaxpr(grad) 0.15 s / 2.4 s / 26 s.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import shax
from benchmarks.frameworks import Frameworks
from benchmarks.harness import Outcome, show_time, verdict
from benchmarks.vjp import chain
from shax import f32

TITLE = "B4  Python function -> VJP definition (trace, infer_types, linearize, transpose, zip + cleanup)"
TYPES = (f32[4, 4], f32[4])
STEPS = ("trace", "infer_types", "linearize", "transpose", "zip+cleanup")
JAX_REFERENCE = {1000: 0.15, 10_000: 2.4, 100_000: 26.0}
TARGET_SECONDS, TARGET_SIZE, TARGET_EXPONENT = 3.0, 100_000, 1.05


def shax_steps(operations: int) -> tuple[dict[str, float], int]:
    """Seconds per stage from a fresh chain to its cleaned VJP, and the traced bindings."""
    f = chain(operations)
    steps: Sequence[Callable[[Any], Any]] = (
        lambda _: shax.trace(f, *TYPES),
        shax.stages.infer_types,
        shax.stages.linearize,
        shax.stages.transpose,
        shax.stages.zip_definitions,
    )
    seconds, value, bindings = {}, None, 0
    for name, step in zip(STEPS, steps):
        start = time.perf_counter()
        value = step(value)
        seconds[name] = time.perf_counter() - start
        bindings = bindings or len(value.bindings)
    return seconds, bindings


def jax_chain(jnp: Any, operations: int) -> Callable[..., Any]:
    """benchmarks/vjp.py's chain, written with jax.numpy."""

    def f(x: Any, y: Any) -> Any:
        for _ in range(operations // 12):
            a = jnp.sin(x) * y
            b = jnp.dot(a, jnp.cos(x)) * 0.25
            c = jnp.maximum(a, b) - jnp.minimum(a, jnp.tanh(b))
            x = jnp.tanh(c + jnp.sum(c, axis=0))
        return jnp.sum(x)

    return f


def slope(points: Sequence[tuple[int, float]]) -> float:
    """The least-squares slope of log(seconds) against log(operations)."""
    xs, ys = [math.log(n) for n, _ in points], [math.log(s) for _, s in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


@dataclass
class Measured:
    """Seconds per run, per size: shax's totals and JAX's, shax's fastest run by stage."""

    shax: dict[int, list[float]] = field(default_factory=dict)
    jax: dict[int, list[float]] = field(default_factory=dict)
    stages: dict[int, dict[str, float]] = field(default_factory=dict)
    bindings: dict[int, int] = field(default_factory=dict)


def measure(jax: Any, rounds: dict[int, int]) -> Measured:
    """Each size `rounds[size]` times, shax and JAX (if given) alternating."""

    def jax_seconds(operations: int) -> float:
        x, y = (jax.numpy.zeros(t.shape, "float32") for t in TYPES)
        f = jax.grad(jax_chain(jax.numpy, operations), argnums=(0, 1))
        start = time.perf_counter()
        jax.make_jaxpr(f)(x, y)
        return time.perf_counter() - start

    m = Measured()
    for n in sorted(rounds):
        m.shax[n], m.jax[n] = [], []
        for r in range(rounds[n]):
            for which in ("shax", "jax") if r % 2 == 0 else ("jax", "shax"):
                gc.collect()  # each run starts from the same heap, not the last run's garbage
                if which == "shax":
                    seconds, m.bindings[n] = shax_steps(n)
                    m.shax[n].append(sum(seconds.values()))
                    if m.shax[n][-1] <= min(m.shax[n]):
                        m.stages[n] = seconds
                elif jax is not None:
                    m.jax[n].append(jax_seconds(n))
    return m


def run(fw: Frameworks, rounds: dict[int, int]) -> Outcome:
    """Measure and print the table; the targets' outcome for the summary."""
    sizes = sorted(rounds)
    print(f"\n{TITLE}")
    print(
        f"    on the chain of benchmarks/vjp.py; targets for shax: {TARGET_SIZE // 1000}k ops "
        f"≤ {TARGET_SECONDS:g} s, scaling exponent ≤ {TARGET_EXPONENT}"
    )
    jax = fw.get("jax")
    if jax is None:
        print(f"  JAX make_jaxpr(grad): {fw.missing('jax')}")
    m = measure(jax, rounds)
    shax_median = {n: statistics.median(m.shax[n]) for n in sizes}
    jax_median = {n: statistics.median(m.jax[n]) for n in sizes if m.jax[n]}
    print(
        f"  {'operations':>10}{'bindings':>10}{'rounds':>8}{'shax':>10}{'JAX':>10}{'issue JAX':>11}{'shax/JAX':>10}"
        f"   shax by stage (fastest run): {' / '.join(STEPS)}"
    )
    for n in sizes:
        ratio = f"{shax_median[n] / jax_median[n]:.2f}" if n in jax_median else "—"
        by_stage = " / ".join(f"{m.stages[n][s]:.3g}" for s in STEPS)
        print(
            f"  {n:>10}{m.bindings[n]:>10}{rounds[n]:>8}{show_time(shax_median[n]):>10}"
            f"{show_time(jax_median[n]) if n in jax_median else '—':>10}{show_time(JAX_REFERENCE[n]):>11}{ratio:>10}"
            f"   {by_stage} s"
        )
    outcome = Outcome()
    if len(sizes) < 2:
        return outcome
    span = f"{sizes[-2]}->{sizes[-1]}"
    exponent = slope([(n, shax_median[n]) for n in sizes[-2:]])
    line = f"  scaling exponent (log-log slope) shax {span}: {exponent:.3f}"
    line += f", fitted over all sizes: {slope(list(shax_median.items())):.3f}"
    if len(jax_median) == len(sizes):
        line += f"; JAX {span}: {slope([(n, jax_median[n]) for n in sizes[-2:]]):.3f}"
    print(line)
    met = exponent <= TARGET_EXPONENT
    outcome.lines.append(f"B4 shax scaling exponent {span}: {exponent:.3f}, target ≤ {TARGET_EXPONENT}: {verdict(met)}")
    big = f"B4 shax {TARGET_SIZE // 1000}k ops"
    if TARGET_SIZE in shax_median:
        met = shax_median[TARGET_SIZE] <= TARGET_SECONDS
        outcome.lines.append(
            f"{big}: {show_time(shax_median[TARGET_SIZE])}, target ≤ {TARGET_SECONDS:g} s: {verdict(met)}"
        )
    else:
        outcome.lines.append(f"{big}: not measured (--quick)")
    return outcome
