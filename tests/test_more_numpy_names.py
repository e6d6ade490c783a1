"""The jax.numpy and jax.lax names a sweep of JAX-style programs found missing, each a
composition of shax's functions: numpy's (or lax's) values and dtypes on numpy values and
traced (jit, vmap), edges included (0, −0, NaN, ±∞, ties), derivatives against finite
differences and JAX's (x64)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.lax as slax
import shax.numpy as snp
from shax.testing import check_grads

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jlax = pytest.importorskip("jax.lax")

EDGES = np.array([-2.5, -1.5, -0.5, -0.0, 0.0, 0.4, 0.5, 1.5, 2.5, np.nan, np.inf, -np.inf], np.float32)
SIGNS = np.array([1.0, -1.0, -0.0, 0.0, np.nan, -np.nan, 2.0, -3.0, np.inf, 0.5, -np.inf, 0.0], np.float32)
X = np.array([[3.0, 1.0, 2.0, 2.0], [4.0, -1.0, 0.0, 4.0]])
NAN_ROW = np.array([[3.0, 1.0, np.nan, 2.0], [4.0, -1.0, 0.0, 4.0]])
W = np.array([1.0, 2.0, 0.5, 3.0])
INTS = np.array([[3, -7, 0], [12, 5, -1]], np.int32)
POINTS = np.array([-1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 3.5, 0.25, np.nan])
XP, FP = np.array([0.0, 1.0, 2.0, 3.0]), np.array([1.0, -2.0, 4.0, 0.5])

pytestmark = pytest.mark.usefixtures("jax_x64")  # every test compares with JAX in float64


def _same(got: Any, want: Any) -> None:
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape), (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, equal_nan=True)
    # signed zeros are numpy's too
    np.testing.assert_array_equal(np.signbit(got[got == 0]), np.signbit(want[want == 0]))


# name: (function of module np_ (numpy or shax.numpy) and arrays, the arrays)
NUMPY_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "trunc": (lambda np_, x: np_.trunc(x), (EDGES,)),
    "trunc_ints": (lambda np_, i: np_.trunc(i), (INTS,)),
    "logical_xor": (lambda np_, x, y: np_.logical_xor(x, y), (EDGES, SIGNS)),
    "logical_xor_bools": (lambda np_, x: np_.logical_xor(x > 0, True), (EDGES,)),
    "heaviside": (lambda np_, x, y: np_.heaviside(x, y), (EDGES, SIGNS)),
    "heaviside_number": (lambda np_, x: np_.heaviside(x, 0.5), (EDGES,)),
    "copysign": (lambda np_, x, y: np_.copysign(x, y), (EDGES, SIGNS)),
    "copysign_number": (lambda np_, x: np_.copysign(x, -1.0), (EDGES,)),
    "hypot": (lambda np_, x, y: np_.hypot(x, y), (EDGES, SIGNS)),
    "hypot_large": (lambda np_, x: np_.hypot(x * 1e30, x * 3e30), (np.array([1.0, 2.0, 0.0], np.float32),)),
    "sinc": (lambda np_, x: np_.sinc(x), (EDGES,)),
    "sinc_ints": (lambda np_, i: np_.sinc(i), (INTS,)),
    "around": (lambda np_, x: np_.around(x * 1.37, 1), (X,)),
    "around_halves": (lambda np_, x: np_.around(x), (EDGES,)),
    "ptp": (lambda np_, x: np_.ptp(x), (X,)),
    "ptp_axis": (lambda np_, x: np_.ptp(x, axis=1, keepdims=True), (X,)),
    "ptp_ints": (lambda np_, i: np_.ptp(i, axis=0), (INTS,)),
    "average": (lambda np_, x: np_.average(x), (X,)),
    "average_axis": (lambda np_, x: np_.average(x, axis=0, returned=True), (X,)),
    "average_weights": (lambda np_, x, w: np_.average(x, 1, w, returned=True), (X, W)),
    "average_full_weights": (lambda np_, x: np_.average(x, (0, 1), x + 5.0, keepdims=True), (X,)),
    "average_ints": (lambda np_, i: np_.average(i, 1, np.array([1, 2, 3])), (INTS,)),
    "median": (lambda np_, x: np_.median(x), (X,)),
    "median_odd": (lambda np_, x: np_.median(x[:, :3], axis=1), (X,)),
    "median_axis": (lambda np_, x: np_.median(x, axis=0, keepdims=True), (X,)),
    "median_nan": (lambda np_, x: np_.median(x, axis=1), (NAN_ROW,)),
    "median_f32": (lambda np_, x: np_.median(x), (np.float32([1e38, 3e38, 2e38, -1.0]),)),
    "interp": (lambda np_, x, xp, fp: np_.interp(x, xp, fp), (POINTS, XP, FP)),
    "interp_infinite": (lambda np_, x, xp: np_.interp(x, xp, np.array([0.0, 10.0, np.inf, 5.0])), (POINTS, XP)),
    "interp_ends": (lambda np_, x, xp, fp: np_.interp(x, xp, fp, -9.0, 9.0), (POINTS, XP, FP)),
    "interp_period": (lambda np_, x, xp, fp: np_.interp(x, xp, fp, period=2.5), (POINTS, XP, FP)),
    "interp_one_point": (lambda np_, x: np_.interp(x, [1.0], [4.0]), (POINTS,)),
    "interp_f32": (lambda np_, x: np_.interp(x, XP.astype(np.float32), FP), (POINTS.astype(np.float32),)),
    "convolve_ints": (lambda np_, a: np_.convolve(a, [1, -1]), (INTS[0],)),
    "cov": (lambda np_, m: np_.cov(m), (X,)),
    "cov_columns": (lambda np_, m: np_.cov(m, rowvar=False, bias=True), (X,)),
    "cov_two": (lambda np_, m: np_.cov(m[0], m[1]), (X,)),
    "cov_one": (lambda np_, m: np_.cov(m[0]), (X,)),
    "cov_weights": (lambda np_, m, w: np_.cov(m, fweights=[1, 2, 1, 3], aweights=w), (X, W)),
    "cov_weights_ddof0": (lambda np_, m, w: np_.cov(m, ddof=0, aweights=w), (X, W)),
    "cov_f32": (lambda np_, m: np_.cov(m, dtype=np.float32), (X.astype(np.float32),)),
    **{
        f"convolve_{mode}_{swap}": (
            lambda np_, a, v, mode=mode, swap=swap: np_.convolve(v, a, mode) if swap else np_.convolve(a, v, mode),
            (X[0], W[:3]),
        )
        for mode in ("full", "same", "valid")
        for swap in (False, True)
    },
}
# digitize and array_split: numpy's values, shax's indices i32 (JAX's int) where numpy's are int64
INDEX_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "digitize": (lambda np_, x, b: np_.digitize(x, b), (POINTS, XP)),
    "digitize_right": (lambda np_, x, b: np_.digitize(x, b, True), (POINTS, XP)),
    "digitize_decreasing": (lambda np_, x, b: np_.digitize(x, b[::-1]), (POINTS, XP)),
    "digitize_decreasing_right": (lambda np_, x, b: np_.digitize(x, b[::-1], right=True), (POINTS, XP)),
    "digitize_constant_bins": (lambda np_, x: np_.digitize(x, XP[::-1]), (POINTS,)),
    "digitize_ties": (lambda np_, x: np_.digitize(x, [0.0, 1.0, 1.0, 2.0]), (POINTS,)),
    **{
        f"array_split_{k}": (lambda np_, x, k=k: np_.array_split(x, k, axis=1), (X,))
        for k in (3, 4, 5, [1, -1], [3, 1], [])
    },
    "array_split_rows": (lambda np_, x: np_.array_split(x, 3), (X,)),
}


@pytest.mark.parametrize("name", sorted(NUMPY_CASES))
def test_numpy_values_and_traced_give_numpys_result(name: str) -> None:
    f, args = NUMPY_CASES[name]
    with np.errstate(all="ignore"):
        want = f(np, *args)
        _same(f(snp, *args), want)
        _same(shax.jit(lambda *xs: f(snp, *xs))(*args), want)


@pytest.mark.parametrize("name", sorted(INDEX_CASES))
def test_indices_and_splits_are_numpys(name: str) -> None:
    f, args = INDEX_CASES[name]
    want = f(np, *args)
    for got in (f(snp, *args), shax.jit(lambda *xs: f(snp, *xs))(*args)):
        if isinstance(want, list):
            _same(tuple(got), tuple(want))
        else:
            np.testing.assert_array_equal(got, want)
    traced = shax.jit(lambda *xs: f(snp, *xs))(*args)
    assert isinstance(want, list) or np.asarray(traced).dtype == np.int32


@pytest.mark.parametrize("name", ["hypot", "copysign", "median_axis", "average_weights", "sinc", "interp", "cov"])
def test_vmap_is_the_loop(name: str) -> None:
    f, (first, *rest) = NUMPY_CASES[name]
    stacked = np.stack([first, 2 * first + 0.5])
    with np.errstate(all="ignore"):
        got = shax.vmap(lambda a: f(snp, a, *rest))(stacked)
        want = [f(np, a, *rest) for a in stacked]
    if isinstance(want[0], tuple):
        _same(got, tuple(np.stack(parts) for parts in zip(*want)))
    else:
        _same(got, np.stack(want))


SMOOTH = np.array([[0.3, -1.2, 2.1, 0.7], [1.9, -0.4, 1.1, -2.6]])
# name: (function of module np_, arrays at which each is smooth)
DIFFERENTIABLE: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "copysign": (lambda np_, x, y: np_.copysign(x, y), (SMOOTH, -SMOOTH[::-1])),
    "hypot": (lambda np_, x, y: np_.hypot(x, y), (SMOOTH, SMOOTH[::-1] * 2.0)),
    "sinc": (lambda np_, x: np_.sinc(x), (SMOOTH,)),
    "ptp": (lambda np_, x: np_.ptp(x, axis=1), (SMOOTH,)),
    "average": (lambda np_, x, w: np_.average(x, 1, w), (SMOOTH, np.abs(SMOOTH[0]) + 0.5)),
    "median": (lambda np_, x: np_.median(x, axis=1), (SMOOTH,)),
    "median_odd": (lambda np_, x: np_.median(x[:, :3], axis=1), (SMOOTH,)),
    "interp": (lambda np_, x, xp, fp: np_.interp(x, xp, fp), (POINTS[2:-2] + 0.1, XP, FP)),
    "convolve": (lambda np_, a, v: np_.convolve(a, v, "same"), (SMOOTH[0], SMOOTH[1, :3])),
    "cov": (lambda np_, m, w: np_.cov(m, aweights=w), (SMOOTH, np.abs(SMOOTH[0]) + 0.5)),
}


@pytest.mark.parametrize("name", sorted(DIFFERENTIABLE))
def test_gradients_match_finite_differences_and_jax(name: str) -> None:
    f, args = DIFFERENTIABLE[name]
    check_grads(lambda *xs: f(snp, *xs), args, order=2)
    weights = np.cos(np.arange(np.size(f(np, *args))) + 1.0).reshape(np.shape(f(np, *args)))
    argnums = tuple(range(len(args)))
    ours = shax.grad(lambda *xs: snp.sum(f(snp, *xs) * weights), argnums=argnums)(*args)
    theirs = jax.grad(lambda *xs: jnp.sum(f(jnp, *xs) * weights), argnums=argnums)(*map(jnp.asarray, args))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_derivatives_at_the_edges_are_jaxs() -> None:
    points = np.array([0.0, 0.5, -0.5, 1.0])
    for np_f in (lambda np_, x: np_.sinc(x), lambda np_, x: np_.trunc(x), lambda np_, x: np_.heaviside(x, 0.5)):
        ours = shax.grad(lambda x, f=np_f: snp.sum(f(snp, x)))(points)
        theirs = jax.grad(lambda x, f=np_f: jnp.sum(f(jnp, x)))(points)
        np.testing.assert_allclose(ours, theirs, atol=1e-12)
    # hypot at a tie |x| = |y|: x / h, each; median of an even count: ½ to each middle element
    np.testing.assert_allclose(shax.grad(lambda x: snp.hypot(x, 3.0))(3.0), 1 / np.sqrt(2))
    np.testing.assert_allclose(shax.grad(lambda x: snp.median(x))(np.array([3.0, 1.0, 2.0, 5.0])), [0.5, 0, 0.5, 0])


LAX_CASES: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "clamp": (lambda lax, x: lax.clamp(-1.0, x, 1.0), (EDGES.astype(np.float64),)),
    "clamp_arrays": (lambda lax, x, lo: lax.clamp(lo, x, lo + 1.0), (SMOOTH, SMOOTH[::-1])),
    "round": (lambda lax, x: lax.round(x), (EDGES,)),
    "round_even": (lambda lax, x: lax.round(x, 1), (EDGES,)),
    "round_near_half": (lambda lax, x: lax.round(x), (np.float32([0.49999997, -0.49999997, 8388609.0]),)),
    "is_finite": (lambda lax, x: lax.is_finite(x), (EDGES,)),
    "cbrt": (lambda lax, x: lax.cbrt(x), (SMOOTH,)),
    "exp2": (lambda lax, x: lax.exp2(x), (SMOOTH,)),
    "bitwise_and": (lambda lax, i: lax.bitwise_and(i, i[::-1]), (INTS,)),
    "bitwise_or": (lambda lax, i: lax.bitwise_or(i, i[::-1]), (INTS,)),
    "bitwise_xor": (lambda lax, i: lax.bitwise_xor(i, i[::-1]), (INTS,)),
    "bitwise_not": (lambda lax, i: lax.bitwise_not(i), (INTS,)),
    "expand_dims": (lambda lax, x: lax.expand_dims(x, (0, -1)), (X,)),
    "slice_in_dim": (lambda lax, x: lax.slice_in_dim(x, -3, None, 2, 1), (X,)),
    "slice_in_dim_rows": (lambda lax, x: lax.slice_in_dim(x, 1, 2), (X,)),
    "dynamic_index_in_dim": (lambda lax, x, i: lax.dynamic_index_in_dim(x, i, 1, False), (X, np.int32(-1))),
    "dynamic_index_in_dim_kept": (lambda lax, x, i: lax.dynamic_index_in_dim(x, i, 1), (X, np.int32(9))),
    "dynamic_index_no_negatives": (
        lambda lax, x, i: lax.dynamic_index_in_dim(x, i, 0, allow_negative_indices=False),
        (X, np.int32(-1)),
    ),
    "sort": (lambda lax, x: lax.sort(x), (NAN_ROW,)),
    "sort_axis0": (lambda lax, x: lax.sort(x, 0), (X,)),
    "sort_operands": (lambda lax, k, v: lax.sort((k, v), num_keys=1), (X[0], X[1])),
    "sort_two_keys": (
        lambda lax, a, b, c: lax.sort((a, b, c), num_keys=2),
        (np.array([2, 1, 2, 1, 0]), np.array([5.0, 3, 1, 3, 9]), np.arange(5.0)),
    ),
    **{
        f"{name}_{axis}_{reverse}": (
            lambda lax, x, name=name, axis=axis, reverse=reverse: getattr(lax, name)(x, axis, reverse),
            (X,),
        )
        for name in ("cumsum", "cumprod", "cummax", "cummin")
        for axis in (0, 1)
        for reverse in (False, True)
    },
    "cumsum_ints": (lambda lax, i: lax.cumsum(i, 1), (INTS,)),
}


@pytest.mark.parametrize("name", sorted(LAX_CASES))
def test_lax_values_and_traced_give_jaxs_result(name: str) -> None:
    f, args = LAX_CASES[name]
    want = jax.tree_util.tree_map(np.asarray, f(jlax, *map(jnp.asarray, args)))
    with np.errstate(all="ignore"):
        _same(f(slax, *args), want)
        _same(shax.jit(lambda *xs: f(slax, *xs))(*args), want)


def test_iota_is_a_numpy_constant() -> None:
    _same(slax.iota(np.int32, 5), np.asarray(jlax.iota(np.int32, 5)))
    _same(slax.iota(np.float64, 0), np.zeros(0))


LAX_DIFFERENTIABLE = [
    "clamp_arrays", "cbrt", "exp2", "slice_in_dim", "sort", "sort_operands", "cumsum_1_True", "cumprod_0_False",
    "cummax_1_False", "cummin_1_True", "dynamic_index_in_dim",
]  # fmt: skip


@pytest.mark.parametrize("name", LAX_DIFFERENTIABLE)
def test_lax_gradients_are_jaxs(name: str) -> None:
    f, args = LAX_CASES[name]
    args = tuple(SMOOTH if a is X or a is NAN_ROW else a for a in args)
    if name == "sort_operands":
        args = (SMOOTH[0], SMOOTH[1])
    floats = tuple(k for k, a in enumerate(args) if np.asarray(a).dtype.kind == "f")
    out = f(jlax, *map(jnp.asarray, args))
    weights = jax.tree_util.tree_map(lambda o: np.cos(np.arange(o.size) + 1.0).reshape(o.shape), out)

    def loss(lax: Any, sum_: Callable[[Any], Any]) -> Callable[..., Any]:
        def total(*xs: Any) -> Any:
            leaves = jax.tree_util.tree_leaves(f(lax, *xs))
            return sum(sum_(o * w) for o, w in zip(leaves, jax.tree_util.tree_leaves(weights)))

        return total

    ours = shax.grad(loss(slax, snp.sum), argnums=floats)(*args)
    theirs = jax.grad(loss(jlax, jnp.sum), argnums=floats)(*map(jnp.asarray, args))
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=1e-10, atol=1e-12)


def test_clamp_ties_give_no_gradient_as_jaxs() -> None:
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    lo, hi = np.zeros(5), np.ones(5)
    ours = shax.grad(lambda a, b, c: snp.sum(slax.clamp(a, b, c)), argnums=(0, 1, 2))(lo, x, hi)
    theirs = jax.grad(lambda a, b, c: jnp.sum(jlax.clamp(a, b, c)), argnums=(0, 1, 2))(lo, x, hi)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


def test_cumulative_and_sort_batch() -> None:
    got = shax.vmap(lambda x: slax.cummax(x, 0, True))(SMOOTH)
    _same(got, np.stack([np.asarray(jlax.cummax(jnp.asarray(r), 0, True)) for r in SMOOTH]))
    got = shax.vmap(lambda k, v: slax.sort((k, v), num_keys=1))(SMOOTH, -SMOOTH)
    order = np.argsort(SMOOTH, axis=1, kind="stable")
    _same(got, (np.take_along_axis(SMOOTH, order, 1), np.take_along_axis(-SMOOTH, order, 1)))


@typeguard.suppress_type_checks
def test_bad_arguments_name_the_function_and_line() -> None:
    cases: list[tuple[Callable[[], Any], str]] = [
        (lambda: shax.jit(lambda x: snp.average(x, weights=W))(X), r"average: axis must be given"),
        (lambda: shax.jit(lambda x: snp.average(x, 1, W[:3]))(X), r"average: weights of length 3"),
        (lambda: shax.jit(lambda x: snp.copysign(x, "a"))(X), r"copysign: an operand must be an array or a number"),
        (lambda: snp.around(None), r"around: a must be an array or a number"),
        (lambda: slax.round(INTS), r"lax.round: needs a float operand"),
        (lambda: slax.round(X, 2), r"lax.round: rounding_method must be 0"),
        (lambda: slax.clamp(X[0], X, 1.0), r"lax.clamp: min must be a scalar or of x's shape"),
        (lambda: slax.slice_in_dim(X, 3, 1), r"lax.slice_in_dim: start 3, limit 1"),
        (lambda: slax.sort((X, X[0])), r"lax.sort: the operands must have one shape"),
        (lambda: slax.sort(X, num_keys=2), r"lax.sort: num_keys must be between 1 and the 1"),
        (lambda: slax.cumsum(X, 2), r"lax.cumsum: axis 2 is out of range"),
        (lambda: slax.iota(np.int32, -1), r"lax.iota: size must be non-negative"),
        (lambda: slax.dynamic_index_in_dim(X, 1.5), r"lax.dynamic_index_in_dim: index must be an int"),
        (lambda: shax.jit(lambda x: snp.interp(x, XP, FP[:3]))(X), r"interp: xp and fp must have one"),
        (lambda: shax.jit(lambda x: snp.convolve(x, W))(X), r"convolve: needs two non-empty vectors"),
        (lambda: shax.jit(lambda x: snp.digitize(x, [1.0, 0.0, 2.0]))(X), r"digitize: bins must be monotonic"),
        (lambda: shax.jit(lambda x: snp.cov(x, aweights=W[:3]))(X), r"cov: aweights must be a vector of the 4"),
        (lambda: snp.array_split(X, 0), r"array_split: the number of sections must be positive"),
    ]
    for call, message in cases:
        with pytest.raises(shax.ShaxError, match=message) as raised:
            call()
        assert "test_more_numpy_names.py:" in str(raised.value), str(raised.value)


def test_interp_of_traced_points_refuses_a_ragged_bound_by_name() -> None:
    """Found by the fuzz: a `left` numpy cannot read as an array, beside traced points."""
    f = shax.jit(lambda fp: snp.interp(np.array([0.5]), np.array([0.0, 1.0, 2.0]), fp, left=(None, np.zeros(0))))
    with pytest.raises(shax.ShaxError, match="interp: numpy: setting an array element"):
        f(np.arange(3.0))
