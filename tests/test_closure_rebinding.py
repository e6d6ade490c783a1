"""A transformed function whose closure variable is rebound (to another array, even one of
the same type or equal values) is built again on its fast path, as in the cache: the
closure's objects are compared by identity, never with `==` (an array's is no bool)."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

BACKENDS = ["numpy"] + (["xla"] if importlib.util.find_spec("jax") else [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_reads_a_rebound_array(backend: str) -> None:
    w = np.ones(3, np.float32)
    f = shax.jit(lambda x: x * w, backend=backend)
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(f(x), w)
    w = np.full(3, 2.0, np.float32)  # another array of the same type
    np.testing.assert_array_equal(f(x), w)
    w = w.copy()  # equal values, another object: built again, same result
    np.testing.assert_array_equal(f(x), np.full(3, 2.0, np.float32))


def test_jit_with_static_arguments_and_grad_read_a_rebound_array() -> None:
    w = np.ones(3, np.float32)

    def scaled(x: Any, k: int) -> Any:
        return snp.sum(x * w) * k

    f = shax.jit(scaled, static_argnums=1)
    g = shax.grad(lambda x: snp.sum(x * w))
    x = np.ones(3, np.float32)
    assert f(x, 2) == 6.0
    np.testing.assert_array_equal(g(x), w)
    w = np.full(3, 3.0, np.float32)
    assert f(x, 2) == 18.0
    np.testing.assert_array_equal(g(x), w)
