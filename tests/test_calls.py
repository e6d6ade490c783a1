"""Calls (`@shax.subgraph`, `shax.call`): a call stays one call of one definition through
every transform, and computes what the same function without calls computes; passes
forward, prune and merge calls; bad calls are ShaxErrors at the user's line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
from shax import control as C
from shax import f64
from shax import primitives as P
from shax.core.ir import Definition
from shax.passes import cse, dce, forward_identities
from shax.stages import infer_types
from typeclasses import reduce_sum, sin, tanh

HERE = Path(__file__).name
RNG = np.random.default_rng(14)
X = RNG.standard_normal((2, 3))
W = RNG.standard_normal((3, 3))
B = RNG.standard_normal(3)


def layer(x: Any, w: Any, b: Any) -> Any:
    return tanh(x @ w + b), sin(x)


called_layer = shax.subgraph(layer)


def inlined(x: Any, w: Any, b: Any) -> Any:
    h, s = layer(x, w, b)
    h2, _ = layer(h * s, w, b)
    return reduce_sum(h2 * h, [0, 1])


def with_calls(x: Any, w: Any, b: Any) -> Any:
    h, s = called_layer(x, w, b)
    h2, _ = called_layer(h * s, w, b)
    return reduce_sum(h2 * h, [0, 1])


def calls_in(defn: Definition) -> list[C.Call]:
    return [b.prim for b in defn.bindings if isinstance(b.prim, C.Call)]


def assert_same_tree(got: Any, expected: Any) -> None:
    flat_got, flat_expected = shax.core.pytree.flatten(got)[0], shax.core.pytree.flatten(expected)[0]
    assert len(flat_got) == len(flat_expected)
    for g, e in zip(flat_got, flat_expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


# A subgraph called twice -----------------------------------------------------------------


def test_a_subgraph_called_twice_is_two_calls_of_one_definition() -> None:
    dense = shax.subgraph(lambda x, w, b: tanh(x @ w + b))
    defn = shax.xpr(lambda x, w, b: dense(dense(x, w, b), w, b), X, W, B)
    first, second = (b for b in defn.bindings if isinstance(b.prim, C.Call))
    assert first.prim.defn is second.prim.defn and first.prim == second.prim
    assert second.args[0] == first.var
    assert not any(isinstance(b.prim, P.Tanh) for b in defn.bindings), "inlined"
    assert str(defn).count("def ") == 2, "the callee is shown once"


# Transforms through calls equal the same function without calls ------------------------------

TRANSFORMS: dict[str, Callable[[Callable[..., Any]], Any]] = {
    "call": lambda f: f(X, W, B),
    "grad": lambda f: shax.grad(f)(X, W, B),
    "value_and_grad": lambda f: shax.value_and_grad(f, wrt=(0, 2))(X, W, B),
    "jvp": lambda f: shax.jvp(f, (X, W, B), (B * X, W.T, B)),
    "vjp": lambda f: shax.vjp(f, X, W, B)[1](np.float64(1.5)),
    "vmap": lambda f: shax.vmap(f, in_axes=(0, None, 0))(np.stack([X, 2 * X]), W, np.stack([B, -B])),
    "jit": lambda f: shax.jit(f)(X, W, B),
    "xpr": lambda f: shax.evaluate(shax.xpr(f, X, W, B), X, W, B),
    "grad_of_grad": lambda f: shax.grad(lambda x: reduce_sum(shax.grad(f, wrt=0)(x, W, B), [0, 1]))(X),
    "vmap_of_grad": lambda f: shax.vmap(shax.grad(f), in_axes=(0, None, None))(np.stack([X, X * X, -X]), W, B),
    "jit_of_grad": lambda f: shax.jit(shax.grad(f, wrt=1))(X, W, B),
}


@pytest.mark.parametrize("transform", list(TRANSFORMS.values()), ids=list(TRANSFORMS))
def test_transforms_through_calls_equal_the_function_without_them(transform: Callable[..., Any]) -> None:
    assert_same_tree(transform(with_calls), transform(inlined))


def test_the_gradient_program_calls_the_derivatives_once_built() -> None:
    defn = shax.xpr(shax.grad(with_calls), X, W, B)
    calls = calls_in(defn)
    assert calls and not any(isinstance(b.prim, P.Tanh) for b in defn.bindings)
    # Forward calls of the layer's forward definition, transposed calls of its linear one.
    assert {c.linear > 0 for c in calls} == {False, True}


def test_grad_of_grad_through_a_call() -> None:
    cube = shax.subgraph(lambda x: x * x * x)
    np.testing.assert_allclose(shax.grad(shax.grad(lambda x: cube(x)))(np.float64(1.5)), 6 * 1.5)
    third = shax.grad(shax.grad(shax.grad(lambda x: cube(sin(x)))))(np.float64(0.5))
    # d³/dx³ sin³ x = 6 cos³ x − 21 sin² x cos x
    np.testing.assert_allclose(third, 6 * np.cos(0.5) ** 3 - 21 * np.sin(0.5) ** 2 * np.cos(0.5), rtol=1e-12)


def test_vmap_of_grad_is_per_example_gradients_through_a_call() -> None:
    xs = RNG.standard_normal((4, 2, 3))
    per_example = shax.vmap(shax.grad(with_calls, wrt=1), in_axes=(0, None, None))(xs, W, B)
    loop = np.stack([shax.grad(inlined, wrt=1)(x, W, B) for x in xs])
    np.testing.assert_allclose(per_example, loop, rtol=1e-12, atol=1e-12)


# Passes on calls ----------------------------------------------------------------------------


def test_a_call_returning_its_argument_unchanged_is_forwarded() -> None:
    passing = shax.subgraph(lambda x, y: (sin(x), y))

    def f(x: Any, y: Any) -> Any:
        s, same = passing(x, y)
        return s * same

    defn = forward_identities(infer_types(shax.trace(f, f64[3], f64[3])))
    (call,) = calls_in(dce(defn))
    assert call.num_results == 1, "the output passing y on is y: the callee is pruned of it"
    xpr = shax.xpr(f, X[0], B)
    product = next(b for b in xpr.bindings if isinstance(b.prim, P.Mul))
    y = next(b.var for b in xpr.bindings if b.prim == P.Arg(1))
    assert y.id in [a.id for a in product.args], "the product reads y itself"
    np.testing.assert_allclose(shax.jit(f)(X[0], B), np.sin(X[0]) * B)


def test_dce_prunes_the_outputs_no_caller_reads() -> None:
    def f(x: Any, w: Any, b: Any) -> Any:
        return called_layer(x, w, b)[1]  # sin x only: the callee's tanh goes

    defn = infer_types(shax.trace(f, f64[2, 3], f64[3, 3], f64[3]))
    (before,) = calls_in(defn)
    (after,) = calls_in(dce(defn))
    assert (before.num_results, after.num_results) == (2, 1)
    assert not any(isinstance(b.prim, (P.Tanh, P.DotGeneral)) for b in after.defn.bindings)
    assert dce(defn) == dce(dce(defn)) and calls_in(dce(dce(defn)))[0].defn is after.defn  # built once
    np.testing.assert_allclose(shax.evaluate(dce(defn), X, W, B)[0], np.sin(X))


def test_cse_merges_identical_calls() -> None:
    def f(x: Any, w: Any, b: Any) -> Any:
        first = shax.call(typed, x, w, b)[0]
        again = shax.call(typed, x, w, b)[0]
        return first + again

    typed = infer_types(shax.trace(layer, f64[2, 3], f64[3, 3], f64[3]))
    traced = infer_types(shax.trace(f, f64[2, 3], f64[3, 3], f64[3]))
    assert len(calls_in(traced)) == 1, "hash-consed while tracing"
    # Built by hand without hash-consing: two bindings of one call, which cse makes one.
    bindings = list(traced.bindings)
    k = next(i for i, b in enumerate(bindings) if isinstance(b.prim, C.Call))
    fresh = 1 + max(v.id for b in bindings for v in b.vars)
    again = tuple(shax.Var(fresh + j, v.type) for j, v in enumerate(bindings[k].vars))
    twice = shax.Binding(again, bindings[k].prim, bindings[k].args)
    add = next(b for b in bindings if isinstance(b.prim, P.Add))
    bindings.insert(k + 1, twice)
    bindings[bindings.index(add)] = shax.Binding(add.var, add.prim, (bindings[k].vars[0], twice.vars[0]))
    unmerged = infer_types(Definition(traced.name, traced.arg_types, tuple(bindings), traced.outputs))
    assert len(calls_in(unmerged)) == 2
    assert len(calls_in(cse(unmerged))) == 1
    np.testing.assert_allclose(shax.evaluate(cse(unmerged), X, W, B)[0], 2 * np.tanh(X @ W + B))


# shax.call's arguments ----------------------------------------------------------------------

TYPED = infer_types(shax.trace(layer, f64[2, 3], f64[3, 3], f64[3]))
ARGS = [b.var for b in TYPED.bindings if isinstance(b.prim, P.Arg)]  # x, w, b in order of arguments


def test_call_takes_inputs_dict_by_var_and_by_position() -> None:
    expected = shax.call(TYPED, X, W, B)
    np.testing.assert_allclose(expected[0], np.tanh(X @ W + B))
    by_var = shax.call(TYPED, X, inputs_dict={ARGS[2]: B, ARGS[1]: W})
    by_position = shax.call(TYPED, inputs_dict={0: X, 1: W, 2: B})
    for got in (by_var, by_position):
        assert_same_tree(got, expected)
    traced = shax.xpr(lambda x, w: shax.call(TYPED, x, inputs_dict={2: B, ARGS[1]: w})[0], X, W)
    assert len(calls_in(traced)) == 1
    np.testing.assert_allclose(shax.evaluate(traced, X, W)[0], expected[0])


def test_call_with_info_maps_the_callee_vars_to_the_callers_values() -> None:
    info = shax.call_with_info(TYPED, X, W, inputs_dict={2: B})
    assert info.called_graph is TYPED
    assert info.graph_to_parent(ARGS[1]) is W
    np.testing.assert_allclose(info.graph_to_parent(TYPED.outputs[1]), np.sin(X))


def test_call_of_wrong_types_names_call_and_the_users_line() -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"call: argument 1 of layer.*\(at .*{HERE}:\d+\)"):
        shax.call(TYPED, X, W.astype(np.float32), B)
    with pytest.raises(shax.ShaxTypeError, match=rf"call: layer takes \(f64\[2, 3\].*\(at .*{HERE}:\d+\)"):
        shax.xpr(lambda x: shax.call(TYPED, x, W, B), X.T)


def test_call_with_missing_or_extra_arguments() -> None:
    with pytest.raises(shax.ShaxTypeError, match=rf"call: layer's argument\(s\) 2 :: f64\[3\] are not given .*{HERE}"):
        shax.call(TYPED, X, W)
    with pytest.raises(shax.ShaxTypeError, match=rf"call: layer takes 3 argument\(s\), got 4 .*{HERE}"):
        shax.call(TYPED, X, W, B, B)
    with pytest.raises(shax.ShaxValueError, match=rf"call: argument 1 of layer is given twice .*{HERE}"):
        shax.call(TYPED, X, W, inputs_dict={1: W})


@pytest.mark.parametrize(
    "key",
    [3, -1, True, "w", shax.Var(99, f64[3]), 1.0],
    ids=["beyond", "negative", "bool", "name", "another_var", "float"],
)
def test_call_with_a_bad_inputs_dict_key(key: Any) -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"call: inputs_dict: .* is none of layer's \[x0, x1, x3\] .*{HERE}"):
        shax.call(TYPED, X, W, inputs_dict={key: B})


def test_call_with_an_inputs_dict_that_is_not_a_mapping() -> None:
    with typeguard.suppress_type_checks():  # shax's own check, as users meet it
        with pytest.raises(shax.ShaxTypeError, match=rf"call: inputs_dict must be a mapping, got a list .*{HERE}"):
            shax.call(TYPED, X, W, inputs_dict=[B])


def test_call_of_something_else_than_a_definition() -> None:
    with typeguard.suppress_type_checks():
        with pytest.raises(shax.ShaxTypeError, match=rf"call: .*{HERE}"):
            shax.call(layer, X, W, B)
