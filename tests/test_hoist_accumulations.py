"""The pass `hoist_accumulations`: a scan carry that only adds up a product of per-step
values (`acc = acc + dot_general(a, b)`) becomes one product of the stacks after the
loop. It keeps the meaning, takes the gradients of B6's RNN and fixed-point iteration,
and `jit(backend="xla")` runs it."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given

import shax
import shax.numpy as snp
from shax import f64
from shax.core.ir import Definition
from shax.passes import cleanup, hoist_accumulations
from shax.stages import infer_types, linearize, transpose, zip_definitions
from shax.testing.strategies import Program, programs
from typeclasses import dot_general

RNG = np.random.default_rng(0)
W, U = RNG.standard_normal((4, 4)) * 0.4, RNG.standard_normal((3, 4)) * 0.4
H0, XS = RNG.standard_normal(4), RNG.standard_normal((6, 3))


def rnn_loss(w: Any, u: Any, h0: Any, xs: Any) -> Any:
    def step(h: Any, x: Any) -> tuple[Any, Any]:
        h = snp.tanh(h @ w + x @ u)
        return h, h

    return snp.sum(shax.scan(step, h0, xs)[1] ** 2)


def fixed_point_loss(a: Any, b: Any, z0: Any) -> Any:
    return snp.sum(shax.fori_loop(0, 5, lambda i, z: snp.tanh(z @ a + b), z0) ** 2)


def scans(defn: Definition) -> list[Any]:
    return [b.prim for b in defn.bindings if b.prim.name == "scan"]


def names(defn: Definition) -> list[str]:
    return [b.prim.name for b in defn.bindings]


def assert_same_values(a: Definition, b: Definition, *args: Any) -> None:
    for got, want in zip(shax.evaluate(b, *args), shax.evaluate(a, *args), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_the_rnn_gradient_sums_its_outer_products_after_the_loop() -> None:
    # gW = Σ_t outer(h_{t-1}, dp_t), gU = Σ_t outer(x_t, dp_t): two products over the steps,
    # x_t read from the xs themselves; the backward loop carries only dh.
    grad = shax.xpr(shax.grad(rnn_loss, argnums=(0, 1)), W, U, H0, XS)
    out = cleanup(hoist_accumulations(grad))
    backward = scans(out)[1]
    assert (scans(grad)[1].carry, backward.carry) == (3, 1)
    assert names(out)[-2:] == ["dot_general", "dot_general"]
    assert all(b.prim.lhs_contracting == (0,) for b in out.bindings[-2:])
    assert_same_values(grad, out, W, U, H0, XS)


def test_the_fixed_point_gradient_sums_its_outer_products_after_the_loop() -> None:
    # gA = Σ_i outer(z_{i-1}, dp_i), the dps stacked; gb = Σ_i dp_i stays a carry (a plain sum).
    a, b, z0 = W * 0.5, RNG.standard_normal(4), RNG.standard_normal(4)
    grad = shax.xpr(shax.grad(fixed_point_loss, argnums=(0, 1)), a, b, z0)
    out = cleanup(hoist_accumulations(grad))
    assert (scans(grad)[1].carry, scans(out)[1].carry) == (3, 2)
    assert names(out)[-1] == "dot_general"
    assert_same_values(grad, out, a, b, z0)


def test_per_example_gradients_sum_a_batched_product_after_the_loop() -> None:
    # vmap(grad): gW per example is Σ_t of a batched outer product; the stacks' step axis is
    # contracted, their example axis (1 after it) stays the batch axis.
    grad = shax.vmap(shax.grad(rnn_loss, argnums=(0, 1)), in_axes=(None, None, 0, None))
    h0s = np.stack([H0, H0 * 0.5, -H0])
    defn = shax.xpr(grad, W, U, h0s, XS)
    out = cleanup(hoist_accumulations(defn))
    (product,) = (b.prim for b in out.bindings[-3:] if b.prim.name == "dot_general")
    assert product.dims == ((0,), (0,), (1,), (1,))
    assert scans(out)[1].carry < scans(defn)[1].carry
    assert_same_values(defn, out, W, U, h0s, XS)


VECTOR_SUMS = ("matrix-vector", "stacked", "not stacked")


def accumulating(form: str, reverse: bool) -> Any:
    """A scan carrying h and a sum acc updated as `form` says; its ys are the a's."""

    def f(c: Any, k: Any, xs: Any) -> Any:
        def step(carry: tuple[Any, Any], x: Any) -> tuple[tuple[Any, Any], Any]:
            h, acc = carry
            a = snp.tanh(h * x)
            update = {
                "outer": lambda: acc + dot_general(a, x, ((), (), (), ())),
                "outer swapped": lambda: dot_general(x, a, ((), (), (), ())) + acc,
                "matrix-vector": lambda: acc + dot_general(snp.outer(x, a), x, ((1,), (0,), (), ())),
                "const factor": lambda: acc + dot_general(k, a, ((), (), (), ())),
                "stacked": lambda: a + acc,
                "not stacked": lambda: acc + snp.sin(a),
                "read twice": lambda: acc + dot_general(a, x, ((), (), (), ())) + acc,
            }[form]()
            return (snp.tanh(h + x), update), a

        init = snp.zeros(3) if form in VECTOR_SUMS else snp.zeros((3, 3))
        return shax.scan(step, (c, init + 1.0), xs, reverse=reverse)

    return f


HOISTED = ("outer", "outer swapped")


@pytest.mark.parametrize(
    "form", ["outer", "outer swapped", "matrix-vector", "const factor", "stacked", "not stacked", "read twice"]
)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("length", [0, 1, 4])
def test_only_sums_of_products_of_per_step_values_are_hoisted(form: str, reverse: bool, length: int) -> None:
    # A matrix-vector product's factors are larger than it; a const factor is no stack;
    # a sum read twice stays a carry, and so does a plain sum, of a value stacked or not.
    c, k, xs = RNG.standard_normal(3), RNG.standard_normal(3), RNG.standard_normal((length, 3))
    defn = shax.xpr(accumulating(form, reverse), c, k, xs)
    out = hoist_accumulations(defn)
    assert scans(out)[0].carry == (1 if form in HOISTED else 2)
    if form in HOISTED:
        assert names(out)[-2:] == ["dot_general", "add"]
    assert_same_values(defn, out, c, k, xs)


@given(program=programs(dtype=f64, smooth=True, max_outputs=1))
def test_hoisting_keeps_the_meaning_of_generated_vjps(program: Program) -> None:
    # A VJP's backward loops add up the cotangents of what they close over in their carry.
    typed = infer_types(shax.trace(program.fn, *program.arg_types))
    vjp = cleanup(zip_definitions(transpose(linearize(typed))))
    (out_type,) = typed.output_types()
    ct = np.linspace(-1.0, 1.0, out_type.size).reshape(out_type.shape)
    for got, want in zip(
        shax.evaluate(hoist_accumulations(vjp), *program.args, ct), shax.evaluate(vjp, *program.args, ct)
    ):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)


def test_jit_on_xla_runs_the_hoisted_gradient() -> None:
    pytest.importorskip("jax")
    grad = shax.grad(rnn_loss, argnums=(0, 1))
    source = shax.jit(grad, backend="xla").source(W, U, H0, XS)
    assert source.count("stablehlo.while") == 2
    for got, want in zip(shax.jit(grad, backend="xla")(W, U, H0, XS), grad(W, U, H0, XS), strict=True):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)
