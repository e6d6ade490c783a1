"""B4, what a user waits for: `shax.grad` of the chain of benchmarks/vjp.py, its first call
(build: trace, stages, cleanup, then one evaluation) and its second (compiling the
gradient program), with the process's memory growth and the compiled source's size, at
1k / 10k / 100k operations, and the scaling exponents.

    python -m benchmarks.b4_calls [--sizes 1000,10000,100000]

Each size runs in a fresh Python process (`--one N` is that process), so its peak
resident memory is its own and nothing is cached from another size. Sizes below 100k run
in `REPEATS` processes and report each column's median: on a shared machine one run at
10k swings by ±20%, enough to move the scaling exponent by 0.1. Time is CPU time
of the process (`time.process_time`): other virtual machines on the host then count
less. The issue's targets, at 100k operations: first call ≤ 3 s, second ≤ 3 s, peak
memory growth ≤ 1 GB, scaling exponent ≤ 1.05 from 10k to 100k.
Measures, never asserts on time.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks.harness import Outcome, show_time, verdict

TITLE = "B4  grad of the chain: first call (build + evaluate), second call (compile), memory, code size"
SIZES = (1000, 10_000, 100_000)
REPEATS = 3  # processes per size below the largest (a 100k run takes a minute, and varies less)
TARGET_SECONDS, TARGET_BYTES, TARGET_EXPONENT = 3.0, 2**30, 1.05


def one(operations: int) -> dict[str, Any]:
    """The measurements of one size, in this process."""
    import numpy as np

    import shax
    from benchmarks.vjp import chain

    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal(4).astype(np.float32)
    gradient = shax.grad(chain(operations), argnums=(0, 1))
    before = _resident()
    seconds = []
    for _ in range(3):  # build and evaluate, compile, then run compiled
        start = time.process_time()
        gradient(x, y)
        seconds.append(time.process_time() - start)
    built = gradient.built(*_abstract(x, y))
    compiled = built.program.compiled
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "operations": operations,
        "bindings": len(built.program.defn.bindings),
        "first": seconds[0],
        "second": seconds[1],
        "third": seconds[2],
        "growth": peak - before,
        "lines": compiled.source.count("\n"),
    }


def _abstract(*args: Any) -> tuple[Any, Any]:
    from shax.transforms.arguments import abstract_arguments

    _, in_tree, types = abstract_arguments("grad", args)
    return in_tree, types


def _resident() -> int:
    """Bytes resident now (VmRSS)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def measure(sizes: tuple[int, ...]) -> list[dict[str, Any]]:
    """One row per size: each column's median over its processes."""
    rows = []
    for n in sizes:
        runs = [_one_process(n) for _ in range(REPEATS if n < SIZES[-1] else 1)]
        rows.append({key: statistics.median(run[key] for run in runs) for key in runs[0]})
    return rows


def _one_process(operations: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.b4_calls", "--one", str(operations)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout.splitlines()[-1]))


def run(sizes: tuple[int, ...] = SIZES) -> Outcome:
    """Measure and print the table; the targets' outcome for the summary."""
    from benchmarks.b4_pipeline import slope

    print(f"\n{TITLE}")
    print(f"  CPU seconds; below 100k operations, the median of {REPEATS} fresh processes")
    rows = measure(sizes)
    print(
        f"  {'operations':>10}{'bindings':>10}{'first call':>12}{'second call':>13}{'third call':>12}"
        f"{'memory growth':>15}{'source lines':>14}"
    )
    for r in rows:
        print(
            f"  {r['operations']:>10}{r['bindings']:>10}{show_time(r['first']):>12}{show_time(r['second']):>13}"
            f"{show_time(r['third']):>12}{r['growth'] / 2**20:>11.0f} MiB{r['lines']:>14}"
        )
    outcome = Outcome()
    if len(rows) < 2 or rows[-1]["operations"] != SIZES[-1]:
        outcome.lines.append(f"B4 grad at {SIZES[-1] // 1000}k ops: not measured")
        return outcome
    span = f"{rows[-2]['operations']}->{rows[-1]['operations']}"
    exponents = {
        what: slope([(r["operations"], max(r[what], 1e-9)) for r in rows[-2:]])
        for what in ("first", "second", "third", "growth", "lines")
    }
    print(f"  scaling exponents {span}: " + ", ".join(f"{k} {v:.3f}" for k, v in exponents.items()))
    last = rows[-1]
    for what in ("first", "second"):
        met = last[what] <= TARGET_SECONDS
        outcome.lines.append(
            f"B4 grad {what} call at {last['operations']} ops: {show_time(last[what])}, "
            f"target ≤ {TARGET_SECONDS:g} s: {verdict(met)}"
        )
    met = last["growth"] <= TARGET_BYTES
    outcome.lines.append(
        f"B4 grad memory growth at {last['operations']} ops: {last['growth'] / 2**20:.0f} MiB, "
        f"target ≤ 1 GiB: {verdict(met)}"
    )
    worst = max(exponents["first"], exponents["second"])
    outcome.lines.append(
        f"B4 grad scaling exponent {span}: {worst:.3f}, target ≤ {TARGET_EXPONENT}: {verdict(worst <= TARGET_EXPONENT)}"
    )
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(one(options.one)))
        return
    for line in run(tuple(int(s) for s in options.sizes.split(","))).lines:
        print(f"  {line}")


if __name__ == "__main__":
    main()
