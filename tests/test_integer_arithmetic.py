"""Integer `%`, `//` and `divmod` on tracers (issue 28): numpy's values and dtypes (the remainder
has the divisor's sign, the quotient is floored; by 0 both are 0, numpy's result), through jit,
vmap and loops, and a float function indexed by them still differentiates."""

import numpy as np
import pytest

import shax
import shax.numpy as snp

INTS = np.array([7, -7, 6, -6, 0, 1, -1, 5], np.int64)
DIVISORS = [3, -3, 2, 1, -1, 7]
OPS = {
    "%": (lambda x, y: x % y, lambda x, y: x % y),
    "//": (lambda x, y: x // y, lambda x, y: x // y),
    "fmod": (snp.fmod, np.fmod),
    "divmod": (lambda x, y: snp.divmod(x, y)[0] * 100 + snp.divmod(x, y)[1], lambda x, y: (x // y) * 100 + x % y),
}


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("y", DIVISORS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_remainder_and_floor_divide_match_numpy(op, y, dtype):
    ours, numpys = OPS[op]
    x = INTS.astype(dtype)
    _same(shax.jit(lambda x: ours(x, y))(x), numpys(x, y))
    _same(shax.jit(lambda x: ours(y, x))(x[x != 0]), numpys(y, x[x != 0]))


@pytest.mark.parametrize("op", OPS)
def test_unsigned_remainder_matches_numpy(op):
    ours, numpys = OPS[op]
    x, y = np.uint8([0, 1, 7, 200, 255]), np.uint8([3, 3, 2, 7, 16])
    _same(shax.jit(ours)(x, y), numpys(x, y))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op", OPS)
def test_integer_division_by_zero_is_numpys_zero(op):
    ours, numpys = OPS[op]
    x = np.int32([5, -5, 0])
    zeros = np.zeros(3, np.int32)
    _same(shax.jit(ours)(x, zeros), numpys(x, zeros))
    _same(shax.jit(ours)(x, zeros), np.zeros(3, np.int32))


def test_two_integer_tracers_broadcast():
    x, y = np.meshgrid(INTS.astype(np.int32), np.int32([3, -3, 2, -5]))
    _same(shax.jit(lambda x, y: x % y)(x, y), x % y)
    _same(shax.jit(lambda x, y: x // y)(x[0], y[:, :1]), x[0] // y[:, :1])


def test_argmax_remainder_indexes():
    x = np.float32([0.5, 3.0, -1.0, 2.0, 9.0])
    _same(shax.jit(lambda x: x[snp.argmax(x) % 3])(x), x[np.argmax(x) % 3])
    _same(shax.jit(lambda x: snp.argmax(x) // 2)(x), np.int32(np.argmax(x) // 2))


def test_loop_index_remainder_in_fori_loop():
    xs = np.float32([1.0, 10.0, 100.0])
    f = shax.jit(lambda xs: shax.fori_loop(0, 7, lambda i, acc: acc + xs[i % 3], np.float32(0)))
    _same(f(xs), np.float32(sum(xs[i % 3] for i in range(7))))


def test_vmap_of_integer_remainder():
    x = np.int32([[7, -7, 5], [-1, 0, 8]])
    _same(shax.vmap(lambda v: v % 3)(x), x % 3)
    _same(shax.vmap(lambda v: v // -2)(x), x // -2)


def test_grad_through_integer_index():
    # the index is an integer (no derivative); the float function's gradient goes to the element read
    x = np.float32([0.5, 3.0, -1.0, 2.0])
    grad = shax.grad(lambda x: x[snp.argmax(x) % 3] * x[(snp.argmax(x) + 1) // 2])(x)
    want = np.zeros(4, np.float32)
    want[1 % 3] += x[(1 + 1) // 2]
    want[(1 + 1) // 2] += x[1 % 3]
    _same(grad, want)


def test_integer_remainder_keeps_weak_number_rules():
    # a Python float beside an integer tensor promotes as numpy's (f64); 300 beside a u8 is an error, as in numpy 2
    x = np.int32([1, 2])
    _same(shax.jit(lambda x: x % 2.5)(x), x % 2.5)
    with pytest.raises(shax.ShaxError, match="floor_divide"):
        shax.jit(lambda x: x // 300)(np.uint8([1, 2]))
