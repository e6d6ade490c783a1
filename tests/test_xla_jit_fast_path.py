"""`shax.jit(f, backend="xla")` calls again with arguments of the same types through a fast
path (a key of the leaves' dtypes and shapes, the jitted JAX function on them as they
are): it gives what the first call, through the slow path, gave; it is keyed on each
leaf's dtype and shape and a number's class, never on values; and arguments it does not
know fall back to the slow path, with its results and its errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

jax = pytest.importorskip("jax")


def scaled_sum(x: Any, y: Any) -> Any:
    return snp.sum(snp.sin(x) * y)


def _same(got: Any, expected: Any) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    np.testing.assert_array_equal(got, expected)


def test_a_second_call_gives_what_the_first_gave_for_each_kind_of_leaf() -> None:
    x32 = np.linspace(0, 1, 5, dtype=np.float32)
    cases: list[tuple[Any, ...]] = [
        (x32, np.float32(2.0)),  # an array and a numpy scalar
        (x32, 2.0),  # a Python float: weakly typed, f32 next to x32
        (x32.astype(np.float64), 2.0),  # f64 next to an f64 array: a 64-bit program, x64 on
        (jax.numpy.asarray(x32), np.float32(2.0)),  # a JAX array
        (np.float32(0.5), np.float32(2.0)),
    ]
    for args in cases:
        f = shax.jit(shax.grad(scaled_sum, argnums=(0, 1)), backend="xla")
        first = f(*args)  # the slow path, which stores the key
        assert len(f._fast) == 1
        second = f(*args)  # the fast path
        numpy_args = [np.asarray(a) if isinstance(a, jax.Array) else a for a in args]
        expected = shax.jit(shax.grad(scaled_sum, argnums=(0, 1)))(*numpy_args)
        for g1, g2, e in zip(first, second, expected):
            _same(g2, g1)
            np.testing.assert_allclose(np.asarray(g1), e, rtol=1e-6)
            assert np.asarray(g1).dtype == e.dtype


def test_the_key_is_each_leafs_dtype_and_shape_never_its_values() -> None:
    f = shax.jit(lambda x: snp.sum(x * x), backend="xla")
    assert f(np.ones(3, np.float32)).dtype == np.float32
    assert f(np.ones(3, np.float64)).dtype == np.float64  # another dtype: built again
    assert f(np.ones(4, np.float32)) == 4.0  # another shape: built again
    assert len(f._fast) == 3
    assert f(np.full(3, 2.0, np.float32)) == 12.0 and f(np.full(3, 2.0)).dtype == np.float64  # found, new values
    assert f(jax.numpy.full(3, 3.0, np.float32)) == 27.0  # a JAX array runs as a numpy array of its type
    assert f(np.float32(2.0)) == 4.0 and f(np.ones((), np.float32)) == 1.0  # a scalar and a 0-d array
    assert len(f._fast) == 5


def test_a_numbers_key_is_its_class_and_the_other_arguments_types() -> None:
    f = shax.jit(lambda x, y: x * y, backend="xla")
    assert f(np.float32(3.0), 2.0).dtype == np.float32  # 2.0 takes x's f32
    assert f(np.float64(3.0), 2.0).dtype == np.float64  # and here x's f64
    assert f(np.float32(3.0), np.float64(2.0)).dtype == np.float64  # a numpy f64 scalar is strongly typed
    assert f(3.0, 2.0).dtype == np.float32  # f32 when nothing else decides
    assert f(np.int32(3), 2).dtype == np.int32
    assert len(f._fast) == 5
    assert f(np.float32(3.0), 4.5) == 13.5 and f(3.0, 0.5) == 1.5  # found again, other values


def test_a_python_int_too_large_fails_on_the_fast_path_as_on_the_slow_one() -> None:
    f = shax.jit(lambda n, x: n + x, backend="xla")
    assert f(2, np.int32(1)) == 3
    for _ in range(2):  # the key of (int, i32) is stored; the value is checked on each call
        with pytest.raises(shax.ShaxValueError, match="the Python int 4294967296 does not fit i32"):
            f(2**32, np.int32(1))


def test_leaves_the_fast_path_does_not_know_take_the_slow_path() -> None:
    f = shax.jit(scaled_sum, backend="xla")
    x = np.linspace(0, 1, 3, dtype=np.float32)
    expected = f(x, np.float32(2.0))
    with pytest.raises(shax.ShaxTypeError, match=r"jit: argument 1: .*got str"):
        f(x, "2.0")
    # a shax tracer: the definition is inlined into the enclosing trace
    g = shax.grad(lambda y: f(x, y))(np.float32(2.0))
    np.testing.assert_allclose(g, np.sin(x).sum(), rtol=1e-6)
    # a pytree of arrays: flattened by JAX, keyed by its structure too
    h = shax.jit(lambda p: scaled_sum(p["x"], p["y"]), backend="xla")
    _same(h({"x": x, "y": np.float32(2.0)}), expected)
    _same(h({"x": x, "y": np.float32(2.0)}), expected)
    _same(h({"y": np.float32(2.0), "x": x}), expected)  # a dict's insertion order does not matter
    assert len(h._fast) == 1


def test_a_rebound_closure_variable_builds_again() -> None:
    scale = np.float32(2.0)
    f = shax.jit(lambda x: snp.sum(x) * scale, backend="xla")
    x = np.ones(3, np.float32)
    assert f(x) == 6.0 and f(x) == 6.0
    scale = np.float32(3.0)
    assert f(x) == 9.0
