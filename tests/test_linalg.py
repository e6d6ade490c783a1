"""`shax.numpy.linalg`: values equal to numpy's (stacks of matrices too), gradients equal
to JAX's (stored: computed once with `jax.numpy.linalg` in float64) and to finite
differences, JAX's conventions where numpy's differ (symmetrized cholesky and eigh, NaNs
for a singular matrix), and ShaxErrors naming the function for bad input. The primitives
themselves are checked by their spec rows (tests/spec.py) like every primitive."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
from shax.testing import check_grads

L = snp.linalg
A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])  # symmetric positive definite
B = np.array([[2.0, -1.0, 0.5], [0.3, 1.5, -0.2], [0.1, 0.4, -1.8]])  # det < 0
b = np.array([1.0, -2.0, 0.5])
T = np.array([[2.0, -1.0, 0.5], [0.3, 1.5, -0.2], [0.1, 0.4, -1.8], [1.0, 0.2, 0.3]])
C = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5], [0.2, 0.9, 1.6]])
C43 = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.5], [0.2, 0.9, 1.6], [-0.8, 0.1, 0.6]])
w = np.array([1.0, 2.0, 3.0])
STACK = np.stack([B, A, B.T + np.eye(3)])  # (3, 3, 3)

# Scalar functions of one argument whose gradients JAX gave (eigenvectors and q, r only
# through their squares: their signs are LAPACK's choice).
FUNCTIONS: dict[str, tuple[Any, np.ndarray]] = {
    "inv": (lambda m: snp.sum(snp.sin(L.inv(m))), B),
    "solve_a": (lambda m: snp.sum(L.solve(m, b) ** 2), B),
    "solve_b": (lambda v: snp.sum(L.solve(B, v) ** 2), b),
    "cholesky": (lambda m: snp.sum(L.cholesky(m) * C), A),
    "slogdet": (lambda m: L.slogdet(m)[1], B),
    "det": (lambda m: L.det(m), B),
    "eigh_values": (lambda m: snp.sum(L.eigh(m)[0] * w), A),
    "eigh_vectors": (lambda m: snp.sum(L.eigh(m)[1] ** 2 * C), A),
    "qr": (lambda m: snp.sum(L.qr(m)[0] ** 2 * C43) + snp.sum(L.qr(m)[1] ** 2 * C), T),
    "norm_fro": (lambda m: L.norm(m), B),
    "norm_1": (lambda m: L.norm(m, 1), B),
    "norm_inf": (lambda m: L.norm(m, np.inf), B),
    "norm_vec3": (lambda v: L.norm(v, 3), b),
    "matrix_power": (lambda m: snp.sum(L.matrix_power(m, -3) * C), B),
}

JAX_GRADIENTS = {
    "inv": [
        [-0.28376195835468376, -0.16913050357540024, 0.15018309467438076],
        [-0.8257036473859277, -0.3962300590235936, 0.4416632483627395],
        [0.4615218996071167, 0.2493922529479972, -0.18596454092710876],
    ],
    "solve_a": [
        [0.010476108375922857, 0.27804622066588663, 0.11746980539559386],
        [-0.10487431073701957, -2.7834673620202377, -1.175967681051169],
        [0.0493147037117353, 1.3088607427753993, 0.5529714317840476],
    ],
    "solve_b": [0.19835910121624403, -1.9857349000206144, 0.9337456194599051],
    "cholesky": [
        [0.03206680954783344, 0.2146324591311806, -0.08579939464502888],
        [0.2146324591311806, 0.1136315209670186, 0.2556772850165183],
        [-0.08579939464502888, 0.2556772850165183, 0.5750405871271944],
    ],
    "slogdet": [
        [0.4536796536796537, -0.09004329004329005, 0.00519480519480519],
        [0.27705627705627706, 0.6320346320346321, 0.15584415584415587],
        [0.09523809523809523, -0.09523809523809525, -0.5714285714285714],
    ],
    "det": [[-2.62, 0.52, -0.030000000000000027], [-1.6, -3.65, -0.9], [-0.55, 0.55, 3.3]],
    "eigh_values": [
        [2.639663651251195, 0.4409415269507082, 0.40512406481651453],
        [0.4409415269507082, 2.256756019007707, 0.045981836512161464],
        [0.40512406481651453, 0.045981836512161464, 1.1035803297410949],
    ],
    "eigh_vectors": [
        [0.2365060926216908, -0.09015746595695392, 0.4269937627267262],
        [-0.09015746595695392, -0.5028797686754778, -0.5420281184518081],
        [0.4269937627267262, -0.5420281184518081, 0.26637367605378703],
    ],
    "qr": [
        [1.1506771652149244, 0.753994337377061, 0.06959259586293763],
        [1.0742427455658923, 2.1438813598859987, 1.771362034567158],
        [0.04634897555728726, -2.571488719365616, -5.114711892363176],
        [0.43173794834465534, 1.2499957892166416, 1.3248773871402955],
    ],
    "norm_fro": [
        [0.6019292654288461, -0.30096463271442303, 0.15048231635721152],
        [0.09028938981432691, 0.4514469490716345, -0.060192926542884606],
        [0.030096463271442303, 0.12038585308576921, -0.5417363388859615],
    ],
    "norm_1": [[0.0, -1.0, 0.0], [0.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
    "norm_inf": [[1.0, -1.0, 1.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
    "norm_vec3": [0.22900488747294417, -0.9160195498917767, 0.057251221868236044],
    "matrix_power": [
        [0.2896529462447107, 0.2874223349142271, 0.10542159677672773],
        [-0.1803782603173491, 0.3325444929153576, 0.12871941085014837],
        [0.2003920955800097, 0.07064501820292968, -0.3865614793958287],
    ],
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradients_are_jax_s(name: str) -> None:
    f, x = FUNCTIONS[name]
    np.testing.assert_allclose(shax.grad(f)(x), JAX_GRADIENTS[name], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_derivatives_match_finite_differences(name: str) -> None:
    f, x = FUNCTIONS[name]
    check_grads(f, (x,), order=2 if name in ("inv", "eigh_values", "cholesky") else 1)


# Values: numpy's, on a matrix and on a stack of them ------------------------------------


@pytest.mark.parametrize("a", [B, STACK], ids=["matrix", "stack"])
def test_values_are_numpy_s(a: np.ndarray) -> None:
    spd = a @ np.swapaxes(a, -1, -2) + np.eye(3)
    np.testing.assert_allclose(L.inv(a), np.linalg.inv(a), rtol=1e-12)
    np.testing.assert_allclose(L.det(a), np.linalg.det(a), rtol=1e-12)
    sign, logabsdet = L.slogdet(a)
    np.testing.assert_array_equal(sign, np.linalg.slogdet(a).sign)
    np.testing.assert_allclose(logabsdet, np.linalg.slogdet(a).logabsdet, rtol=1e-12)
    np.testing.assert_allclose(L.cholesky(spd), np.linalg.cholesky(spd), rtol=1e-12)
    np.testing.assert_allclose(L.cholesky(spd, upper=True), np.linalg.cholesky(spd, upper=True), rtol=1e-12)
    values, vectors = L.eigh(spd)
    np.testing.assert_allclose(values, np.linalg.eigvalsh(spd), rtol=1e-12)
    np.testing.assert_allclose(L.eigvalsh(spd), np.linalg.eigvalsh(spd), rtol=1e-12)
    np.testing.assert_allclose(vectors @ (values[..., None] * np.swapaxes(vectors, -1, -2)), spd, atol=1e-12)
    q, r = L.qr(a)
    np.testing.assert_allclose(q, np.linalg.qr(a).Q, atol=1e-12)
    np.testing.assert_allclose(r, np.linalg.qr(a).R, atol=1e-12)
    np.testing.assert_allclose(L.matrix_power(a, 5), np.linalg.matrix_power(a, 5), rtol=1e-12)
    np.testing.assert_allclose(L.matrix_power(a, -2), np.linalg.matrix_power(a, -2), rtol=1e-10)
    np.testing.assert_array_equal(L.matrix_power(a, 0), np.linalg.matrix_power(a, 0))


def test_results_are_numpy_s_named_tuples_and_dtypes() -> None:
    a32 = B.astype(np.float32)
    assert L.inv(a32).dtype == np.float32 and L.slogdet(a32).logabsdet.dtype == np.float32
    assert L.inv(np.eye(2, dtype=np.int32)).dtype == np.float64  # integers read as f64, as numpy
    assert L.eigh(A).eigenvalues.shape == (3,) and L.qr(T).R.shape == (3, 3) and L.qr(T).Q.shape == (4, 3)
    assert L.qr(T, mode="complete").Q.shape == (4, 4) and L.qr(T, mode="r").shape == (3, 3)
    np.testing.assert_allclose(L.qr(T, mode="complete").Q, np.linalg.qr(T, mode="complete").Q, atol=1e-12)
    assert isinstance(L.inv(B), snp.ndarray)


def test_solve_takes_numpy_2_s_shapes() -> None:
    np.testing.assert_allclose(L.solve(B, b), np.linalg.solve(B, b), rtol=1e-12)  # one vector
    rhs = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(L.solve(B, rhs), np.linalg.solve(B, rhs), rtol=1e-12)
    np.testing.assert_allclose(L.solve(STACK, rhs), np.linalg.solve(STACK, rhs), rtol=1e-12)  # broadcast
    np.testing.assert_allclose(L.solve(STACK, b), np.linalg.solve(STACK, b), rtol=1e-12)
    assert L.solve(B.astype(np.float32), b).dtype == np.float64


NORMS = [
    (None, None), (2, None), (1, None), (np.inf, None), (-np.inf, None), (0, None), (3, None), (0.5, None),
    (None, 0), (1, 1), (np.inf, -1),
]  # fmt: skip
MATRIX_NORMS = [None, "fro", 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize(("ord", "axis"), NORMS)
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms_are_numpy_s(ord: Any, axis: Any, keepdims: bool) -> None:
    x = np.array([[3.0, -4.0, 0.0], [1.0, 2.0, -2.0]])
    x = x[0] if axis is None and ord is not None else x
    expected = np.linalg.norm(x, ord, axis, keepdims)
    np.testing.assert_allclose(L.norm(x, ord, axis, keepdims), expected, rtol=1e-12)
    np.testing.assert_allclose(shax.jit(lambda t: L.norm(t, ord, axis, keepdims))(x), expected, rtol=1e-12)


@pytest.mark.parametrize("ord", MATRIX_NORMS)
@pytest.mark.parametrize("axis", [None, (1, 0), (0, 2)])
def test_matrix_norms_are_numpy_s(ord: Any, axis: Any) -> None:
    x = STACK[0] if axis is None else STACK
    for keep in (False, True):
        expected = np.linalg.norm(x, ord, axis, keep)
        np.testing.assert_allclose(L.norm(x, ord, axis, keep), expected, rtol=1e-12)
        np.testing.assert_allclose(shax.jit(lambda t, k=keep: L.norm(t, ord, axis, k))(x), expected, rtol=1e-12)


def test_norm_gradients_at_zero_are_jax_s() -> None:
    """JAX's: NaN for the 2-norm (√ at 0), |x|' = 1 at 0, and max(·, 0) sharing its tie."""
    zero = np.zeros(3)
    expected = {None: np.nan, 2: np.nan, 3: np.nan, 1: 1.0, np.inf: 1 / 6, -np.inf: 1 / 3, 0: 0.0}
    with np.errstate(all="ignore"):
        for order, value in expected.items():
            np.testing.assert_array_equal(shax.grad(lambda x, o=order: L.norm(x, o))(zero), np.full(3, value))
        np.testing.assert_array_equal(shax.grad(lambda x: L.norm(x))(np.zeros((2, 2))), np.full((2, 2), np.nan))


# JAX's conventions where numpy's differ ----------------------------------------------------


def test_cholesky_and_eigh_decompose_the_symmetric_part() -> None:
    skewed = A + np.array([[0.0, 0.3, 0.0], [-0.3, 0.0, 0.1], [0.0, -0.1, 0.0]])  # A plus a skew part
    np.testing.assert_allclose(L.cholesky(skewed), np.linalg.cholesky(A), rtol=1e-12)
    np.testing.assert_allclose(L.eigh(skewed).eigenvalues, np.linalg.eigvalsh(A), rtol=1e-12)


def test_a_matrix_that_cannot_be_decomposed_gives_nans() -> None:
    singular = np.stack([B, np.ones((3, 3))])
    inverse = L.inv(singular)
    np.testing.assert_allclose(inverse[0], np.linalg.inv(B), rtol=1e-12)
    assert np.isnan(inverse[1]).all()
    assert np.isnan(L.solve(singular, b)[1]).all()
    assert np.isnan(L.cholesky(-np.eye(2))).all()
    assert L.det(np.ones((3, 3))) == 0.0 and L.slogdet(np.ones((3, 3))).logabsdet == -np.inf


# Transforms: vmap, jit, the traced program ------------------------------------------------


def test_vmap_is_the_loop_and_jit_is_evaluate() -> None:
    def f(m: Any) -> Any:
        q, r = L.qr(m)
        return L.norm(L.solve(m, L.inv(m) @ r) + q, 1) + L.slogdet(m)[1] + L.eigh(m @ m.T)[0][0]

    expected = np.array([f(m) for m in STACK])
    np.testing.assert_allclose(shax.vmap(f)(STACK), expected, rtol=1e-10)
    np.testing.assert_allclose(shax.jit(f)(STACK[0]), f(STACK[0]), rtol=1e-12)
    np.testing.assert_allclose(shax.vmap(shax.grad(lambda m: L.det(m)))(STACK), [shax.grad(L.det)(m) for m in STACK])


def test_numpy_s_linalg_on_a_tracer_is_shax_s() -> None:
    printed = str(shax.xpr(lambda m: np.linalg.inv(m) + np.linalg.norm(m), B))
    assert "inv x0" in printed and "reduce_sum" in printed
    np.testing.assert_allclose(shax.jit(lambda m: np.linalg.solve(m, b))(B), np.linalg.solve(B, b), rtol=1e-12)


def test_the_primitives_print() -> None:
    printed = str(shax.xpr(lambda m: (L.eigh(m).eigenvectors, L.qr(m, "complete").R, L.det(m)), A))
    for line in ("= eigh x0", "= qr True x0", "sign_det x0", "log_abs_det x0"):
        assert line in printed


# Bad input: ShaxErrors naming the function ---------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: L.inv(np.ones(3)), "linalg.inv: needs a stack of matrices"),
        (lambda: L.inv(np.ones((2, 3))), "linalg.inv: needs square matrices"),
        (lambda: L.det(np.array([["a"]])), "linalg.det: needs an array of numbers"),
        (lambda: L.solve(B, np.ones(2)), "linalg.solve: b's shape"),
        (lambda: L.solve(STACK, np.ones((2, 3, 1))), "linalg.solve: the stacks"),
        (lambda: L.qr(T, mode="raw"), "linalg.qr: mode must be"),
        (lambda: L.eigh(A, UPLO="X"), "linalg.eigh: UPLO"),
        (lambda: L.eigh(A, symmetrize_input=False), "linalg.eigh: decomposes the symmetric part"),
        (lambda: L.norm(b, "fro"), "linalg.norm: invalid order 'fro' for a vector norm"),
        (lambda: L.norm(b, "nuc"), "linalg.norm: invalid order 'nuc' for a vector norm"),
        (lambda: L.norm(B, 3), "linalg.norm: invalid order 3 for a matrix norm"),
        (lambda: L.norm(STACK, 1), "linalg.norm: with an ord, needs a vector or a matrix"),
        (lambda: L.norm(B, axis=(0, 0)), "linalg.norm: takes one axis"),
        (lambda: L.matrix_power(B, 1.5), "linalg.matrix_power"),
        (lambda: shax.grad(lambda m: snp.sum(L.qr(m).Q))(B.T[:2]), "qr: is differentiated only on matrices"),
        (lambda: shax.jit(lambda m: L.inv(m))(np.ones((2, 3))), "inv: needs square matrices"),
    ],
)
@typeguard.suppress_type_checks  # wrong types on purpose: shax's own checks answer
def test_bad_input_is_a_shax_error_naming_the_function(call: Any, message: str) -> None:
    with pytest.raises(shax.ShaxError, match=message.replace("(", r"\(")):
        call()
