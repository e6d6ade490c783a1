"""`shax.nn` at the edges of its domain: NaN and ±inf (JAX's values and derivatives),
integer, unsigned and bool inputs (computed in f32, JAX's default float, before any
arithmetic that would wrap around), f16/f32/f64 kept, complex refused (shax has no
complex dtype), numpy integer axes, and sizes numpy cannot allocate refused.

The expected values are numpy formulas in float64, or (marked) jax.nn's, computed once
with jax 0.4 with x64 disabled and written down here."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import shax
from shax import nn

NAN, INF = np.nan, np.inf


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def _logsumexp(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    m = np.max(x, axis=axis, keepdims=True)
    return np.squeeze(m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)), axis=axis)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# name, shax's, the value in float64 (the reference for finite inputs)
FUNCTIONS: list[tuple[str, Callable[..., Any], Callable[[np.ndarray], np.ndarray]]] = [
    ("sigmoid", nn.sigmoid, _sigmoid),
    ("softplus", nn.softplus, lambda x: np.logaddexp(x, 0.0)),
    ("silu", nn.silu, lambda x: x * _sigmoid(x)),
    ("gelu", nn.gelu, _gelu),
    ("softmax", nn.softmax, _softmax),
    ("log_softmax", nn.log_softmax, lambda x: np.log(_softmax(x))),
    ("logsumexp", nn.logsumexp, _logsumexp),
]
IDS = [f[0] for f in FUNCTIONS]


def test_relu_of_nan_is_nan_as_jaxs() -> None:
    x = np.array([NAN, INF, -INF, 0.0, -1.0, 2.0], np.float32)
    expected = np.array([NAN, INF, 0.0, 0.0, 0.0, 2.0], np.float32)  # jax.nn.relu's
    np.testing.assert_array_equal(nn.relu(x), expected)
    np.testing.assert_array_equal(shax.jit(nn.relu)(x), expected)
    assert np.isnan(nn.relu(np.float64(NAN)))


def test_relu_derivative_at_nan_and_infinities_is_jaxs() -> None:
    x = np.array([NAN, INF, -INF, 0.0, 2.0])
    # jax.grad(jax.nn.relu) at nan, inf, -inf, 0, 2: the derivative is 0 wherever x > 0 fails.
    np.testing.assert_array_equal(shax.vmap(shax.grad(nn.relu))(x), [0.0, 1.0, 0.0, 0.0, 1.0])


def test_relu_keeps_integer_dtypes_and_makes_bools_i32() -> None:
    for dtype in (np.uint8, np.int32, np.int64):
        x = np.array([0, 1, 2], dtype)
        result = nn.relu(x)
        assert result.dtype == dtype
        np.testing.assert_array_equal(result, x)
    x = np.array([0, 5, -2], np.int32)
    np.testing.assert_array_equal(shax.jit(nn.relu)(x), [0, 5, 0])
    result = nn.relu(np.array([True, False]))  # jax.nn.relu: int32 [1, 0]
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, [1, 0])


@pytest.mark.parametrize(("name", "f", "reference"), FUNCTIONS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.uint8, np.int32, np.int64, np.bool_])
def test_integer_and_bool_inputs_are_computed_in_f32(name: str, f: Any, reference: Any, dtype: Any) -> None:
    """uint8 arithmetic would wrap around (softplus of 1 was inf, sigmoid of 1 was 0), so
    integers and bools are converted to f32 first, on numpy values and under jit alike."""
    x = np.array([0, 1, 1, 0], dtype) if dtype is np.bool_ else np.array([0, 1, 2, 200], dtype)
    expected = reference(x.astype(np.float64)).astype(np.float32)
    for result in (f(x), shax.jit(f)(x)):
        assert result.dtype == np.float32
        np.testing.assert_allclose(result, expected, rtol=2e-6, atol=1e-6)


def test_integer_inputs_match_jax_where_jax_defines_them() -> None:
    # jax.nn.softplus / gelu / logsumexp of jnp.array([0, 1, 2], jnp.uint8), float32
    x = np.array([0, 1, 2], np.uint8)
    np.testing.assert_allclose(nn.softplus(x), [0.6931472, 1.3132617, 2.126928], rtol=1e-6)
    np.testing.assert_allclose(nn.gelu(x), [0.0, 0.841192, 1.9545977], rtol=1e-6)
    np.testing.assert_allclose(nn.logsumexp(x), 2.407606, rtol=1e-6)


@pytest.mark.parametrize(("name", "f", "reference"), FUNCTIONS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_dtypes_are_kept(name: str, f: Any, reference: Any, dtype: Any) -> None:
    """f16 is no shax dtype: the elementwise functions compute it with numpy (JAX's f16
    values), the reductions refuse it, as shax's reductions refuse it on numpy values."""
    x = np.array([-2.0, 0.0, 0.5, 3.0], dtype)
    if dtype is np.float16 and name in ("softmax", "log_softmax", "logsumexp"):
        with pytest.raises(shax.ShaxTypeError, match=r"reduce_max: dtype float16 is not supported"):
            f(x)
        return
    result = f(x)
    assert result.dtype == dtype
    tolerance = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(result, reference(x.astype(np.float64)), rtol=tolerance, atol=tolerance)
    if dtype is not np.float16:  # shax traces no f16
        np.testing.assert_allclose(shax.jit(f)(x), result, rtol=tolerance, atol=tolerance)


