"""The typeclasses: one function runs on numpy values and on tracers; constants are
lifted on either side; dtypes are kept; inputs are never mutated; annotations with
typeclass-bound TypeVars are checked when shax is handed a function."""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pytest
import typeguard
from spec import SPECS, Case, Spec

import shax
import typeclasses as tc
from shax import bool_, f32, f64, i32
from shax import primitives as P
from shax.core.ir import Definition
from shax.core.types import DType, TensorType
from shax.stages import infer_types
from shax.tools.cli import load_function
from shax.tracing.checked_numpy import checked_numpy_instance
from typeclasses import (
    HNP,
    Floating,
    NoInstanceError,
    Ord,
    Tensor,
    add,
    cos,
    cosh,
    dot,
    dot_general,
    eq,
    exp,
    log_base,
    pad,
    reduce_sum,
    reshape,
    select,
    sin,
    sinh,
    transpose,
)
from typeclasses.numpy_instance import NUMPY_TYPES, numpy_instance

A = TypeVar("A", bound=Floating)
MEDIUM = Path(__file__).resolve().parents[1] / "examples" / "medium.py"


def f(x: A, y: A) -> A:
    return sin(x + y) * cos(x + y)


def typed(function: Any, *types: TensorType) -> Definition:
    return infer_types(shax.trace(function, *types))


def constants(defn: Definition) -> list[np.ndarray]:
    return [b.prim.value for b in defn.bindings if isinstance(b.prim, P.Constant)]


# On numpy values.


def test_medium_on_numpy() -> None:
    medium = load_function(f"{MEDIUM}:medium")
    x, y = np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    result = medium(x, y)
    assert isinstance(result, np.ndarray) and result.dtype == np.float32
    np.testing.assert_allclose(result, [34.731194, 67.46239], rtol=1e-6)


def test_f_on_python_floats() -> None:
    result = f(0.5, 1.0)
    assert result == pytest.approx(np.sin(1.5) * np.cos(1.5), rel=1e-15)


@pytest.mark.parametrize("scalar", [np.float32, np.float64])
def test_f_on_numpy_scalars(scalar: type) -> None:
    result = f(scalar(0.5), scalar(1.0))
    assert np.asarray(result).dtype == np.dtype(scalar)
    expected = np.sin(scalar(1.5)) * np.cos(scalar(1.5))
    assert result == expected


def test_default_methods_on_numpy() -> None:
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(sinh(x), np.sinh(x), rtol=1e-14)
    np.testing.assert_allclose(cosh(x), np.cosh(x), rtol=1e-14)
    np.testing.assert_allclose(log_base(2.0, np.array([8.0, 0.5])), [3.0, -1.0], rtol=1e-14)
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(dot(m, m.T), m @ m.T)
    np.testing.assert_array_equal(dot(m, np.ones(3)), m @ np.ones(3))


def test_default_methods_on_tracers() -> None:
    # log_base is a default method: it records log and div, no binding of its own.
    defn = typed(lambda x: log_base(2.0, exp(x)), f64[3])
    assert not any(b.prim.name == "log_base" for b in defn.bindings)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(shax.evaluate(defn, x)[0], x / np.log(2.0), rtol=1e-14)


def test_sinh_and_cosh_are_numpys_near_zero() -> None:
    # Primitives, not (eˣ − e⁻ˣ) / 2, which gives sinh(1e-30) = 0.
    x = np.array([1e-30, -1e-8, 0.5, 3.0])
    for f, reference in ((sinh, np.sinh), (cosh, np.cosh)):
        np.testing.assert_array_equal(shax.jit(f)(x), reference(x))
        np.testing.assert_array_equal(shax.evaluate(typed(f, f64[4]), x)[0], reference(x))


def test_values_belong_to_the_typeclasses() -> None:
    defn_args: list[Any] = []
    shax.trace(lambda x: defn_args.append(x) or x, f32[2])
    for value in (np.ones(2), np.float32(1.0), 1.5, 2, defn_args[0]):
        assert all(isinstance(value, c) for c in (Floating, Ord, HNP, Tensor))
    assert not isinstance("a", Floating)


# typeguard (on in this test suite only) would reject these first, by the functions' annotations.
@typeguard.suppress_type_checks
def test_no_instance_for_a_string() -> None:
    with pytest.raises(NoInstanceError) as info:
        sin("a")
    assert isinstance(info.value, TypeError)
    assert "sin" in str(info.value) and "str" in str(info.value)


