"""Reverse mode on a large program: linearize, transpose and zip.

    python benchmarks/vjp.py [--operations 100000]

Traces a function of about `operations` operations on x :: f32[4, 4] and y :: f32[4]
(nonlinear functions, products, broadcasting, matrix products, reductions, min/max),
then reports seconds for each stage up to the zipped, cleaned-up VJP definition, and
checks the VJP against the transposed linear program on random values.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import shax
from shax import f32
from shax.ir import Definition, LinearizedDefinition
from typeclasses import cos, dot, max, min, reduce_sum, sin, tanh

OPERATIONS_PER_BLOCK = 12


def timed(label: str, thunk: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = thunk()
    seconds = time.perf_counter() - start
    defn = result.linear if isinstance(result, LinearizedDefinition) else result
    size = f"{len(defn.bindings):8d} bindings" if isinstance(defn, Definition) else ""
    print(f"{label:<44} {seconds:8.3f} s  {size}")
    return result


def chain(operations: int) -> Callable[[Any, Any], Any]:
    def f(x: Any, y: Any) -> Any:
        for _ in range(operations // OPERATIONS_PER_BLOCK):
            a = sin(x) * y  # y broadcast along the rows
            b = dot(a, cos(x)) * 0.25
            c = max(a, b) - min(a, tanh(b))
            x = tanh(c + reduce_sum(c, [0]))
        return reduce_sum(x, [0, 1])

    return f


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--operations", type=int, default=100_000)
    operations = parser.parse_args().operations
    types = (f32[4, 4], f32[4])
    traced = timed(f"trace {operations} operations", lambda: shax.trace(chain(operations), *types))
    typed = timed("infer_types", lambda: shax.stages.infer_types(traced))
    lin = timed("linearize (the linear part)", lambda: shax.stages.linearize(typed))
    transposed = timed("transpose (the transposed part)", lambda: shax.stages.transpose(lin))
    zipped = timed("zip_definitions (with cleanup)", lambda: shax.stages.zip_definitions(transposed))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 4)).astype(np.float32)
    y = rng.standard_normal(4).astype(np.float32)
    ct = np.float32(1.0)
    (value,), (dx, dy) = shax.stages.evaluate_linearized(transposed, [x, y], [ct])
    got = shax.evaluate(zipped, x, y, ct)
    for a, b in zip(got, [value, dx, dy]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    main()
