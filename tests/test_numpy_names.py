"""shax.numpy's names of issue 31: each on numpy values (numpy's values and dtypes, as
snp.ndarray), compiled (`jit`, and `backend="xla"` when JAX is installed), batched
(`vmap` against a loop) and differentiated (against finite differences); the forms
that exist only traced (JAX's static `size=`) against values computed once with JAX."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

HAS_JAX = importlib.util.find_spec("jax") is not None

X = np.array([[0.5, -1.25, 2.0, 0.0], [3.0, 1.5, -0.75, 2.0], [1.0, 0.0, 4.0, -2.5]], np.float32)
V = np.array([1.5, -2.0, 0.25], np.float32)
I = np.array([0, 3, 1, 1, 5, -1], np.int32)  # noqa: E741
Q = np.array([0.0, 0.25, 1.0], np.float32)
SPECIAL = np.array([[1.0, np.nan, 0.0], [np.inf, -np.inf, 2.0]], np.float32)

# name: (shax function, numpy's, arguments); each argument array is traced.
CASES: dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]] = {
    "cumsum": (lambda x: snp.cumsum(x, axis=1), lambda x: np.cumsum(x, axis=1), (X,)),
    "cumsum_flat": (snp.cumsum, np.cumsum, (X,)),
    "cumprod": (lambda x: snp.cumprod(x, axis=0), lambda x: np.cumprod(x, axis=0), (X,)),
    "diff": (
        lambda x: snp.diff(x, 2, axis=1, append=np.float32(1)),
        lambda x: np.diff(x, 2, axis=1, append=np.float32(1)),
        (X,),
    ),  # fmt: skip
    "diff_plain": (lambda x: snp.diff(x, axis=0), lambda x: np.diff(x, axis=0), (X,)),
    "all": (lambda x: snp.all(x, axis=1), lambda x: np.all(x, axis=1), (X,)),
    "any": (lambda x: snp.any(x > 2, axis=0, keepdims=True), lambda x: np.any(x > 2, axis=0, keepdims=True), (X,)),
    "count_nonzero": (lambda x: snp.count_nonzero(x, axis=0), lambda x: np.count_nonzero(x, axis=0), (X,)),
    "isnan": (snp.isnan, np.isnan, (SPECIAL,)),
    "isinf": (snp.isinf, np.isinf, (SPECIAL,)),
    "isfinite": (snp.isfinite, np.isfinite, (SPECIAL,)),
    "nan_to_num": (lambda x: snp.nan_to_num(x, posinf=9.0), lambda x: np.nan_to_num(x, posinf=9.0), (SPECIAL,)),
    "isclose": (
        lambda x, y: snp.isclose(x, y, equal_nan=True),
        lambda x, y: np.isclose(x, y, equal_nan=True),
        (SPECIAL, SPECIAL + 1e-6),
    ),  # fmt: skip
    "diagonal": (lambda x: snp.diagonal(x, 1), lambda x: np.diagonal(x, 1), (X,)),
    "diagonal_below": (lambda x: snp.diagonal(x, -1), lambda x: np.diagonal(x, -1), (X,)),
    "diag": (lambda v: snp.diag(v, -1), lambda v: np.diag(v, -1), (V,)),
    "trace": (lambda x: snp.trace(x, 1), lambda x: np.trace(x, 1), (X,)),
    "tril": (lambda x: snp.tril(x, 1), lambda x: np.tril(x, 1), (X,)),
    "triu": (lambda x: snp.triu(x, -1), lambda x: np.triu(x, -1), (X,)),
    "vdot": (snp.vdot, np.vdot, (X, X + 1.0)),
    "cross": (snp.cross, np.cross, (X[:, :3], V)),
    "meshgrid": (snp.meshgrid, np.meshgrid, (V, X[0])),
    "ravel": (snp.ravel, np.ravel, (X,)),
    "atleast_3d": (snp.atleast_3d, np.atleast_3d, (V,)),
    "vstack": (lambda x, v: snp.vstack([x[:, :3], v]), lambda x, v: np.vstack([x[:, :3], v]), (X, V)),
    "hstack": (lambda v: snp.hstack([v, v]), lambda v: np.hstack([v, v]), (V,)),
    "concat": (lambda x: snp.concat([x, x], axis=1), lambda x: np.concat([x, x], axis=1), (X,)),
    "unstack": (lambda x: snp.unstack(x, axis=1), lambda x: np.unstack(x, axis=1), (X,)),
    "roll": (lambda x: snp.roll(x, (1, -5), (0, 1)), lambda x: np.roll(x, (1, -5), (0, 1)), (X,)),
    "roll_flat": (lambda x: snp.roll(x, 5), lambda x: np.roll(x, 5), (X,)),
    "pad": (
        lambda x: snp.pad(x, ((1, 2), (0, 1)), constant_values=((1, 2), (3, 4))),
        lambda x: np.pad(x, ((1, 2), (0, 1)), constant_values=((1, 2), (3, 4))),
        (X,),
    ),  # fmt: skip
    "pad_edge": (lambda x: snp.pad(x, 2, "edge"), lambda x: np.pad(x, 2, "edge"), (X,)),
    "pad_wrap": (lambda x: snp.pad(x, ((5, 1), (2, 3)), "wrap"), lambda x: np.pad(x, ((5, 1), (2, 3)), "wrap"), (X,)),
    "astype": (lambda x: snp.astype(x, np.int32), lambda x: x.astype(np.int32), (X,)),
    "searchsorted": (
        lambda a, v: snp.searchsorted(a, v, "right"),
        lambda a, v: np.searchsorted(a, v, "right"),
        (np.sort(X[1]), X),
    ),  # fmt: skip
    "quantile": (lambda x: snp.quantile(x, Q, axis=1), lambda x: np.quantile(x, Q, axis=1), (X,)),
    "percentile": (
        lambda x: snp.percentile(x, 40.0, method="nearest"),
        lambda x: np.percentile(x, 40.0, method="nearest"),
        (X,),
    ),  # fmt: skip
    "sum_dtype": (
        lambda x: snp.sum(x > 0, axis=0, dtype=np.int32),
        lambda x: np.sum(x > 0, axis=0, dtype=np.int32),
        (X,),
    ),  # fmt: skip
    "mean_where": (lambda x: snp.mean(x, axis=1, where=X > 0), lambda x: np.mean(x, axis=1, where=X > 0), (X,)),
    "max_initial": (lambda x: snp.max(x, axis=0, initial=1.0), lambda x: np.max(x, axis=0, initial=1.0), (X,)),
    "clip": (lambda x: snp.clip(x, min=-1.0, max=1.0), lambda x: np.clip(x, min=-1.0, max=1.0), (X,)),
}

# Index results are i32 traced (JAX's int); numpy's are int64.
INDEX = {"count_nonzero", "searchsorted"}


def _same(ours: Any, theirs: Any, name: str, traced: bool) -> None:
    if isinstance(theirs, (tuple, list)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t, name, traced)
        return
    theirs = np.asarray(theirs)
    dtype = np.dtype(np.int32) if traced and name in INDEX else theirs.dtype
    assert (np.asarray(ours).dtype, np.shape(ours)) == (dtype, theirs.shape)
    # Prefix sums are added in a tree order, quantiles interpolated in f32: within an ulp or two.
    np.testing.assert_allclose(np.asarray(ours, theirs.dtype), theirs, rtol=2e-7, atol=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numpy_values_give_numpys_result(name: str) -> None:
    ours, theirs, args = CASES[name]
    result = ours(*args)
    _same(result, theirs(*args), name, traced=False)
    first = result[0] if isinstance(result, (tuple, list)) else result
    assert isinstance(first, (snp.ndarray, np.generic))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # ∞ − ∞ in isclose, as numpy's own
def test_compiled_gives_numpys_result(name: str) -> None:
    ours, theirs, args = CASES[name]
    _same(shax.jit(ours)(*args), theirs(*args), name, traced=True)


@pytest.mark.skipif(not HAS_JAX, reason="the xla backend needs jax")
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_exported_to_xla_gives_numpys_result(name: str) -> None:
    ours, theirs, args = CASES[name]
    _same(shax.jit(ours, backend="xla")(*args), theirs(*args), name, traced=True)


BATCHED = ["cumsum", "cumprod", "diff", "all", "diagonal", "trace", "tril", "roll", "pad", "pad_wrap", "quantile"]


@pytest.mark.parametrize("name", BATCHED)
def test_vmap_is_the_loop(name: str) -> None:
    ours, _, (x,) = CASES[name]
    xs = np.stack([x, 2 * x - 1])
    expected = np.stack([np.asarray(ours(xi)) for xi in xs])
    np.testing.assert_allclose(shax.vmap(ours)(xs), expected, rtol=2e-7)


DIFFERENTIATED = ["cumsum", "cumprod", "diff_plain", "diagonal", "trace", "tril", "roll", "pad", "pad_edge", "quantile",
                  "vdot", "cross", "nan_to_num", "mean_where", "max_initial"]  # fmt: skip


@pytest.mark.parametrize("name", DIFFERENTIATED)
def test_gradient_matches_finite_differences(name: str) -> None:
    ours, _, args = CASES[name]
    args64 = [np.asarray(a, np.float64) for a in args]
    if name == "nan_to_num":
        args64 = [X.astype(np.float64)]
    weights = [np.sin(np.arange(np.size(r)) + 1.0).reshape(np.shape(r)) for r in [np.asarray(ours(*args64))]]

    def f(*xs: Any) -> Any:
        return snp.sum(ours(*xs) * weights[0])

    grads = shax.grad(f, argnums=tuple(range(len(args64))))(*args64)
    for k, g in enumerate(grads):
        numeric = np.zeros_like(args64[k])
        for i in np.ndindex(numeric.shape):
            step = np.zeros_like(args64[k])
            step[i] = 1e-6
            up = [a + step if j == k else a for j, a in enumerate(args64)]
            down = [a - step if j == k else a for j, a in enumerate(args64)]
            numeric[i] = (float(f(*up)) - float(f(*down))) / 2e-6
        np.testing.assert_allclose(g, numeric, rtol=1e-5, atol=1e-6)


def test_cumprod_gradient_is_right_at_zero() -> None:
    # d/dx_j Σ_i Π_{k≤i} x_k at x = (1, 0, 3, 2): only the products through x_1's zero change.
    grad = shax.grad(lambda x: snp.sum(snp.cumprod(x)))(np.array([1.0, 0.0, 3.0, 2.0]))
    np.testing.assert_array_equal(grad, [1.0, 10.0, 0.0, 0.0])


# Traced-only forms, against jax.numpy's values (computed once with jax 0.10).
M = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -3.0]], np.float32)
U = np.array([3.0, 1.0, np.nan, 1.0, 2.0, np.nan, 3.0], np.float32)


def test_nonzero_with_a_static_size_is_jaxs() -> None:
    rows, cols = shax.jit(lambda m: snp.nonzero(m, size=4, fill_value=-1))(M)
    np.testing.assert_array_equal(rows, np.array([0, 1, 1, -1], np.int32))
    np.testing.assert_array_equal(cols, np.array([1, 0, 2, -1], np.int32))
    assert rows.dtype == np.int32
    rows, _ = shax.jit(lambda m: snp.where(m != 0, size=2))(M)
    np.testing.assert_array_equal(rows, [0, 1])
    found = shax.jit(lambda m: snp.argwhere(m, size=4))(M)
    np.testing.assert_array_equal(found, [[0, 1], [1, 0], [1, 2], [0, 0]])


def test_unique_with_a_static_size_is_jaxs() -> None:
    # jnp.unique(U, size=6): the smallest value fills; jnp.unique(U, size=6, fill_value=9.0)
    np.testing.assert_array_equal(shax.jit(lambda u: snp.unique(u, size=6))(U), [1.0, 2.0, 3.0, np.nan, 1.0, 1.0])
    np.testing.assert_array_equal(
        shax.jit(lambda u: snp.unique(u, size=6, fill_value=9.0))(U), [1.0, 2.0, 3.0, np.nan, 9.0, 9.0]
    )
    np.testing.assert_array_equal(snp.unique(U, size=2), [1.0, 2.0])


def test_bincount_with_a_static_length_is_jaxs() -> None:
    # jnp.bincount(I, length=4): negatives counted in bin 0, values beyond dropped
    np.testing.assert_array_equal(shax.jit(lambda i: snp.bincount(i, length=4))(I), [2, 2, 0, 1])
    weights = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(shax.jit(lambda i, w: snp.bincount(i, w, length=3))(I, weights), [5.0, 5.0, 0.0])
    np.testing.assert_array_equal(snp.bincount(np.array([0, 2, 2])), np.bincount(np.array([0, 2, 2])))


def test_sort_descending_is_jaxs() -> None:
    x = np.array([[3.0, 1.0, np.nan, 1.0, 2.0], [0.0, 0.0, 5.0, -1.0, 0.0]], np.float32)
    # jnp.argsort(x, descending=True): NaN first, ties in their order
    expected = [[2, 0, 4, 1, 3], [2, 0, 1, 4, 3]]
    np.testing.assert_array_equal(shax.jit(lambda x: snp.argsort(x, descending=True))(x), expected)
    np.testing.assert_array_equal(snp.argsort(x, descending=True), expected)
    np.testing.assert_array_equal(shax.jit(lambda x: snp.sort(x, descending=True))(x), np.sort(x)[:, ::-1])


def test_vectorize_maps_the_core_function() -> None:
    add_one = snp.vectorize(lambda a, b: a * b + 1.0)
    np.testing.assert_array_equal(add_one(V, X[:, :1]), V * X[:, :1] + 1.0)
    inner = snp.vectorize(lambda a, b: snp.dot(a, b), signature="(n),(n)->()")
    np.testing.assert_allclose(shax.jit(inner)(X, X[0]), X @ X[0])


def test_dtype_names_constants_and_dtype_functions_are_numpys() -> None:
    assert (snp.float32, snp.int32, snp.bool_, snp.uint8) == (np.float32, np.int32, np.bool_, np.uint8)
    assert (snp.pi, snp.e, snp.euler_gamma, snp.inf, snp.newaxis) == (np.pi, np.e, np.euler_gamma, np.inf, None)
    assert np.isnan(snp.nan)
    assert snp.result_type(np.int32, 1.0) == np.float64
    assert snp.promote_types(np.int32, np.float32) == np.float64
    assert snp.broadcast_shapes((2, 1), (3,)) == (2, 3)
    seen = []

    def f(x: Any) -> Any:
        seen.append((snp.issubdtype(x.dtype, snp.floating), snp.result_type(x, 2)))
        return x

    shax.jit(f)(V)
    assert seen == [(True, np.float32)]


def test_identity_and_empty_are_numpys_zero_filled() -> None:
    assert snp.identity(3, np.float32).tolist() == np.identity(3, np.float32).tolist()
    empty = snp.empty((2, 3), np.int32)
    assert (empty.dtype, empty.shape, empty.sum()) == (np.int32, (2, 3), 0)


def test_allclose_is_a_bool_on_numpy_values_and_traced() -> None:
    assert snp.allclose(X, X * (1 + 1e-7)) is True
    assert bool(shax.jit(lambda a, b: snp.allclose(a, b))(X, X + 1.0)) is False


def test_tracer_methods_are_the_functions() -> None:
    def f(x: Any) -> Any:
        return x.cumsum(0), x.cumprod(1), x.all(), x.any(1), x.diagonal(), x.sort(0), x.sort(0)[:, 0].searchsorted(0.5)

    x = X.copy()
    expected = (
        x.cumsum(0),
        x.cumprod(1),
        x.all(),
        x.any(1),
        x.diagonal(),
        np.sort(x, 0),
        np.sort(x, 0)[:, 0].searchsorted(0.5),
    )
    for ours, theirs in zip(shax.jit(f)(X), expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=2e-7)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: snp.nonzero(m), r"nonzero: of a traced f32\[2, 3\] has a data-dependent shape: give a static size="),
        (lambda m: snp.unique(m), r"unique: .*give a static size="),
        (lambda m: snp.bincount(m.astype(np.int32)[0]), r"bincount: .*give a static length="),
        (lambda m: snp.diagonal(m, axis1=1, axis2=-1), r"diagonal: axis1 and axis2 cannot be the same"),
        (lambda m: snp.pad(m, 1, "reflect"), r"pad: mode 'reflect' of a traced array is not supported"),
        (lambda m: snp.clip(m, 0.0, min=1.0), r"clip: a_min and min given together"),
    ],
)
def test_refused_forms_name_the_operation_and_the_line(call: Callable[..., Any], message: str) -> None:
    with pytest.raises(shax.ShaxError, match=message) as raised:
        shax.jit(call)(M)
    assert "test_numpy_names.py:" in str(raised.value)


@pytest.mark.parametrize("dtype", [{"": ""}, (None, False)], ids=["dict", "tuple"])
def test_astype_of_what_numpy_cannot_read_as_a_dtype_names_astype(dtype: Any) -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"astype: dtype .* is not supported"):
        snp.astype(np.ones(3), dtype)
