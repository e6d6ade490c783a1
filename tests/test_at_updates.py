"""JAX's `.at[...]` updates beyond set/add/get: multiply, divide, power, min, max, apply.
Values and gradients against JAX's (stored, and live when jax is installed), on numpy
values, traced, under jit, vmap and grad; repeated indices combine as JAX's scatters do."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
from shax import ShaxError

X = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
KEY = np.array([0, 0, 2])  # 0 repeated
Y = np.array([2.0, 5.0, -1.0], np.float32)

# JAX's x.at[KEY].<name>(Y), computed once with jax 0.10.
STORED = {
    "multiply": [10.0, 2.0, -3.0, 4.0],
    "min": [1.0, 2.0, -1.0, 4.0],
    "max": [5.0, 2.0, 3.0, 4.0],
    "divide": [0.1, 2.0, -3.0, 4.0],
    "power": [1.0, 2.0, 1 / 3, 4.0],
}
NAMES = sorted(STORED)


def _update(name: str, x: Any, y: Any, key: Any = KEY, **hints: Any) -> Any:
    return getattr(x.at[key], name)(y, **hints)


@pytest.mark.parametrize("name", NAMES)
def test_values_match_jax_stored(name: str) -> None:
    expected = np.asarray(STORED[name], np.float32)
    np.testing.assert_allclose(_update(name, snp.asarray(X), Y), expected, rtol=1e-6)
    np.testing.assert_allclose(shax.jit(lambda x, y: _update(name, x, y))(X, Y), expected, rtol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_on_numpy_values_keeps_the_array_class(name: str) -> None:
    result = _update(name, snp.asarray(X), Y)
    assert isinstance(result, type(snp.asarray(X)))
    assert result.dtype == np.float32


KEYS = [KEY, (slice(None), [1, 1, 0]), (Ellipsis, 1), (np.array([[0, 1], [1, 1]]), slice(1, None))]


@pytest.mark.parametrize("name", [*NAMES, "apply"])
@pytest.mark.parametrize("key", range(len(KEYS)))
def test_against_jax(name: str, key: int) -> None:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    k = KEYS[key]
    x = np.arange(1.0, 13.0, dtype=np.float32).reshape(4, 3) / 4 if key else X
    y = np.float32(1.5) if key else Y
    if name == "apply":
        ours, theirs = snp.asarray(x).at[k].apply(lambda v: v * 2 + 1), jnp.asarray(x).at[k].apply(lambda v: v * 2 + 1)
    else:
        ours, theirs = _update(name, snp.asarray(x), y, k), _update(name, jnp.asarray(x), y, k)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-6)
    np.testing.assert_allclose(
        shax.jit(lambda a: getattr(a.at[k], name)(lambda v: v * 2 + 1) if name == "apply" else _update(name, a, y, k))(
            x
        ),
        np.asarray(theirs),
        rtol=1e-6,
    )


def test_integers_min_max_multiply_and_divide_to_float() -> None:
    x = snp.asarray(np.array([5, 6, 7], np.int32))
    i = np.array([1, 1, 0])
    np.testing.assert_array_equal(x.at[i].min(np.array([9, 2, 3])), np.array([3, 2, 7], np.int32))
    np.testing.assert_array_equal(x.at[i].max(np.array([9, 2, 3])), np.array([5, 9, 7], np.int32))
    np.testing.assert_array_equal(x.at[i].multiply(np.array([2, 3, 4])), np.array([20, 36, 7], np.int32))
    divided = x.at[1].divide(4)  # true division, of snp.divide's dtype (numpy's on numpy values)
    assert divided.dtype == snp.divide(x, x).dtype
    np.testing.assert_allclose(divided, [5.0, 1.5, 7.0])


def test_apply_repeats_the_function_per_repeated_index() -> None:
    # JAX: x.at[[0, 0, 2]].apply(f) is f(f(x[0])) at 0, f(x[2]) at 2.
    np.testing.assert_allclose(snp.asarray(X).at[KEY].apply(lambda v: v * 2), [4.0, 2.0, 6.0, 4.0])
    np.testing.assert_allclose(snp.asarray(X).at[KEY].apply(snp.sin), [np.sin(np.sin(1.0)), 2.0, np.sin(3.0), 4.0])


def test_min_gradient_splits_ties_as_jax() -> None:
    # x[0] = 1 ties with Y[0] = 1: JAX's scatter_min gives each half the cotangent.
    y = np.array([1.0, 5.0, -1.0], np.float32)
    dx, dy = shax.grad(lambda x, y: x.at[KEY].min(y).sum(), argnums=(0, 1))(X, y)
    np.testing.assert_array_equal(dx, [0.5, 1.0, 0.0, 1.0])
    np.testing.assert_array_equal(dy, [0.5, 0.0, 1.0])
    dx, dy = shax.grad(lambda x, y: x.at[KEY].max(y).sum(), argnums=(0, 1))(X, y)
    np.testing.assert_array_equal(dx, [0.0, 1.0, 1.0, 1.0])
    np.testing.assert_array_equal(dy, [0.0, 1.0, 0.0])


@pytest.mark.parametrize("name", NAMES)
def test_gradients_against_jax(name: str) -> None:
    jax = pytest.importorskip("jax")
    key = np.array([2, 0, 3])  # unique: JAX differentiates scatter_mul's updates only then
    x, y = X + 0.5, np.array([0.5, 2.0, 1.5], np.float32)
    ours = shax.grad(lambda a, b: (_update(name, a, b, key) * X).sum(), argnums=(0, 1))(x, y)
    theirs = jax.grad(lambda a, b: (_update(name, a, b, key, unique_indices=True) * X).sum(), argnums=(0, 1))(x, y)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5)


def test_multiply_gradient_with_repeated_indices_is_the_product_rule() -> None:
    # JAX refuses this (scatter_mul's updates need unique indices); d(x0·y0·y1) by hand.
    dx, dy = shax.grad(lambda x, y: x.at[KEY].multiply(y).sum(), argnums=(0, 1))(X, Y)
    np.testing.assert_allclose(dx, [10.0, 1.0, -1.0, 1.0])
    np.testing.assert_allclose(dy, [5.0, 2.0, 3.0])


@pytest.mark.parametrize("name", NAMES)
def test_vmap_matches_a_loop(name: str) -> None:
    xs = np.arange(8, dtype=np.float32).reshape(2, 4)
    ys = np.array([[3.0, 1.0, 9.0], [-2.0, 0.5, 4.0]], np.float32)
    batched = shax.vmap(lambda x, y: _update(name, x, y))(xs, ys)
    expected = [np.asarray(_update(name, snp.asarray(x), y)) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(batched, np.stack(expected), rtol=1e-6)


def test_empty_key_leaves_x() -> None:
    np.testing.assert_array_equal(snp.asarray(X).at[np.array([], np.int32)].min(1.0), X)


@pytest.mark.parametrize("name", NAMES)
def test_traced_indices_match_jax_stored(name: str) -> None:
    expected = np.asarray(STORED[name], np.float32)
    result = shax.jit(lambda x, i, y: _update(name, x, y, i))(X, KEY.astype(np.int32), Y)
    np.testing.assert_allclose(result, expected, rtol=1e-6)


def test_traced_indices_apply_and_vmap_over_indices() -> None:
    result = shax.jit(lambda x, i: x.at[i].apply(lambda v: v * 2 + 1))(X, KEY.astype(np.int32))
    np.testing.assert_array_equal(result, [7.0, 2.0, 7.0, 4.0])  # JAX's
    keys = np.array([[0, 0], [3, 1]], np.int32)
    batched = shax.vmap(lambda i: snp.asarray(X).at[i].max(np.array([10.0, 0.5], np.float32)))(keys)
    np.testing.assert_array_equal(batched, [[10.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 10.0]])


def test_traced_indices_min_gradient_splits_ties_as_jax() -> None:
    y = np.array([1.0, 5.0, -1.0], np.float32)
    dx, dy = shax.grad(lambda x, i, y: (x.at[i].min(y) * X).sum(), argnums=(0, 2))(X, KEY.astype(np.int32), y)
    np.testing.assert_array_equal(dx, [0.5, 2.0, 0.0, 4.0])  # JAX's
    np.testing.assert_array_equal(dy, [0.5, 0.0, 3.0])


def test_apply_needs_a_function() -> None:
    with pytest.raises(ShaxError, match=r"apply needs a function"):
        snp.asarray(X).at[KEY].apply(3.0)
    with pytest.raises(ShaxError, match=r"apply: func must map"):
        snp.asarray(X).at[KEY].apply(lambda v: v[:1])


def test_values_that_do_not_broadcast_are_an_error() -> None:
    with pytest.raises(ShaxError, match="cannot broadcast values"):
        snp.asarray(X).at[KEY].max(np.ones(2, np.float32))
