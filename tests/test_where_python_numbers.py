"""`where(c, 1.5, -2)`: two Python numbers of different kinds are one weak float, as numpy
and JAX read them (before, traced, they were lifted as an f32 and an i32 and refused)."""

from __future__ import annotations

import numpy as np

import shax
import shax.numpy as jnp


def test_a_float_and_an_int_branch_are_one_float() -> None:
    a = np.array([1.0, -1.0, 0.0])
    traced = shax.jit(lambda a: jnp.where(a > 0, 1.5, -2))(a)
    np.testing.assert_array_equal(traced, [1.5, -2.0, -2.0])
    assert traced.dtype == np.float32  # weak numbers alone: f32, as a Python number argument is
    assert jnp.where(a > 0, 1.5, -2).dtype == np.float64  # numpy values: numpy's answer
    grad = shax.grad(lambda a: jnp.sum(jnp.where(a > 0, 2, 0.5) * a))(a)
    np.testing.assert_array_equal(grad, [2.0, 0.5, 0.5])


def test_a_float_number_beside_an_f64_array_stays_f64() -> None:
    a = np.array([1.0, -1.0])
    got = shax.jit(lambda a: (jnp.where(a > 0, a, -2), jnp.select([a > 0], [1], 0.5)))(a)
    assert got[0].dtype == np.float64 and got[0].tolist() == [1.0, -2.0]
    assert got[1].tolist() == [1.0, 0.5]
