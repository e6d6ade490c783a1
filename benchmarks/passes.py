"""The rewrite passes on a large program.

    python benchmarks/passes.py [--bindings 100000]

Builds a typed program of about `bindings` bindings that gives every pass work to do
(repeats for cse, identity reshapes, constant arithmetic, implicit broadcasts, matrix
products, reductions, dead code), then reports wall-clock and CPU seconds per pass, for the whole list
of passes, and for the default cleanup.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import shax
from shax import f32
from shax.core.builder import Builder
from shax.core.ir import Definition
from shax.primitives import Add, Arg, Constant, Cos, DotGeneral, Mul, ReduceSum, Reshape, Sin, Tanh, Transpose

ORDER = [
    "forward_identities", "cse", "fold_constants", "materialize_broadcasts", "canonicalize_dot_general",
    "lower_reductions_to_sums_of_slices", "dce",
]  # fmt: skip


def timed(label: str, thunk: Callable[[], Any]) -> Any:
    """Run `thunk`, printing wall-clock and CPU seconds (CPU time is steadier on a busy machine)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = thunk()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    size = f"{len(result.bindings):8d} bindings" if isinstance(result, Definition) else ""
    print(f"{label:<40} {wall:7.3f} s wall {cpu:7.3f} s cpu  {size}")
    return result


def program(bindings: int) -> Definition:
    """A chain of blocks on x :: f32[4, 4], each using every kind of rewrite once."""
    b = Builder()
    x = b.emit(Arg(0))
    while len(b.bindings) < bindings:
        a = b.emit(Sin(), [x])
        c = b.emit(Add(), [a, b.emit(Sin(), [x])])  # the second sin repeats the first
        r = b.emit(Transpose([1, 0]), [b.emit(Reshape([4, 4]), [c])])  # an identity reshape
        d = b.emit(DotGeneral([1], [0], [], []), [r, x])
        half = b.emit(Mul(), [b.emit(Constant(np.float32(0.25))), b.emit(Constant(np.float32(2.0)))])
        e = b.emit(Mul(), [d, half])  # f32[4, 4] * f32[]: an implicit broadcast
        s = b.emit(ReduceSum([0]), [e])
        v = b.emit(Add(), [e, s])  # f32[4, 4] + f32[4]
        b.emit(Cos(), [v])  # dead
        x = b.emit(Tanh(), [v])
    return shax.stages.infer_types(b.build("big", [f32[4, 4]], [x]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bindings", type=int, default=100_000)
    size = parser.parse_args().bindings
    defn = timed(f"build and type a {size}-binding program", lambda: program(size))
    timed("check_types", lambda: shax.stages.check_types(defn))
    for name in ORDER:
        timed(name, lambda name=name: shax.passes.apply_passes(defn, [name]))
    out = timed("all seven, in the order above", lambda: shax.passes.apply_passes(defn, ORDER))
    timed("cleanup (forward_identities, cse, dce)", lambda: shax.passes.cleanup(defn))
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    assert np.allclose(shax.evaluate(out, x)[0], shax.evaluate(defn, x)[0], rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    main()
