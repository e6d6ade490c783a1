"""numpy's indexing on tracers, JAX's `.at[...]` updates, `take`, `take_along_axis` and
`repeat` with counts: results against numpy's, gradients against numpy's scatter-add
(`np.add.at`) and JAX's values, batching against loops."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shax
import shax.numpy as snp
from shax import ShaxError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32)


def _same(result: Any, expected: Any) -> None:
    result = np.asarray(result)
    assert result.shape == np.shape(expected)
    assert result.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(result, expected)


# Keys numpy reads: basic, advanced, and both mixed (where numpy puts the arrays' axes).
KEYS = [
    0,
    -1,
    (1, 2),
    (slice(None), 1),
    (Ellipsis, 2),
    (None, 0, Ellipsis, None),
    slice(None, None, 2),
    (slice(None, None, -2), slice(1, None, 3)),
    (slice(3, 0, -1), slice(None), slice(4, None, -3)),
    (slice(5, 7),),
    [2, 0, 2],
    ([-1, 2],),
    (slice(None), [0, 3]),
    ([0, 1], None, [0, 1]),
    ([0, 1], slice(None), [0, 1]),
    (0, slice(None), [1, 2]),
    (slice(None), 0, [1, 2]),
    (Ellipsis, [1, 2]),
    ([[0], [1]], slice(1, 3)),
    (np.array([True, False, True]),),
    (slice(None), [0, 3], [4, -5]),
    (slice(None, None, 2), [[1, 2], [3, 0]], None),
    (np.int64(1), [1]),
    ([],),
    # An ellipsis of no axis still parts the arrays: theirs go in front.
    (slice(0, 1), [0, 1], Ellipsis, [1, 2]),
    ([0, 1], slice(None), Ellipsis, [1, 2]),
    (np.array([[True, False, True, True]] * 3), slice(1, None)),
]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_indexing_matches_numpy(key: Any) -> None:
    _same(shax.jit(lambda x: x[key])(X), X[key])


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_indexing_gradient_adds_back_at_the_positions(key: Any) -> None:
    weights = RNG.normal(size=np.shape(X[key])).astype(np.float32)
    expected = np.zeros_like(X)
    np.add.at(expected, key, weights)
    _same(shax.grad(lambda x: snp.sum(x[key] * weights))(X), expected)


def _slices(n: int) -> st.SearchStrategy[slice]:
    bound = st.none() | st.integers(-n - 2, n + 2)
    return st.builds(slice, bound, bound, st.none() | st.integers(-3, 3).filter(bool))


@st.composite
def _keys(draw: Any, shape: tuple[int, ...]) -> tuple[Any, ...]:
    items: list[Any] = []
    for n in shape:
        kind = draw(st.sampled_from(["slice", "int", "array", "none_then_slice"]))
        if kind == "slice":
            items.append(draw(_slices(n)))
        elif kind == "int":
            items.append(draw(st.integers(-n, n - 1)))
        elif kind == "array":
            items.append(draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=3)))
        else:
            items += [None, draw(_slices(n))]
    return tuple(items[: draw(st.integers(0, len(items)))])


@given(st.data())
def test_random_keys_match_numpy_and_batch(data: Any) -> None:
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    key = data.draw(_keys(shape))
    x = RNG.normal(size=shape)
    try:
        expected = x[key]
    except IndexError:  # index arrays that do not broadcast together
        with pytest.raises(ShaxError, match="do not broadcast"):
            shax.jit(lambda x: x[key])(x)
        return
    _same(shax.jit(lambda x: x[key])(x), expected)
    xs = RNG.normal(size=(2, *shape))
    _same(shax.vmap(lambda x: x[key])(xs), np.stack([x[key] for x in xs]))


def test_traced_indices_count_from_the_end_and_clamp() -> None:
    i = np.array([2, -1, 0, 5, -7], np.int32)
    j = np.array([1, -2, 7, -9, 0], np.int32)
    ci = np.clip(np.where(i < 0, i + 3, i), 0, 2)  # JAX's: x[[-1, 7, -9]] of 5 elements is [4, 4, 0]
    cj = np.clip(np.where(j < 0, j + 5, j), 0, 4)
    _same(shax.jit(lambda x, i: x[i])(X, i), X[ci])
    _same(shax.jit(lambda x, i, j: x[i, :, j])(X, i, j), X[ci, :, cj])
    _same(shax.jit(lambda x, i, j: x[i, 1:3, j])(X, i, j), X[ci, 1:3, cj])
    _same(shax.jit(lambda x, i: x[:, 1, i])(X, j), X[:, 1, cj])


def test_traced_index_gradient_is_a_scatter_add() -> None:
    i = np.array([0, 2, 0, 0], np.int32)
    grad = shax.grad(lambda x, i: snp.sum(x[i] ** 2.0))(X, i)
    expected = np.zeros_like(X)
    np.add.at(expected, i, 2 * X[i])
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


@pytest.mark.parametrize(
    ("key", "values"),
    [
        ((1, 2), 7.0),
        ([0, 0, 2], RNG.normal(size=(3, 4, 5))),
        ((slice(1, 3), [0, 2]), np.arange(10.0).reshape(2, 1, 5)),
        ((Ellipsis, [4, -1]), 1),
        (slice(None, None, -2), np.ones(5)),
    ],
    ids=repr,
)
def test_at_set_and_add_match_numpy(key: Any, values: Any) -> None:
    expected = X.copy()
    expected[key] = values
    _same(shax.jit(lambda x: x.at[key].set(values))(X), expected)
    expected = X.copy()
    np.add.at(expected, key, np.asarray(values, np.float32))
    np.testing.assert_allclose(shax.jit(lambda x: x.at[key].add(values))(X), expected, rtol=1e-6)
    _same(shax.jit(lambda x: x.at[key].get())(X), X[key])


def test_at_set_gradients_are_jax_s() -> None:
    # jax.grad of these, jax 0.10: of repeated updates to one element only the last counts.
    weights = np.array([1.0, 2.0, 3.0], np.float32)

    def f(v: Any) -> Any:
        return snp.sum((v * 0.0).at[np.array([0, 0, 2])].set(v) * weights)

    np.testing.assert_allclose(shax.grad(f)(np.array([1.0, 2.0, 3.0], np.float32)), [0.0, 1.0, 3.0])

    def g(x: Any) -> Any:
        return snp.sum(x.at[np.array([0, 0])].set(np.array([5.0, 6.0], np.float32)) * weights)

    np.testing.assert_allclose(shax.grad(g)(np.ones(3, np.float32)), [0.0, 2.0, 3.0])


def test_at_with_traced_indices() -> None:
    i = np.array([2, -1, 0], np.int32)
    result = shax.jit(lambda x, i, v: x.at[i].add(v))(X, i, np.ones((3, 4, 5), np.float32))
    expected = X.copy()
    np.add.at(expected, np.array([2, 2, 0]), 1.0)
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    grads = shax.grad(lambda x, v: snp.sum(x.at[i].set(v) ** 2.0))(X, 2 * X)
    kept = np.zeros((3, 1, 1), np.float32)
    kept[[1, 2]] = 1.0  # position 2 is written twice: the second update is kept
    np.testing.assert_allclose(grads[1], 2 * (2 * X) * kept, rtol=1e-6)
    untouched = np.zeros_like(X)
    untouched[1] = 2 * X[1]
    np.testing.assert_allclose(grads[0], untouched, rtol=1e-6)


def test_take_matches_numpy() -> None:
    a = np.arange(12.0).reshape(3, 4)
    _same(snp.take(a, [0, -1, 2], axis=1), np.take(a, [0, -1, 2], axis=1))
    _same(snp.take(a, [[0, 5]]), np.take(a, [[0, 5]]))
    _same(snp.take(a, [0, 7, -2], axis=1, mode="clip"), np.take(a, [0, 7, -2], axis=1, mode="clip"))
    _same(snp.take(a, [-7, 7], axis=1, mode="wrap"), np.take(a, [-7, 7], axis=1, mode="wrap"))
    _same(shax.jit(lambda a: snp.take(a, [2, 0], axis=0))(a), np.take(a, [2, 0], axis=0))
    i = np.array([[3, -1], [0, 9]], np.int32)
    # traced indices out of range read NaN (JAX's "fill"; tests/test_take_fill.py)
    expected = np.where((i < 4)[None], np.take(a, np.where(i < 4, i, 0), 1), np.nan)
    _same(shax.jit(lambda a, i: snp.take(a, i, axis=1))(a, i), expected)


def test_take_along_axis_matches_numpy_and_differentiates() -> None:
    a = RNG.normal(size=(3, 4))
    order = np.argsort(a, axis=1)[:, ::-1]
    _same(snp.take_along_axis(a, order, 1), np.take_along_axis(a, order, 1))
    _same(snp.take_along_axis(a, order[:1], 1), np.take_along_axis(a, order[:1], 1))
    _same(snp.take_along_axis(a.T, order.T, 0), np.take_along_axis(a.T, order.T, 0))
    flat = np.array([0, 11, 5])
    _same(snp.take_along_axis(a, flat, None), np.take_along_axis(a, flat, None))
    top = order[:, :2].astype(np.int32)
    grad = shax.grad(lambda a, i: snp.sum(snp.take_along_axis(a, i, 1)))(a, top)
    expected = np.zeros_like(a)
    np.put_along_axis(expected, top, 1.0, 1)
    _same(grad, expected)


def test_repeat_with_counts() -> None:
    a = np.arange(12.0).reshape(3, 4)
    _same(snp.repeat(a, [1, 0, 3], axis=0), np.repeat(a, [1, 0, 3], axis=0))
    _same(snp.repeat(a, [2]), np.repeat(a, [2]))
    grad = shax.grad(lambda a: snp.sum(snp.repeat(a, [1, 0, 3], axis=0)))(a)
    _same(grad, np.repeat(np.array([[1.0], [0.0], [3.0]]), 4, axis=1))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 0)])
def test_gather_batches_like_a_loop(in_axes: tuple[int | None, int | None]) -> None:
    xs = RNG.normal(size=(2, 2, 4)).astype(np.float32)
    idx = np.array([[1, -1, 0], [1, 1, 5]], np.int32)

    def f(x: Any, i: Any) -> Any:
        return snp.take(x, i, axis=0) * 2.0

    def example(k: int, arg: Any, axis: int | None) -> Any:
        return arg if axis is None else np.take(arg, k, axis=axis)

    result = shax.vmap(f, in_axes=in_axes)(xs, idx)
    loop = [shax.jit(f)(example(k, xs, in_axes[0]), example(k, idx, in_axes[1])) for k in range(2)]
    _same(result, np.stack(loop))


def test_per_example_gradients_of_an_embedding_lookup() -> None:
    table = RNG.normal(size=(5, 3)).astype(np.float32)
    tokens = np.array([[0, 4, 4], [2, 1, 0]], np.int32)

    def loss(table: Any, tokens: Any) -> Any:
        return snp.sum(snp.tanh(table[tokens]))

    per_example = shax.vmap(shax.grad(loss), in_axes=(None, 0))(table, tokens)
    for k in range(2):
        expected = np.zeros_like(table)
        np.add.at(expected, tokens[k], 1 - np.tanh(table[tokens[k]]) ** 2)
        np.testing.assert_allclose(per_example[k], expected, rtol=1e-5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: shax.jit(lambda x: x[1.5])(X), "cannot index with a float"),
        (lambda: shax.jit(lambda x: x[[0.5]])(X), "indices must be integers"),
        (lambda: shax.jit(lambda x: x[x > 0])(X), "boolean mask"),
        (lambda: shax.jit(lambda x: x[[3]])(X), "index 3 is out of bounds"),
        (lambda: shax.jit(lambda x: x[0, 0, 0, 0])(X), "too many indices"),
        (lambda: shax.jit(lambda x: x[::0])(X), "step cannot be zero"),
        (lambda: shax.jit(lambda x: x[[0, 1], [0, 1, 2]])(X), "do not broadcast"),
        (lambda: shax.jit(lambda x: x[np.array([True, False])])(X), "boolean mask of shape"),
        (lambda: shax.jit(lambda x: x[np.array(True)])(X), "0-d boolean"),
        (lambda: shax.jit(lambda x, i: snp.take(x, i, mode="wrap"))(X, np.zeros(2, np.int32)), "mode='wrap'"),
        (lambda: snp.take(X, [0], mode="bad"), "mode must be"),
        (lambda: shax.jit(lambda x: x.at[0].set(np.ones(3)))(X), "cannot broadcast values"),
        (lambda: snp.repeat(X, [1, 2], axis=0), "one non-negative int count"),
        (lambda: snp.take_along_axis(X, np.zeros((3, 4), np.int32), 0), "need the rank"),
    ],
)
def test_bad_indices_are_shax_errors(call: Any, message: str) -> None:
    with pytest.raises(ShaxError, match=message):
        call()


@pytest.mark.parametrize("axis", [-1, 0, None])
def test_sort_and_argsort_are_numpys_stable_ones(axis: int | None) -> None:
    a = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, np.nan, 5.0], [2.0, 2.0, 2.0, -np.inf]])
    _same(snp.argsort(a, axis=axis), np.argsort(a, axis=axis, kind="stable").astype(np.int32))
    _same(shax.jit(lambda a: snp.sort(a, axis=axis))(a), np.sort(a, axis=axis))
    _same(shax.vmap(lambda a: snp.argsort(a))(a), np.argsort(a, axis=-1, kind="stable").astype(np.int32))


def test_sort_gradient_goes_back_to_where_each_element_came_from() -> None:
    a = np.array([[3.0, 1.0], [2.0, 0.0]])
    weights = np.array([1.0, 2.0, 3.0, 4.0])
    grad = shax.grad(lambda a: snp.sum(snp.sort(a, axis=None) * weights))(a)
    _same(grad, np.array([[4.0, 2.0], [3.0, 1.0]]))  # 0 is first (weight 1), 1 second, ...
