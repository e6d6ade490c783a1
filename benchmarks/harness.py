"""Timing, agreement checks and the printed table shared by the per-call tasks (B1-B3, B5).

A task is a list of implementations of one computation, the first being the floor
(hand-written numpy). Each is checked once against the floor, then timed in rounds that
alternate between the implementations (each round starts one further along the list),
so a burst of load from another process lands on all of them, not on one. A round runs
an implementation `calls` times in a loop, `calls` chosen so the loop lasts at least
`min_seconds` (timer and loop overhead are then a few nanoseconds a call); the table
shows the median over rounds, the interquartile spread, and the minor page faults per
call. The cyclic garbage collector is paused inside a timed loop, as `timeit` does.
"""

from __future__ import annotations

import cProfile
import gc
import io
import itertools
import pstats
import resource
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Settings:
    rounds: int
    min_seconds: float  # per implementation per round
    warmups: int = 3
    profile: bool = False


@dataclass(frozen=True)
class Impl:
    """One implementation: `fn(*args)` is one timed call."""

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    reference: float | None = None  # seconds per call, as measured in the issue
    targeted: bool = False  # a shax row: the task's target applies to it
    numpy_memory: bool = True  # its arrays are numpy's, which tracemalloc sees


@dataclass(frozen=True)
class Missing:
    name: str
    reason: str


@dataclass(frozen=True)
class Target:
    """A task's goal for the shax rows: `met(seconds, floor_seconds)`."""

    text: str
    met: Callable[[float, float], bool]


@dataclass
class Outcome:
    """What the summary at the end needs from a task: one line per target checked, and
    each implementation's median seconds."""

    lines: list[str] = field(default_factory=list)
    medians: dict[str, float] = field(default_factory=dict)


def leaves(tree: Any) -> list[np.ndarray]:
    """A result's arrays in a fixed order (dicts by sorted key), as numpy arrays."""
    if isinstance(tree, dict):
        return [a for k in sorted(tree) for a in leaves(tree[k])]
    if isinstance(tree, (tuple, list)):
        return [a for t in tree for a in leaves(t)]
    if hasattr(tree, "detach"):  # a torch tensor
        tree = tree.detach().numpy()
    return [np.asarray(tree)]


def disagreement(result: Any, floor: Any, rtol: float = 1e-4) -> str | None:
    """None if `result` matches `floor` (allclose, with an absolute tolerance scaled to
    each array's largest entry), else what differs."""
    got, want = leaves(result), leaves(floor)
    if len(got) != len(want):
        return f"{len(got)} arrays, the floor has {len(want)}"
    for k, (a, b) in enumerate(zip(got, want)):
        if a.shape != b.shape:
            return f"array {k} has shape {a.shape}, the floor's {b.shape}"
        scale = float(np.max(np.abs(b))) if b.size else 0.0
        if not np.allclose(a, b, rtol=rtol, atol=rtol * 0.1 * max(scale, 1e-30)):
            error = float(np.max(np.abs(a.astype(np.float64) - b))) / max(scale, 1e-30)
            return f"array {k} differs by up to {error:.2g} of its largest entry"
    return None


