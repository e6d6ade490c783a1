"""B4, repeated subgraphs: the gradient program of a chain of 300 calls of one 40-operation
`@shax.subgraph`, against the same chain inlined (issue 14: "a 40-operation subgraph called
300 times gives a gradient program of a few hundred bindings, not 30,000").

    python -m benchmarks.b4_subgraph [--calls 300] [--repeats 3] [--show]

Per program: the seconds to build the cleaned gradient program (`shax.xpr(shax.grad(f))`:
trace, infer_types, linearize, transpose, cleanup; the subgraph's derivative and transpose
built once, from a fresh function each run), to compile it (`shax.codegen`, callees
included), the peak memory of building and compiling it (tracemalloc), its bindings,
its operations (a call's bindings on the same operands are one operation), and one
call of the compiled gradient. Each output a program reads of a call is a binding of its
own, so a call site of the subgraph's forward definition is one binding per activation
its gradient reads; `--show` prints a call site's bindings.
Measures, never asserts on time.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np

import shax
import typeclasses as tc
from benchmarks.harness import show_bytes, show_time
from shax import f32
from shax.codegen import Compiled, compile_definition
from shax.control import Call
from shax.core.ir import Definition

TYPES = (f32[4, 4], f32[4])
CALLS = 300
ARGS = [np.random.default_rng(0).standard_normal(t.shape).astype(np.float32) for t in TYPES]


def block() -> Callable[[Any, Any], Any]:
    """A fresh function of 41 operations on x :: f32[4, 4], y :: f32[4] (benchmarks/vjp.py's
    chain, three blocks of 12 and a residual step of 5)."""

    def step(x: Any, y: Any) -> Any:
        for _ in range(3):
            a = tc.sin(x) * y
            b = tc.dot(a, tc.cos(x)) * 0.25
            c = tc.max(a, b) - tc.min(a, tc.tanh(b))
            x = tc.tanh(c + tc.reduce_sum(c, [0]))
        return x * 0.5 + tc.sin(x)

    return step


def program(subgraph: bool, calls: int) -> Callable[[Any, Any], Any]:
    """x <- step(x, y), `calls` times, then the sum of x: step a subgraph, or inlined."""
    step = shax.subgraph(block()) if subgraph else block()

    def f(x: Any, y: Any) -> Any:
        for _ in range(calls):
            x = step(x, y)
        return tc.reduce_sum(x, [0, 1])

    return f


def operations(defn: Definition) -> int:
    """Bindings, a call's bindings on the same operands counted once."""
    return len({(b.prim.key, b.prim.linear, b.args) if isinstance(b.prim, Call) else id(b) for b in defn.bindings})


def build(subgraph: bool, calls: int) -> tuple[Definition, Compiled, float, float]:
    """The gradient program of a fresh function, compiled; the seconds of each."""
    f = program(subgraph, calls)
    start = time.perf_counter()
    defn = shax.xpr(shax.grad(f, wrt=(0, 1)), *TYPES)
    built = time.perf_counter()
    compiled = compile_definition(defn)
    return defn, compiled, built - start, time.perf_counter() - built


def peak_memory(subgraph: bool, calls: int) -> int:
    """Bytes at the peak of building and compiling (a run of its own: tracemalloc slows it)."""
    gc.collect()
    tracemalloc.start()
    try:
        build(subgraph, calls)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(subgraph: bool, calls: int, repeats: int) -> dict[str, Any]:
    """The fastest of `repeats` builds, compiles and calls; the peak memory of one."""
    rows = []
    for _ in range(repeats):
        gc.collect()  # each run starts from the same heap, not the last run's garbage
        defn, compiled, build_seconds, compile_seconds = build(subgraph, calls)
        compiled.function(*ARGS)
        start = time.perf_counter()
        compiled.function(*ARGS)
        rows.append({"build": build_seconds, "compile": compile_seconds, "call": time.perf_counter() - start})
    fastest = {k: min(r[k] for r in rows) for k in rows[0]}
    peak = peak_memory(subgraph, calls)
    return {**fastest, "peak": peak, "defn": defn, "bindings": len(defn.bindings), "operations": operations(defn)}


def call_site(defn: Definition) -> str:
    """The bindings of the gradient program for the subgraph's first call site: its
    forward call's outputs, the calls of the gradient graph reading them, what adds up
    their results."""
    calls = [(b, b.prim) for b in defn.bindings if isinstance(b.prim, Call)]
    first, prim = calls[0]
    forward = {b.var.id for b, p in calls if (p.key, b.args) == (prim.key, first.args)}
    gradient = {b.var.id for b, p in calls if p.key != prim.key and forward & {a.id for a in b.args}}
    adds = {b.var.id for b in defn.bindings if not isinstance(b.prim, Call) and gradient & {a.id for a in b.args}}
    return "\n".join(f"    {b}" for b in defn.bindings if b.var.id in forward | gradient | adds)


def run(calls: int = CALLS, repeats: int = 1, show: bool = False) -> str:
    """Measure both programs and print the table; a line for the summary."""
    size = operations(shax.xpr(block(), *TYPES)) - len(TYPES)  # not the arguments' reads
    print(f"\nB4  a {size}-operation @shax.subgraph called {calls} times, its gradient")
    rows = {"subgraph": measure(True, calls, repeats), "inlined": measure(False, calls, repeats)}
    print(
        f"  {'program':>10}{'bindings':>10}{'operations':>12}{'build':>10}{'compile':>10}{'peak memory':>13}"
        f"{'one call':>11}   (fastest of {repeats})"
    )
    for name, row in rows.items():
        print(
            f"  {name:>10}{row['bindings']:>10}{row['operations']:>12}{show_time(row['build']):>10}"
            f"{show_time(row['compile']):>10}{show_bytes(row['peak']):>13}{show_time(row['call']):>11}"
        )
    got, want = (shax.evaluate(rows[k]["defn"], *ARGS) for k in ("subgraph", "inlined"))
    agree = all(np.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(got, want, strict=True))
    per_site = rows["subgraph"]["bindings"] / calls
    print(f"  {per_site:.1f} bindings per call site; the two gradients {'agree' if agree else '!! DISAGREE'}")
    if show:
        print("  the gradient program's bindings for the first call site:")
        print(call_site(rows["subgraph"]["defn"]))
    sub, inlined = rows["subgraph"], rows["inlined"]
    return (
        f"B4 {size}-operation subgraph called {calls} times: a gradient program of {sub['bindings']} bindings "
        f"({sub['operations']} operations), inlined {inlined['bindings']}; built {show_time(sub['build'])}, "
        f"inlined {show_time(inlined['build'])}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--show", action="store_true", help="print the gradient program's bindings of one call site")
    options = parser.parse_args()
    run(options.calls, options.repeats, options.show)


if __name__ == "__main__":
    main()