# jax.nn's values at [nan, inf, -inf, 0] (float32): elementwise ones, then softmax's and
# log_softmax's (all nan: the maximum is nan), logsumexp's.
NONFINITE = np.array([NAN, INF, -INF, 0.0], np.float32)
JAX_NONFINITE = {
    "sigmoid": [NAN, 1.0, 0.0, 0.5],
    "softplus": [NAN, INF, 0.0, math.log(2.0)],
    "silu": [NAN, INF, NAN, 0.0],
    "gelu": [NAN, INF, NAN, 0.0],
    "softmax": [NAN, NAN, NAN, NAN],
    "log_softmax": [NAN, NAN, NAN, NAN],
    "logsumexp": NAN,
}


@pytest.mark.parametrize(("name", "f", "reference"), FUNCTIONS, ids=IDS)
def test_nan_and_infinities_give_jaxs_values(name: str, f: Any, reference: Any) -> None:
    with np.errstate(all="ignore"):
        for result in (f(NONFINITE), shax.jit(f)(NONFINITE)):
            np.testing.assert_allclose(result, JAX_NONFINITE[name], rtol=1e-6)
            assert result.dtype == np.float32


def test_infinities_alone_reduce_as_jaxs() -> None:
    # jax.nn.logsumexp([-inf, -inf]) is -inf, of [inf, 0] inf; softmax([inf, 0]) is [nan, nan].
    with np.errstate(all="ignore"):
        assert nn.logsumexp(np.array([-INF, -INF])) == -INF
        assert nn.logsumexp(np.array([INF, 0.0])) == INF
        np.testing.assert_array_equal(nn.softmax(np.array([INF, 0.0])), [NAN, NAN])
        np.testing.assert_array_equal(nn.log_softmax(np.array([INF, 0.0])), [NAN, NAN])


@pytest.mark.parametrize(
    ("name", "derivative", "at"),
    [
        # jax.grad of each at nan, inf, -inf
        ("sigmoid", nn.sigmoid, [NAN, 0.0, 0.0]),
        ("softplus", nn.softplus, [NAN, 1.0, 0.0]),
    ],
)
def test_derivatives_at_nan_and_infinities_are_jaxs(name: str, derivative: Any, at: list[float]) -> None:
    with np.errstate(all="ignore"):
        gradient = shax.vmap(shax.grad(derivative))(np.array([NAN, INF, -INF]))
    np.testing.assert_array_equal(gradient, at)


@pytest.mark.parametrize("name", [*IDS, "relu", "one_hot"])
def test_complex_inputs_are_refused(name: str) -> None:
    f = getattr(nn, name)
    args = (3,) if name == "one_hot" else ()
    with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: .*complex128.*test_nn_edges\.py"):
        f(np.array([1 + 1j, 2.0]), *args)


def test_numpy_integer_axes_are_axes() -> None:
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]])
    for axis in (np.int64(0), np.int32(1), np.int64(-1), (np.int64(0), np.int32(1))):
        expected = _logsumexp(x, axis=axis)  # type: ignore[arg-type]
        np.testing.assert_allclose(nn.logsumexp(x, axis=axis), expected, rtol=1e-12)
        np.testing.assert_allclose(shax.jit(lambda v, a=axis: nn.logsumexp(v, axis=a))(x), expected, rtol=1e-12)
    np.testing.assert_allclose(nn.softmax(x, axis=np.int64(0)), _softmax(x.T).T, rtol=1e-12)
    np.testing.assert_array_equal(nn.one_hot(np.array([0, 2]), np.int64(3), axis=np.int32(0)), np.eye(3)[[0, 2]].T)


@pytest.mark.parametrize(
    "call",
    [
        lambda: nn.logsumexp(np.ones(3), axis=True),
        lambda: nn.softmax(np.ones(3), axis=True),
        lambda: nn.log_softmax(np.ones(3), axis=(0, True)),
        lambda: nn.one_hot(np.array([1]), True),
        lambda: nn.one_hot(np.array([1]), 3, axis=True),
    ],
)
def test_bool_axes_and_sizes_are_refused(call: Any) -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"^(logsumexp|softmax|log_softmax|one_hot|max|sum): .*True"):
        call()


@pytest.mark.parametrize("num_classes", [10**30, 2**62, -1])
def test_absurd_class_counts_are_refused(num_classes: int) -> None:
    with pytest.raises(shax.ShaxValueError, match=r"^one_hot: num_classes"):
        nn.one_hot(np.array([0, 1]), num_classes)


def test_class_counts_beyond_the_labels_dtype_still_work() -> None:
    labels = np.array([0, 255], np.uint8)
    result = nn.one_hot(labels, 300)
    np.testing.assert_array_equal(result, np.eye(300, dtype=np.float32)[[0, 255]])
