"""Tracing, type inference, printing and evaluation of large programs.

    python benchmarks/trace.py [--ops 100000]

Reports seconds per stage for a chain of `ops` operations, for a DAG with 2^60 paths,
and evaluation time against the same computation written directly with numpy.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import shax
from shax import f32
from typeclasses import sin


def timed(label: str, thunk: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = thunk()
    print(f"{label:<40} {time.perf_counter() - start:8.3f} s")
    return result


def chain(n: int) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        for _ in range(n):
            x = sin(x) + 1.0
        return x

    return f


def doubling(x: Any) -> Any:
    for _ in range(60):
        x = x * x + x
    return x


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=100_000, help="operations in the chain (two per step)")
    n = parser.parse_args().ops // 2
    f = chain(n)
    print(f"chain of {2 * n} operations on f32[16]")
    defn = timed("trace", lambda: shax.trace(f, f32[16]))
    typed = timed("infer_types", lambda: shax.stages.infer_types(defn))
    timed("check_types", lambda: shax.stages.check_types(typed))
    timed("print", lambda: str(typed))
    x = np.linspace(0, 1, 16, dtype=np.float32)
    start = time.perf_counter()
    shax_out = shax.evaluate(typed, x)[0]
    shax_seconds = time.perf_counter() - start
    print(f"{'evaluate':<40} {shax_seconds:8.3f} s")
    start = time.perf_counter()
    numpy_out = f(x)
    numpy_seconds = time.perf_counter() - start
    assert np.allclose(shax_out, numpy_out)
    print(f"{'evaluate / numpy baseline':<40} {shax_seconds / numpy_seconds:8.2f} x")
    doubled = timed("trace x = x*x + x, 60 times (2^60 paths)", lambda: shax.trace(doubling, f32[()]))
    print(f"{'bindings':<40} {len(doubled.bindings):8d}")


if __name__ == "__main__":
    main()
