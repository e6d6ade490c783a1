"""`x.trace(offset, axis1, axis2)` on a tracer is numpy's (issue 31): the sum along a
diagonal, under jit, vmap and grad, equal to numpy's values and to JAX's gradients. The
Trace recording a tracer is its `owner`, so the name is free for numpy's method."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import shax

M = np.arange(12, dtype=np.float64).reshape(3, 4) / 3
CUBE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

FORMS = [
    ((), M),
    ((1,), M),
    ((-2,), M),
    ((0, 1, 2), CUBE),
    ((1, 2, 0), CUBE),
    ((-1, 0, -1), CUBE),
]


@pytest.mark.parametrize(("args", "x"), FORMS)
def test_traced_trace_is_numpys(args: tuple[int, ...], x: np.ndarray) -> None:
    got = shax.jit(lambda t: t.trace(*args))(x)
    want = x.trace(*args)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_trace_keywords_and_dtype() -> None:
    got = shax.jit(lambda t: t.trace(offset=-1, axis1=1, axis2=0, dtype=np.float64))(M.astype(np.float32))
    want = M.astype(np.float32).trace(offset=-1, axis1=1, axis2=0, dtype=np.float64)
    assert np.asarray(got).dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_vmapped_trace_is_per_example() -> None:
    got = shax.vmap(lambda t: t.trace(1))(CUBE)
    np.testing.assert_allclose(got, [m.trace(1) for m in CUBE], rtol=1e-6)


def test_grad_of_trace_is_jaxs() -> None:
    def loss(x: Any) -> Any:
        return (x * x).trace(1) + x.trace()

    want = jax.grad(loss)(jnp.asarray(M, jnp.float32))
    np.testing.assert_allclose(shax.grad(loss)(M.astype(np.float32)), want, rtol=1e-6)


def test_a_tracer_still_knows_its_trace() -> None:
    seen: list[Any] = []
    shax.jit(lambda t: seen.append(t.owner) or t)(M)
    assert isinstance(seen[0], shax.tracing.tracer.Trace)


def test_same_axes_are_a_shax_error_naming_trace_and_the_line() -> None:
    with pytest.raises(shax.ShaxError, match=r"trace: diagonal: axis1 and axis2 cannot be the same") as raised:
        shax.jit(lambda t: t.trace(0, 1, 1))(M)
    assert "test_trace_method.py:" in str(raised.value)