@typeguard.suppress_type_checks
def test_no_instance_for_one_operand_of_two() -> None:
    with pytest.raises(NoInstanceError, match="add.*list"):
        add(np.ones(2), [1.0, 2.0])


# shax's numpy instance checks, then computes what typeclasses' own numpy instance does.


@contextlib.contextmanager
def typeclasses_own_numpy_instance() -> Iterator[None]:
    tc.register_instance(numpy_instance, *NUMPY_TYPES)
    try:
        yield
    finally:
        tc.register_instance(checked_numpy_instance, *NUMPY_TYPES)


def assert_identical(checked: Any, plain: Any) -> None:
    """The same Python type, dtype, shape and values (bit for bit, NaNs included)."""
    assert type(checked) is type(plain)
    checked, plain = np.asarray(checked), np.asarray(plain)
    assert (checked.dtype, checked.shape) == (plain.dtype, plain.shape)
    assert checked.tobytes() == plain.tobytes()


@pytest.mark.parametrize(
    ("spec", "case", "dtype"),
    [
        pytest.param(spec, case, dtype, id=f"{spec.prim.__name__}-{case.label}-{dtype.name}")
        for spec in SPECS.values()
        for case in spec.cases
        for dtype in spec.dtypes
    ],
)
def test_shax_numpy_instance_computes_what_typeclasses_own_does(spec: Spec, case: Case, dtype: DType) -> None:
    values = spec.sample(case, dtype, np.random.default_rng(zlib.crc32(f"{spec.prim.__name__}-{case.label}".encode())))
    checked = case.apply(*values)
    with typeclasses_own_numpy_instance():
        plain = case.apply(*values)
    assert_identical(checked, plain)


NUMBERS: list[tuple[str, Callable[[], Any]]] = [
    ("reshape_a_float", lambda: reshape(2.5, [1])),
    ("pad_an_int", lambda: pad(3, [], 0)),
    ("select_numbers", lambda: select(np.array([True, False]), 1.0, 2.0)),
    ("select_a_number_branch", lambda: select(np.array([True, False]), np.ones(2, np.float32), 0.0)),
    ("select_python_bool", lambda: select(True, 1.5, 2.5)),
    ("eq_a_number", lambda: eq(np.arange(3, dtype=np.int32), 1)),
    ("dot_general_a_number", lambda: dot_general(2.0, np.ones(3), ((), (), (), ()))),
    ("dot_matrix_vector", lambda: dot(np.ones((2, 3)), np.arange(3.0))),
    ("sin_of_an_int", lambda: sin(3)),
    ("add_promotes", lambda: add(np.ones(2, np.float32), np.ones(2))),
]


@pytest.mark.parametrize("function", [pytest.param(f, id=name) for name, f in NUMBERS])
def test_numbers_on_shax_numpy_instance(function: Callable[[], Any]) -> None:
    checked = function()
    with typeclasses_own_numpy_instance():
        plain = function()
    assert_identical(checked, plain)


# Lifting constants next to tracers keeps the tracer's dtype.

LIFTS: list[tuple[str, Any, TensorType]] = [
    ("float_times_tracer", lambda x: 2.0 * x, f32[3]),
    ("tracer_times_float", lambda x: x * 2.0, f32[3]),
    ("int_plus_tracer", lambda x: 2 + x, f64[3]),
    ("float_minus_tracer", lambda x: 1.5 - x, f64[3]),
    ("int_times_i32", lambda x: x * 3, i32[3]),
    ("ndarray_times_tracer", lambda x: np.array([1.0, 2.0, 3.0], np.float32) * x, f32[3]),
    ("tracer_times_ndarray", lambda x: x * np.array([1.0, 2.0, 3.0], np.float32), f32[3]),
    ("numpy_scalar_times_tracer", lambda x: np.float64(2.5) * x, f64[3]),
    ("tracer_over_numpy_scalar", lambda x: x / np.float32(4.0), f32[3]),
    ("dot_ndarray_tracer", lambda x: dot(np.ones((2, 3), np.float32), x), f32[3, 2]),
    ("dot_tracer_ndarray", lambda x: dot(x, np.ones((2, 4), np.float32)), f32[3, 2]),
    ("ndarray_matmul_tracer", lambda x: np.ones((2, 3), np.float64) @ x, f64[3]),
    ("select_with_numbers", lambda x: select(eq(x, 1.0), x, 0.0), f32[3]),
]


