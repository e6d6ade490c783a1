"""The bit primitives and the tracer's operators `& | ^ ~ << >>` on integers: numpy's
values and dtypes (u32 sums wrap around, `>>` is arithmetic of signed integers and
logical of unsigned ones, shifts by the width or more shift every bit out), under
evaluate, jit and the XLA backend; `x.view(dtype)` reads the bits as another dtype of
the width (`bitcast_convert_type`); floats are refused naming the operator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import typeclasses as tc

OPERATORS: dict[str, Any] = {
    "and": lambda x, y: x & y,
    "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
    "not": lambda x, y: ~x,
    "lshift": lambda x, y: x << y,
    "rshift": lambda x, y: x >> y,
    "add": lambda x, y: x + y,
    "weak": lambda x, y: (x << 3) ^ (x >> 1) ^ 0x1B,
}
DTYPES = [np.int32, np.uint32, np.uint8, np.int64]
XLA_DTYPES = [np.int32, np.uint32, np.uint8]  # JAX's 32-bit mode has no int64


def _operands(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    info = np.iinfo(dtype)
    x = np.array([0, 1, info.max, info.min, info.max // 3, 7], dtype)
    y = np.array([0, 1, 5, 7, np.iinfo(dtype).bits, np.iinfo(dtype).bits + 3], dtype)
    return x, y


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(OPERATORS))
def test_operators_on_integers_are_numpys(name: str, dtype: Any) -> None:
    x, y = _operands(dtype)
    f = OPERATORS[name]
    expected = f(x, y)
    for got in (
        shax.jit(f)(x, y),
        shax.evaluate(shax.stages.infer_types(shax.trace(f, *map(shax.TensorType.of, (x, y)))), x, y)[0],
    ):
        np.testing.assert_array_equal(got, expected)
        assert np.asarray(got).dtype == expected.dtype


@pytest.mark.parametrize("dtype", XLA_DTYPES, ids=lambda d: np.dtype(d).name)
def test_the_xla_backend_agrees(dtype: Any) -> None:
    pytest.importorskip("jax")
    x, y = _operands(dtype)
    for f in OPERATORS.values():
        np.testing.assert_array_equal(shax.jit(f, backend="xla")(x, y), f(x, y))


def test_shift_right_logical_of_signed_integers_fills_with_zeros() -> None:
    x = np.array([-8, 8], np.int32)
    got = shax.jit(lambda v: shax.numpy.asarray(v) >> 1)(x)  # numpy's: arithmetic
    np.testing.assert_array_equal(got, [-4, 4])
    np.testing.assert_array_equal(shax.jit(lambda v: tc.shift_right_logical(v, 1))(x), [2147483644, 4])


def test_booleans_keep_the_logical_functions() -> None:
    defn = shax.trace(lambda v: (v > 0) & (v < 2), shax.f64[3])
    assert "logical_and" in str(defn)


def test_view_reads_the_bits_of_another_dtype_of_the_width() -> None:
    x = np.array([1.0, -2.5, np.inf], np.float32)
    np.testing.assert_array_equal(shax.jit(lambda v: v.view(np.uint32))(x), x.view(np.uint32))
    np.testing.assert_array_equal(shax.jit(lambda v: v.view(np.uint32).view(np.float32))(x), x)
    bits = np.array([0x3F800000, 0x40490FDB], np.uint32)
    np.testing.assert_array_equal(
        shax.jit(lambda b: ((b >> 9) | 0x3F800000).view(np.float32) - 1.0)(bits),
        ((bits >> 9) | 0x3F800000).view(np.float32) - 1.0,
    )


def test_bits_have_no_derivative() -> None:
    def f(x: Any) -> Any:
        return (x * x.view(np.int32).astype(np.float32) * 0.0 + x).sum()

    np.testing.assert_array_equal(shax.grad(f)(np.array([1.0, 2.0], np.float32)), [1.0, 1.0])


@pytest.mark.parametrize(
    ("f", "message"),
    [
        (lambda x: x << 1, r"<<: shax has it for integers only.*f32\[3\]"),
        (lambda x: x >> 1, r">>: shax has it for integers only"),
        (lambda x: x & 1, r"&: shax has it for integers and booleans only"),
        (lambda x: x.view(np.int64), r"view: .*f32\[3\].*int64"),
        (lambda x: shax.numpy.asarray(x).astype(np.uint8).view(np.bool_), r"view: .*u8\[3\]"),
    ],
)
def test_floats_and_other_widths_are_refused(f: Any, message: str) -> None:
    with pytest.raises(shax.ShaxTypeError, match=message):
        shax.jit(f)(np.ones(3, np.float32))


def test_bitcast_to_another_width_is_a_type_error_naming_the_primitive() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"bitcast_convert_type: cannot read the bits of f32 as f64"):
        shax.trace(lambda v: tc.bitcast_convert_type(v, np.float64), shax.f32[2])
