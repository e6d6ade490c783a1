"""JAX arrays are taken wherever numpy arrays are (`shax.core.jax_arrays`): the transforms'
arguments, tangents and cotangents, and `shax.numpy`'s functions; results are numpy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

X = np.array([0.5, -1.0, 2.0], np.float32)


def loss(x: Any) -> Any:
    return snp.sum(snp.sin(x) * x)


def _same(got: Any, want: Any) -> None:
    assert type(got) is np.ndarray or isinstance(got, np.generic), type(got)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_transforms_take_jax_arrays_and_return_numpy_arrays() -> None:
    x = jnp.asarray(X)
    _same(shax.grad(loss)(x), shax.grad(loss)(X))
    _same(shax.jit(loss)(x), shax.jit(loss)(X))
    _same(shax.vmap(lambda v: v * 2.0)(x), X * 2)
    out, tangent = shax.jvp(loss, (x,), (jnp.ones(3, jnp.float32),))
    _same(out, loss(X))
    _same(tangent, shax.jvp(loss, (X,), (np.ones(3, np.float32),))[1])
    out, vjp_fn = shax.vjp(lambda v: v * v, x)
    _same(out, X * X)
    _same(vjp_fn(jnp.ones(3, jnp.float32))[0], 2 * X)
    _same(shax.value_and_grad(loss)(x)[1], shax.grad(loss)(X))


def test_pytrees_of_jax_arrays() -> None:
    params = {"w": jnp.asarray(X), "b": jnp.float32(1.0)}
    grads = shax.grad(lambda p: snp.sum(p["w"] * p["b"]))(params)
    _same(grads["w"], np.ones(3, np.float32))
    _same(grads["b"], np.float32(X.sum()))


def test_numpy_functions_take_jax_arrays() -> None:
    x = jnp.asarray(X)
    _same(np.asarray(snp.sin(x)), np.sin(X))
    _same(np.asarray(snp.add(x, np.ones(3, np.float32))), X + 1)
    _same(np.asarray(snp.concatenate([x, x])), np.concatenate([X, X]))
    _same(snp.sum(x), X.sum())


def test_values_agree_with_jax() -> None:
    x = jnp.asarray(X)
    np.testing.assert_allclose(shax.grad(loss)(x), jax.grad(lambda v: jnp.sum(jnp.sin(v) * v))(x), rtol=1e-6)
