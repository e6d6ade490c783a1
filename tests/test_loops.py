"""Structured loops: `shax.scan`, `shax.fori_loop`, `shax.while_loop`.

An RNN written with scan (forwards and reversed), a fori_loop fixed-point iteration and a
while_loop Newton iteration, each on values, traced, jitted, differentiated (grad, jvp,
vmap of grad) against a Python loop, hand-derived derivatives or finite differences in
float64; programs stay one loop whatever the trip count; errors and printing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax.codegen import compile_definition
from shax.control import Scan, While
from shax.testing.numeric import check_directional_derivative

RNG = np.random.default_rng(0)
T, H, D = 6, 3, 2
W = RNG.normal(size=(H, H)) * 0.5
U = RNG.normal(size=(D, H))
XS = RNG.normal(size=(T, D))
H0 = RNG.normal(size=H) * 0.1


def rnn(w: Any, u: Any, xs: Any, h0: Any, reverse: bool = False) -> Any:
    """The sum of squares of an RNN's states plus its last state's sum."""

    def step(h: Any, x: Any) -> Any:
        h = snp.tanh(h @ w + x @ u)
        return h, (h * h).sum()

    h, ys = shax.scan(step, h0, xs, reverse=reverse)
    return h.sum() + ys.sum()


def rnn_reference(w: Any, u: Any, xs: Any, h0: Any, reverse: bool = False) -> float:
    h, total = h0, 0.0
    for x in xs[::-1] if reverse else xs:
        h = np.tanh(h @ w + x @ u)
        total += (h * h).sum()
    return float(h.sum() + total)


def loops_of(defn: shax.Definition) -> list[Any]:
    return [b.prim for b in defn.bindings if isinstance(b.prim, (Scan, While))]


@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_values_jit_and_trace(reverse: bool) -> None:
    expected = rnn_reference(W, U, XS, H0, reverse)
    assert rnn(W, U, XS, H0, reverse) == pytest.approx(expected, rel=1e-12)
    jitted = shax.jit(lambda w, u, xs, h0: rnn(w, u, xs, h0, reverse))
    assert float(jitted(W, U, XS, H0)) == pytest.approx(expected, rel=1e-12)
    defn = shax.xpr(lambda w, u, xs, h0: rnn(w, u, xs, h0, reverse), W, U, XS, H0)
    (value,) = shax.evaluate(defn, W, U, XS, H0)
    assert float(value) == pytest.approx(expected, rel=1e-12)
    assert float(compile_definition(defn)(W, U, XS, H0)[0]) == float(value)  # codegen = evaluate, bit for bit
    assert len({p.key for p in loops_of(defn)}) == 1  # one scan, its outputs read by two bindings


@pytest.mark.parametrize("reverse", [False, True])
def test_rnn_grad_and_jvp_against_finite_differences(reverse: bool) -> None:
    def f(w: Any, u: Any, xs: Any, h0: Any) -> Any:
        return rnn(w, u, xs, h0, reverse)

    grads = shax.grad(f)(W, U, XS, H0)
    tangents = [RNG.normal(size=np.shape(a)) for a in (W, U, XS, H0)]
    directional = sum(float(np.sum(g * t)) for g, t in zip(grads, tangents))
    check_directional_derivative(f, (W, U, XS, H0), tangents, [directional], what="grad of the RNN")
    _, tangent = shax.jvp(f, (W, U, XS, H0), tuple(tangents))
    assert float(tangent) == pytest.approx(directional, rel=1e-9)
    jitted = shax.jit(shax.grad(f))(W, U, XS, H0)
    for a, b in zip(grads, jitted):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_rnn_vmap_of_grad_is_a_loop_of_grads() -> None:
    batch = RNG.normal(size=(4, T, D))
    grad_w = shax.grad(lambda w, xs: rnn(w, U, xs, H0))
    batched = shax.vmap(grad_w, in_axes=(None, 0))(W, batch)
    for k in range(4):
        np.testing.assert_allclose(batched[0][k], grad_w(W, batch[k])[0], rtol=1e-12, atol=1e-14)
    values = shax.vmap(lambda xs: rnn(W, U, xs, H0))(batch)
    np.testing.assert_allclose(values, [rnn_reference(W, U, xs, H0) for xs in batch], rtol=1e-12)


def test_scan_pytrees_and_no_xs() -> None:
    def step(c: Any, x: Any) -> Any:
        return {"a": c["a"] + x[0], "b": c["b"] * 2.0}, (x[1], c["a"])

    init = {"a": np.float64(0.0), "b": np.ones(2)}
    xs = (np.arange(3.0), np.arange(6.0).reshape(3, 2))
    carry, (y0, y1) = shax.scan(step, init, xs)
    traced = shax.jit(lambda i, x: shax.scan(step, i, x))(init, xs)
    for c, (t0, t1) in [(carry, (y0, y1)), (traced[0], traced[1])]:
        assert float(c["a"]) == 3.0
        np.testing.assert_array_equal(c["b"], [8.0, 8.0])
        np.testing.assert_array_equal(t0, xs[1])
        np.testing.assert_array_equal(t1, [0.0, 0.0, 1.0])
    total = shax.jit(lambda c: shax.scan(lambda c, _: (c * 1.5, None), c, None, length=4))(np.float64(2.0))
    assert float(total[0]) == 2.0 * 1.5**4 and total[1] is None


# The fixed point x* = ½ cos(w x*): by the implicit function theorem
# dx*/dw = −½ sin(w x*) x* / (1 + ½ w sin(w x*)).
def fixed_point(w: Any, x0: Any, iterations: int = 200) -> Any:
    def iterate(i: Any, x: Any) -> Any:
        return 0.5 * snp.cos(w * x)

    return shax.fori_loop(0, iterations, iterate, x0)


def test_fori_loop_fixed_point() -> None:
    w, x0 = np.float64(0.9), np.float64(0.2)
    x = fixed_point(w, x0)
    assert x == pytest.approx(0.5 * np.cos(w * x), abs=1e-15)
    assert float(shax.jit(fixed_point)(w, x0)) == x
    expected = -0.5 * np.sin(w * x) * x / (1 + 0.5 * w * np.sin(w * x))
    dw, dx0 = shax.grad(fixed_point)(w, x0)
    assert float(dw) == pytest.approx(expected, rel=1e-12)
    assert abs(float(dx0)) < 1e-30  # a contraction forgets where it started
    assert float(shax.jvp(fixed_point, (w, x0), (1.0, 0.0))[1]) == pytest.approx(expected, rel=1e-12)
    ws = np.array([0.5, 0.9, 1.3])
    grads = shax.vmap(shax.grad(fixed_point), in_axes=(0, None))(ws, x0)[0]
    np.testing.assert_allclose(grads, [shax.grad(fixed_point)(v, x0)[0] for v in ws], rtol=1e-12)


def test_fori_loop_index_and_short_loops() -> None:
    def f(x: Any) -> Any:
        return shax.fori_loop(2, 5, lambda i, acc: acc + i.astype(np.float64) * x, np.float64(0.0))

    assert f(np.float64(2.0)) == 18.0
    assert float(shax.jit(f)(np.float64(2.0))) == 18.0
    assert float(shax.grad(f)(np.float64(2.0))) == 9.0
    assert float(shax.jit(lambda x: shax.fori_loop(3, 1, lambda i, v: v * 2.0, x))(np.float64(1.5))) == 1.5


def test_grad_of_a_long_fori_loop_is_a_small_program() -> None:
    defn = shax.xpr(shax.grad(lambda w, x0: fixed_point(w, x0, 10_000)), np.float64(0.9), np.float64(0.2))
    assert len(defn.bindings) < 30
    assert {p.length for p in loops_of(defn)} == {10_000}
    grads = shax.jit(shax.grad(lambda w, x0: fixed_point(w, x0, 10_000)))(np.float64(0.9), np.float64(0.2))
    assert float(grads[0]) == pytest.approx(float(shax.grad(fixed_point)(np.float64(0.9), np.float64(0.2))[0]))


# Newton's iteration for √a: x ← (x + a/x)/2 until |x² − a| is small; d√a/da = 1/(2√a).
def newton_sqrt(a: Any) -> Any:
    def cond(c: Any) -> Any:
        x, k = c
        return (snp.abs(x * x - a) > 1e-12 * a) & (k < 100)

    def body(c: Any) -> Any:
        x, k = c
        return 0.5 * (x + a / x), k + 1

    return shax.while_loop(cond, body, (a, 0))[0]


def test_while_loop_newton() -> None:
    a = np.float64(7.0)
    assert newton_sqrt(a) == pytest.approx(np.sqrt(7.0), rel=1e-15)
    assert float(shax.jit(newton_sqrt)(a)) == newton_sqrt(a)
    value, tangent = shax.jvp(newton_sqrt, (a,), (np.float64(1.0),))
    assert float(value) == pytest.approx(np.sqrt(7.0), rel=1e-15)
    assert float(tangent) == pytest.approx(0.5 / np.sqrt(7.0), rel=1e-9)
    check_directional_derivative(newton_sqrt, (a,), (np.float64(1.0),), [tangent], what="jvp of Newton")
    defn = shax.xpr(newton_sqrt, a)
    assert [type(p) for p in loops_of(defn)] == [While]


def test_while_loop_batched_predicate() -> None:
    a = np.array([2.0, 9.0, 1e6, 0.25])
    # members done keep their carry: each gets exactly its own loop's result
    np.testing.assert_array_equal(shax.vmap(newton_sqrt)(a), [newton_sqrt(v) for v in a])
    np.testing.assert_allclose(shax.vmap(newton_sqrt)(a), np.sqrt(a), rtol=1e-13)
    tangents = shax.vmap(lambda v: shax.jvp(newton_sqrt, (v,), (np.float64(1.0),))[1])(a)
    np.testing.assert_allclose(tangents, 0.5 / np.sqrt(a), rtol=1e-9)


def test_while_loop_reverse_mode_is_an_error() -> None:
    with pytest.raises(shax.ShaxError, match="use scan or fori_loop"):
        shax.grad(newton_sqrt)(np.float64(2.0))


def test_fori_loop_with_traced_bounds_is_a_while_loop() -> None:
    def f(x: Any, n: Any) -> Any:
        return shax.fori_loop(0, n, lambda i, v: v * x, np.float64(1.0))

    defn = shax.xpr(f, np.float64(1.5), np.int32(3))
    assert [type(p) for p in loops_of(defn)] == [While]
    assert float(shax.jit(f)(np.float64(1.5), np.int32(3))) == 1.5**3
    assert float(shax.jvp(lambda x: f(x, np.int32(3)), (np.float64(1.5),), (np.float64(1.0),))[1]) == 3 * 1.5**2


def test_carry_type_mismatch_names_the_leaf_and_line() -> None:
    def step(c: Any, x: Any) -> Any:
        return {"h": c["h"], "n": c["n"].astype(np.float32)}, x

    init = {"h": np.zeros(2), "n": np.float64(0.0)}
    for run in (
        lambda: shax.scan(step, init, np.ones(3)),
        lambda: shax.jit(lambda i: shax.scan(step, i, np.ones(3)))(init),
    ):
        with pytest.raises(
            shax.ShaxTypeError, match=r"init\['n'\] is f32\[\], but it entered as f64\[\].*test_loops.py:\d+"
        ):
            run()


def test_while_loop_errors() -> None:
    with pytest.raises(shax.ShaxTypeError, match="bool scalar"):
        shax.while_loop(lambda x: x, lambda x: x, np.float64(1.0))
    with pytest.raises(shax.ShaxTypeError, match="bool scalar"):
        shax.jit(lambda v: shax.while_loop(lambda x: x, lambda x: x, v))(np.float64(1.0))
    with pytest.raises(shax.ShaxValueError, match="length"):
        shax.scan(lambda c, x: (c, x), np.float64(1.0), None)


def test_printing_shows_each_body_once_before_its_user() -> None:
    defn = shax.xpr(lambda w, u, xs, h0: rnn(w, u, xs, h0), W, U, XS, H0)
    text = str(defn)
    assert text.count("def step(") == 1 and text.index("def step(") < text.index("scan step")
    assert "= scan step length=6 consts=2 carry=1 x" in text
    grad_text = str(shax.xpr(shax.grad(lambda w: rnn(w, U, XS, H0)), W))
    assert "reverse linear=" in grad_text


def test_generated_code_runs_python_loops() -> None:
    scan_source = compile_definition(shax.xpr(shax.grad(fixed_point), np.float64(0.9), np.float64(0.2))).source
    assert "for s" in scan_source and "range(199, -1, -1)" in scan_source
    while_source = compile_definition(shax.xpr(newton_sqrt, np.float64(2.0))).source
    assert "while c" in while_source


def test_explain_shows_linearized_and_transposed_bodies() -> None:
    text = str(shax.explain(lambda x: fixed_point(x, x, 5), "f64[]"))
    assert "scan iterate" in text and "reverse linear=" in text
    assert "def diterate(" in text and "def diteratet(" in text  # the linear body, and its transpose


def test_passes_drop_unread_loops_and_merge_identical_ones() -> None:
    def f(x: Any) -> Any:
        shax.fori_loop(0, 3, lambda i, v: v * 2.0, x)  # unread
        return fixed_point(x, x, 7)

    defn = shax.xpr(f, np.float64(0.5))
    assert len(loops_of(defn)) == 1
    grad = shax.xpr(shax.grad(f), np.float64(0.5))
    # the forward scan's outputs (activations), all of one binding
    forward = [b for b in grad.bindings if isinstance(b.prim, (Scan, While)) and not b.prim.linear]
    assert len(forward) == 1 and len(forward[0].vars) > 1


def test_dce_prunes_unread_ys_from_the_body() -> None:
    def f(w: Any, xs: Any) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = snp.tanh(h * w + x)
            return h, (h * 2.0, snp.sin(h))

        h, (doubled, _) = shax.scan(step, np.float64(0.1), xs)
        return h + doubled.sum()

    xs = np.linspace(-1.0, 1.0, 4)
    defn = shax.xpr(f, np.float64(0.5), xs)
    (scan,) = {p.body for p in loops_of(defn)}
    assert len(scan.outputs) == 2 and not any(b.prim.name == "sin" for b in scan.bindings)
    assert float(shax.jit(f)(np.float64(0.5), xs)) == f(np.float64(0.5), xs)


def test_loop_invariant_activations_are_computed_once_not_stacked() -> None:
    grad = shax.xpr(shax.grad(lambda w: fixed_point(w, np.float64(0.2), 1000)), np.float64(0.9))
    (forward,) = [b for b in grad.bindings if isinstance(b.prim, Scan) and not b.prim.linear]
    # w, read by every step's derivative, is a fixed const of the backward scan, neither
    # stacked nor broadcast along the loop (XLA would write out the broadcast)
    assert "reverse linear=2 fixed=1 x0 " in str(grad) and "broadcast" not in str(grad)
    assert len(forward.vars) - forward.prim.carry == 2  # stacked: x and −sin(w x), what varies


def test_second_order_derivatives_of_a_scan() -> None:
    def f(w: Any) -> Any:
        return rnn(w, U, XS, H0)

    tangent = RNG.normal(size=W.shape)
    _, hvp = shax.jvp(shax.grad(f), (W,), (tangent,))
    check_directional_derivative(shax.grad(f), (W,), (tangent,), [hvp], what="jvp of grad of the RNN")
    x = np.float64(0.4)
    second = shax.grad(shax.grad(lambda w: fixed_point(w, x, 50)))(np.float64(0.9))
    first = shax.grad(lambda w: fixed_point(w, x, 50))
    check_directional_derivative(first, (np.float64(0.9),), (np.float64(1.0),), [second], what="grad of grad")


def test_against_jax_when_installed() -> None:
    """The RNN (both directions), its gradient and the fori_loop's gradient, as JAX's (float64)."""
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        _compare_with_jax(jax)
    finally:
        jax.config.update("jax_enable_x64", before)


def _compare_with_jax(jax: Any) -> None:
    jnp, lax = jax.numpy, jax.lax

    def jax_rnn(w: Any, u: Any, xs: Any, h0: Any, reverse: bool) -> Any:
        def step(h: Any, x: Any) -> Any:
            h = jnp.tanh(h @ w + x @ u)
            return h, (h * h).sum()

        h, ys = lax.scan(step, h0, xs, reverse=reverse)
        return h.sum() + ys.sum()

    for reverse in (False, True):
        expected = jax.grad(jax_rnn, argnums=(0, 1, 2, 3))(W, U, XS, H0, reverse)
        got = shax.grad(lambda w, u, xs, h0, r=reverse: rnn(w, u, xs, h0, r))(W, U, XS, H0)
        for a, b in zip(got, expected):
            np.testing.assert_allclose(a, np.asarray(b), rtol=1e-12, atol=1e-14)
    jax_fixed = jax.grad(lambda w: lax.fori_loop(0, 200, lambda i, x: 0.5 * jnp.cos(w * x), 0.2))(0.9)
    assert float(shax.grad(fixed_point)(np.float64(0.9), np.float64(0.2))[0]) == pytest.approx(float(jax_fixed))
