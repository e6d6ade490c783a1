"""The integer dtypes numpy users meet first, i64 (numpy's default int) and u8 (images),
end to end: printing and parsing, weak Python ints, transforms, codegen, shax.numpy and
shax.nn. The spec rows (tests/spec.py) cover each primitive at these dtypes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp
import typeclasses as tc
from shax import f32, i32, i64, u8
from shax.core.types import TensorType


def test_print_and_parse() -> None:
    assert str(i64[3]) == "i64[3]"
    assert str(u8[2, 2]) == "u8[2, 2]"
    assert TensorType.parse("i64[3]") == i64[3]
    assert TensorType.parse("u8[2, 2]") == u8[2, 2]
    assert TensorType.of(np.arange(3)) == i64[3]
    assert TensorType.of(np.zeros((2, 2), np.uint8)) == u8[2, 2]
    assert "def f(arg0 :: u8[2])" in str(shax.trace(lambda x: x + 1, u8[2], name="f"))
    assert "u8[2]" in str(shax.stages.infer_types(shax.trace(lambda x: x + 1, u8[2])))


def test_numpy_default_ints_are_i64() -> None:
    labels = np.array([2, 0, 2, 1])
    assert shax.jit(lambda x: x * 3 - 1)(labels).dtype == np.int64
    np.testing.assert_array_equal(shax.jit(lambda x: x * 3 - 1)(labels), labels * 3 - 1)
    # A closed-over numpy int64 constant, numpy's arange
    offsets = snp.arange(4)
    out = shax.jit(lambda x: x + offsets)(labels)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, labels + np.arange(4))


@pytest.mark.parametrize("dtype", [np.int64, np.uint8])
def test_integer_primitives_match_numpy(dtype: Any) -> None:
    x = np.array([[3, 0, 7], [1, 5, 2]], dtype)
    y = np.array([[1, 4, 7], [2, 2, 9]], dtype)
    functions = {
        "add": lambda a, b: a + b,
        "sub": lambda a, b: a - b,
        "mul": lambda a, b: a * b,
        "max": lambda a, b: snp.maximum(a, b),
        "min": lambda a, b: snp.minimum(a, b),
        "lt": lambda a, b: a < b,
        "eq": lambda a, b: a == b,
        "abs": lambda a, b: abs(a),
        "sign": lambda a, b: snp.sign(a),
        "where": lambda a, b: snp.where(a < b, a, b),
        "sum": lambda a, b: snp.sum(a, axis=0),
        "max_all": lambda a, b: snp.max(a),
        "min_axis": lambda a, b: snp.min(b, axis=1),
        "prod": lambda a, b: snp.prod(a, axis=1),
        "argmax": lambda a, b: snp.argmax(b, axis=1),
        "concatenate": lambda a, b: snp.concatenate([a, b], axis=1),
        "transpose": lambda a, b: a.T,
        "reshape": lambda a, b: a.reshape(3, 2),
        "slice": lambda a, b: a[:, 1:],
        "flip": lambda a, b: a[::-1],
        "to_f32": lambda a, b: a.astype(np.float32),
        "from_f32": lambda a, b: (a.astype(np.float32) * 2.0).astype(a.dtype),
    }
    for name, f in functions.items():
        direct = f(x, y)
        compiled = shax.jit(f)(x, y)
        expected = np.asarray(f(np.asarray(x), np.asarray(y)))
        for got in (np.asarray(direct), np.asarray(compiled)):
            assert got.shape == expected.shape, name
            np.testing.assert_array_equal(got, expected, err_msg=name)
        # The elementwise results keep numpy's dtype (reductions: see test_reductions_keep_the_dtype)
        if name not in ("sum", "prod", "argmax"):
            assert np.asarray(compiled).dtype == expected.dtype, name


def test_reductions_keep_the_dtype() -> None:
    # Sums and products in the operand's dtype (JAX's lax; numpy widens to int64 or uint64),
    # indices as i32.
    images = np.full((2, 2), 200, np.uint8)
    assert shax.jit(lambda x: snp.sum(x, axis=0))(images).dtype == np.uint8
    assert shax.jit(lambda x: snp.sum(x))(np.arange(5)).dtype == np.int64
    assert shax.jit(lambda x: snp.argmax(x))(np.arange(5)).dtype == np.int32


def test_weak_ints_adopt_the_dtype() -> None:
    image = np.array([[0, 128], [250, 255]], np.uint8)
    assert (image + 3).dtype == np.uint8  # numpy's
    out = shax.jit(lambda x: x + 3)(image)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, image + 3)  # wraps around, as numpy's
    assert shax.jit(lambda x, n: x * n)(np.arange(3), 2**40).dtype == np.int64  # the argument is i64


@pytest.mark.parametrize("number", [300, -1])
def test_weak_int_that_does_not_fit_u8_is_an_error(number: int) -> None:
    image = np.zeros((2, 2), np.uint8)
    with pytest.raises(shax.ShaxValueError, match=rf"add: the Python int {number} does not fit u8.*test_dtypes.py"):
        shax.jit(lambda x: x + number)(image)
    with pytest.raises(shax.ShaxValueError, match=rf"argument 1: the Python int {number} does not fit u8"):
        shax.jit(lambda x, n: x + n)(image, number)


def test_mixed_dtypes_promote_on_the_numpy_surface_only() -> None:
    # Operators promote as numpy does (tests/test_promotion.py); the typeclass functions stay strict.
    assert shax.jit(lambda x, y: x + y)(np.arange(3), np.arange(3, dtype=np.int32)).dtype == np.int64
    assert shax.jit(lambda x: x * 0.5)(np.zeros(2, np.uint8)).dtype == np.float64
    with pytest.raises(shax.ShaxTypeError, match=r"add: operands have different dtypes.*i64\[3\], i32\[3\]"):
        shax.jit(lambda x, y: tc.add(x, y))(np.arange(3), np.arange(3, dtype=np.int32))
    with pytest.raises(shax.ShaxTypeError, match=r"Python float 0.5 with a u8 tensor"):
        shax.jit(lambda x: tc.mul(x, 0.5))(np.zeros(2, np.uint8))


def test_a_python_int_alone_stays_i32() -> None:
    assert shax.jit(lambda n: n + 1)(3).dtype == np.int32
    assert shax.xpr(lambda n: n + 1, 3).arg_types == (i32[()],)


def test_grad_with_int64_labels() -> None:
    labels = np.array([2, 0, 2, 1, 2])
    x = np.arange(5, dtype=np.float32)

    def loss(x: Any, labels: Any) -> Any:
        return snp.sum(x * (labels == 2).astype(np.float32))

    np.testing.assert_array_equal(loss(x, labels), 6.0)
    np.testing.assert_array_equal(shax.jit(loss)(x, labels), 6.0)
    g = shax.grad(loss)(x, labels)  # the labels are not differentiated
    np.testing.assert_array_equal(g, [1, 0, 1, 0, 1])
    assert g.dtype == np.float32
    (gx,) = shax.grad(loss, wrt=(0,))(x, labels)
    assert gx.dtype == np.float32
    with pytest.raises(shax.ShaxError, match="i64"):
        shax.grad(loss, wrt=1)(x, labels)
    value, grads = shax.value_and_grad(lambda x, labels: snp.sum(snp.where(labels == 2, x, 0.0)))(x, labels)
    assert value == 6.0
    np.testing.assert_array_equal(grads, [1, 0, 1, 0, 1])


def test_vmap_over_int64_and_u8() -> None:
    labels = np.array([[2, 0], [1, 1], [0, 2]])
    out = shax.vmap(lambda row: snp.sum(row * 2))(labels)
    np.testing.assert_array_equal(out, [4, 4, 4])
    assert out.dtype == np.int64
    images = np.arange(12, dtype=np.uint8).reshape(3, 2, 2)
    out = shax.vmap(lambda im: snp.max(im))(images)
    np.testing.assert_array_equal(out, [3, 7, 11])
    assert out.dtype == np.uint8


def test_one_hot_of_int64_labels() -> None:
    labels = np.array([2, 0, 1])
    expected = np.eye(3, dtype=np.float32)[labels]
    np.testing.assert_array_equal(shax.nn.one_hot(labels, 3), expected)
    np.testing.assert_array_equal(shax.jit(lambda y: shax.nn.one_hot(y, 3))(labels), expected)
    np.testing.assert_array_equal(shax.jit(lambda y: shax.nn.one_hot(y, 3))(labels.astype(np.uint8)), expected)


def test_training_on_u8_images() -> None:
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (4, 6), dtype=np.uint8)
    labels = np.array([0, 1, 2, 1])
    w = np.zeros((6, 3), np.float32)

    def loss(w: Any, images: Any, labels: Any) -> Any:
        x = images.astype(np.float32) / 255.0
        logp = shax.nn.log_softmax(x @ w)
        return -snp.sum(logp * shax.nn.one_hot(labels, 3)) / 4.0

    g = shax.jit(shax.grad(loss))(w, images, labels)
    assert g.dtype == np.float32 and g.shape == (6, 3)
    # log_softmax of zeros is -log 3: the gradient is x^T (softmax - one_hot) / 4
    x = images.astype(np.float32) / 255.0
    expected = x.T @ (np.full((4, 3), 1 / 3, np.float32) - np.eye(3, dtype=np.float32)[labels]) / 4.0
    np.testing.assert_allclose(g, expected, rtol=1e-5, atol=1e-6)
    for _ in range(3):
        w = w - 0.5 * shax.grad(loss)(w, images, labels)
    assert loss(w, images, labels) < np.log(3.0)


def test_integer_arguments_get_zero_tangents() -> None:
    x = np.float32(2.0)
    n = np.int64(3)
    out, tangent = shax.jvp(lambda x, n: x * n.astype(np.float32), (x, n), (np.float32(1.0), np.int64(0)))
    assert out == 6.0 and tangent == 3.0
    out, vjp_fn = shax.vjp(lambda x, n: x * n.astype(np.float32), x, n)
    gx, gn = vjp_fn(np.float32(1.0))
    assert gx == 3.0 and gn == 0 and np.asarray(gn).dtype == np.int64


def test_codegen_names_the_numpy_dtypes() -> None:
    source = shax.jit(lambda x: x.astype(np.uint8) + 1).source(f32[2])
    assert "uint8" in source
    compiled = shax.jit(lambda x: x.astype(np.int64) + 1)
    assert compiled(np.array([1.5, -2.5], np.float32)).dtype == np.int64


def test_zeros_like_of_a_tracer_in_another_dtype() -> None:
    f = shax.jit(lambda x: snp.zeros_like(x, dtype=int) + x.astype(np.int64))
    out = f(np.array([1.5, -2.5], np.float32))
    assert out.dtype == np.int64  # numpy's int
    np.testing.assert_array_equal(out, [1, -2])
    ones = shax.jit(lambda x: snp.ones_like(x, np.uint8))(np.zeros(2, np.float32))
    assert ones.dtype == np.uint8
    np.testing.assert_array_equal(ones, np.ones_like(np.zeros(2, np.float32), np.uint8))
    with pytest.raises(shax.ShaxTypeError, match="int16 is not supported"):
        shax.jit(lambda x: snp.ones_like(x, np.int16))(np.zeros(2, np.float32))


def test_a_boolean_in_arithmetic_is_zero_and_one_of_the_numbers_dtype() -> None:
    x = np.array([-1.0, 2.0, 3.0], np.float32)
    labels = np.array([2, 1, 2])
    np.testing.assert_array_equal(shax.jit(lambda x: x * (x > 0))(x), x * (x > 0))
    np.testing.assert_array_equal(shax.grad(lambda x: snp.sum(x * (x > 0)))(x), [0.0, 1.0, 1.0])
    assert shax.jit(lambda x, y: snp.sum(x * (y == 2)))(x, labels) == 2.0
    counts = shax.jit(lambda y: y + (y > 1))(labels)
    assert counts.dtype == np.int64
    np.testing.assert_array_equal(counts, labels + (labels > 1))


def test_a_tracers_dtype_stands_in_for_numpys() -> None:
    def f(x: Any) -> Any:
        assert x.dtype == np.float32 and x.dtype == np.dtype("float32") and x.dtype != np.float64
        assert np.issubdtype(x.dtype, np.floating)
        return snp.sum(x.astype(x.dtype) + np.ones(x.shape, x.dtype) + snp.zeros(x.shape, dtype=x.dtype))

    assert shax.jit(f)(np.ones(3, np.float32)) == 6.0
    assert shax.f32 != shax.f64 and shax.f32 != "f32" and shax.f32 != None  # noqa: E711 - the comparison tested
