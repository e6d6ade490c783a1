"""`shax.nn` gives jax.nn's values and gradients, on numpy values and traced (jit, vmap,
grad), stably where the naive formula overflows."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from shax import nn

X = np.array([[-3.0, -0.5, 0.0, 0.5, 3.0], [100.0, -100.0, 2.0, 2.0, -1.0]])


def reference_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


Reference = Callable[[np.ndarray], np.ndarray]
ELEMENTWISE: list[tuple[str, Callable[..., Any], Reference, Reference]]
ELEMENTWISE = [
    # name, shax's, the value, the derivative (jax.nn's, at 0 too)
    ("relu", nn.relu, lambda x: np.maximum(x, 0.0), lambda x: (x > 0).astype(x.dtype)),
    ("sigmoid", nn.sigmoid, sigmoid, lambda x: sigmoid(x) * (1 - sigmoid(x))),
    ("softplus", nn.softplus, lambda x: np.logaddexp(x, 0.0), sigmoid),
    ("silu", nn.silu, lambda x: x * sigmoid(x), lambda x: sigmoid(x) + x * sigmoid(x) * (1 - sigmoid(x))),
    (
        "gelu_exact",
        lambda x: nn.gelu(x, approximate=False),
        lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2))),
        lambda x: 0.5 * (1 + erf(x / np.sqrt(2))) + x * np.exp(-0.5 * x * x) / np.sqrt(2 * np.pi),
    ),
]


@pytest.mark.parametrize(("name", "f", "value", "derivative"), ELEMENTWISE, ids=[e[0] for e in ELEMENTWISE])
def test_activations_values_and_gradients(name: str, f: Any, value: Any, derivative: Any) -> None:
    x = X.ravel()
    np.testing.assert_allclose(f(x), value(x), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(shax.jit(f)(x), value(x), rtol=1e-12, atol=1e-300)
    gradient = shax.vmap(shax.grad(f))(x)
    np.testing.assert_allclose(gradient, derivative(x), rtol=1e-10, atol=1e-300)


def test_gelu_approximate_is_jaxs_default() -> None:
    x = X.ravel()
    expected = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(shax.jit(nn.gelu)(x), expected, rtol=1e-12)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_and_log_softmax_are_stable(axis: int) -> None:
    expected = reference_softmax(X, axis)
    np.testing.assert_allclose(nn.softmax(X, axis=axis), expected, rtol=1e-12)
    np.testing.assert_allclose(shax.jit(lambda x: nn.softmax(x, axis=axis))(X), expected, rtol=1e-12)
    logs = shax.jit(lambda x: nn.log_softmax(x, axis=axis))(X)
    assert np.all(np.isfinite(logs))
    np.testing.assert_allclose(np.exp(logs), expected, rtol=1e-12)


def test_log_softmax_gradient_is_jaxs() -> None:
    # d/dx Σᵢ cᵢ log_softmax(x)ᵢ = c − softmax(x) · Σ c
    c = np.array([1.0, 0.0, 2.0, 0.0, -1.0])
    x = X[1]
    gradient = shax.grad(lambda x: snp.sum(nn.log_softmax(x) * c))(x)
    np.testing.assert_allclose(gradient, c - reference_softmax(x, 0) * c.sum(), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (1, False), (0, True), ((0, 1), False), (-1, True)])
def test_logsumexp_is_stable_and_its_gradient_a_softmax(axis: Any, keepdims: bool) -> None:
    m = X.max(axis=axis, keepdims=True)
    expected = m + np.log(np.exp(X - m).sum(axis=axis, keepdims=True))
    if not keepdims:
        expected = np.squeeze(expected, axis=axis)
    np.testing.assert_allclose(nn.logsumexp(X, axis=axis, keepdims=keepdims), expected, rtol=1e-12)
    np.testing.assert_allclose(shax.jit(lambda x: nn.logsumexp(x, axis, keepdims))(X), expected, rtol=1e-12)
    gradient = shax.grad(lambda x: snp.sum(nn.logsumexp(x, axis=axis, keepdims=keepdims)))(X)
    shift = X - X.max(axis=axis, keepdims=True)
    np.testing.assert_allclose(gradient, np.exp(shift) / np.exp(shift).sum(axis=axis, keepdims=True), rtol=1e-12)


def test_one_hot() -> None:
    labels = np.array([0, 2, 1, 2], np.int32)
    expected = np.eye(3, dtype=np.float32)[labels]
    np.testing.assert_array_equal(nn.one_hot(labels, 3), expected)
    np.testing.assert_array_equal(shax.jit(lambda y: nn.one_hot(y, 3))(labels), expected)
    np.testing.assert_array_equal(shax.jit(lambda y: nn.one_hot(y, 3, axis=0))(labels), expected.T)
    assert nn.one_hot(labels, 3, dtype=np.float64).dtype == np.float64


# Found by the fuzz (tests/test_fuzz.py): Python's and numpy's errors escaped.
@pytest.mark.parametrize(
    "call",
    [
        lambda: nn.relu(None),
        lambda: nn.softmax([1.0, 2.0]),
        lambda: nn.gelu(np.ones(2), approximate=np.array([])),
        lambda: nn.one_hot(np.arange(3), None),
        lambda: nn.one_hot(np.arange(3), 4, axis=None),
        lambda: nn.one_hot(np.arange(3), 4, dtype="no dtype"),
    ],
)
def test_bad_arguments_are_shax_errors(call: Callable[[], Any]) -> None:
    with pytest.raises(shax.ShaxError, match="test_nn.py:"):
        with typeguard.suppress_type_checks():  # shax's own checks, as users meet them
            call()


def test_logsumexp_of_infinities_is_jaxs() -> None:
    # jax.nn.logsumexp: −∞ for a row of −∞, +∞ with a +∞ in it (not ∞ − ∞ = NaN)
    a = np.array([[-np.inf, -np.inf], [0.0, 1.0], [np.inf, 0.0]])
    with np.errstate(divide="ignore"):
        result = shax.jit(lambda a: nn.logsumexp(a, axis=1))(a)
    np.testing.assert_allclose(result, [-np.inf, np.log(1 + np.e), np.inf])
