"""`zeros_like`, `ones_like`, `full_like`, `empty_like` (issue 28): numpy's dtype and values on
numpy arrays and on tracers alike, the input's dtype kept (bool too) unless `dtype=` is given."""

import numpy as np
import pytest

import shax
import shax.numpy as snp

ARRAYS = [
    np.array([True, False]),
    np.float32([1.5, -2.0]),
    np.float64([[1.0], [2.0]]),
    np.int32([3, -4, 5]),
    np.int64([7]),
    np.uint8([1, 2]),
]
LIKES = {
    "zeros_like": (snp.zeros_like, np.zeros_like, ()),
    "ones_like": (snp.ones_like, np.ones_like, ()),
    "full_like 2.5": (snp.full_like, np.full_like, (2.5,)),
    "full_like True": (snp.full_like, np.full_like, (True,)),
    "full_like 0": (snp.full_like, np.full_like, (0,)),
}


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", LIKES)
@pytest.mark.parametrize("dtype", [None, np.float32, bool, np.int32])
@pytest.mark.parametrize("a", ARRAYS, ids=lambda a: str(a.dtype))
def test_like_keeps_numpy_dtype(name, dtype, a):
    ours, numpys, args = LIKES[name]
    want = numpys(a, *args, dtype=dtype)
    _same(ours(a, *args, dtype=dtype), want)
    _same(shax.jit(lambda x: ours(x, *args, dtype=dtype))(a), want)


@pytest.mark.parametrize("a", ARRAYS, ids=lambda a: str(a.dtype))
def test_empty_like_is_zeros_of_the_dtype(a):
    # numpy's values are uninitialized; shax's (as JAX's) are zeros of the same dtype and shape
    want = np.zeros_like(a)
    _same(shax.jit(snp.empty_like)(a), want)
    assert snp.empty_like(a).dtype == a.dtype and snp.empty_like(a).shape == a.shape


def test_like_of_bool_in_vmap_and_grad():
    x = np.float32([1.0, -2.0, 3.0])
    mask = shax.vmap(lambda v: snp.ones_like(v > 0))(np.stack([x, x]))
    _same(mask, np.ones((2, 3), bool))
    grad = shax.grad(lambda v: snp.where(snp.zeros_like(v > 0), 0.0, v).sum())(x)
    _same(grad, np.ones(3, np.float32))


def test_full_like_traced_refuses_what_it_cannot_hold():
    with pytest.raises(shax.ShaxError, match="full_like"):
        shax.jit(lambda x: snp.full_like(x, 300))(np.uint8([1]))
    with pytest.raises(shax.ShaxError, match="full_like"):
        shax.jit(lambda x: snp.full_like(x, np.ones(2)))(np.float32([1, 2]))
    with pytest.raises(shax.ShaxError, match="full_like"):
        shax.jit(lambda x: snp.full_like(x, x))(np.float32([1, 2]))