@pytest.mark.parametrize(("function", "arg_type"), [pytest.param(*lift[1:], id=lift[0]) for lift in LIFTS])
def test_constants_are_lifted_on_either_side(function: Any, arg_type: TensorType) -> None:
    defn = typed(function, arg_type)
    assert constants(defn), "the constant should be part of the definition"
    assert all(c.dtype == np.dtype(arg_type.dtype.numpy) for c in constants(defn))
    (declared,) = defn.output_types()
    assert declared.dtype == arg_type.dtype
    x = np.arange(1, 1 + arg_type.size).reshape(arg_type.shape).astype(arg_type.dtype.numpy)
    (result,) = shax.evaluate(defn, x)
    expected = function(x)
    assert result.dtype == expected.dtype == np.dtype(arg_type.dtype.numpy)
    np.testing.assert_array_equal(result, expected)


def test_python_float_argument_is_f32() -> None:
    defn = typed(lambda x: x * 2.0, f32[()])
    (result,) = shax.evaluate(defn, 1.5)
    assert result.dtype == np.float32 and result == 3.0
    (result,) = shax.evaluate(typed(lambda x: x * 2.0, f64[()]), 1.5)
    assert result.dtype == np.float64


# Evaluation keeps dtypes and never mutates its inputs.

DTYPE_FUNCTIONS: list[tuple[Any, TensorType, Any]] = [
    (lambda x: reduce_sum(x * x + x, [1]), f32[2, 3], np.float32),
    (lambda x: reduce_sum(x * x + x, [1]), f64[2, 3], np.float64),
    (lambda x: transpose(-(x * x) + 2, [1, 0]), i32[2, 3], np.int32),
    (lambda x: reshape(select(x, x, eq(x, x)), [3, 2]), bool_[2, 3], np.bool_),
    (lambda x: eq(x, 1.0), f32[2, 3], np.bool_),
]


@pytest.mark.parametrize(("function", "arg_type", "result_dtype"), DTYPE_FUNCTIONS)
def test_evaluate_keeps_dtypes(function: Any, arg_type: TensorType, result_dtype: type) -> None:
    defn = typed(function, arg_type)
    rng = np.random.default_rng(0)
    x = rng.integers(-2, 3, arg_type.shape).astype(arg_type.dtype.numpy)
    (result,) = shax.evaluate(defn, x)
    assert result.dtype == np.dtype(result_dtype)
    assert defn.output_types()[0].dtype.numpy is result_dtype
    np.testing.assert_array_equal(result, function(x))


def test_inputs_are_never_mutated() -> None:
    def g(x, y):
        z = x * 2.0 + y
        return z, x, reshape(y, [6]), transpose(y, [1, 0])

    defn = typed(g, f64[2, 3], f64[2, 3])
    x, y = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    x.flags.writeable = y.flags.writeable = False  # any write would raise
    before = x.copy(), y.copy()
    results = shax.evaluate(defn, x, y)
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(y, before[1])
    np.testing.assert_array_equal(results[0], before[0] * 2.0 + before[1])


def test_evaluate_on_tracers_inlines_the_definition() -> None:
    inner = typed(f, f32[()], f32[()])
    direct = shax.trace(f, f32[()], f32[()])
    inlined = shax.trace(lambda x, y: shax.evaluate(inner, x, y)[0], f32[()], f32[()])
    assert str(inlined).splitlines()[2:] == str(direct).splitlines()[2:]


# Annotations are checked by typeguard when shax is handed the function.


def test_typevar_bound_to_floating_traces() -> None:
    defn = typed(f, f32[()], f32[()])
    assert defn.output_types() == (f32[()],)


def takes_an_ndarray(x: np.ndarray, y: A) -> A:  # takes-an-ndarray
    return x + y


def test_an_ndarray_annotation_fails_at_trace() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(takes_an_ndarray, f32[2], f32[2])
    error = info.value
    assert isinstance(error, TypeError)
    message = str(error)
    assert "takes_an_ndarray" in message and "argument x" in message and "ndarray" in message
    source = Path(__file__).read_text().splitlines()
    line = next(k for k, text in enumerate(source, 1) if text.endswith("# takes-an-ndarray"))
    assert f"test_typeclasses.py:{line}" in message


def returns_a_float(x: A) -> float:
    return x * 2.0


def test_a_result_annotation_is_checked() -> None:
    with pytest.raises(shax.ShaxError, match="result of returns_a_float"):
        shax.trace(returns_a_float, f32[2])
