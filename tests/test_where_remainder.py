"""`where` with numpy masks and number branches, and numpy's `%`, `//`, `divmod` of floats
(issue 28), on tracers: values and dtypes numpy's, gradients JAX's."""

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

import shax
import shax.numpy as snp

X = np.float32([1.5, -2.0, 3.25])
MASK = np.array([True, False, True])
CAUSAL = np.tril(np.ones((3, 3), bool))


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mask", [MASK, np.True_, np.False_, CAUSAL], ids=["mask", "True_", "False_", "causal"])
@pytest.mark.parametrize("number", [-1e9, 0, 2])
def test_where_numpy_mask_number_branch_jit(mask, number):
    _same(shax.jit(lambda x: snp.where(mask, x, number))(X), np.where(mask, X, number))
    _same(shax.jit(lambda x: snp.where(mask, number, x))(X), np.where(mask, number, X))


def test_where_traced_mask_broadcasts_against_branch():
    # a (3,) mask against a (2, 3) branch and a number: all three broadcast
    x = np.float32([[1, 2, 3], [4, 5, 6]])
    f = shax.jit(lambda m, x: snp.where(m, x, -1.0))
    _same(f(MASK, x), np.where(MASK, x, np.float32(-1.0)))


def test_where_numpy_mask_grad():
    # d Σ where(m, x, c) / dx = m (broadcast rows summed), as JAX gives
    grad = shax.grad(lambda x: snp.where(CAUSAL, x, -1e9).sum())(X)
    _same(grad, CAUSAL.sum(axis=0).astype(np.float32))


def test_where_numpy_mask_vmap():
    xs = np.stack([X, 2 * X])
    _same(shax.vmap(lambda x: snp.where(MASK, x, -1e9))(xs), np.where(MASK, xs, np.float32(-1e9)))
    _same(
        shax.vmap(lambda x: snp.where(CAUSAL, x, 0.5))(xs), np.stack([np.where(CAUSAL, x, np.float32(0.5)) for x in xs])
    )


def test_where_two_number_branches_numpy_mask_traced_in_function():
    # only the mask decides the shape; the numbers take f32 (JAX's weak default) beside a traced mask
    f = shax.jit(lambda x: snp.where(x > 0, 1.0, -1.0) * x)
    _same(f(X), np.where(X > 0, 1.0, -1.0).astype(np.float32) * X)


# numpy's % and // of floats ------------------------------------------------------------

