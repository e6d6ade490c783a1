"""`shax.numpy.linalg`'s singular values: `svd`, `pinv`, `matrix_rank`, `cond` and the
matrix norms 'nuc', 2, −2 — values and dtypes equal to numpy's (JAX's where they differ:
pinv's cutoff, matrix_rank's i32), derivatives equal to JAX's (float64), and ShaxErrors
naming the function. The svd primitive itself is checked by its spec row (tests/spec.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp

L = snp.linalg
RNG = np.random.default_rng(7)
MATRICES = {
    "tall": RNG.normal(size=(4, 3)),
    "wide": RNG.normal(size=(2, 3)),
    "square": RNG.normal(size=(3, 3)),
    "stack": RNG.normal(size=(2, 3, 2)),
}
RANK_ONE = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]])


def _reconstructed(u: Any, s: Any, vh: Any) -> Any:
    k = np.shape(s)[-1]
    return np.asarray(u)[..., :k] * np.asarray(s)[..., None, :] @ np.asarray(vh)[..., :k, :]


@pytest.mark.parametrize("name", MATRICES)
@pytest.mark.parametrize("full", [True, False])
def test_svd_is_numpys(name: str, full: bool) -> None:
    a = MATRICES[name]
    expected = np.linalg.svd(a, full_matrices=full)
    for result in (L.svd(a, full_matrices=full), shax.jit(lambda x: L.svd(x, full_matrices=full))(a)):
        assert type(result).__name__ == "SVDResult"
        for got, want in zip(result, expected):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, atol=1e-12)
        np.testing.assert_allclose(_reconstructed(*result), a, atol=1e-12)
    np.testing.assert_allclose(L.svd(a, compute_uv=False), expected.S, atol=1e-12)


def test_svd_dtypes_follow_numpy() -> None:
    f32 = np.eye(3, dtype=np.float32)
    assert L.svd(f32).S.dtype == np.float32
    assert shax.jit(lambda x: L.svd(x, compute_uv=False))(f32).dtype == np.float32
    assert L.svd(np.arange(6).reshape(2, 3), compute_uv=False).dtype == np.float64  # ints read as f64
    assert shax.vmap(lambda x: L.svd(x, compute_uv=False))(MATRICES["stack"]).shape == (2, 2)


@pytest.mark.parametrize(
    ("ord", "axis"), [("nuc", None), (2, None), (-2, None), ("nuc", (0, 2)), (2, (2, 1)), (-2, (-1, -2))]
)
def test_matrix_norms_of_singular_values_are_numpys(ord: Any, axis: Any) -> None:
    x = MATRICES["stack"] if axis is not None else MATRICES["tall"]
    for keepdims in (False, True):
        want = np.linalg.norm(x, ord, axis, keepdims)
        got = L.norm(x, ord, axis, keepdims)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-12)
        np.testing.assert_allclose(shax.jit(L.norm, static_argnums=(1, 2, 3))(x, ord, axis, keepdims), want, rtol=1e-12)


def test_pinv_matrix_rank_and_cond() -> None:
    for a in MATRICES.values():
        np.testing.assert_allclose(L.pinv(a), np.linalg.pinv(a), atol=1e-12)
        np.testing.assert_allclose(shax.jit(L.pinv)(a), np.linalg.pinv(a), atol=1e-12)
    np.testing.assert_allclose(L.pinv(RANK_ONE), np.linalg.pinv(RANK_ONE), atol=1e-12)
    assert L.pinv(np.float32(1.0) * RANK_ONE.astype(np.float32)).dtype == np.float32
    # JAX's default cutoff, 10·max(m, n)·eps relative: a singular value of 2e-15 is dropped (numpy's 1e-15 keeps it)
    tiny = np.diag([1.0, 2e-15])
    np.testing.assert_array_equal(L.pinv(tiny), np.diag([1.0, 0.0]))
    np.testing.assert_allclose(L.pinv(tiny, rtol=1e-15), np.linalg.pinv(tiny), rtol=1e-12)
    assert L.matrix_rank(RANK_ONE) == 1 and L.matrix_rank(MATRICES["tall"]) == 3
    rank = shax.jit(L.matrix_rank)(MATRICES["stack"])
    assert rank.dtype == np.int32 and rank.tolist() == [2, 2]
    assert L.matrix_rank(np.zeros(3)) == 0 and L.matrix_rank(np.ones(3)) == 1
    for p in (None, 2, -2, 1, -1, np.inf, -np.inf, "fro", "nuc"):
        np.testing.assert_allclose(L.cond(MATRICES["square"], p), np.linalg.cond(MATRICES["square"], p), rtol=1e-10)
    np.testing.assert_allclose(L.cond(MATRICES["tall"]), np.linalg.cond(MATRICES["tall"]), rtol=1e-12)


@pytest.fixture
def jax_x64() -> Iterator[Any]:
    jax = pytest.importorskip("jax")
    before = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield jax
    finally:
        jax.config.update("jax_enable_x64", before)


# (shax's function, JAX's): u and vh enter through their squares (their signs are LAPACK's)
FUNCTIONS = {
    "s": (lambda x: L.svd(x, compute_uv=False), lambda jnp, x: jnp.linalg.svd(x, compute_uv=False)),
    "u": (lambda x: L.svd(x, full_matrices=False).U ** 2, lambda jnp, x: jnp.linalg.svd(x, full_matrices=False).U ** 2),
    "vh": (
        lambda x: L.svd(x, full_matrices=False).Vh ** 2,
        lambda jnp, x: jnp.linalg.svd(x, full_matrices=False).Vh ** 2,
    ),
    "pinv": (L.pinv, lambda jnp, x: jnp.linalg.pinv(x)),
    "nuc": (lambda x: L.norm(x, "nuc", (-2, -1)), lambda jnp, x: jnp.linalg.norm(x, "nuc", (-2, -1))),
    "2": (lambda x: L.norm(x, 2, (-2, -1)), lambda jnp, x: jnp.linalg.norm(x, 2, (-2, -1))),
    "-2": (lambda x: L.norm(x, -2, (-2, -1)), lambda jnp, x: jnp.linalg.norm(x, -2, (-2, -1))),
    "cond": (L.cond, lambda jnp, x: jnp.linalg.cond(x)),
}


@pytest.mark.parametrize("name", ["tall", "wide"])  # m > n and n > m; square matrices are the spec row's
@pytest.mark.parametrize("function", FUNCTIONS)
def test_derivatives_are_jaxs(jax_x64: Any, name: str, function: str) -> None:
    ours, theirs = FUNCTIONS[function]
    a = MATRICES[name]
    tangent = np.cos(np.arange(a.size, dtype=np.float64)).reshape(a.shape)
    value, derivative = shax.jvp(ours, (a,), (tangent,))
    want, want_derivative = jax_x64.jvp(lambda x: theirs(jax_x64.numpy, x), (a,), (tangent,))
    np.testing.assert_allclose(value, want, atol=1e-12)
    np.testing.assert_allclose(derivative, want_derivative, atol=1e-10)


def test_pinv_derivative_at_a_rank_deficient_matrix_is_jaxs(jax_x64: Any) -> None:
    tangent = np.ones_like(RANK_ONE)
    _, derivative = shax.jvp(L.pinv, (RANK_ONE,), (tangent,))
    _, want = jax_x64.jvp(jax_x64.numpy.linalg.pinv, (RANK_ONE,), (tangent,))
    np.testing.assert_allclose(derivative, want, atol=1e-12)
    np.testing.assert_allclose(shax.vmap(L.pinv)(MATRICES["stack"]), np.linalg.pinv(MATRICES["stack"]), atol=1e-12)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: L.svd(np.ones(3)), "linalg.svd: needs a stack of matrices"),
        (lambda: L.svd(np.eye(2), hermitian=True), "linalg.svd: hermitian=True with compute_uv=True"),
        (lambda: L.svd(np.eye(2), full_matrices="yes"), "linalg.svd: full_matrices must be a bool"),
        (lambda: L.pinv(np.eye(2), rtol=0.1, rcond=0.1), "linalg.pinv: only one of rtol and rcond"),
        (lambda: L.pinv(np.eye(2), rtol=np.ones(1)), "linalg.pinv: rtol must be a number"),
        (lambda: L.matrix_rank(np.eye(2), rtol=0.1, tol=0.1), "linalg.matrix_rank: only one of rtol and tol"),
        (lambda: L.cond(np.ones((2, 3)), 1), "linalg.cond: needs square matrices for p=1"),
        (lambda: L.norm(np.ones(3), "nuc"), "linalg.norm: invalid order 'nuc' for a vector norm"),
        (lambda: shax.grad(lambda m: snp.sum(L.svd(m).U))(np.ones((3, 2))), "svd: is differentiated only with"),
    ],
)
@typeguard.suppress_type_checks  # the annotations forbid what is tested
def test_bad_input_is_a_shax_error_naming_the_function(call: Any, message: str) -> None:
    with pytest.raises(shax.ShaxError, match=message.replace("(", r"\(")):
        call()
