"""numpy's dtype promotion on the numpy surface (`shax.tracing.promotion`): a function that mixes
dtypes gives numpy's dtypes and values traced (jit, grad, vmap) as on numpy arrays, each
conversion a visible `convert_element_type` binding; the typeclass functions stay strict."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shax
import shax.numpy as snp
import typeclasses as tc
from shax.core.types import DTYPES

F32 = np.arange(1, 5, dtype=np.float32)
F64 = np.arange(1, 5, dtype=np.float64) / 4
I32 = np.arange(1, 5, dtype=np.int32)
I64 = np.array([3, 1, 2, 0])
U8 = np.array([200, 1, 2, 3], np.uint8)
MASK = np.array([True, False, True, True])
LOGITS = np.array([[0.1, 0.9, 0.0], [2.0, 1.0, 0.5], [0.0, 0.2, 0.1], [1.0, 1.0, 3.0]], np.float32)

# The call forms users write, each run on numpy arrays and under jit: (function, arguments).
FORMS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "accuracy": (lambda logits, labels: snp.mean(snp.argmax(logits, 1) == labels), (LOGITS, I64)),
    "x * arange": (lambda x: x * snp.arange(4), (F32,)),
    "x + int array": (lambda x, i: x + i, (F32, I32)),
    "sin(int array)": (lambda i: snp.sin(i), (I32,)),
    "f32 + f64": (lambda x, y: x + y, (F32, F64)),
    "f64 - f32": (lambda x, y: x - y, (F64, F32)),
    "bool + int": (lambda m, i: m + i, (MASK, I32)),
    "bool * float": (lambda m, x: m * x, (MASK, F32)),
    "log / log(2.0)": (lambda x: snp.log(x) / snp.log(2.0), (F32,)),
    "sum(mask)": (lambda m: snp.sum(m), (MASK,)),
    "prod(mask)": (lambda m: snp.prod(m), (MASK,)),
    "mask + 1": (lambda m: m + 1, (MASK,)),
    "int * 0.5": (lambda i: i * 0.5, (I32,)),
    "int / int": (lambda i, j: i / j, (I32, I64)),
    "u8 + 3": (lambda u: u + 3, (U8,)),
    "u8 + i32": (lambda u, i: u + i, (U8, I32)),
    "f32 * np.float64": (lambda x: x * np.float64(2.0), (F32,)),
    "f32 * 2.0": (lambda x: x * 2.0, (F32,)),
    "int < float": (lambda i, x: i < x, (I32, F32)),
    "i32 == i64": (lambda i, j: i == j, (I32, I64)),
    "f32 @ i32": (lambda x, i: x.reshape(2, 2) @ i.reshape(2, 2), (F32, I32)),
    "maximum": (lambda x, i: snp.maximum(x, i), (F32, I64)),
    "where": (lambda m, x, i: snp.where(m, x, i), (MASK, F32, I32)),
    "concatenate": (lambda x, i: snp.concatenate([x, i]), (F32, I32)),
    "clip": (lambda i: snp.clip(i, 1.5, 3), (I32,)),
    "x % 2.0": (lambda x: x % 2.0, (F32,)),
    "i32 // i64": (lambda i, j: i // (j + 1), (I32, I64)),
    "np.add": (lambda x, i: np.add(x, i), (F32, I32)),
    "ndarray * tracer": (lambda x: I32 * x, (F32,)),
    "sqrt(mask + 1)": (lambda m: snp.sqrt(m + 1), (MASK,)),
}


def _same(got: Any, want: Any) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6 if got.dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", FORMS)
def test_call_forms_give_numpys_dtypes(name: str) -> None:
    f, args = FORMS[name]
    want = f(*args)  # numpy's own (snp on numpy arrays is numpy's)
    with np.errstate(all="ignore"):
        numpy_want = f(*[np.asarray(a) for a in args])
    _same(want, numpy_want)
    _same(shax.jit(f)(*args), want)


def test_argmax_is_i32_and_compares_with_numpys_int64_labels() -> None:
    # shax's argmax is i32 (JAX's; the README's "Coming from JAX"), numpy's int64: they compare in i64
    assert shax.jit(lambda x: snp.argmax(x, 1))(LOGITS).dtype == np.int32
    accuracy = shax.jit(lambda logits, labels: snp.mean(snp.argmax(logits, 1) == labels))(LOGITS, I64)
    _same(accuracy, np.mean(np.argmax(LOGITS, 1) == I64))


def test_conversions_are_bindings_and_unmixed_programs_print_as_before() -> None:
    program = str(shax.xpr(lambda x, i: x + i, F32, I32))
    assert program.count("convert_element_type f64") == 2
    assert "x4 :: f64[4] = add x1 x3" in program
    assert "convert" not in str(shax.xpr(lambda x, y: x * y + 2.0 * x - 1, F32, F32))
    assert "convert" not in str(shax.xpr(lambda i: i * 3 + 1, I64))
    assert str(shax.xpr(lambda m: snp.sum(m), MASK)).count("convert_element_type i64") == 1


def test_grad_and_vmap_through_promotion() -> None:
    def loss(w: Any, labels: Any) -> Any:
        return snp.sum((w * labels) ** 2)  # f32 weights, i64 labels: computed in f64, as numpy

    g = shax.grad(loss, argnums=0)(F32, I64)
    assert g.dtype == np.float32  # a gradient has its parameter's dtype
    np.testing.assert_allclose(g, 2 * F32 * I64.astype(np.float64) ** 2, rtol=1e-6)
    batched = shax.vmap(lambda x, i: x * i)(F32.reshape(2, 2), I32.reshape(2, 2))
    _same(batched, F32.reshape(2, 2) * I32.reshape(2, 2))


def test_typeclass_functions_stay_strict() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"add: operands have different dtypes.*f32\[4\], i32\[4\]"):
        shax.jit(lambda x, i: tc.add(x, i))(F32, I32)
    with pytest.raises(shax.ShaxTypeError, match="sin"):
        shax.jit(lambda i: tc.sin(i))(I32)


def test_a_dtype_shax_lacks_is_an_error_naming_the_operation() -> None:
    # numpy computes sin of a u8 in float16, which shax does not have
    assert np.sin(U8).dtype == np.float16
    with pytest.raises(shax.ShaxTypeError, match=r"sin: numpy computes this in float16.*u8\[4\].*test_promotion.py"):
        shax.jit(lambda u: snp.sin(u))(U8)


def test_a_weak_number_the_dtype_cannot_hold_is_still_an_error() -> None:
    with pytest.raises(shax.ShaxValueError, match=r"add: the Python int 300 does not fit u8"):
        shax.jit(lambda u: u + 300)(U8)


# Every pair of shax's dtypes through each operation: the traced result is numpy's (dtype
# and values), or a ShaxError where numpy refuses the operation or computes in a dtype shax lacks.
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "==": operator.eq,
    "<": operator.lt,
    "add": snp.add,
    "maximum": snp.maximum,
    "divide": snp.divide,
    "not_equal": snp.not_equal,
    "where": lambda x, y: snp.where(x > 1, x, y),
}
UNARY: dict[str, Callable[[Any], Any]] = {"sin": snp.sin, "sqrt": snp.sqrt, "exp": snp.exp, "abs": snp.abs}
NUMBERS = [2, 3.5, True]


def _numpy_outcome(f: Callable[..., Any], *args: Any) -> Any:
    try:
        with np.errstate(all="ignore"):
            return np.asarray(f(*args))
    except TypeError:
        return None


def _check(f: Callable[..., Any], args: tuple[Any, ...], traced: tuple[int, ...], name: str) -> None:
    """f of `args` under jit (the arguments at `traced` positions traced, the others constants)
    against numpy's on the same values."""
    want = _numpy_outcome(f, *args)

    def g(*xs: Any) -> Any:
        full = list(args)
        for k, x in zip(traced, xs):
            full[k] = x
        return f(*full)

    if want is None or want.dtype not in [np.dtype(d.numpy) for d in DTYPES]:
        with pytest.raises(shax.ShaxError):
            shax.jit(g)(*[args[k] for k in traced])
        return
    with np.errstate(all="ignore"):
        _same(shax.jit(g)(*[args[k] for k in traced]), want)


