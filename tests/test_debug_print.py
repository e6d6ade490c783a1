"""shax.debug.print (jax.debug.print): the runtime values, printed once per execution, in
program order, under evaluate, jit (numpy and XLA), loops, vmap and grad; a binding with an
effect that every pass keeps. Expected lines are JAX 0.10's for the same programs."""

from __future__ import annotations

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from shax import passes
from shax.stages import infer_types

X = np.array([1.0, 2.0], np.float32)


def f(x: shax.Tracer) -> shax.Tracer:
    shax.debug.print("x = {}", x)
    y = x * 3.0
    shax.debug.print("y = {y}, total {t:.1f}", y=y, t=snp.sum(y))
    return snp.sum(y * y)


F_LINES = ["x = [1. 2.]", "y = [3. 6.], total 9.0"]


def printed(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_on_numpy_values_it_prints_at_once(capsys: pytest.CaptureFixture[str]) -> None:
    assert f(X) == np.float32(45.0)
    shax.debug.print("{a} {b}", a=1, b=np.int32(3))
    assert printed(capsys) == [*F_LINES, "1 3"]


def test_the_program_shows_the_prints_in_order_and_every_pass_keeps_them() -> None:
    defn = infer_types(shax.trace(f, shax.f32[2]))
    text = str(shax.xpr(f, X))
    assert 'debug_print "x = {}" x0' in text
    assert 'debug_print "y = {y}, total {t:.1f}" [y,t]' in text
    for run in (passes.dce, passes.cse, passes.fold_constants, passes.forward_identities, passes.cleanup):
        prints = [b for b in run(defn).bindings if isinstance(b.prim, shax.primitives.DebugPrint)]
        assert [b.prim.fmt for b in prints] == ["x = {}", "y = {y}, total {t:.1f}"], run


def test_two_prints_of_the_same_value_are_two_prints(capsys: pytest.CaptureFixture[str]) -> None:
    def twice(x: shax.Tracer) -> shax.Tracer:
        shax.debug.print("{}", x)
        shax.debug.print("{}", x)
        return x

    shax.jit(twice)(np.float32(2.0))
    assert printed(capsys) == ["2.0", "2.0"]


def test_a_print_of_constants_prints_when_the_program_runs(capsys: pytest.CaptureFixture[str]) -> None:
    def g(x: shax.Tracer) -> shax.Tracer:
        shax.debug.print("step {}", 7)
        shax.debug.print("hi")
        return x + 1.0

    jitted = shax.jit(g)
    assert printed(capsys) == []
    jitted(np.float32(1.0))
    jitted(np.float32(1.0))
    assert printed(capsys) == ["step 7", "hi"] * 2


def test_evaluate_and_jit_print_once_per_run(capsys: pytest.CaptureFixture[str]) -> None:
    defn = infer_types(shax.trace(f, shax.f32[2]))
    assert shax.evaluate(defn, X) == [np.float32(45.0)]
    jitted = shax.jit(f)
    assert jitted(X) == np.float32(45.0)
    assert jitted(X + 1) == np.float32(117.0)
    assert printed(capsys) == [*F_LINES, *F_LINES, "x = [2. 3.]", "y = [6. 9.], total 15.0"]


def test_xla_prints_through_jax(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("jax")
    jitted = shax.jit(f, backend="xla")
    assert jitted(X) == np.float32(45.0)
    assert printed(capsys) == F_LINES
    np.testing.assert_array_equal(shax.jit(shax.grad(f), backend="xla")(X), [18.0, 36.0])
    assert printed(capsys) == F_LINES
    np.testing.assert_array_equal(shax.jit(shax.vmap(f), backend="xla")(np.stack([X, 2 * X])), [45.0, 180.0])
    assert printed(capsys) == ["x = [1. 2.]", "x = [2. 4.]", "y = [3. 6.], total 9.0", "y = [ 6. 12.], total 18.0"]


def counting(x: shax.Tracer) -> shax.Tracer:
    def body(i: shax.Tracer, c: shax.Tracer) -> shax.Tracer:
        shax.debug.print("i={} c={}", i, c)
        return c * 2.0

    shax.debug.print("before")
    out = shax.fori_loop(0, 3, body, x)
    shax.debug.print("after")
    return out


LOOP_LINES = ["before", "i=0 c=1.0", "i=1 c=2.0", "i=2 c=4.0", "after"]


@pytest.mark.parametrize("backend", ["evaluate", "numpy", "xla"])
def test_a_loop_body_prints_once_per_iteration_in_order(backend: str, capsys: pytest.CaptureFixture[str]) -> None:
    if backend == "xla":
        pytest.importorskip("jax")
    run = counting if backend == "evaluate" else shax.jit(counting, backend=backend)
    assert run(np.float32(1.0)) == np.float32(8.0)
    assert printed(capsys) == LOOP_LINES


def test_scan_prints_each_step(capsys: pytest.CaptureFixture[str]) -> None:
    def step(c: shax.Tracer, x: shax.Tracer) -> tuple[shax.Tracer, shax.Tracer]:
        shax.debug.print("c={} x={}", c, x)
        return c + x, c

    shax.jit(lambda xs: shax.scan(step, np.float32(0.0), xs)[0])(np.array([1.0, 2.0, 3.0], np.float32))
    assert printed(capsys) == ["c=0.0 x=1.0", "c=1.0 x=2.0", "c=3.0 x=3.0"]


def test_vmap_prints_once_per_batch_element(capsys: pytest.CaptureFixture[str]) -> None:
    xs = np.stack([X, 2 * X])
    assert list(shax.vmap(f)(xs)) == [45.0, 180.0]
    # JAX: the first print for every element, then the second
    assert printed(capsys) == ["x = [1. 2.]", "x = [2. 4.]", "y = [3. 6.], total 9.0", "y = [ 6. 12.], total 18.0"]


def test_vmap_shares_an_unbatched_operand(capsys: pytest.CaptureFixture[str]) -> None:
    def g(x: shax.Tracer, y: shax.Tracer) -> shax.Tracer:
        shax.debug.print("{} {}", x, y)
        return x * y

    shax.jit(shax.vmap(g, in_axes=(0, None)))(np.array([1.0, 2.0], np.float32), np.float32(5.0))
    assert printed(capsys) == ["1.0 5.0", "2.0 5.0"]


def test_nested_vmap_prints_in_jax_order(capsys: pytest.CaptureFixture[str]) -> None:
    def g(x: shax.Tracer) -> shax.Tracer:
        shax.debug.print("x = {}", x)
        return snp.sum(x)

    xs = np.arange(4.0, dtype=np.float32).reshape(2, 2, 1)
    shax.vmap(shax.vmap(g))(xs)
    shax.jit(shax.vmap(shax.vmap(g)))(xs)
    # jax.vmap(jax.vmap(g)) prints the inner vmap's axis slowest: x[0,0], x[1,0], x[0,1], x[1,1]
    assert printed(capsys) == ["x = [0.]", "x = [2.]", "x = [1.]", "x = [3.]"] * 2


@pytest.mark.parametrize("jit", [False, True])
def test_grad_prints_the_primal_values_once(jit: bool, capsys: pytest.CaptureFixture[str]) -> None:
    grad = shax.grad(f)
    np.testing.assert_array_equal((shax.jit(grad) if jit else grad)(X), [18.0, 36.0])
    assert printed(capsys) == F_LINES


@typeguard.suppress_type_checks  # wrong types on purpose: shax's own checks answer
def test_bad_format_is_an_error_naming_debug_print() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"debug.print: cannot format '\{\} \{\}'.*test_debug_print.py"):
        shax.jit(lambda x: shax.debug.print("{} {}", x) or x)(np.float32(1.0))
    with pytest.raises(shax.ShaxTypeError, match="debug.print: fmt must be a str"):
        shax.debug.print(3, X)
    with pytest.raises(shax.ShaxTypeError, match="debug.print: argument 0 must be an array or a number, got dict"):
        shax.debug.print("{}", {"a": X})


def sines(x: shax.Tracer) -> shax.Tracer:
    def body(i: shax.Tracer, c: shax.Tracer) -> shax.Tracer:
        shax.debug.print("i={} c={}", i, c)
        return snp.sin(c)

    return shax.fori_loop(0, 2, body, x)


@pytest.mark.parametrize("jit", [False, True])
def test_grad_of_a_loop_prints_each_iteration_once(jit: bool, capsys: pytest.CaptureFixture[str]) -> None:
    grad = shax.grad(sines)
    assert (shax.jit(grad) if jit else grad)(np.float32(1.0)) == pytest.approx(np.cos(1.0) * np.cos(np.sin(1.0)))
    # jax.grad of the same fori_loop prints these two lines (numpy's float32 formats as a Python float)
    assert printed(capsys) == ["i=0 c=1.0", "i=1 c=0.8414709568023682"]


def test_cond_while_and_calls_print_what_runs(capsys: pytest.CaptureFixture[str]) -> None:
    def branches(x: shax.Tracer) -> shax.Tracer:
        def positive(x: shax.Tracer) -> shax.Tracer:
            shax.debug.print("positive {}", x)
            return x

        def negative(x: shax.Tracer) -> shax.Tracer:
            shax.debug.print("negative {}", x)
            return -x

        return shax.cond(x > 0, positive, negative, x)

    def doubling(x: shax.Tracer) -> shax.Tracer:
        def body(c: shax.Tracer) -> shax.Tracer:
            shax.debug.print("c={}", c)
            return c * 2.0

        return shax.while_loop(lambda c: c < 5.0, body, x)

    @shax.subgraph
    def plus_one(x: shax.Tracer) -> shax.Tracer:
        shax.debug.print("called with {}", x)
        return x + 1.0

    assert [shax.jit(branches)(np.float32(v)) for v in (2.0, -3.0)] == [2.0, 3.0]
    assert shax.jit(doubling)(np.float32(1.0)) == 8.0
    assert shax.jit(lambda x: plus_one(x) * plus_one(x + 1.0))(np.float32(1.0)) == 6.0
    assert printed(capsys) == [
        "positive 2.0",
        "negative -3.0",
        "c=1.0",
        "c=2.0",
        "c=4.0",
        "called with 1.0",
        "called with 2.0",
    ]


def test_a_jitted_function_inside_another_prints_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    inner = shax.jit(lambda x: (shax.debug.print("inner {}", x), x * 2.0)[1])

    def outer(x: shax.Tracer) -> shax.Tracer:
        shax.debug.print("outer {}", x)
        return inner(x) + 1.0

    assert shax.jit(outer)(np.float32(1.0)) == 3.0
    assert shax.grad(outer)(np.float32(1.0)) == 2.0
    assert printed(capsys) == ["outer 1.0", "inner 1.0"] * 2
