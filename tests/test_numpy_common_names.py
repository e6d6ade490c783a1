"""The most-used jax.numpy names shax lacked (benchmarks/jnp_coverage.py), each a composition
of shax's functions: on numpy values numpy's own, traced (jit, vmap) numpy's values and
dtypes, differentiated as JAX differentiates them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import shax
import shax.numpy as snp

X = np.array([[0.5, 1.25, 2.0], [3.0, 1.5, 0.75]], np.float32)
P = np.array([1.5, -2.0, 0.25], np.float32)
NAN = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]], np.float32)
INF = np.array([1.0, -np.inf, np.inf, np.nan], np.float32)
M = np.array([True, False, True])
SOME_NAN = np.array([[1.0, np.nan, 3.0], [2.0, 0.5, np.nan]], np.float32)

# name: (function of module np_ (numpy, shax.numpy or jax.numpy) and arrays, the arrays)
CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "log10": (lambda np_, x: np_.log10(x), (X,)),
    "log2": (lambda np_, x: np_.log2(x), (X,)),
    "exp2": (lambda np_, x: np_.exp2(x), (X,)),
    "radians": (lambda np_, x: np_.radians(x), (X,)),
    "degrees": (lambda np_, x: np_.degrees(x), (X,)),
    "deg2rad": (lambda np_, x: np_.deg2rad(x), (X,)),
    "rad2deg": (lambda np_, x: np_.rad2deg(x), (X,)),
    "fabs": (lambda np_, x: np_.fabs(x - 1.0), (X,)),
    "cbrt": (lambda np_, x: np_.cbrt(x - 1.0), (X,)),
    "arccosh": (lambda np_, x: np_.arccosh(x + 1.0), (X,)),
    "fmin": (lambda np_, x, y: np_.fmin(x, y), (NAN, X)),
    "fmax": (lambda np_, x, y: np_.fmax(y, x), (NAN, X)),
    "isneginf": (lambda np_, x: np_.isneginf(x), (INF,)),
    "isposinf": (lambda np_, x: np_.isposinf(x), (INF,)),
    "invert": (lambda np_, m: np_.invert(m), (M,)),
    "real": (lambda np_, x: np_.real(x), (X,)),
    "imag": (lambda np_, x: np_.imag(x), (NAN,)),
    "conj": (lambda np_, x: np_.conj(x), (X,)),
    "conjugate": (lambda np_, x: np_.conjugate(x), (X,)),
    "polyval": (lambda np_, p, x: np_.polyval(p, x), (P, X)),
    "array_equal": (lambda np_, x, y: np_.array_equal(x, y), (X, X)),
    "array_equal_nan": (lambda np_, x: np_.array_equal(x, x, equal_nan=True), (NAN,)),
    "array_unequal": (lambda np_, x: np_.array_equal(x, x + 1), (X,)),
    "append": (lambda np_, x, p: np_.append(x, p), (X, P)),
    "append_axis": (lambda np_, x, p: np_.append(x, p[None], axis=0), (X, P)),
    "column_stack": (lambda np_, x, p: np_.column_stack([p, x.T, p]), (X, P)),
    "broadcast_arrays": (lambda np_, x, p: np_.broadcast_arrays(x, p), (X, P)),
    "copy": (lambda np_, x: np_.copy(x), (X,)),
    "kron": (lambda np_, x, p: np_.kron(x, p), (X, P)),
    "kron_2d": (lambda np_, x: np_.kron(x, x.T), (X,)),
    "rot90": (lambda np_, x: np_.rot90(x), (X,)),
    "rot90_2": (lambda np_, x: np_.rot90(x, 2), (X,)),
    "rot90_3": (lambda np_, x: np_.rot90(x, -1, axes=(1, 0)), (X,)),
    "select": (lambda np_, x: np_.select([x > 2, x > 1], [x, -x], 7.0), (X,)),
    "nansum": (lambda np_, x: np_.nansum(x, axis=1), (NAN,)),
    "nanmean": (lambda np_, x: np_.nanmean(x, axis=0), (NAN[:1],)),
    "nanmax": (lambda np_, x: np_.nanmax(x, axis=1, keepdims=True), (NAN,)),
    "nanmin": (lambda np_, x: np_.nanmin(x), (NAN[:1],)),
}

DIFFERENTIATED = [
    "log10", "log2", "exp2", "radians", "degrees", "cbrt", "arccosh", "fmin", "fmax", "polyval",
    "append", "column_stack", "kron", "rot90", "rot90_3", "select", "nansum", "nanmean", "nanmax",
]  # fmt: skip


def _same(got: Any, want: Any) -> None:
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_values_and_traced_give_numpys_result(name: str) -> None:
    f, args = CASES[name]
    with np.errstate(all="ignore"):
        want = f(np, *args)
    _same(f(snp, *args), want)
    _same(shax.jit(lambda *xs: f(snp, *xs))(*args), want)


@pytest.mark.parametrize("name", ["log10", "cbrt", "polyval", "kron", "rot90", "select", "nanmax", "nanmean", "fmin"])
def test_vmap_is_the_loop(name: str) -> None:
    f, (first, *rest) = CASES[name]
    stacked = np.stack([first, 2 * first + 0.5])
    got = shax.vmap(lambda a: f(snp, a, *rest))(stacked)
    _same(got, np.stack([np.asarray(f(np, a, *rest)) for a in stacked]))


@pytest.mark.parametrize("name", DIFFERENTIATED)
def test_gradient_is_jaxs(name: str) -> None:
    f, args = CASES[name]
    if name.startswith("nan"):  # every slice with a number: no all-NaN slice, whose derivative is NaN
        args = (SOME_NAN[: len(args[0])],)
    weights = np.cos(np.arange(np.size(f(np, *args))) + 1.0).reshape(np.shape(f(np, *args)))

    def loss(np_: Any) -> Callable[..., Any]:
        return lambda *xs: np_.sum(f(np_, *xs) * weights.astype(np.float32))

    argnums = tuple(range(len(args)))
    ours = shax.grad(loss(snp), argnums=argnums)(*args)
    theirs = jax.grad(loss(jnp), argnums=argnums)(*map(jnp.asarray, args))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=2e-5, atol=1e-6)


def test_dtype_names_and_limits() -> None:
    assert (snp.bool, snp.float_, snp.int_) == (np.bool_, np.float64, np.int64)
    assert snp.issubdtype(np.complex64, snp.complexfloating) and snp.index_exp[1:2] == np.index_exp[1:2]
    assert snp.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert snp.iinfo(np.zeros(2, np.int32)).max == 2**31 - 1
    seen: list[Any] = []
    shax.jit(lambda x: seen.append((snp.finfo(x).tiny, snp.isscalar(x[0, 0]), snp.iscomplexobj(x))) or x)(X)
    assert seen == [(np.finfo(np.float32).tiny, True, False)]
    assert snp.isscalar(1.5) and not snp.isscalar(X) and not snp.isscalar("a") and snp.isrealobj(X)


def test_index_constructors_and_logspace_are_numpys() -> None:
    for ours, theirs in [
        (snp.diag_indices(3), np.diag_indices(3)),
        (snp.diag_indices_from(np.zeros((2, 2, 2))), np.diag_indices_from(np.zeros((2, 2, 2)))),
        (snp.tril_indices(3, -1), np.tril_indices(3, -1)),
        (snp.triu_indices(3, 1, 4), np.triu_indices(3, 1, 4)),
    ]:
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)
    np.testing.assert_allclose(snp.logspace(0.0, 2.0, 5, base=2.0), np.logspace(0.0, 2.0, 5, base=2.0))
    x = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(shax.jit(lambda a: a[snp.diag_indices_from(a)])(x), np.diag(x))


def test_bad_input_names_the_function_and_line() -> None:
    with pytest.raises(shax.ShaxError, match=r"diag_indices_from: .*equal sides") as raised:
        snp.diag_indices_from(X)
    assert "test_numpy_common_names.py:" in str(raised.value)
    with pytest.raises(shax.ShaxError, match=r"polyval: p must be a 1-D array"):
        shax.jit(lambda x: snp.polyval(x, 2.0))(X)
    with pytest.raises(shax.ShaxError, match=r"select: 2 conditions and 1 choices"):
        shax.jit(lambda x: snp.select([x > 1, x > 2], [x]))(X)
