"""One operation, one binding: an operation with several results (a call of a subgraph
returning several values, a scan, a cond, a while loop) is one binding defining all its
results, printed on one line; programs of one-result operations print as before."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from shax.control import Call, Scan
from shax.core.ir import Binding, Definition, Var

X = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
W = (np.eye(4, dtype=np.float32) + 0.1) / 2


@shax.subgraph
def block(x: Any, w: Any) -> Any:
    h = snp.tanh(x @ w)
    return h, snp.sum(h)


def two_blocks(x: Any, w: Any) -> Any:
    a, s = block(x, w)
    b, t = block(a, w)
    return snp.sum(b) + s + t


def test_a_call_of_two_outputs_is_one_binding_on_one_line() -> None:
    defn = shax.xpr(two_blocks, X, W)
    calls = [b for b in defn.bindings if isinstance(b.prim, Call)]
    assert [len(b.vars) for b in calls] == [2, 2]
    text = str(defn)
    assert "      (x2 :: f32[3, 4], x3 :: f32[]) = call block x0 x1\n" in text
    assert "      (x4 :: f32[3, 4], x5 :: f32[]) = call block x2 x1\n" in text
    untyped = str(shax.trace(two_blocks, shax.f32[3, 4], shax.f32[4, 4]))
    assert "(x2, x3) = call block" in untyped or "(x3, x4) = call block" in untyped


def test_a_binding_of_several_results_has_no_single_var() -> None:
    call = next(b for b in shax.xpr(two_blocks, X, W).bindings if isinstance(b.prim, Call))
    with pytest.raises(shax.ShaxTypeError, match="call defines 2 vars, not one: read binding.vars"):
        _ = call.var
    assert Binding(Var(3), call.prim, call.args).vars == (Var(3),)  # one Var given is one result


def test_the_seed_style_program_prints_as_before() -> None:
    defn = shax.xpr(lambda x, w: snp.sum(snp.tanh(x @ w)), X, W)
    assert all(len(b.vars) == 1 for b in defn.bindings)
    assert "(" not in str(defn).split(") =", 1)[1]


def test_every_stage_runs_each_call_once_and_agrees_with_numpy() -> None:
    def reference(x: Any, w: Any) -> Any:
        a = np.tanh(x @ w)
        b = np.tanh(a @ w)
        return b.sum() + a.sum() + b.sum()

    value, grads = shax.value_and_grad(two_blocks)(X, W)
    np.testing.assert_allclose(value, reference(X, W), rtol=1e-5)
    jitted = shax.jit(shax.grad(two_blocks))(X, W)
    for got, want in zip(jitted, grads):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    batched = shax.vmap(shax.grad(two_blocks), in_axes=(0, None))(np.stack([X, 2 * X]), W)
    np.testing.assert_allclose(batched[0][1], shax.grad(two_blocks)(2 * X, W)[0], rtol=1e-5)
    grad = shax.xpr(shax.grad(two_blocks), X, W)
    assert all(len(b.vars) >= 1 for b in grad.bindings if isinstance(b.prim, Call))
    assert len([b for b in grad.bindings if isinstance(b.prim, Call)]) == 4  # two forward, two backward
    shax.testing.check_grads(two_blocks, (X.astype(np.float64), W.astype(np.float64)), order=2)


def test_dce_drops_the_results_nothing_reads_from_the_callee() -> None:
    grad = shax.xpr(shax.grad(lambda x, w: block(x, w)[1]), X, W)
    forward = next(b for b in grad.bindings if isinstance(b.prim, Call) and not b.prim.linear)
    # the forward call returns only what the backward call reads (its activations)
    assert len(forward.vars) == len(forward.prim.defn.outputs) < 3


def test_a_scan_is_one_binding_and_its_gradient_program_is_short() -> None:
    def rnn(w: Any, u: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = snp.tanh(h @ w + x @ u)
            return h, h

        h, hs = shax.scan(step, np.zeros(8), xs)
        return snp.sum(hs * hs) + snp.sum(h)

    rng = np.random.default_rng(0)
    w, u, xs = rng.normal(size=(8, 8)) / 4, rng.normal(size=(3, 8)) / 4, rng.normal(size=(1000, 3))
    defn = shax.xpr(rnn, w, u, xs)
    (scan,) = [b for b in defn.bindings if isinstance(b.prim, Scan)]
    assert len(scan.vars) == 2 and str(scan).startswith("(x")
    grad = shax.xpr(shax.grad(rnn), w, u, xs)
    assert len([b for b in grad.bindings if isinstance(b.prim, Scan)]) == 2  # one forward, one backward
    assert str(grad).count("\n") + 1 < 60


def test_the_gradient_of_300_calls_of_a_40_operation_subgraph_prints_in_under_1500_lines() -> None:
    @shax.subgraph
    def layer(x: Any, w: Any) -> Any:
        h = x
        for _ in range(5):
            h = snp.tanh(h @ w) * 0.5 + snp.sin(h) - h * 0.1
        return h

    def deep(x: Any, w: Any) -> Any:
        for _ in range(300):
            x = layer(x, w)
        return snp.sum(x * x)

    w = W.astype(np.float64)
    assert 35 <= len(layer.definition(X, w).bindings) <= 45
    text = str(shax.xpr(shax.grad(deep), X.astype(np.float64), w))
    assert text.count("\n") + 1 < 1500


def test_a_cond_of_two_outputs_is_one_binding() -> None:
    def f(p: Any, x: Any) -> Any:
        y, z = shax.cond(p > 0, lambda x: (snp.sin(x), x * 2.0), lambda x: (snp.cos(x), x + 1.0), x)
        return snp.sum(y * z)

    defn = shax.xpr(f, np.float32(1.0), X)
    (cond,) = [b for b in defn.bindings if b.prim.name == "cond"]
    assert len(cond.vars) == 2
    grad = shax.grad(f, argnums=1)
    np.testing.assert_allclose(grad(np.float32(1.0), X), np.cos(X) * 2 * X + 2 * np.sin(X), rtol=1e-5)
    np.testing.assert_allclose(grad(np.float32(-1.0), X), -np.sin(X) * (X + 1) + np.cos(X), rtol=1e-5)


def test_a_subgraph_of_no_outputs_that_prints_runs_once_per_call(capsys: pytest.CaptureFixture[str]) -> None:
    @shax.subgraph
    def report(x: Any) -> Any:
        shax.debug.print("sum {}", snp.sum(x))
        return ()

    def f(x: Any) -> Any:
        report(x)
        return snp.sum(x * x)

    shax.jit(f)(X)
    assert capsys.readouterr().out.count("sum ") == 1
    defn = shax.xpr(f, X)
    (call,) = [b for b in defn.bindings if isinstance(b.prim, Call)]
    assert call.vars == () and "() = call report" in str(defn)


@typeguard.suppress_type_checks
def test_a_binding_defining_the_wrong_number_of_results_is_refused() -> None:
    defn = shax.xpr(two_blocks, X, W)
    bindings = list(defn.bindings)
    k = next(i for i, b in enumerate(bindings) if isinstance(b.prim, Call))
    bindings[k] = Binding(bindings[k].vars[:1], bindings[k].prim, bindings[k].args)
    broken = Definition(defn.name, defn.arg_types, tuple(bindings), defn.outputs)
    with pytest.raises(shax.ShaxError, match="call has 2 result"):
        shax.evaluate(broken, X, W)
