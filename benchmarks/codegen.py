"""Compiled definitions (`shax.codegen`) against `shax.evaluate` and hand-written numpy.

    python benchmarks/codegen.py [--quick]

Per call, in microseconds, the best (and the median) of interleaved rounds, with the
ratio of the best to hand-written numpy's best:

    scalar   f(x, y) = sin(x + y) * cos(x + y) at f32 numbers: forward, and its zipped VJP
    medium   the original's medium at f32[6], f32[2, 2]: forward, and its VJP with ct = [5, 9]
    mlp      x f32[128, 784] -> 512 tanh -> 10, squared error / 128: forward, and its VJP
             with respect to the weights and biases (peak memory of one call too)

then the time to compile a chain of 1k / 10k / 100k operations (`benchmarks/trace.py`'s
chain: check_types, then generating and compiling the source), with the scaling exponent.
Every compiled result is checked against evaluate. Measures, never asserts on time.
"""

from __future__ import annotations

import argparse
import builtins
import math
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import shax
from shax import codegen, f32
from shax.codegen import compile_definition
from shax.core.ir import Definition
from shax.stages import check_types, infer_types, linearize, transpose, zip_definitions
from typeclasses import broadcast, cos, dot, exp, max, min, reduce_sum, sin, tanh
from typeclasses import transpose as tc_transpose


def scalar(x: Any, y: Any) -> Any:
    return sin(x + y) * cos(x + y)


def medium(x0: Any, x8: Any) -> Any:
    x1 = broadcast(x0, dims=[1], shape=[2, 6])
    x2 = sin(x1)
    x4 = x2 + cos(x2)
    x7 = dot(exp(x4), tc_transpose(x4, [1, 0]))
    x9, x10 = x7 * x8, x7 + x8
    return reduce_sum(max(x9, x10) - min(x9, x10), axes=[0])


