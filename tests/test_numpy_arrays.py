"""shax.numpy's array functions and tracers' array methods against numpy: the same
dtype, shape and values on numpy values, traced (jit), batched (vmap) and as numpy's own
functions called on tracers; their gradients are their transposes (<f(dx), w> = <dx, fᵀ w>)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from typeclasses import reduce_sum

RNG = np.random.default_rng(0)


def array(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.normal(size=shape).astype(dtype)


def same(actual: Any, expected: Any) -> None:
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert (actual.dtype, actual.shape) == (expected.dtype, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=1e-6, atol=1e-6)


# (label, f(module, x) for module numpy or shax.numpy, x's shape)
SHAPE_CASES: list[tuple[str, Callable[[Any, Any], Any], tuple[int, ...]]] = [
    ("reshape", lambda m, x: m.reshape(x, (3, -1)), (2, 3, 2)),
    ("reshape_int", lambda m, x: m.reshape(x, 12), (2, 3, 2)),
    ("transpose", lambda m, x: m.transpose(x), (2, 3, 4)),
    ("transpose_axes", lambda m, x: m.transpose(x, (1, -1, 0)), (2, 3, 4)),
    ("concatenate", lambda m, x: m.concatenate([x, 2 * x, x[:1]], axis=0), (2, 3)),
    ("concatenate_neg", lambda m, x: m.concatenate([x, x, x, x, x], axis=-1), (2, 3)),
    ("concatenate_none", lambda m, x: m.concatenate([x, x], axis=None), (2, 3)),
    ("stack", lambda m, x: m.stack([x, 3 * x, x], axis=1), (2, 3)),
    ("stack_last", lambda m, x: m.stack([x, x], axis=-1), (2, 3)),
    ("split_sections", lambda m, x: m.split(x, 3, axis=1)[1], (2, 6)),
    ("split_indices", lambda m, x: m.concatenate(m.split(x, [1, -2, 9], axis=1)[::-1], axis=1), (2, 6)),
    ("squeeze", lambda m, x: m.squeeze(x), (1, 3, 1)),
    ("squeeze_axis", lambda m, x: m.squeeze(x, axis=-1), (1, 3, 1)),
    ("expand_dims", lambda m, x: m.expand_dims(x, (0, -1)), (2, 3)),
    ("moveaxis", lambda m, x: m.moveaxis(x, [0, 1], [-1, 0]), (2, 3, 4)),
    ("swapaxes", lambda m, x: m.swapaxes(x, 0, 2), (2, 3, 4)),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, (4, 2, 3)), (2, 1)),
    ("matmul_batched", lambda m, x: m.matmul(x, m.swapaxes(x, -1, -2)), (2, 3, 4)),
    ("matmul_vector", lambda m, x: m.matmul(x, x[0, 0]), (2, 3, 4)),
    ("dot", lambda m, x: m.dot(x, m.swapaxes(x, 1, 2)), (2, 3, 4)),
    ("inner", lambda m, x: m.inner(x, x[0]), (2, 3, 4)),
    ("outer", lambda m, x: m.outer(x, x[0]), (2, 3)),
    ("tensordot", lambda m, x: m.tensordot(x, x, axes=([1, 2], [1, 2])), (2, 3, 4)),
    ("tensordot_int", lambda m, x: m.tensordot(x, m.transpose(x), axes=1), (2, 3, 4)),
]
IDS = [label for label, _, _ in SHAPE_CASES]


@pytest.mark.parametrize(("label", "f", "shape"), SHAPE_CASES, ids=IDS)
def test_shax_numpy_is_numpy(label: str, f: Callable[[Any, Any], Any], shape: tuple[int, ...]) -> None:
    x = array(*shape)
    expected = f(np, x)
    same(f(snp, x), expected)
    same(shax.jit(lambda x: f(snp, x))(x), expected)
    # numpy's own functions on a tracer reach shax.numpy's.
    same(shax.jit(lambda x: f(np, x))(x), expected)


@pytest.mark.parametrize(("label", "f", "shape"), SHAPE_CASES, ids=IDS)
def test_vmap_is_a_loop(label: str, f: Callable[[Any, Any], Any], shape: tuple[int, ...]) -> None:
    xs = array(3, *shape)
    same(shax.vmap(lambda x: f(snp, x))(xs), np.stack([f(np, x) for x in xs]))


PRODUCTS = ("matmul_batched", "matmul_vector", "dot", "inner", "outer", "tensordot", "tensordot_int")
LINEAR_CASES = [case for case in SHAPE_CASES if case[0] not in PRODUCTS]


@pytest.mark.parametrize(("label", "f", "shape"), LINEAR_CASES, ids=[case[0] for case in LINEAR_CASES])
def test_gradients_are_transposes(label: str, f: Callable[[Any, Any], Any], shape: tuple[int, ...]) -> None:
    # Each of these is linear in x, so the gradient of <f(x), w> is fᵀ w: <f(dx), w> = <dx, fᵀ w>.
    x, dx = array(*shape, dtype=np.float64), array(*shape, dtype=np.float64)
    w = array(*np.shape(f(np, x)), dtype=np.float64)
    g = shax.grad(lambda x: reduce_sum(f(snp, x) * w, list(range(w.ndim))))(x)
    np.testing.assert_allclose(np.sum(f(np, dx) * w), np.sum(dx * g), rtol=1e-10)


@pytest.mark.parametrize(
    ("x_shape", "y_shape"),
    [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)),
     ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (5, 3, 4)), ((3,), (5, 3, 4)), ((7, 1, 2, 3), (5, 3, 4))],
)  # fmt: skip
def test_matmul_is_numpys(x_shape: tuple[int, ...], y_shape: tuple[int, ...]) -> None:
    x, y = array(*x_shape, dtype=np.float64), array(*y_shape, dtype=np.float64)
    expected = x @ y
    same(snp.matmul(x, y), expected)
    same(shax.jit(lambda x, y: x @ y)(x, y), expected)
    same(shax.jit(lambda x: x @ y)(x), expected)
    same(shax.jit(lambda y: x @ y)(y), expected)  # ndarray @ tracer: numpy's matmul ufunc reaches shax
    # The products' gradients: d<x @ y, w>/dx = w @ yᵀ summed over broadcast axes (numpy's matmul rule).
    w = array(*np.shape(expected), dtype=np.float64)
    gx, gy = shax.grad(lambda x, y: reduce_sum(snp.matmul(x, y) * w, list(range(w.ndim))))(x, y)
    dx, dy = array(*x_shape, dtype=np.float64), array(*y_shape, dtype=np.float64)
    np.testing.assert_allclose(np.sum((dx @ y) * w), np.sum(dx * gx), rtol=1e-10)
    np.testing.assert_allclose(np.sum((x @ dy) * w), np.sum(dy * gy), rtol=1e-10)


INDEXES = [0, -1, (1, 2), (slice(None), 1), (Ellipsis, 0), (None, 0), (slice(-5, 2), None, slice(1, 100)),
           (slice(3, 1),), (Ellipsis,), (slice(None), Ellipsis, None), (np.int64(1), slice(1, None)), (),
           slice(None, None, -1), (slice(None), slice(None, 0, -1)), (1, slice(5, 0, -1), slice(None, None, -1)),
           (Ellipsis, slice(None, 1, -1)), (slice(0, 2, -1),)]  # fmt: skip


@pytest.mark.parametrize("key", INDEXES, ids=repr)
def test_basic_indexing_is_numpys(key: Any) -> None:
    x = array(2, 3, 4)
    same(shax.jit(lambda x: x[key])(x), x[key])
    xs = array(5, 2, 3, 4)
    same(shax.vmap(lambda x: x[key])(xs), np.stack([v[key] for v in xs]))


# What numpy refuses, and a boolean scalar (numpy's new axis, selected or not), which shax does not read.
BAD_INDEXES = [True, 1.0, (0, 0, 0, 0), (Ellipsis, Ellipsis), 5, -4, [1.5], "a", slice(0.5, 2)]


@pytest.mark.parametrize("key", BAD_INDEXES)
def test_bad_indexing_is_a_shax_error(key: Any) -> None:
    with pytest.raises(shax.ShaxError, match="indexing"):
        shax.jit(lambda x: x[key])(array(3, 2))


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_flip_is_numpys_and_its_own_transpose(axis: Any) -> None:
    x, w = array(2, 3, 4), array(2, 3, 4) + 0.5
    same(snp.flip(x, axis), np.flip(x, axis))
    same(shax.jit(lambda x: snp.flip(x, axis))(x), np.flip(x, axis))
    xs = array(5, 2, 3, 4)
    same(shax.vmap(lambda x: snp.flip(x, axis))(xs), np.stack([np.flip(v, axis) for v in xs]))
    # d<flip x, w>/dx = flip w
    same(shax.grad(lambda x: reduce_sum(snp.flip(x, axis) * w, [0, 1, 2]))(x), np.flip(w, axis))


def test_array_attributes() -> None:
    x = array(2, 3, 4)

    def f(t: Any) -> Any:
        assert (t.size, t.T.shape, t.mT.shape, len(t)) == (24, (4, 3, 2), (2, 4, 3), 2)
        assert (t.reshape(4, -1).shape, t.reshape((-1,)).shape) == ((4, 6), (24,))
        assert (t.transpose().shape, t.transpose(1, 0, 2).shape, t.transpose((2, 0, 1)).shape) == (
            (4, 3, 2), (3, 2, 4), (4, 2, 3),
        )  # fmt: skip
        return snp.stack(list(t), axis=0) + t.T.T

    same(shax.jit(f)(x), 2 * x)


def test_len_and_mT_need_rank() -> None:
    with pytest.raises(shax.ShaxError, match="len"):
        shax.jit(len)(np.float32(1.0))
    with pytest.raises(shax.ShaxError, match="mT"):
        shax.jit(lambda t: t.mT)(array(3))


def test_constructors_are_numpys() -> None:
    x = array(2, 3)
    same(snp.zeros((2, 3)), np.zeros((2, 3)))
    same(snp.ones(3, np.float32), np.ones(3, np.float32))
    same(snp.full((2,), 7, np.int32), np.full((2,), 7, np.int32))
    same(snp.zeros_like(x), np.zeros_like(x))
    same(snp.ones_like(x), np.ones_like(x))
    same(snp.arange(5), np.arange(5))
    same(snp.arange(1, 7, 2, dtype=np.float32), np.arange(1, 7, 2, dtype=np.float32))
    same(snp.eye(3, 4, 1), np.eye(3, 4, 1))
    same(snp.linspace(0, 1, 5), np.linspace(0, 1, 5))
    assert (snp.shape(x), snp.ndim(x), snp.size(x), snp.size(x, -1)) == ((2, 3), 2, 6, 3)


def test_zeros_like_a_tracer_is_a_traced_constant() -> None:
    x = array(2, 3)
    same(shax.jit(lambda t: snp.zeros_like(t) + snp.ones_like(t) * t)(x), x)
    defn = shax.trace(lambda t: snp.zeros_like(t), shax.f32[2, 3])
    assert "broadcast [] [2,3]" in str(defn)


def test_ndarray_operators_reach_the_tracer() -> None:
    x, a = array(2, 3), array(2, 3)
    same(shax.jit(lambda t: a * t - a / (t * t + 1.0) + np.float32(2.0) * t)(x), a * x - a / (x * x + 1.0) + 2 * x)
    same(shax.jit(lambda t: a == t)(x), a == x)


def test_numpy_names_shax_lacks_are_shax_errors() -> None:
    x = array(2, 3)
    with pytest.raises(shax.ShaxError, match=r"numpy\.partition"):
        shax.jit(lambda t: np.partition(t, 1))(x)
    with pytest.raises(shax.ShaxError, match=r"numpy\.bitwise_xor"):
        shax.jit(lambda t: np.bitwise_xor(t, t))(x)
    with pytest.raises(shax.ShaxError, match=r"numpy\.add\.reduce"):
        shax.jit(lambda t: np.add.reduce(t))(x)
    with pytest.raises(shax.ShaxError, match="out"):
        shax.jit(lambda t: np.add(t, t, out=t))(x)
    with pytest.raises(shax.ShaxError, match="not supported"):
        shax.jit(lambda t: np.fft.fft(t))(x)


@pytest.mark.parametrize(
    "call",
    [
        lambda t: snp.concatenate([t, t[:, :1].T]),
        lambda t: snp.concatenate([]),
        lambda t: snp.reshape(t, (4, -1)),
        lambda t: snp.reshape(t, (-1, -1)),
        lambda t: snp.squeeze(t, 0),
        lambda t: snp.split(t, 4, axis=1),
        lambda t: snp.stack([t, t.T]),
        lambda t: snp.swapaxes(t, 0, 2),
        lambda t: snp.matmul(t, t),
        lambda t: snp.matmul(t[0, 0], t),
    ],
)
def test_bad_shapes_are_shax_errors(call: Callable[[Any], Any]) -> None:
    with pytest.raises(shax.ShaxError):
        shax.jit(call)(array(2, 3))
    with pytest.raises(shax.ShaxError):
        call(array(2, 3))


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (lambda x, reps=reps: snp.tile(x, reps), lambda x, reps=reps: np.tile(x, reps))
        for reps in (2, (2, 1), (1, 3), (2, 2, 2), 0)
    ]
    + [
        (lambda x, r=r, a=axis: snp.repeat(x, r, a), lambda x, r=r, a=axis: np.repeat(x, r, a))
        for r, axis in ((2, None), (3, 0), (2, 1), (2, -1), (0, 0))
    ],
)
def test_tile_and_repeat_are_numpys(function: Any, expected: Any) -> None:
    x, xs = array(2, 3), array(4, 2, 3)
    same(function(x), expected(x))
    same(shax.jit(function)(x), expected(x))
    same(shax.vmap(function)(xs), np.stack([expected(v) for v in xs]))
    # Linear: <f(dx), w> = <dx, fᵀ(w)>, the transpose by grad
    w, dx = array(*np.shape(expected(x))) + 0.5, array(2, 3) - 0.25
    gradient = shax.grad(lambda x: snp.sum(function(x) * w))(x)
    np.testing.assert_allclose(np.sum(expected(dx) * w), np.sum(dx * gradient), rtol=1e-5)  # f32


def test_repeat_needs_a_count_per_element() -> None:
    with pytest.raises(shax.ShaxError, match="repeat"):
        snp.repeat(array(3), [1, 2])


# Found by the fuzz (tests/test_fuzz.py): numpy's own errors escaped.
@pytest.mark.parametrize(
    "make",
    [
        lambda: snp.zeros(None),
        lambda: snp.ones((2, "a")),
        lambda: snp.full((2,), 1.0, dtype="no dtype"),
        lambda: snp.arange(10**30),
        lambda: snp.eye(2, dtype=object()),
        lambda: snp.linspace("a", 1.0),
        lambda: snp.zeros_like(None),
        lambda: snp.sin([[1.0], [1.0, 2.0]]),
        lambda: snp.arctan2(np.array([None], dtype=object), 1.0),
        lambda: shax.trace(lambda x: snp.ones(x), shax.i32[()]),
    ],
)
def test_bad_arguments_of_numpy_calls_are_shax_errors(make: Callable[[], Any]) -> None:
    with pytest.raises(shax.ShaxError, match="test_numpy_arrays.py:"):
        with typeguard.suppress_type_checks():  # shax's own checks, as users meet them
            make()
