"""shax.jit: compiled programs equal evaluation, compose with the other transforms, show
their source, and are traced once per argument structure; the plain transforms run their
compiled form once called again."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from reverse_mode import CT, DFT_CT, X, assert_f32_close, medium

import shax
from shax import f32
from shax.testing.strategies import Program, programs
from typeclasses import cos, dot, reduce_sum, sin, tanh


def f(x: Any, y: Any) -> Any:
    z = x + y
    return sin(z) * cos(z)


def same(got: Any, expected: Any) -> None:
    """Equal bit for bit, with the same dtype (compiled code makes evaluate's numpy calls)."""
    got, expected = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_array_equal(g, e)


def evaluated(program: Program) -> Any:
    defn = shax.stages.infer_types(shax.trace(program.fn, *program.arg_types))
    results = shax.evaluate(defn, *program.args)
    return tuple(results) if len(results) > 1 else results[0]


@given(programs())
def test_jit_equals_evaluate(program: Program) -> None:
    same(shax.jit(program.fn)(*program.args), evaluated(program))


@given(programs(dtype=shax.f32))
def test_jit_equals_evaluate_in_f32(program: Program) -> None:
    same(shax.jit(program.fn)(*program.args), evaluated(program))


def test_jit_of_grad_vmap_and_back() -> None:
    g = shax.jit(shax.grad(f))
    same(g(0.5, -0.75), shax.grad(f)(0.5, -0.75))
    same(shax.grad(shax.jit(f))(0.5, -0.75), shax.grad(f)(0.5, -0.75))
    xs, ys = np.linspace(0, 1, 5, dtype=np.float32), np.zeros(5, np.float32)
    batched = shax.jit(shax.vmap(shax.grad(f)))(xs, ys)
    same(batched, shax.vmap(shax.grad(f))(xs, ys))
    same(shax.jit(shax.vmap(sin))(xs), np.sin(xs))


def test_jit_of_the_original_vjp() -> None:
    def vjp_of_medium(x: Any, y: Any, ct: Any) -> Any:
        return shax.vjp(medium, x, y)[1](ct)

    assert_f32_close(shax.jit(vjp_of_medium)(*X, CT[0]), DFT_CT)


def test_jit_of_a_vjp_computes_no_negation_a_sum_can_absorb() -> None:
    # The transpose of max - min hands min's operands -ct; compiled, the products carry
    # the sign into the sums (passes.fold_negations), and the values are the same.
    def vjp_of_medium(x: Any, y: Any, ct: Any) -> Any:
        return shax.vjp(medium, x, y)[1](ct)

    fast = shax.jit(vjp_of_medium)
    assert "negative" not in fast.source(*X, CT[0])
    same(fast(*X, CT[0]), tuple(shax.vjp(medium, *X)[1](CT[0])))


def test_jit_with_pytrees() -> None:
    def loss(params: Any, x: Any) -> Any:
        return reduce_sum(tanh(dot(x, params["w"]) + params["b"]), axes=[0, 1])

    params = {"w": np.ones((3, 2)), "b": np.zeros(2)}
    x = np.arange(12.0).reshape(4, 3) / 10
    same(shax.jit(shax.grad(loss, wrt=0))(params, x)["w"], shax.grad(loss, wrt=0)(params, x)["w"])


def test_source_shows_the_generated_code() -> None:
    source = shax.jit(shax.grad(f)).source(f32[()], f32[()])
    assert source.startswith("def grad_f(")
    assert "np." in source or "libm." in source
    assert "return [" in source


def test_jit_traces_once_per_argument_structure() -> None:
    calls = []

    def h(x: Any) -> Any:
        calls.append(1)
        return x * 2.0

    fast = shax.jit(h)
    for k in range(3):
        fast(np.ones(3) * k)
    fast.source(np.ones(3))
    assert len(calls) == 1


def test_grad_runs_its_compiled_program_from_the_second_call() -> None:
    def fresh(x: Any, y: Any) -> Any:
        return f(x, y)

    g = shax.grad(fresh)
    first = g(0.5, -0.75)
    built = next(iter(shax.transforms.cache.cache._entries[fresh].values()))[0]
    assert built.program._compiled is None
    same(g(0.5, -0.75), first)
    assert built.program._compiled is not None


def test_bad_arguments_to_a_jitted_function() -> None:
    fast = shax.jit(lambda x: x * 2.0)
    fast(np.ones(3, np.float32))
    with pytest.raises(shax.ShaxTypeError):
        fast("three")
