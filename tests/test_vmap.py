"""shax.vmap: in_axes/out_axes conventions, composition with grad (per-example gradients,
gradients through a vmap, vmap of vmap), batched programs, errors, and the property
that vmap(f)(xs) stacks f over the examples, on generated programs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shax
from shax import f32
from shax.testing.strategies import programs
from typeclasses import dot, exp, reduce_sum, sin, tanh

RNG = np.random.default_rng(0)


def stacked(results: list[Any], axis: int = 0) -> Any:
    if isinstance(results[0], tuple):
        return tuple(stacked([r[k] for r in results], axis) for k in range(len(results[0])))
    if isinstance(results[0], dict):
        return {k: stacked([r[k] for r in results], axis) for k in results[0]}
    return np.stack([np.asarray(r) for r in results], axis)


def assert_tree_close(got: Any, expected: Any, rtol: float = 1e-12) -> None:
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_tree_close(g, e, rtol)
    elif isinstance(expected, dict):
        assert set(got) == set(expected)
        for k in expected:
            assert_tree_close(got[k], expected[k], rtol)
    else:
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def f(x: Any) -> Any:
    return reduce_sum(sin(x) * x, axes=[0])


def test_vmap_maps_the_leading_axis_and_reductions_keep_theirs() -> None:
    xs = RNG.standard_normal((3, 5))
    assert_tree_close(shax.vmap(f)(xs), stacked([f(x) for x in xs]))


def test_in_axes_out_axes_and_the_axis_keyword() -> None:
    def g(x: Any, w: Any) -> Any:
        return sin(x) * w

    xs, w = RNG.standard_normal((4, 3)), RNG.standard_normal(4)
    expected = stacked([g(xs[:, k], w) for k in range(3)])  # examples along axis 1 of xs
    assert_tree_close(shax.vmap(g, in_axes=(1, None))(xs, w), expected)
    assert_tree_close(shax.vmap(g, in_axes=(1, None), out_axes=1)(xs, w), expected.T)
    assert_tree_close(shax.vmap(g, in_axes=(-1, None), out_axes=-1)(xs, w), expected.T)
    assert_tree_close(shax.vmap(lambda x: sin(x), axis=1)(xs), np.sin(xs))
    # A number (rank 0) is shared, whatever in_axes says.
    two = np.float64(2.0)
    assert_tree_close(shax.vmap(g)(xs.T, two), stacked([g(x, two) for x in xs.T]))
    assert_tree_close(shax.vmap(lambda x, c: x * c)(xs.astype(np.float32), 2.0), xs.astype(np.float32) * 2)


def test_pytree_arguments_and_in_axes_prefixes() -> None:
    def g(p: Any, x: Any) -> Any:
        return {"y": tanh(dot(x, p["w"]) + p["b"]), "n": reduce_sum(x * x, axes=[0])}

    p = {"w": RNG.standard_normal((3, 2)), "b": RNG.standard_normal(2)}
    xs = RNG.standard_normal((5, 3))
    expected = stacked([g(p, x) for x in xs])
    assert_tree_close(shax.vmap(g, in_axes=(None, 0))(p, xs), expected)
    assert_tree_close(shax.vmap(g, in_axes=({"w": None, "b": None}, 0))(p, xs), expected)
    bs = RNG.standard_normal((5, 2))  # a batch of biases: a prefix can batch part of a dict
    assert_tree_close(
        shax.vmap(g, in_axes=({"w": None, "b": 0}, 0))({"w": p["w"], "b": bs}, xs),
        stacked([g({"w": p["w"], "b": b}, x) for b, x in zip(bs, xs)]),
    )
    out = shax.vmap(g, in_axes=(None, 0), out_axes={"y": 1, "n": 0})(p, xs)
    assert out["y"].shape == (2, 5) and out["n"].shape == (5,)


def test_an_output_that_depends_on_no_example_is_broadcast() -> None:
    out = shax.vmap(lambda x, w: exp(w), in_axes=(0, None))(np.ones((3, 2)), np.zeros(4))
    np.testing.assert_array_equal(out, np.ones((3, 4)))


# Composition ---------------------------------------------------------------------------------


def logistic_loss(w: Any, x: Any, y: Any) -> Any:
    z = reduce_sum(x * w, axes=[0])
    return (tanh(z) - y) * (tanh(z) - y)


def test_per_example_gradients_equal_a_loop() -> None:
    w, xs, ys = RNG.standard_normal(4), RNG.standard_normal((6, 4)), RNG.standard_normal(6)
    per_example = shax.vmap(shax.grad(logistic_loss, wrt=0), in_axes=(None, 0, 0))(w, xs, ys)
    loop = stacked([shax.grad(logistic_loss, wrt=0)(w, x, y) for x, y in zip(xs, ys)])
    assert_tree_close(per_example, loop)


def test_grad_through_vmap_is_the_gradient_of_the_sum() -> None:
    xs = RNG.standard_normal((3, 5))
    g = shax.grad(lambda xs: reduce_sum(shax.vmap(f)(xs), axes=[0]))(xs)
    assert_tree_close(g, np.cos(xs) * xs + np.sin(xs))


def test_vmap_of_vmap() -> None:
    xs = RNG.standard_normal((2, 3, 5))
    assert_tree_close(shax.vmap(shax.vmap(f))(xs), stacked([stacked([f(x) for x in row]) for row in xs]))
    inner_axis = shax.vmap(shax.vmap(f, in_axes=1), in_axes=0)(xs.transpose(0, 2, 1))
    assert_tree_close(inner_axis, shax.vmap(shax.vmap(f))(xs))


def test_vmap_of_dot_is_one_batched_dot_general() -> None:
    xs, ys = RNG.standard_normal((50, 3, 4)), RNG.standard_normal((50, 4, 2))
    defn = shax.xpr(shax.vmap(dot), xs, ys)
    ops = [b.prim.name for b in defn.bindings if b.args]
    assert ops == ["dot_general"] and defn.output_types() == (shax.f64[50, 3, 2],)
    assert "dot_general [2] [1] [0] [0]" in str(defn)
    assert_tree_close(shax.vmap(dot)(xs, ys), xs @ ys)


def test_xpr_of_vmap_shows_batched_types() -> None:
    defn = shax.xpr(shax.vmap(f), np.ones((3, 5), np.float32))
    assert defn.arg_types == (f32[3, 5],) and "x0 :: f32[3, 5] = arg0" in str(defn)
    assert defn.output_types() == (f32[3],)


def test_vmap_is_traced_once_per_argument_structure() -> None:
    calls = []

    def g(x: Any) -> Any:
        calls.append(1)
        return x * 2.0

    mapped = shax.vmap(g)
    for k in range(3):
        mapped(np.ones((4, 2)) * k)
    assert len(calls) == 1
    shax.vmap(g, in_axes=1)(np.ones((4, 2)))  # other axes: another program
    assert len(calls) == 2


# Errors ---------------------------------------------------------------------------------


def test_inconsistent_batch_sizes() -> None:
    message = r"vmap: inconsistent batch sizes: argument 0 :: f64\[3, 2\] has 3 at axis 0, argument 1 :: f64\[4\] has 4"
    with pytest.raises(shax.ShaxValueError, match=message):
        shax.vmap(lambda x, y: x)(np.ones((3, 2)), np.ones(4))


def test_an_axis_out_of_range() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"maps argument 1 :: f64\[4\] along axis 1, but it has only 1 axes"):
        shax.vmap(lambda x, y: x, in_axes=(0, 1))(np.ones((4, 2)), np.ones(4))
    with pytest.raises(shax.ShaxValueError, match=r"maps argument 0\['w'\] :: f64\[4\] along axis -2"):
        shax.vmap(lambda p: p["w"], in_axes=-2)({"w": np.ones(4)})


def test_in_axes_that_do_not_match_the_arguments() -> None:
    with pytest.raises(
        shax.ShaxValueError, match=r"in_axes=\(0,\) has 1 entries, but the arguments are a tuple with 2"
    ):
        shax.vmap(lambda x, y: x, in_axes=(0,))(np.ones(3), np.ones(3))
    with pytest.raises(shax.ShaxValueError, match=r"a dict with keys \['a'\] where the argument is a dict"):
        shax.vmap(lambda p: p["w"], in_axes=({"a": 0},))({"w": np.ones(4)})
    with pytest.raises(shax.ShaxValueError, match="in_axes entries must be ints, None, or pytrees"):
        shax.vmap(f, in_axes="x")
    with pytest.raises(shax.ShaxValueError, match="no argument is mapped"):
        shax.vmap(lambda x: x, in_axes=None)(np.ones(3))


# Property: vmap(f)(xs) stacks f over the examples ---------------------------------------------


@given(programs(), st.data())
def test_vmap_equals_stacking_over_the_examples(program: Any, data: st.DataObject) -> None:
    size = data.draw(st.integers(1, 3), label="batch size")
    in_axes = tuple(
        data.draw(st.one_of(st.none(), st.integers(-t.rank - 1, t.rank)), label=f"in_axes[{k}]")
        for k, t in enumerate(program.arg_types)
    )
    if all(a is None for a in in_axes):
        in_axes = (0, *in_axes[1:])
    rng = np.random.default_rng(0)
    # Each example: the drawn arguments, perturbed (the program's domains tolerate small changes).
    examples = [[a + 0.01 * k * rng.standard_normal(np.shape(a)) for a in program.args] for k in range(size)]
    args = [
        program.args[j] if a is None else np.stack([e[j] for e in examples], a)
        for j, (a, _) in enumerate(zip(in_axes, program.arg_types))
    ]
    per_example = [
        program.fn(*(program.args[j] if a is None else e[j] for j, a in enumerate(in_axes))) for e in examples
    ]
    out_axis = data.draw(st.integers(0, 1), label="out_axes")
    outputs = per_example[0] if isinstance(per_example[0], tuple) else (per_example[0],)
    out_axis = min(out_axis, *(np.ndim(o) for o in outputs))
    got = shax.vmap(program.fn, in_axes=in_axes, out_axes=out_axis)(*args)
    assert_tree_close(got, stacked(per_example, out_axis), rtol=1e-9)
