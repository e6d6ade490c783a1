"""What the reverse-mode tests share: the original's `medium` and its numbers, functions of
one primitive's float operands from the spec rows, and the checks every test makes
(linearity, finite differences, the inner-product test, zip = primal + transpose)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import note, reject
from spec import Case, Spec

import shax
from shax.core.ir import Definition, LinearizedDefinition
from shax.core.types import DType, TensorType
from shax.passes import apply_passes
from shax.stages import check_types, evaluate_linearized, infer_types
from shax.testing.numeric import NotSmooth, check_directional_derivative
from shax.tools.cli import load_function

ROOT = Path(__file__).resolve().parents[1]
medium = load_function(f"{ROOT / 'examples' / 'medium.py'}:medium")

# The original's point, tangent (dx = x) and output cotangent, and what they give.
X = (np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2))
CT = (np.array([5, 9], dtype=np.float32),)
F_X = [34.731194, 67.46239]
DF_DX = [42.804844, 120.34088]
DFT_CT = (
    [71.61691, -46.757164, -258.48987, -47.759422, 9.942725, 187.39752],
    [[-86.82799, 156.29037], [86.82799, 156.29037]],
)


def typed_medium() -> Definition:
    return infer_types(shax.trace(medium, shax.f32[6], shax.f32[2, 2]))


def rewritten_medium() -> Definition:
    return apply_passes(typed_medium(), ["canonicalize_dot_general", "lower_reductions_to_sums_of_slices"])


def assert_f32_close(got: Sequence[Any], expected: Sequence[Any]) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, np.asarray(e, np.float32), rtol=1e-5, atol=1e-5)


def arg_types_of(lin: LinearizedDefinition) -> tuple[list[TensorType], list[TensorType]]:
    """(the types of the linear definition's tangent or cotangent inputs, of its residuals)."""
    split = len(lin.linear.arg_types) - lin.num_residuals
    return list(lin.linear.arg_types[:split]), list(lin.linear.arg_types[split:])


def random_values(types: Sequence[TensorType], rng: np.random.Generator) -> list[np.ndarray]:
    values = []
    for t in types:
        if t.dtype.is_float:
            values.append(rng.standard_normal(t.shape).astype(t.dtype.numpy))
        else:
            values.append(np.zeros(t.shape, t.dtype.numpy))
    return values


def inner(xs: Sequence[Any], ys: Sequence[Any]) -> float:
    return float(sum(np.sum(np.asarray(x, np.float64) * np.asarray(y, np.float64)) for x, y in zip(xs, ys)))


def scale(values: Sequence[Any]) -> float:
    """The largest magnitude among `values` (at least 1): what tolerances are relative to."""
    return max([1.0, *(float(np.max(np.abs(np.asarray(v, np.float64)), initial=0.0)) for v in values)])


def check_definitions(lin: LinearizedDefinition) -> None:
    check_types(lin.primal)
    check_types(lin.linear)
    shax.stages.check_linear(lin)


def check_linear(lin: LinearizedDefinition, primals: Sequence[Any], rng: np.random.Generator) -> None:
    """L(a·u + b·v) = a·L(u) + b·L(v) for the linear part at `primals`."""
    types, _ = arg_types_of(lin)
    u, v = random_values(types, rng), random_values(types, rng)
    a, b = rng.standard_normal(2)
    _, lu = evaluate_linearized(lin, primals, u)
    _, lv = evaluate_linearized(lin, primals, v)
    _, lw = evaluate_linearized(lin, primals, [a * x + b * y for x, y in zip(u, v)])
    tolerance = 1e-9 * scale([*lu, *lv, *lw])
    for w, x, y in zip(lw, lu, lv):
        np.testing.assert_allclose(w, a * np.asarray(x) + b * np.asarray(y), rtol=1e-9, atol=tolerance)


def check_finite_differences(
    f: Callable[..., Any], lin: LinearizedDefinition, primals: Sequence[np.ndarray], rng: np.random.Generator
) -> None:
    """The linear part of `f` agrees with finite differences of `f` on numpy (float64,
    tests/numeric.py) at its float outputs; the others have zero tangents."""
    types, _ = arg_types_of(lin)
    u = random_values(types, rng)
    outputs, lu = evaluate_linearized(lin, primals, u)
    floats = [k for k, tangent in enumerate(lu) if np.issubdtype(np.asarray(outputs[k]).dtype, np.floating)]
    for k, tangent in enumerate(lu):
        assert k in floats or not np.any(tangent), "a non-float output has a zero tangent"

    def float_outputs(*xs: Any) -> list[Any]:
        results = f(*xs)
        results = results if isinstance(results, tuple) else (results,)
        return [results[k] for k in floats]

    check_directional_derivative(float_outputs, primals, u, [lu[k] for k in floats], what="the linear program")


@contextmanager
def rejecting_rough_points() -> Iterator[None]:
    """A property test's example is rejected where finite differences cannot tell."""
    try:
        yield
    except NotSmooth as rough:
        note(str(rough))
        reject()


def check_transpose(
    lin: LinearizedDefinition, transposed: LinearizedDefinition, primals: Sequence[Any], rng: np.random.Generator
) -> None:
    """⟨L u, ct⟩ = ⟨u, Lᵀ ct⟩."""
    types, _ = arg_types_of(lin)
    ct_types, _ = arg_types_of(transposed)
    u, ct = random_values(types, rng), random_values(ct_types, rng)
    _, lu = evaluate_linearized(lin, primals, u)
    _, lt_ct = evaluate_linearized(transposed, primals, ct)
    assert [shax.TensorType.of(np.asarray(c)) for c in lt_ct] == types
    tolerance = 1e-9 * scale([*lu, *ct, *u, *lt_ct])
    np.testing.assert_allclose(inner(lu, ct), inner(u, lt_ct), rtol=1e-9, atol=tolerance)


def check_zip(zipped: Definition, lin: LinearizedDefinition, primals: Sequence[Any], rng: np.random.Generator) -> None:
    """The zipped definition equals the primal followed by the linear part."""
    types, _ = arg_types_of(lin)
    linear_args = random_values(types, rng)
    outputs, linear_outputs = evaluate_linearized(lin, primals, linear_args)
    check_types(zipped)
    assert zipped.arg_types == (*lin.primal.arg_types, *types)
    got = shax.evaluate(zipped, *primals, *linear_args)
    assert len(got) == len(outputs) + len(linear_outputs)
    for g, e in zip(got, [*outputs, *linear_outputs]):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12 * scale([e]))


def of_float_operands(spec: Spec, case: Case, dtype: DType, rng: np.random.Generator) -> tuple[Any, ...]:
    """(function of the case's float operands, their types, their values): operands of other
    dtypes (select's predicate) are drawn once and closed over, as constants."""
    types = spec.arg_types(case, dtype)
    values = spec.sample(case, dtype, rng)
    floats = [k for k, t in enumerate(types) if t.dtype.is_float]

    def f(*xs: Any) -> Any:
        operands = list(values)
        for k, x in zip(floats, xs):
            operands[k] = x
        return case.apply(*operands)

    return f, [types[k] for k in floats], [values[k] for k in floats]


def spec_params(specs: dict[Any, Spec], dtypes: Sequence[DType]) -> list[Any]:
    """pytest params (spec, case, dtype) for every case of every row at each of `dtypes` it accepts."""
    return [
        pytest.param(spec, case, dtype, id=f"{spec.prim.__name__}-{case.label}-{dtype.name}")
        for spec in specs.values()
        for case in spec.cases
        for dtype in dtypes
        if dtype in spec.dtypes or not spec.arity
    ]
