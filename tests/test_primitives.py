"""Every primitive's type rule against its numpy evaluation, driven by tests/spec.py:
trace the one-operation function, infer types, evaluate on values from the row's
domain and compare with running the function on numpy directly."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from spec import SPECS, Case, Spec

import shax
from shax import primitives as P
from shax.core.ir import Binding, Definition
from shax.core.types import DTYPES, DType, TensorType, f32, f64
from shax.stages import check_types, infer_types

CASES = [
    pytest.param(spec, case, dtype, id=f"{spec.prim.__name__}-{case.label}-{dtype.name}")
    for spec in SPECS.values()
    for case in spec.cases
    for dtype in spec.dtypes
]

REJECTED = [
    pytest.param(spec, dtype, id=f"{spec.prim.__name__}-{dtype.name}")
    for spec in SPECS.values()
    if None in spec.fixed
    for dtype in DTYPES
    if dtype not in spec.dtypes
]


def rng_for(*labels: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32("-".join(labels).encode()))


def output_binding(defn: Definition, k: int = 0) -> Binding:
    return next(b for b in defn.bindings if any(v.id == defn.outputs[k].id for v in b.vars))


def assert_matches(result: Any, expected: Any, declared: TensorType) -> None:
    """`result` has exactly the declared type and the expected values."""
    result, expected = np.asarray(result), np.asarray(expected)
    assert (expected.shape, expected.dtype) == (declared.shape, np.dtype(declared.dtype.numpy)), "numpy disagrees"
    assert (result.shape, result.dtype) == (declared.shape, np.dtype(declared.dtype.numpy)), "evaluate disagrees"
    if result.dtype == np.float32:
        np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-6)
    elif result.dtype == np.float64:
        np.testing.assert_allclose(result, expected, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize(("spec", "case", "dtype"), CASES)
def test_type_rule_agrees_with_numpy(spec: Spec, case: Case, dtype: DType) -> None:
    types = spec.arg_types(case, dtype)
    defn = shax.trace(case.apply, *types)

    operations = [b for b in defn.bindings if not isinstance(b.prim, P.Arg)]
    assert isinstance(output_binding(defn).prim, spec.prim)
    assert [type(b.prim) for b in operations] == ([] if spec.prim is P.Arg else [spec.prim])

    typed = infer_types(defn)
    assert check_types(typed) is typed
    (declared,) = typed.output_types()

    values = spec.sample(case, dtype, rng_for(spec.prim.__name__, case.label, dtype.name))
    originals = [v.copy() for v in values]
    expected = case.apply(*values)
    (result,) = shax.evaluate(typed, *values)
    assert_matches(result, expected, declared)
    for value, original in zip(values, originals):
        np.testing.assert_array_equal(value, original)


@pytest.mark.parametrize(("spec", "dtype"), REJECTED)
def test_type_rule_rejects_other_dtypes(spec: Spec, dtype: DType) -> None:
    case = spec.cases[0]
    with pytest.raises(shax.ShaxTypeError) as info:
        shax.trace(case.apply, *spec.arg_types(case, dtype))
    assert dtype.name in str(info.value)


@pytest.mark.parametrize("spec", list(SPECS.values()), ids=lambda s: s.prim.__name__)
def test_spec_row_is_consistent(spec: Spec) -> None:
    """Each case has one shape per operand, one operand per operand of the primitive
    (`arg` reads the one argument of the identity function; a variadic primitive's
    operation has the case's)."""
    assert spec.cases and spec.dtypes
    assert len(spec.fixed) == spec.arity
    for case in spec.cases:
        assert len(case.shapes) == spec.arity
        if spec.prim is P.Arg:
            assert spec.arity == 1
        elif spec.prim.variadic:
            assert spec.arity == spec.operation(case, spec.dtypes[0]).arity
        else:
            assert spec.arity == spec.prim.arity


OPERATORS: list[tuple[str, Callable[..., Any], tuple[TensorType, ...], type[P.Primitive]]] = [
    ("neg", lambda x: -x, (f64[2, 3],), P.Neg),
    ("abs", lambda x: abs(x), (f64[2, 3],), P.Abs),
    ("add", lambda x, y: x + y, (f64[2, 3], f64[3]), P.Add),
    ("sub", lambda x, y: x - y, (f64[2, 3], f64[2, 3]), P.Sub),
    ("mul", lambda x, y: x * y, (f64[2, 3], f64[2, 3]), P.Mul),
    ("div", lambda x, y: x / (y * y + 1.0), (f64[2, 3], f64[2, 3]), P.Div),
    ("pow", lambda x, y: (x * x + 1.0) ** y, (f64[2, 3], f64[2, 3]), P.Pow),
    ("pow_const", lambda x: x**3.0, (f64[2, 3],), P.Pow),
    ("matmul", lambda x, y: x @ y, (f64[2, 3], f64[3, 4]), P.DotGeneral),
    ("radd", lambda x: 2.0 + x, (f32[3],), P.Add),
    ("rsub", lambda x: 2.0 - x, (f32[3],), P.Sub),
    ("rmul", lambda x: 2.0 * x, (f32[3],), P.Mul),
    ("rdiv", lambda x: 2.0 / (x * x + 1.0), (f32[3],), P.Div),
    ("rpow", lambda x: 2.0**x, (f32[3],), P.Pow),
    ("rmatmul", lambda x: np.ones((2, 3), np.float32) @ x, (f32[3, 4],), P.DotGeneral),
]


@pytest.mark.parametrize(("function", "types", "prim"), [pytest.param(*o[1:], id=o[0]) for o in OPERATORS])
def test_operators_reach_their_primitive(
    function: Callable[..., Any], types: tuple[TensorType, ...], prim: type
) -> None:
    defn = infer_types(shax.trace(function, *types))
    assert isinstance(output_binding(defn).prim, prim)
    rng = rng_for(str(defn))
    values = [np.asarray(rng.uniform(-2, 2, t.shape), t.dtype.numpy) for t in types]
    (declared,) = defn.output_types()
    assert_matches(shax.evaluate(defn, *values)[0], function(*values), declared)


def test_unary_plus_is_the_identity() -> None:
    defn = shax.trace(lambda x: +x, f32[3])
    assert [type(b.prim) for b in defn.bindings] == [P.Arg]
