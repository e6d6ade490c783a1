"""shax side by side with hand-written numpy, JAX, PyTorch and HIPS autograd (issue 7).

    python -m benchmarks [--quick] [--tasks B1,B3] [--threads 1] [--profile]

B1  the gradient of sin(x+y)*cos(x+y) at (0.5, -0.75), per call
B2  the original's medium: forward and VJP with ct = [5, 9], per call
B3  an MLP step's gradient (f32[128, 784] -> 512 tanh -> 10), per call, and its peak memory
B4  Python function -> VJP definition at 1k / 10k / 100k operations, and the scaling exponent; grad's
    first call (build), second call (compile) and memory at those sizes; the gradient
    of a 40-operation subgraph called 300 times against the same program inlined
B5  per-example gradients of logistic regression (vmap(grad)), per call
B6  loops (issue 35): an RNN written with scan (1,000 and 10,000 steps) and a fori_loop
    fixed-point iteration, gradient w.r.t. two weight matrices, float64
B7  a training step (loss, gradient, Adam update) of examples/digits_cnn.py's CNN, per call
B8  a training step of B3's MLP, per call (B7 and B8: JAX jit is the reference row)

Rows: hand-written numpy (the floor, ratio 1.00), shax jit, shax's uncompiled transforms,
JAX jit, JAX eager, shax jit(backend='xla') (shax's program compiled by XLA, beside JAX
jit), PyTorch eager, autograd; a package that is not installed is one
"not installed" line (`pip install -e '.[bench]'` installs them all). Every result is
checked against the floor's once before timing, and a row that disagrees says so. All run
in one process, interleaved round by round, with the same thread count (see
benchmarks/frameworks.py for why one). `--quick` takes under a minute (25 s here), the full run two to three minutes.
Run from the repository root (B2 imports examples/medium.py).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import platform
import sys
import time

TASKS = ("B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8")
MODULES = {
    "B1": "b1_scalar", "B2": "b2_medium", "B3": "b3_mlp", "B5": "b5_per_example", "B7": "b7_train_cnn",
    "B8": "b8_train_mlp",
}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="fewer rounds, shorter loops, B4 at 1k and 10k only")
    parser.add_argument("--tasks", default=",".join(TASKS), help="comma-separated, among B1-B8")
    parser.add_argument("--threads", type=int, default=1, help="threads for numpy's BLAS, XLA and PyTorch")
    parser.add_argument("--rounds", type=int, help="rounds per task (default 9 with --quick, 21 without)")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of each shax row")
    options = parser.parse_args()
    tasks = [t.strip().upper() for t in options.tasks.split(",")]
    if unknown := [t for t in tasks if t not in TASKS]:
        parser.error(f"unknown task(s) {', '.join(unknown)}; the tasks are {', '.join(TASKS)}")

    # Before numpy loads: its BLAS reads the thread count from the environment.
    from benchmarks.frameworks import Frameworks, set_threads

    threads = set_threads(options.threads)

    import numpy as np

    from benchmarks import b4_calls, b4_pipeline, b4_subgraph, b6_loops
    from benchmarks.harness import Settings, run_task

    settings = Settings(
        rounds=options.rounds or (9 if options.quick else 21),
        min_seconds=0.02 if options.quick else 0.05,
        profile=options.profile,
    )
    fw = Frameworks(options.threads)
    versions = ", ".join(
        f"{name} {importlib.metadata.version(name)}" if fw.get(name) else f"{name} not installed"
        for name in ("jax", "torch", "autograd")
    )
    print(f"python {platform.python_version()}, numpy {np.__version__}, {versions}")
    print(f"{threads}; {settings.rounds} rounds per task, each ≥ {settings.min_seconds * 1e3:g} ms a row")
    print("median: over rounds; spread: interquartile range / median; × floor: median / hand numpy's median;")
    print("issue: the issue's measurement on this machine; faults: minor page faults per call (median), memory")
    print("the allocator gave back to the system and faults in again. Other processes share the machine: expect noise.")
    start = time.perf_counter()
    summary: list[str] = []
    for task in tasks:
        if task == "B4":
            rounds = {1000: 3, 10_000: 1} if options.quick else {1000: 5, 10_000: 3, 100_000: 1}
            summary += b4_pipeline.run(fw, rounds).lines
            summary += b4_calls.run(tuple(rounds)).lines
            summary.append(b4_subgraph.run(repeats=1 if options.quick else 3))
            continue
        if task == "B6":
            summary += b6_loops.run(fw, settings, options.quick)
            continue
        module = importlib.import_module(f"benchmarks.{MODULES[task]}")
        target = getattr(module, "TARGET", None)
        outcome = run_task(module.TITLE, module.implementations(fw), settings, target, memory=task == "B3")
        summary += outcome.lines
        if summarize := getattr(module, "summarize", None):
            summary += summarize(outcome.medians)
    print("\nTargets")
    for line in summary:
        print(f"  {line}")
    print(f"\n{time.perf_counter() - start:.0f} s in all")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
