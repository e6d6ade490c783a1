"""Thread safety: transforms built and called in 8 threads at once give what they give
in one thread, errors included (their messages name each thread's own user line). The
state tracing keeps (trace levels, the linearization `residual` reaches, the source
operations are attributed to) is per thread; the garbage-collector pause is counted
over all threads and leaves the collector as it found it; concurrent first builds of
one cache entry, or first uses of a derived method, are harmless."""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest

import shax
from shax import ShaxError, f32
from shax.core.gcpause import collector_paused
from shax.core.location import attribute, current_source, restore
from shax.rules.linearize import linearizing, residual
from shax.tracing.tracer import new_trace
from shax.transforms.cache import StagingCache
from typeclasses import broadcast, cos, dot, exp, max, min, reduce_sum, reshape, sin, tanh, transpose

THREADS = 8
ROUNDS = 1  # rounds of building every case afresh, per thread
CALLS = 3  # calls of each built transform, per round
TIMEOUT = 120  # seconds a barrier waits before the test fails instead of hanging


def run_in_threads(work: Callable[[int], Any], threads: int = THREADS) -> list[Any]:
    """`work(k)` in `threads` threads at once, its results by k (a thread's error is raised here)."""
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(work, range(threads)))


# The functions ----------------------------------------------------------------------------


def loss(x: Any, y: Any) -> Any:
    return reduce_sum(sin(x) * y + cos(x * y), [0])


def medium(x0: Any, x8: Any) -> Any:
    x1 = broadcast(x0, dims=[1], shape=[2, 6])
    x2 = sin(x1)
    x4 = x2 + cos(x2)
    x7 = dot(exp(x4), transpose(x4, [1, 0]))
    x9, x10 = x7 * x8, x7 + x8
    return reduce_sum(max(x9, x10) - min(x9, x10), axes=[0])


def medium_loss(x0: Any, x8: Any) -> Any:
    return reduce_sum(medium(x0, x8), [0])


def vector(x: Any) -> Any:
    return sin(x) * 2.0  # not a scalar: grad refuses it


def foo(x: Any) -> Any:
    return x * (x + 3.0)


def layer(w: Any, x: Any) -> Any:
    return reduce_sum(tanh(dot(w, x)), [0])


def closing(x: Any) -> Any:
    # The inner function closes over the outer tracer x: a constant of the inner grad.
    return shax.grad(lambda y: x * sin(y))(x)  # d/dx (x cos x) = cos x - x sin x


def nth_derivative(n: int, f: Callable[..., Any], x: Any) -> Any:
    """autodidax2's nested derivatives through jvp, each closing over the enclosing ones."""
    if n == 0:
        return f(x)
    return shax.jvp(lambda x: nth_derivative(n - 1, f, x), (x,), (1.0,))[1]


def bad_shape(x: Any) -> Any:
    return reshape(x, [2, 2]) * 2.0  # x is f32[3]: a ShaxTypeError at this line


def bad_control(x: Any) -> Any:
    return x * float(x)  # Python control flow on a tracer: a ShaxTypeError at this line


def fresh(f: Callable[..., Any]) -> Callable[..., Any]:
    """A new function object computing f: transforms of it are built, not found in the cache."""
    return functools.wraps(f)(lambda *args: f(*args))


X = np.array([0.5, -1.25, 2.0], np.float32)
Y = np.array([1.5, 0.25, -0.75], np.float32)
M0 = np.arange(1, 7, dtype=np.float32)
M8 = np.arange(1, 5, dtype=np.float32).reshape(2, 2)
W = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
XS = np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3)


def _vjp_loss() -> Any:
    out, pull = shax.vjp(fresh(loss), X, Y)
    return out, pull(np.float32(1.0))


def _vjp_medium() -> Any:
    out, pull = shax.vjp(fresh(medium), M0, M8)
    return out, pull(np.array([1.0, -2.0], np.float32))


def _linearize_medium() -> Any:
    out, push = shax.linearize(fresh(medium), M0, M8)
    return out, push(np.ones(6, np.float32), np.zeros((2, 2), np.float32))


def _xpr_of_grad() -> Any:
    # The bindings' sources are the user's lines, attributed in this thread only.
    defn = shax.xpr(shax.grad(shax.grad(fresh(foo))), np.float32(2.0))
    return str(defn), tuple(b.source for b in defn.bindings)