def mlp(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
    e = dot(tanh(dot(x, w1) + b1), w2) + b2 - y
    return reduce_sum(e * e, [0, 1]) / 128.0


def hand_scalar(x: Any, y: Any) -> Any:
    z = x + y
    return np.sin(z) * np.cos(z)


def hand_scalar_vjp(x: Any, y: Any, ct: Any) -> Any:
    z = x + y
    s, c = np.sin(z), np.cos(z)
    dz = ct * (c * c - s * s)
    return s * c, dz, dz


def hand_medium(x0: Any, x8: Any) -> Any:
    x2 = np.sin(np.broadcast_to(x0, (2, 6)))
    x4 = x2 + np.cos(x2)
    x7 = np.exp(x4) @ x4.T
    return np.abs(x7 * x8 - (x7 + x8)).sum(0)


def hand_medium_vjp(x0: Any, x8: Any, ct: Any) -> Any:
    x1 = np.broadcast_to(x0, (2, 6))
    x2 = np.sin(x1)
    x4 = x2 + np.cos(x2)
    x5 = np.exp(x4)
    x7 = x5 @ x4.T
    d = x7 * x8 - (x7 + x8)
    g = ct * np.sign(d)  # d|d| = sign(d) dd
    dx7 = g * x8 - g
    dx4 = (dx7 @ x4) * x5 + dx7.T @ x5
    dx2 = dx4 - dx4 * np.sin(x2)
    return np.abs(d).sum(0), (dx2 * np.cos(x1)).sum(0), g * x7 - g


def hand_mlp(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any) -> Any:
    e = np.tanh(x @ w1 + b1) @ w2 + b2 - y
    return (e * e).sum() / np.float32(128.0)


def hand_mlp_vjp(w1: Any, b1: Any, w2: Any, b2: Any, x: Any, y: Any, ct: Any) -> Any:
    h = np.tanh(x @ w1 + b1)
    e = h @ w2 + b2 - y
    de = e * (ct * np.float32(2.0 / 128.0))
    dh = de @ w2.T
    dh *= 1 - h * h
    return (e * e).sum() / np.float32(128.0), x.T @ dh, dh.sum(0), h.T @ de, de.sum(0)


def vjp_of(defn: Definition, wrt: list[int] | None = None) -> Definition:
    return zip_definitions(transpose(linearize(defn, wrt)))


def seconds_per_call(thunks: dict[str, Callable[[], Any]], calls: int, repeats: int) -> dict[str, tuple[float, float]]:
    """(best, median) seconds per call of each thunk over `repeats` rounds; each round runs
    the thunks in turn, starting one further along, so load from elsewhere hits them all."""
    samples: dict[str, list[float]] = {name: [] for name in thunks}
    names = list(thunks)
    for r in range(repeats):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            thunk = thunks[name]
            start = time.perf_counter()
            for _ in range(calls):
                thunk()
            samples[name].append((time.perf_counter() - start) / calls)
    return {name: (builtins.min(s), statistics.median(s)) for name, s in samples.items()}


def peak_bytes(thunk: Callable[[], Any]) -> int:
    thunk()
    tracemalloc.start()
    thunk()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def compare(label: str, defn: Definition, hand: Callable[..., Any], args: tuple[Any, ...], calls: int, repeats: int):
    compiled = compile_definition(defn)
    expected = shax.evaluate(defn, *args)
    for got, want in zip(compiled(*args), expected):
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), f"{label}: compiled != evaluate"
    thunks = {
        "hand numpy": lambda: hand(*args),
        "compiled": lambda: compiled(*args),
        "compiled.function": lambda: compiled.function(*args),
        "evaluate": lambda: shax.evaluate(defn, *args),
    }
    times = seconds_per_call(thunks, calls, repeats)
    floor = times["hand numpy"][0]
    cells = "  ".join(f"{name} {b * 1e6:8.2f} ({m * 1e6:8.2f}) µs {b / floor:5.2f}x" for name, (b, m) in times.items())
    print(f"{label:<11} {cells}")
    return compiled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer repeats, sizes up to 10k")
    options = parser.parse_args()
    repeats = 5 if options.quick else 15
    rng = np.random.default_rng(0)

    typed = infer_types(shax.trace(scalar, f32[()], f32[()]))
    xy = (np.float32(1.5), np.float32(-2.5))
    compare("scalar", typed, hand_scalar, xy, 2000, repeats)
    compare("scalar vjp", vjp_of(typed), hand_scalar_vjp, (*xy, np.float32(1.0)), 2000, repeats)

    typed = infer_types(shax.trace(medium, f32[6], f32[2, 2]))
    args = (np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2))
    compare("medium", typed, hand_medium, args, 500, repeats)
    compare("medium vjp", vjp_of(typed), hand_medium_vjp, (*args, np.array([5, 9], np.float32)), 500, repeats)

    types = (f32[784, 512], f32[512], f32[512, 10], f32[10], f32[128, 784], f32[128, 10])
    typed = infer_types(shax.trace(mlp, *types))
    args = tuple((rng.standard_normal(t.shape) * 0.05).astype(np.float32) for t in types)
    compare("mlp", typed, hand_mlp, args, 5, repeats)
    vjp = vjp_of(typed, [0, 1, 2, 3])
    vjp_args = (*args, np.float32(1.0))
    compiled = compare("mlp vjp", vjp, hand_mlp_vjp, vjp_args, 5, repeats)
    for name, thunk in [
        ("hand numpy", lambda: hand_mlp_vjp(*vjp_args)),
        ("compiled", lambda: compiled(*vjp_args)),
        ("evaluate", lambda: shax.evaluate(vjp, *vjp_args)),
    ]:
        print(f"{'':<11} peak memory of one mlp vjp call, {name}: {peak_bytes(thunk) / 2**20:6.2f} MiB")

    sizes = [1000, 10000] if options.quick else [1000, 10000, 100000]
    print(f"compile a chain (sin(x) + 1.0, repeated) on f32[16]; CHUNK = {codegen.CHUNK} statements per part")
    seconds = []
    for n in sizes:
        typed = infer_types(shax.trace(chain(n // 2), f32[16]))
        start = time.perf_counter()
        check_types(typed)
        checked = time.perf_counter() - start
        start = time.perf_counter()
        compiled = compile_definition(typed)
        total = time.perf_counter() - start
        x = np.linspace(0, 1, 16, dtype=np.float32)
        assert compiled(x)[0].tobytes() == shax.evaluate(typed, x)[0].tobytes()
        seconds.append(total)
        print(f"{n:>7} operations: compile_definition {total:7.3f} s (check_types {checked:6.3f} s)")
    exponent = math.log(seconds[-1] / seconds[0]) / math.log(sizes[-1] / sizes[0])
    print(f"scaling exponent {sizes[0]} -> {sizes[-1]}: {exponent:.2f}")


def chain(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = sin(x) + 1.0
        return x

    return f


if __name__ == "__main__":
    main()
