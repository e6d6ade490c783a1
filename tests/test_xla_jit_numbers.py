"""`shax.jit(f, backend="xla")` with Python numbers among array leaves: the fast path's key
fixes which leaves are numbers, so each call converts those only (to their declared
dtypes, weakly typed), checks that an int fits, and hands the arrays on as they are."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax

jax = pytest.importorskip("jax")


def step(p: dict[str, Any], lr: Any, n: Any) -> dict[str, Any]:
    return {k: v * lr + n for k, v in p.items()}


def test_numbers_among_many_arrays_on_the_fast_path() -> None:
    params = {f"w{i}": np.full(3, float(i), np.float32) for i in range(6)}
    f = shax.jit(step, backend="xla")
    first = f(params, 0.5, 2)  # the slow path: stores the key (6 arrays, a float, an int)
    assert len(f._fast) == 1
    for lr, n in ((0.5, 2), (0.25, -1), (3.0, 7)):  # the fast path, other values
        got = f(params, lr, n)
        assert len(f._fast) == 1
        for k, v in params.items():
            assert got[k].dtype == first[k].dtype  # the numbers' types, as the first call found them
            np.testing.assert_allclose(np.asarray(got[k]), v * lr + n, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(f(params, 0.5, 2)["w3"]), np.asarray(first["w3"]))
    with pytest.raises(shax.ShaxValueError, match="jit: argument 7: the Python int 4294967296 does not fit i32"):
        f(params, 0.5, 2**32)