F = np.float32([5.5, -5.5, 4.0, -4.0, 0.0, -0.0, 1.0, 0.25, np.inf, -np.inf, np.nan, 3.0])
DIVISORS = [2.0, -2.0, 2.25, 0.1, 0.0, -0.0, np.inf, 2]
OPS = {
    "%": (lambda x, y: x % y, lambda x, y: x % y),
    "//": (lambda x, y: x // y, lambda x, y: x // y),
    "remainder": (snp.remainder, np.remainder),
    "floor_divide": (snp.floor_divide, np.floor_divide),
    "fmod": (snp.fmod, np.fmod),
    "mod": (snp.mod, np.mod),
}


def _exactly(got, want):
    """Values, dtype, NaNs and the sign of zeros all numpy's."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    numbers = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("y", DIVISORS, ids=repr)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_remainder_and_floor_divide_by_number_match_numpy(op, y, dtype):
    ours, numpys = OPS[op]
    x = F.astype(dtype)
    _exactly(shax.jit(lambda x: ours(x, y))(x), numpys(x, y))
    _exactly(shax.jit(lambda x: ours(y, x))(x), numpys(y, x))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_floor_divide_by_zero_is_numpys_infinity():
    x = np.float32([1, -1, 0])
    _exactly(shax.jit(lambda x: x // 0.0)(x), np.float32([np.inf, -np.inf, np.nan]))
    _exactly(shax.jit(lambda x: x % 0.0)(x), np.float32([np.nan] * 3))
    q, r = shax.jit(lambda x, y: snp.divmod(x, y))(x, np.float32([0, 0, 0]))
    _exactly(q, np.float32([np.inf, -np.inf, np.nan]))
    _exactly(r, np.float32([np.nan] * 3))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op", OPS)
def test_float_remainder_of_two_tracers_matches_numpy(op):
    ours, numpys = OPS[op]
    x, y = np.meshgrid(F, np.float32([2.0, -2.0, 0.1, 0.0, -0.0, np.inf, np.nan, 3.0]))
    _exactly(shax.jit(ours)(x, y), numpys(x, y))


def test_divmod_tuple_of_tracer():
    q, r = shax.jit(lambda x: divmod(x, 2.25))(F[:8])
    _exactly(q, F[:8] // np.float32(2.25))
    _exactly(r, F[:8] % np.float32(2.25))


@pytest.mark.parametrize("op", ["%", "//", "fmod", "remainder"])
def test_numpy_float64_scalar_promotes_as_numpy(op):
    # NEP 50: an f32 array with an np.float64 scalar is f64; a Python float keeps f32
    ours, numpys = OPS[op]
    x = np.float32([5.5, -5.5, 3.0])
    _exactly(shax.jit(lambda x: ours(x, np.float64(2)))(x), numpys(x, np.float64(2)))
    _exactly(shax.jit(lambda x: ours(x, 2.0))(x), numpys(x, 2.0))


def test_remainder_gradients_are_jaxs():
    # d(x % c)/dx = 1, d(x // c)/dx = 0, d(c % y)/dy = −⌊c / y⌋ (JAX's), at exact multiples too
    x = np.float32([5.5, -5.5, 4.0, -4.0, 0.25])
    _exactly(shax.grad(lambda x: (x % 2.0).sum())(x), np.ones(5, np.float32))
    _exactly(shax.grad(lambda x: (x % -2.25).sum())(x), np.ones(5, np.float32))
    _exactly(shax.grad(lambda x: (x // 2.0).sum())(x), np.zeros(5, np.float32))
    _exactly(shax.grad(lambda x: snp.fmod(x, 2.0).sum())(x), np.ones(5, np.float32))
    y = np.float32([2.0, -2.0, 3.0, 0.5])
    _exactly(shax.grad(lambda y: (7.0 % y).sum())(y), -np.floor(np.float32(7.0) / y))


def test_remainder_gradients_against_jax():
    jax = pytest.importorskip("jax")
    x = np.float32([5.5, -5.5, 4.0, -4.0, 0.25, 3.0])
    y = np.float32([2.0, -2.0, 3.0, 0.5, -1.5, 2.0])
    for f in (lambda x, y: (x % y).sum(), lambda x, y: (x // y * x).sum()):
        want = jax.grad(f, argnums=(0, 1))(x, y)
        got = shax.grad(f, argnums=(0, 1))(x, y)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-6)


# Fuzz: jit(f) against numpy's f on drawn masks, numbers and operands ------------------

DTYPES = [np.float32, np.float64, np.int32, np.int64]
FUZZED = {
    "%": lambda x, y: x % y,
    "//": lambda x, y: x // y,
    "remainder": snp.remainder,
    "floor_divide": snp.floor_divide,
    "divmod": snp.divmod,
}
NUMPYS = {"%": lambda x, y: x % y, "//": lambda x, y: x // y, "remainder": np.remainder,
          "floor_divide": np.floor_divide, "divmod": np.divmod}  # fmt: skip


def _values(dtype):
    """Small values with negatives and zeros (and ±0.0, fractions, ±inf, NaN for floats)."""
    if np.dtype(dtype).kind == "i":
        return st.integers(-6, 6)
    return st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.1, 7.0, -7.25, 3.0, np.inf, -np.inf, np.nan])


@st.composite
def _operands(draw):
    """Two operands of one dtype, broadcastable: a traced array and a traced array, a Python
    number, or a numpy scalar of the same dtype."""
    dtype = draw(st.sampled_from(DTYPES))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3)).input_shapes
    x = draw(hnp.arrays(dtype, shapes[0], elements=_values(dtype)))
    kind = draw(st.sampled_from(["array", "number", "numpy scalar"]))
    if kind == "array":
        return x, draw(hnp.arrays(dtype, shapes[1], elements=_values(dtype))), True
    y = draw(_values(dtype))
    return x, (y if kind == "number" else dtype(y)), False


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(deadline=None)
@given(op=st.sampled_from(sorted(FUZZED)), operands=_operands(), swap=st.booleans())
def test_fuzz_remainder_family_matches_numpy(op, operands, swap):
    x, y, traced_y = operands
    ours, numpys = FUZZED[op], NUMPYS[op]
    if traced_y:
        got, want = shax.jit(ours)(x, y), numpys(x, y)
    elif swap:
        got, want = shax.jit(lambda x: ours(y, x))(x), numpys(y, x)
    else:
        got, want = shax.jit(lambda x: ours(x, y))(x), numpys(x, y)
    for g, w in zip(got, want) if op == "divmod" else [(got, want)]:
        _exactly(g, w)


@st.composite
def _where_operands(draw):
    """A mask (numpy array, numpy bool, or one traced) and two branches, all three mutually
    broadcastable; at least one branch a traced array, the other maybe a Python number."""
    dtype = draw(st.sampled_from(DTYPES))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3)).input_shapes
    mask = draw(hnp.arrays(np.bool_, shapes[0]))
    mask_kind = draw(st.sampled_from(["numpy", "numpy bool", "traced"]))
    if mask_kind == "numpy bool":
        mask = np.bool_(draw(st.booleans()))
    x = draw(hnp.arrays(dtype, shapes[1], elements=_values(dtype)))
    y = draw(st.one_of(_values(dtype), hnp.arrays(dtype, shapes[2], elements=_values(dtype))))
    return mask, mask_kind == "traced", x, y, draw(st.booleans())


@settings(deadline=None)
@given(operands=_where_operands())
def test_fuzz_where_matches_numpy(operands):
    mask, traced_mask, x, y, swap = operands
    args = (x, y) if not swap else (y, x)
    want = np.where(mask, *args)
    tracers = [a for a in (mask, *args) if isinstance(a, np.ndarray) and (a is not mask or traced_mask)]

    def f(*traced):
        values = iter(traced)
        m, a, b = (next(values) if any(v is t for t in tracers) else v for v in (mask, *args))
        return snp.where(m, a, b)

    _exactly(shax.jit(f)(*tracers), want)
