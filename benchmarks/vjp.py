"""From a Python function to its cleaned VJP definition, at 1k, 10k and 100k operations.

    python benchmarks/vjp.py [--quick] [--sizes 1000,10000,100000] [--programs chain,mlp]

Each program is traced, then taken through infer_types, linearize, transpose and
zip_definitions (which runs the cleanup passes), and the seconds of each step are
reported with their total. Two programs:

    chain  a long chain on x :: f32[4, 4], y :: f32[4] mixing nonlinear functions,
           products, broadcasting, matrix products, reductions and min/max
    mlp    residual tanh layers sharing one weight matrix and bias, each adding its
           activations' energy to a loss: wide fan-out from the shared parameters, whose
           cotangents add up over every layer

The scaling exponent is the log-log slope of the total time against the number of
operations (10k -> 100k, and over the whole range). Each size is measured the best of
`--repeats` times (one with `--quick`). The smallest size's VJP is checked against the
transposed linear program on random values, so a fast wrong answer does not go unseen.
Measures, never asserts on time.
"""

from __future__ import annotations

import argparse
import gc
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import shax
from shax import f32
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.types import TensorType
from typeclasses import cos, dot, max, min, reduce_sum, sin, tanh

STEPS = ("trace", "infer_types", "linearize", "transpose", "zip+cleanup")


def chain(operations: int) -> Callable[..., Any]:
    def f(x: Any, y: Any) -> Any:
        for _ in range(operations // 12):  # 12 operations a block
            a = sin(x) * y  # y broadcast along the rows
            b = dot(a, cos(x)) * 0.25
            c = max(a, b) - min(a, tanh(b))
            x = tanh(c + reduce_sum(c, [0]))
        return reduce_sum(x, [0, 1])

    return f


def mlp(operations: int) -> Callable[..., Any]:
    def f(x: Any, w: Any, b: Any) -> Any:
        loss = reduce_sum(x * x, [0, 1])
        for _ in range(operations // 8):  # 8 operations a layer
            h = tanh(dot(x, w) + b)
            x = x + 0.125 * h
            loss = loss + reduce_sum(h * h, [0, 1])
        return loss

    return f


# name -> (the function of about n operations, its argument types)
PROGRAMS: dict[str, tuple[Callable[[int], Callable[..., Any]], tuple[TensorType, ...]]] = {
    "chain": (chain, (f32[4, 4], f32[4])),
    "mlp": (mlp, (f32[8, 16], f32[16, 16], f32[16])),
}


def pipeline(f: Callable[..., Any], types: Sequence[TensorType]) -> tuple[dict[str, float], list[Any]]:
    """Seconds per step, and each step's result."""
    steps: list[Callable[[Any], Any]] = [
        lambda _: shax.trace(f, *types),
        shax.stages.infer_types,
        shax.stages.linearize,
        shax.stages.transpose,
        shax.stages.zip_definitions,
    ]
    seconds, results, value = {}, [], None
    for name, step in zip(STEPS, steps):
        start = time.perf_counter()
        value = step(value)
        seconds[name] = time.perf_counter() - start
        results.append(value)
    seconds["total"] = sum(seconds.values())
    return seconds, results


def measure(program: str, operations: int, repeats: int = 1) -> dict[str, float]:
    """The best (per step) of `repeats` runs of the pipeline on `program` at `operations`."""
    make, types = PROGRAMS[program]
    f = make(operations)
    best: dict[str, float] = {}
    for _ in range(repeats):
        gc.collect()  # start each run from the same heap, not the last run's garbage
        seconds, _ = pipeline(f, types)
        best = {k: min(v, best.get(k, math.inf)) for k, v in seconds.items()}
    return best


def check(program: str, operations: int) -> None:
    """The zipped VJP agrees with evaluating the transposed linearized program."""
    make, types = PROGRAMS[program]
    _, (_, _, _, transposed, zipped) = pipeline(make(operations), types)
    assert isinstance(transposed, LinearizedDefinition) and isinstance(zipped, Definition)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(t.shape).astype(np.float32) for t in types]
    ct = np.float32(1.0)
    (value,), cotangents = shax.stages.evaluate_linearized(transposed, args, [ct])
    got = shax.evaluate(zipped, *args, ct)
    for a, b in zip(got, [value, *cotangents]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def slope(small: tuple[int, float], large: tuple[int, float]) -> float:
    """The log-log slope between two (operations, seconds) points."""
    return math.log(large[1] / small[1]) / math.log(large[0] / small[0])


def report(program: str, sizes: Sequence[int], repeats: int) -> None:
    check(program, sizes[0])
    rows = {n: measure(program, n, repeats) for n in sizes}
    print(f"\n{program}  (seconds, best of {repeats})")
    print(f"{'operations':>10}  " + "  ".join(f"{s:>11}" for s in (*STEPS, "total")))
    for n, row in rows.items():
        print(f"{n:>10}  " + "  ".join(f"{row[s]:>11.3f}" for s in (*STEPS, "total")))
    if len(sizes) >= 2:
        last_two = slope((sizes[-2], rows[sizes[-2]]["total"]), (sizes[-1], rows[sizes[-1]]["total"]))
        print(f"scaling exponent {sizes[-2]}->{sizes[-1]}: {last_two:.2f}", end="")
        if len(sizes) >= 3:
            overall = slope((sizes[0], rows[sizes[0]]["total"]), (sizes[-1], rows[sizes[-1]]["total"]))
            print(f"   {sizes[0]}->{sizes[-1]}: {overall:.2f}", end="")
        print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one run per size instead of the best of --repeats")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", default="1000,10000,100000", help="numbers of operations, comma-separated")
    parser.add_argument("--programs", default=",".join(PROGRAMS), help=f"among {', '.join(PROGRAMS)}")
    options = parser.parse_args()
    sizes = sorted(int(s) for s in options.sizes.split(","))
    for program in options.programs.split(","):
        report(program, sizes, 1 if options.quick else options.repeats)


if __name__ == "__main__":
    main()
