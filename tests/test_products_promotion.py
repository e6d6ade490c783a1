"""numpy's promotion in `shax.numpy`'s products `einsum`, `inner`, `outer`, `tensordot`
(as `dot` and `matmul`): traced and compiled, the result's dtype and values are numpy's for
the same operands, and each conversion is a `convert_element_type` in the program."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

X = {
    "f32": np.array([1.5, -2.0, 0.25], np.float32),
    "f64": np.array([0.5, 3.0, -1.0]),
    "i32": np.array([2, -1, 4], np.int32),
    "i64": np.array([-3, 1, 2]),
    "u8": np.array([1, 2, 3], np.uint8),
    "bool": np.array([True, False, True]),
}
PAIRS = [
    ("f32", "i32"),
    ("f32", "f64"),
    ("i32", "i64"),
    ("u8", "i32"),
    ("i32", "bool"),
    ("bool", "f32"),
    ("f64", "f64"),
]
PRODUCTS = {
    "inner": (np.inner, snp.inner),
    "outer": (np.outer, snp.outer),
    "tensordot": (lambda a, b: np.tensordot(a, b, 1), lambda a, b: snp.tensordot(a, b, 1)),
    "tensordot0": (lambda a, b: np.tensordot(a, b, 0), lambda a, b: snp.tensordot(a, b, 0)),
    "einsum": (lambda a, b: np.einsum("i,j->ij", a, b), lambda a, b: snp.einsum("i,j->ij", a, b)),
    "einsum_sum": (lambda a, b: np.einsum("i,i", a, b), lambda a, b: snp.einsum("i,i", a, b)),
}


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("product", PRODUCTS)
@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_result_dtype_is_numpys(product: str, left: str, right: str) -> None:
    numpy_f, shax_f = PRODUCTS[product]
    a, b = X[left], X[right]
    want = numpy_f(a, b)
    _same(shax_f(a, b), want)
    _same(shax.jit(shax_f)(a, b), want)
    _same(shax.jit(lambda y: shax_f(a, y))(b), want)  # one operand a constant of the trace


@pytest.mark.parametrize("scalar", [np.float64(2.0), np.int64(3), 2, 2.5, True])
def test_numpy_scalars_are_strong_and_python_numbers_as_numpy_reads_them(scalar: Any) -> None:
    """numpy's products read a Python number as an array (i64, f64): not weak, as in ufuncs."""
    f32 = X["f32"]
    _same(shax.jit(lambda x: snp.dot(x, scalar))(f32), np.dot(f32, scalar))
    _same(shax.jit(lambda x: snp.tensordot(x, scalar, 0))(f32), np.tensordot(f32, scalar, 0))
    _same(shax.jit(lambda x: snp.inner(x, scalar))(f32), np.inner(f32, scalar))
    _same(shax.jit(lambda x: snp.outer(scalar, x))(f32), np.outer(scalar, f32))
    _same(shax.jit(lambda x: snp.einsum("i,->i", x, scalar))(f32), np.einsum("i,->i", f32, scalar))


def test_each_conversion_is_a_visible_binding_and_gradients_flow() -> None:
    program = str(shax.xpr(lambda x, i: snp.einsum("i,i", x, i), X["f32"], X["i32"]))
    assert program.count("convert_element_type") == 2 and "f64[]" in program
    gradient = shax.grad(lambda x: snp.tensordot(x, X["f64"], 1))(X["f32"])
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, X["f64"].astype(np.float32))
    same_dtypes = str(shax.xpr(lambda x, y: snp.outer(x, y), X["f32"], X["f32"]))
    assert "convert_element_type" not in same_dtypes


def test_bools_alone_are_refused_naming_the_operation() -> None:
    with pytest.raises(shax.ShaxTypeError, match="bool operands are not summed"):
        shax.jit(lambda a: snp.einsum("i,i", a, a))(X["bool"])