def calls_for(fn: Callable[..., Any], args: tuple[Any, ...], min_seconds: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... calls that take at least `min_seconds`."""
    for calls in (m * 10**e for e in range(9) for m in (1, 2, 5)):
        if loop(fn, args, calls) >= min_seconds:
            return calls
    return calls


def loop(fn: Callable[..., Any], args: tuple[Any, ...], calls: int) -> float:
    """Seconds for `calls` calls of fn(*args)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        start = time.perf_counter()
        for _ in itertools.repeat(None, calls):
            fn(*args)
        return time.perf_counter() - start
    finally:
        if collecting:
            gc.enable()


@dataclass
class Timings:
    """Per implementation, one entry per round: seconds per call, and minor page faults
    per call (memory the allocator gave back to the system and takes again: each fault
    costs a fraction of a microsecond, and a large array's worth of them shows in B3)."""

    seconds: list[float] = field(default_factory=list)
    faults: list[float] = field(default_factory=list)


def interleaved(impls: Sequence[Impl], settings: Settings) -> list[Timings]:
    """`settings.rounds` rounds, each timing every implementation once, starting from
    the next one along each time."""
    calls = [calls_for(i.fn, i.args, settings.min_seconds) for i in impls]
    timings = [Timings() for _ in impls]
    for r in range(settings.rounds):
        for k in (r + j for j in range(len(impls))):
            k %= len(impls)
            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            seconds = loop(impls[k].fn, impls[k].args, calls[k])
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
            timings[k].seconds.append(seconds / calls[k])
            timings[k].faults.append(faults / calls[k])
    return timings


def warm(impl: Impl, calls: int) -> Impl | Missing:
    """`impl` after `calls` calls (compiling, caching), or a row saying how it failed."""
    try:
        for _ in range(calls):
            impl.fn(*impl.args)
    except Exception as error:  # a failing implementation is a row of the table, not the end of the run
        return Missing(impl.name, f"!! FAILED: {type(error).__name__}: {str(error).splitlines()[0][:160]}")
    return impl


def peak_memory(fn: Callable[..., Any], args: tuple[Any, ...]) -> int:
    """Bytes allocated at the peak of one call, above what was allocated before it
    (numpy reports its array buffers to tracemalloc; the result counts)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn(*args)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def verdict(met: bool) -> str:
    return "met" if met else "NOT MET"


def show_time(seconds: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def show_bytes(count: int) -> str:
    return f"{count / 2**20:.2f} MiB"


def profile(impl: Impl, seconds: float = 1.0, top: int = 14) -> str:
    """cProfile of `impl` called for about `seconds`, the `top` functions by own time."""
    calls = max(1, calls_for(impl.fn, impl.args, seconds / 10) * 10)
    profiler = cProfile.Profile()
    profiler.enable()
    loop(impl.fn, impl.args, calls)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime")
    stats.print_stats(top)
    body = out.getvalue()
    body = body[body.find("ncalls") :] if "ncalls" in body else body
    return f"  profile of {impl.name}: {calls} calls\n" + "\n".join(
        "    " + line for line in body.rstrip().splitlines()
    )


HEADER = f"  {'implementation':<28}{'median':>10}{'spread':>8}{'× floor':>9}{'issue':>10}{'faults':>8}   notes"


def run_task(
    title: str,
    entries: Sequence[Impl | Missing],
    settings: Settings,
    target: Target | None = None,
    memory: bool = False,
) -> Outcome:
    """Check, time and print one task; the first entry is the floor (hand numpy)."""
    print(f"\n{title}" + (f"   target for shax: {target.text}" if target else ""))
    print(HEADER)
    entries = [warm(e, settings.warmups) if isinstance(e, Impl) else e for e in entries]
    impls = [e for e in entries if isinstance(e, Impl)]
    floor = impls[0]
    floor_result = floor.fn(*floor.args)
    wrong = {i.name: disagreement(i.fn(*i.args), floor_result) for i in impls[1:]}
    timings = dict(zip((i.name for i in impls), interleaved(impls, settings)))
    floor_median = statistics.median(timings[floor.name].seconds)
    outcome = Outcome()
    for entry in entries:
        if isinstance(entry, Missing):
            print(f"  {entry.name:<28}{'—':>10}   {entry.reason}")
            continue
        seconds = timings[entry.name].seconds
        median = outcome.medians[entry.name] = statistics.median(seconds)
        q1, _, q3 = statistics.quantiles(seconds, n=4) if len(seconds) > 1 else (median,) * 3
        faults = statistics.median(timings[entry.name].faults)
        notes = []
        if entry is floor:
            notes.append("the floor")
        if wrong.get(entry.name):
            notes.append(f"!! DISAGREES WITH THE FLOOR: {wrong[entry.name]}")
        if target and entry.targeted:
            met = target.met(median, floor_median) and not wrong.get(entry.name)
            notes.append(f"target {target.text}: {verdict(met)}")
            outcome.lines.append(
                f"{title.split()[0]} {entry.name}: {show_time(median)} ({median / floor_median:.2f}× floor), "
                f"target {target.text}: {verdict(met)}"
            )
        reference = show_time(entry.reference) if entry.reference else ""
        print(
            f"  {entry.name:<28}{show_time(median):>10}{(q3 - q1) / median:>8.0%}"
            f"{median / floor_median:>9.2f}{reference:>10}{faults:>8.3g}   {'; '.join(notes)}"
        )
    if memory:
        print_memory(impls)
    if settings.profile:
        for impl in impls:
            if impl.name.startswith("shax"):
                print(profile(impl))
    return outcome


def print_memory(impls: Sequence[Impl]) -> None:
    floor = peak_memory(impls[0].fn, impls[0].args)
    print("  peak memory of one call (tracemalloc sees numpy's buffers; the gradients returned count):")
    for impl in impls:
        if impl.numpy_memory:
            peak = peak_memory(impl.fn, impl.args)
            print(f"    {impl.name:<26}{show_bytes(peak):>10}{peak / floor:>8.2f}× floor")
        else:
            print(f"    {impl.name:<26}{'—':>10}   own allocator, not seen by tracemalloc")