# name -> a thunk building its transforms afresh; each built one is called CALLS times
CASES: dict[str, Callable[[], Callable[[], Any]]] = {
    "grad": lambda: functools.partial(shax.grad(fresh(loss)), X, Y),
    "grad medium": lambda: functools.partial(shax.grad(fresh(medium_loss), wrt=1), M0, M8),
    "value_and_grad": lambda: functools.partial(shax.value_and_grad(fresh(layer)), W, X),
    "vmap": lambda: functools.partial(shax.vmap(fresh(layer), in_axes=(None, 0)), W, XS),
    "jit": lambda: functools.partial(shax.jit(fresh(medium)), M0, M8),
    "jit(grad)": lambda: functools.partial(shax.jit(shax.grad(fresh(loss))), X, Y),
    "vjp": lambda: _vjp_loss,
    "vjp medium": lambda: _vjp_medium,
    "jvp": lambda: lambda: shax.jvp(fresh(loss), (X, Y), (Y, X)),
    "linearize": lambda: _linearize_medium,
    "grad(grad)": lambda: functools.partial(shax.grad(shax.grad(fresh(foo))), np.float32(2.0)),
    "grad^4": lambda: functools.partial(shax.grad(shax.grad(shax.grad(shax.grad(fresh(foo))))), np.float32(2.0)),
    "grad closing over x": lambda: functools.partial(shax.grad(fresh(closing)), np.float32(0.7)),
    "jvp^3 closing over x": lambda: functools.partial(nth_derivative, 3, fresh(foo), 2.0),
    "vmap(grad)": lambda: functools.partial(shax.vmap(shax.grad(fresh(layer)), in_axes=(None, 0)), W, XS),
    "grad(vmap)": lambda: functools.partial(
        shax.grad(lambda w, xs: reduce_sum(shax.vmap(fresh(layer), in_axes=(None, 0))(w, xs), [0])), W, XS
    ),
    "xpr(grad(grad))": lambda: _xpr_of_grad,
    # Failing on purpose ("fails" in the name): the error paths must leave no state behind.
    "grad fails": lambda: functools.partial(shax.grad(fresh(bad_shape)), X),
    "vmap fails": lambda: functools.partial(shax.vmap(fresh(bad_control)), XS),
    "jit fails": lambda: functools.partial(shax.jit(fresh(bad_shape)), X),
    "grad(grad) fails inside": lambda: functools.partial(
        shax.grad(lambda x: reduce_sum(shax.grad(fresh(bad_control))(x) * x, [0])), X
    ),
    "vjp fails": lambda: lambda: shax.vjp(fresh(bad_shape), X),
    "grad fails: not a scalar": lambda: functools.partial(shax.grad(fresh(vector)), X),
    "vmap fails: no such axis": lambda: functools.partial(shax.vmap(fresh(layer), in_axes=(None, 2)), W, XS),
}


def outcome(call: Callable[[], Any]) -> Any:
    """What `call()` gives: its result, or its ShaxError's type and message."""
    try:
        result = call()
    except ShaxError as error:
        return type(error), str(error)
    return result


def assert_same(got: Any, expected: Any, case: str) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), (case, got, expected)
        for g, e in zip(got, expected):
            assert_same(g, e, case)
    elif isinstance(expected, (str, type)) or expected is None:
        assert got == expected, case
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7, err_msg=case)


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    """Each case's outcome, in this thread alone."""
    return {name: outcome(build()) for name, build in CASES.items()}


def test_the_failing_cases_and_only_they_fail_at_the_users_line(expected: dict[str, Any]) -> None:
    for name, got in expected.items():
        failed = isinstance(got, tuple) and isinstance(got[0], type)
        assert failed == ("fails" in name), (name, got)
        if failed:
            assert issubclass(got[0], ShaxError) and f"(at {__file__}:" in got[1], (name, got)


def test_transforms_built_and_called_in_8_threads_match_one_thread(expected: dict[str, Any]) -> None:
    names = list(CASES)
    start = threading.Barrier(THREADS, timeout=TIMEOUT)

    def work(k: int) -> int:
        # Each thread runs the cases in its own order, so that different transforms overlap.
        order = names[k:] + names[:k]
        start.wait()
        checked = 0
        for _ in range(ROUNDS):
            for name in order:
                call = CASES[name]()
                for _ in range(CALLS):
                    assert_same(outcome(call), expected[name], f"{name} in thread {k}")
                    checked += 1
        return checked

    assert run_in_threads(work) == [ROUNDS * len(names) * CALLS] * THREADS


def test_one_transform_object_first_called_in_8_threads_at_once() -> None:
    # Every thread finds the cache entry missing and builds it: each gets a right answer.
    transforms = [shax.grad(fresh(loss)), shax.jit(shax.vmap(fresh(layer), in_axes=(None, 0)))]
    arguments = [(X, Y), (W, XS)]
    layers = shax.vmap(layer, in_axes=(None, 0))
    single = [outcome(functools.partial(shax.grad(loss), X, Y)), outcome(functools.partial(layers, W, XS))]
    start = threading.Barrier(THREADS, timeout=TIMEOUT)

    def work(k: int) -> None:
        start.wait()
        for transform, args, want in zip(transforms, arguments, single):
            for _ in range(CALLS):
                assert_same(outcome(functools.partial(transform, *args)), want, f"thread {k}")

    run_in_threads(work)


# Per-thread state -------------------------------------------------------------------------


