"""The optimizers: one interface (f, params, lr, iters, log), pytree parameters, and
convergence on a quadratic whose minimum is known."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from shax.optimizers import adam, gradient_descent, momentum
from typeclasses import reduce_sum

TARGET = np.array([1.0, -2.0, 0.5])


def quadratic(params: Any) -> Any:
    """Minimum 0 at w = TARGET, b = 3 (the step count n is not trained)."""
    d = params["w"] - TARGET
    return reduce_sum(d * d, axes=[0]) + (params["b"] - 3.0) * (params["b"] - 3.0)


@pytest.mark.parametrize(
    ("optimizer", "options"),
    [(gradient_descent, {"lr": 0.1}), (momentum, {"lr": 0.05, "beta": 0.8}), (adam, {"lr": 0.1})],
    ids=["gradient_descent", "momentum", "adam"],
)
def test_optimizers_minimize_a_pytree_quadratic(optimizer: Any, options: dict[str, Any]) -> None:
    params = {"w": np.zeros(3), "b": np.float64(0.0), "n": (np.int32(7),)}
    logged: list[str] = []
    found, value = optimizer(quadratic, params, iters=300, log=logged.append, **options)
    assert set(found) == {"w", "b", "n"} and isinstance(found["n"], tuple)
    assert found["n"][0] == 7 and np.asarray(found["n"][0]).dtype == np.int32
    np.testing.assert_allclose(found["w"], TARGET, atol=1e-3)
    assert abs(found["b"] - 3.0) < 1e-2 and value < 1e-4
    assert len(logged) == 301 and logged[0] == "Iteration 1: 14.25" and logged[-1].startswith("Iteration 301: ")


def test_a_list_of_parameters_is_the_argument_list() -> None:
    found, value = gradient_descent(lambda x, y: (x - 1.0) * (x - 1.0) + y * y, [3.0, 2.0], 0.25, 40, log=None)
    assert isinstance(found, list) and np.asarray(found[0]).dtype == np.float32
    np.testing.assert_allclose(found, [1.0, 0.0], atol=1e-6)
    assert value < 1e-12
