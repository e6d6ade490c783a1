"""shax.checkpoint (remat), its policies, checkpoint_name and saved_residuals: a
checkpointed function's derivative saves what its policy saves and recomputes the rest
in the backward pass, with the plain gradient's numbers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import typeguard

import shax
from shax import checkpoint_policies as cp
from shax import f64
from shax.stages import check_linear, infer_types, jvp, linearize, unzip
from typeclasses import dot, reduce_sum, sin, tanh

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
WS = [RNG.standard_normal((3, 3)) * 0.5 for _ in range(3)]


def layer(h: Any, w: Any) -> Any:
    return tanh(shax.checkpoint_name(dot(h, w), "pre"))


def mlp(wrap: Any) -> Any:
    step = wrap(layer)

    def loss(ws: Any) -> Any:
        h = X
        for w in ws:
            h = step(h, w)
        return reduce_sum(h * h, [0, 1])

    return loss


def saves_tanh(prim: Any, *types: Any) -> bool:
    return isinstance(prim, shax.primitives.Tanh)


POLICIES = [
    None,
    cp.nothing_saveable,
    cp.everything_saveable,
    cp.dots_saveable,
    cp.dots_with_no_batch_dims_saveable,
    cp.save_only_these_names("pre"),
    saves_tanh,
]
PLAIN = shax.grad(mlp(lambda f: f))(WS)


@pytest.mark.parametrize("policy", POLICIES)
def test_every_policy_gives_the_plain_gradient(policy: Any) -> None:
    got = shax.grad(mlp(lambda f: shax.checkpoint(f, policy=policy)))(WS)
    for g, want in zip(got, PLAIN):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)


def layer_lin(policy: Any) -> shax.LinearizedDefinition:
    lin = unzip(jvp(infer_types(shax.trace(layer, f64[4, 3], f64[3, 3]))), policy)
    check_linear(lin)
    return lin


def saved_primitives(lin: shax.LinearizedDefinition) -> list[str]:
    """The primitive computing each residual in the primal program."""
    bound = {b.var.id: b.prim.name for b in lin.primal.bindings}
    return [bound[v.id] for v in lin.primal.outputs[len(lin.primal.outputs) - lin.num_residuals :]]


def test_what_each_policy_saves() -> None:
    everything = layer_lin(None)
    assert str(everything) == str(linearize(infer_types(shax.trace(layer, f64[4, 3], f64[3, 3]))))
    assert str(layer_lin(cp.everything_saveable)) == str(everything)
    assert saved_primitives(everything) == ["arg", "arg", "sub"]  # the dot's factors, then 1 - tanh²
    nothing = layer_lin(cp.nothing_saveable)
    assert saved_primitives(nothing) == ["arg", "arg"]
    assert [b.prim.name for b in nothing.linear.bindings if b.origin and b.origin.startswith("recomputed")] == [
        "dot_general",
        "checkpoint_name",
        "tanh",
        "mul",
        "sub",
    ]
    assert saved_primitives(layer_lin(cp.dots_saveable)) == ["arg", "arg", "dot_general"]
    assert saved_primitives(layer_lin(cp.dots_with_no_batch_dims_saveable)) == ["arg", "arg", "dot_general"]
    assert saved_primitives(layer_lin(cp.save_only_these_names("pre"))) == ["arg", "arg", "checkpoint_name"]
    assert saved_primitives(layer_lin(saves_tanh)) == ["arg", "arg", "tanh"]


def test_saved_residuals_name_type_bytes_line_and_rule() -> None:
    plain = shax.saved_residuals(mlp(lambda f: f), WS)
    kept = shax.saved_residuals(mlp(shax.checkpoint), WS)
    assert sum(r.bytes for r in kept) < sum(r.bytes for r in plain)
    assert [(str(r.type), r.bytes, r.rule) for r in kept[:2]] == [
        ("f64[4, 3]", 96, "linearize rule of call"),
        ("f64[3, 3]", 72, "linearize rule of call"),
    ]
    assert {r.rule for r in plain} >= {"linearize rule of tanh", "linearize rule of dot_general"}
    assert all(r.source is None or "test_checkpoint.py" in r.source for r in plain)
    assert str(plain[0]).startswith("f64[4, 3]  96 bytes  ")


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_under_jit(backend: str) -> None:
    if backend == "xla":
        pytest.importorskip("jax")
    f = shax.checkpoint(layer)
    got = shax.jit(shax.grad(lambda w: reduce_sum(f(X, w), [0, 1])), backend=backend)(WS[0])
    want = shax.grad(lambda w: reduce_sum(layer(X, w), [0, 1]))(WS[0])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_under_vmap() -> None:
    def f(x: Any, w: Any) -> Any:
        return reduce_sum(shax.checkpoint(layer)(x, w), [0, 1])

    xs = RNG.standard_normal((2, 4, 3))
    per_example = shax.vmap(shax.grad(f, argnums=1), in_axes=(0, None))(xs, WS[0])
    looped = [shax.grad(f, argnums=1)(x, WS[0]) for x in xs]
    np.testing.assert_allclose(per_example, looped, rtol=1e-12)
    batched = shax.grad(lambda w: reduce_sum(shax.vmap(shax.checkpoint(layer), in_axes=(0, None))(xs, w), [0, 1, 2]))
    np.testing.assert_allclose(batched(WS[0]), sum(looped), rtol=1e-12)


def test_higher_derivatives() -> None:
    f = shax.checkpoint(lambda x: sin(x) * x)
    second = shax.grad(shax.grad(f))
    x = np.float64(0.7)
    assert second(x) == pytest.approx(2 * np.cos(x) - x * np.sin(x), rel=1e-12)


def test_static_argnums() -> None:
    f = shax.remat(lambda x, n: x**n, static_argnums=1)
    assert shax.grad(lambda x: f(x, 3.0))(2.0) == pytest.approx(12.0)
    assert shax.grad(lambda x: f(x, 2.0))(2.0) == pytest.approx(4.0)


def test_on_values_it_runs_the_function() -> None:
    np.testing.assert_array_equal(shax.checkpoint(layer)(X, WS[0]), np.tanh(X @ WS[0]))


@typeguard.suppress_type_checks  # wrong types on purpose: shax's own checks answer
def test_bad_policies_are_named_errors() -> None:
    with pytest.raises(shax.ShaxTypeError, match="checkpoint: policy must be a function"):
        shax.checkpoint(layer, policy="dots")  # type: ignore[arg-type]
    with pytest.raises(shax.ShaxTypeError, match="save_only_these_names: names must be strings"):
        cp.save_only_these_names(3)  # type: ignore[arg-type]


def test_unzip_wants_primals_then_tangents() -> None:
    defn = infer_types(shax.trace(lambda x, y, z: x * y * z, f64[2], f64[2], f64[2]))
    with pytest.raises(shax.ShaxValueError, match="unzip: .* takes 3 argument"):
        unzip(defn)


def test_inside_a_scan_body_and_a_cond_branch() -> None:
    w, xs, x = WS[0], RNG.standard_normal((3, 4, 3)), X

    def scanned(step: Any) -> Any:
        def loss(w: Any) -> Any:
            def body(h: Any, x: Any) -> Any:
                h = step(h + x, w)
                return h, reduce_sum(h, [0, 1])

            return reduce_sum(shax.scan(body, np.zeros((4, 3)), xs)[1], [0])

        return loss

    def branched(step: Any) -> Any:
        return lambda w: reduce_sum(shax.cond(True, lambda x: step(x, w), lambda x: x * 2.0, x), [0, 1])

    for make in (scanned, branched):
        got, want = shax.grad(make(shax.checkpoint(layer)))(w), shax.grad(make(layer))(w)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