def test_trace_levels_are_nesting_depths_in_their_own_thread() -> None:
    opened = threading.Barrier(THREADS, timeout=TIMEOUT)

    def work(k: int) -> tuple[int, int, int]:
        with new_trace([f32[3]]) as outer:
            opened.wait()  # every thread's outer trace is open now
            with new_trace([]) as inner:
                levels = outer.level, inner.level
            opened.wait()
        with new_trace([]) as again:
            return (*levels, again.level)

    assert run_in_threads(work) == [(1, 2, 1)] * THREADS


def test_residual_reaches_only_its_own_threads_linearization() -> None:
    entered, checked = threading.Event(), threading.Event()

    class Crossing:
        def residual(self, x: Any) -> Any:
            return ("crossed", x)

        def zeros(self, t: Any) -> Any:
            raise AssertionError("not used")

    def linearizing_thread() -> Any:
        with linearizing(Crossing()):
            entered.set()
            assert checked.wait(TIMEOUT)
            return residual(1.0)

    with ThreadPoolExecutor(1) as pool:
        crossed = pool.submit(linearizing_thread)
        assert entered.wait(TIMEOUT)
        try:
            with pytest.raises(ShaxError, match="only linearize rules"):
                residual(1.0)
        finally:
            checked.set()
        assert crossed.result() == ("crossed", 1.0)


def here() -> str | None:
    return current_source()


def test_operations_are_attributed_to_sources_in_their_own_thread() -> None:
    entered, checked = threading.Event(), threading.Event()

    def attributing_thread() -> Any:
        token = attribute("stage.py:7")
        try:
            entered.set()
            assert checked.wait(TIMEOUT)
            return here()
        finally:
            restore(token)

    with ThreadPoolExecutor(1) as pool:
        attributed = pool.submit(attributing_thread)
        assert entered.wait(TIMEOUT)
        try:
            mine = here()
        finally:
            checked.set()
        assert attributed.result() == "stage.py:7"
    assert mine == f"{__file__}:{here.__code__.co_firstlineno + 1}"


# The collector pause ----------------------------------------------------------------------


@pytest.fixture
def collector() -> Iterator[None]:
    """Restores the collector's state after a test that changes it."""
    was_enabled = gc.isenabled()
    try:
        yield
    finally:
        (gc.enable if was_enabled else gc.disable)()


@pytest.mark.parametrize("enabled", [True, False])
def test_nested_pauses_leave_the_collector_as_found(collector: None, enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled() is enabled


def test_a_pause_failing_leaves_the_collector_as_found(collector: None) -> None:
    gc.enable()
    with pytest.raises(ShaxError):
        shax.grad(fresh(bad_shape))(X)
    assert gc.isenabled()


@pytest.mark.parametrize("enabled", [True, False])
def test_overlapping_pauses_in_threads_are_counted(collector: None, enabled: bool) -> None:
    # A enters, B enters, A leaves: B's pause goes on; the last to leave restores the state.
    (gc.enable if enabled else gc.disable)()
    a_in, b_in, a_out, b_may_leave = (threading.Event() for _ in range(4))

    def a() -> bool:
        with collector_paused():
            a_in.set()
            assert b_in.wait(TIMEOUT)
        a_out.set()
        return gc.isenabled()

    def b() -> None:
        assert a_in.wait(TIMEOUT)
        with collector_paused():
            b_in.set()
            assert b_may_leave.wait(TIMEOUT)

    with ThreadPoolExecutor(2) as pool:
        after_a, after_b = pool.submit(a), pool.submit(b)
        assert a_out.wait(TIMEOUT)
        try:
            assert after_a.result() is False  # B is still paused
        finally:
            b_may_leave.set()
        after_b.result()
    assert gc.isenabled() is enabled


@pytest.mark.parametrize("enabled", [True, False])
def test_transforms_in_threads_leave_the_collector_as_found(collector: None, enabled: bool) -> None:
    (gc.enable if enabled else gc.disable)()
    start = threading.Barrier(THREADS, timeout=TIMEOUT)

    def work(k: int) -> None:
        start.wait()
        for _ in range(ROUNDS):
            shax.grad(shax.grad(fresh(foo)))(np.float32(k))
            outcome(functools.partial(shax.vmap(fresh(bad_control)), XS))

    run_in_threads(work)
    assert gc.isenabled() is enabled


# Concurrent first use ---------------------------------------------------------------------


def test_two_threads_building_one_cache_entry_both_get_what_they_built() -> None:
    cache = StagingCache()
    both_building = threading.Barrier(2, timeout=TIMEOUT)

    def fn() -> None:
        pass

    def work(k: int) -> Any:
        def build() -> tuple[Any, bool]:
            both_building.wait()  # neither finds the entry: both build it
            return f"built by {k}", True

        return cache.get(fn, "key", build)

    built = run_in_threads(work, threads=2)
    assert built == ["built by 0", "built by 1"]
    kept = cache.get(fn, "key", lambda: ("built again", True))
    assert kept in built