def _values(dtype: Any) -> np.ndarray:
    return np.array([1, 2, 3], np.dtype(dtype.numpy)) if dtype.name != "bool" else np.array([True, False, True])


@given(
    st.sampled_from(DTYPES),
    st.sampled_from(DTYPES),
    st.sampled_from(sorted(BINARY)),
    st.sampled_from([(0, 1), (0,), (1,)]),
)
def test_binary_dtype_pairs_match_numpy(a: Any, b: Any, name: str, traced: tuple[int, ...]) -> None:
    _check(BINARY[name], (_values(a), _values(b)), traced, name)


@given(st.sampled_from(DTYPES), st.sampled_from(sorted(BINARY)), st.sampled_from(NUMBERS), st.booleans())
def test_weak_numbers_match_numpy(a: Any, name: str, number: Any, left: bool) -> None:
    f = BINARY[name]
    if left:
        _check(lambda x, n: f(n, x) if name != "where" else f(x, n), (_values(a), number), (0,), name)
    else:
        _check(f, (_values(a), number), (0,), name)


@given(st.sampled_from(DTYPES), st.sampled_from(sorted(UNARY)))
def test_unary_dtypes_match_numpy(a: Any, name: str) -> None:
    _check(UNARY[name], (_values(a),), (0,), name)
