"""Transpose: the original's numbers and printed shapes, every transpose rule by the
inner-product test (every dot_general, broadcast, pad, slice, reshape, transpose in the
spec rows, canonical or not), properties over generated programs, and bad input."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from reverse_mode import (
    CT,
    DFT_CT,
    F_X,
    X,
    assert_f32_close,
    check_definitions,
    check_transpose,
    of_float_operands,
    rewritten_medium,
    spec_params,
    typed_medium,
)
from spec import REVERSE_MODE_SPECS

import shax
from shax import f32, f64
from shax.core.ir import Definition, LinearizedDefinition
from shax.stages import check_types, evaluate_linearized, infer_types, linearize, transpose
from shax.testing.strategies import Program, programs
from typeclasses import broadcast, dot_general, pad, reduce_sum, sin, slice

MEDIUMS = [pytest.param(rewritten_medium, id="rewritten"), pytest.param(typed_medium, id="typed")]


def linear_program(f: Any, *arg_types: Any, num_residuals: int = 0) -> LinearizedDefinition:
    """A hand-written linear definition: its first arguments are tangents, its last
    `num_residuals` residuals (the primal part is a stand-in returning the residuals)."""
    linear = infer_types(shax.trace(f, *arg_types))
    residual_types = arg_types[len(arg_types) - num_residuals :]
    primal = infer_types(shax.trace(lambda *rs: rs if rs else np.float64(0.0), *residual_types))
    return LinearizedDefinition(primal, linear, num_residuals)


@pytest.mark.parametrize("make", MEDIUMS)
def test_the_originals_numbers(make: Any) -> None:
    transposed = transpose(linearize(make()))
    check_types(transposed.linear)
    outputs, cotangents = evaluate_linearized(transposed, X, CT)
    assert_f32_close(outputs, [F_X])
    assert_f32_close(cotangents, DFT_CT)


@pytest.mark.parametrize("make", MEDIUMS)
def test_printed_shapes_follow_the_original(make: Any) -> None:
    lin = linearize(make())
    transposed = transpose(lin)
    assert transposed.primal == lin.primal and transposed.num_residuals == lin.num_residuals
    residual_types = lin.linear.arg_types[2:]
    # dmediumt takes the output cotangents, then the residuals; returns one cotangent per argument.
    assert transposed.linear.name == "dmediumt"
    assert transposed.linear.arg_types == (f32[2], *residual_types)
    assert transposed.linear.output_types() == (f32[6], f32[2, 2])
    assert str(transposed).endswith(str(transposed.linear))


@pytest.mark.parametrize("spec, case, dtype", spec_params(REVERSE_MODE_SPECS, [f64]))
def test_every_primitive_by_the_inner_product_test(spec: Any, case: Any, dtype: Any) -> None:
    rng = np.random.default_rng(0)
    f, types, values = of_float_operands(spec, case, dtype, rng)
    lin = linearize(infer_types(shax.trace(f, *types)))
    transposed = transpose(lin)
    check_definitions(transposed)
    check_transpose(lin, transposed, values, rng)


@given(programs(dtype=f64))
def test_transpose_passes_the_inner_product_test(program: Program) -> None:
    lin = linearize(infer_types(shax.trace(program.fn, *program.arg_types)))
    transposed = transpose(lin)
    check_definitions(transposed)
    check_transpose(lin, transposed, program.args, np.random.default_rng(0))


@given(programs(dtype=f32))
def test_transpose_in_f32_types_check(program: Program) -> None:
    check_definitions(transpose(linearize(infer_types(shax.trace(program.fn, *program.arg_types)))))


# Particular shapes -----------------------------------------------------------------------


def transposed_on(f: Any, x: np.ndarray, ct: np.ndarray) -> np.ndarray:
    lin = linear_program(f, shax.TensorType.of(x))
    (result,) = evaluate_linearized(transpose(lin), [], [ct])[1]
    return result


def test_broadcast_with_stretching_sums_over_the_stretched_axes() -> None:
    ct = np.arange(24.0).reshape(2, 3, 4)
    got = transposed_on(lambda x: broadcast(x, [0, 2], [2, 3, 4]), np.zeros((1, 4)), ct)
    np.testing.assert_allclose(got, ct.sum(axis=(0, 1)).reshape(1, 4))


def test_pad_and_slice_transpose_into_each_other() -> None:
    ct = np.arange(12.0).reshape(3, 4)
    got = transposed_on(lambda x: pad(x, [(1, 0), (2, 0)], 0.0), np.zeros((2, 2)), ct)
    np.testing.assert_allclose(got, ct[1:, 2:])
    got = transposed_on(lambda x: slice(x, [1, 1], [3, 2]), np.zeros((3, 4)), np.ones((2, 1)))
    np.testing.assert_allclose(got, [[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0]])


def test_reduce_sum_transposes_to_a_broadcast() -> None:
    got = transposed_on(lambda x: reduce_sum(x, [1]), np.zeros((2, 3)), np.array([1.0, 2.0]))
    np.testing.assert_allclose(got, [[1, 1, 1], [2, 2, 2]])


@pytest.mark.parametrize(
    "dims, shapes",
    [
        (((1,), (0,), (), ()), ((2, 3), (3, 4))),
        (((0,), (1,), (), ()), ((3, 2), (4, 3))),
        (((), (), (), ()), ((2,), (3,))),
        (((2,), (1,), (0,), (0,)), ((2, 3, 4), (2, 4, 5))),
        (((3, 1), (3, 0), (2, 0), (1, 2)), ((2, 3, 4, 5), (3, 4, 2, 5, 2))),
        (((0, 2), (2, 0), (1,), (1,)), ((3, 2, 4), (4, 2, 3))),
    ],
)
def test_every_dot_general_in_either_operand(dims: Any, shapes: Any) -> None:
    """Linear in the left operand (the right one a residual), then the other way round."""
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(s) for s in shapes)
    tx, ty = (shax.TensorType.of(v) for v in (x, y))
    for linear_index in (0, 1):
        swapped = (tx, ty) if linear_index == 0 else (ty, tx)

        def f(d: Any, r: Any, _k: int = linear_index) -> Any:
            return dot_general(d, r, dims) if _k == 0 else dot_general(r, d, dims)

        lin = linear_program(f, *swapped, num_residuals=1)
        residual = y if linear_index == 0 else x
        tangent = x if linear_index == 0 else y
        out = shax.evaluate(lin.linear, tangent, residual)[0]
        ct = rng.standard_normal(out.shape)
        (got,) = evaluate_linearized(transpose(lin), [residual], [ct])[1]
        np.testing.assert_allclose(np.sum(out * ct), np.sum(tangent * got), rtol=1e-10)


def test_inputs_no_cotangent_reaches_get_zeros() -> None:
    lin = linearize(infer_types(shax.trace(lambda x, y: sin(x), f64[2], f32[3])))
    outputs, (dx, dy) = evaluate_linearized(transpose(lin), [np.zeros(2), np.zeros(3, np.float32)], [np.ones(2)])
    np.testing.assert_allclose(dx, np.ones(2))
    assert dy.dtype == np.float32 and dy.shape == (3,) and not dy.any()


def test_cotangents_of_a_value_used_twice_add_up() -> None:
    lin = linear_program(lambda x: x + x * 3.0, f64[2])
    (got,) = evaluate_linearized(transpose(lin), [], [np.array([1.0, 2.0])])[1]
    np.testing.assert_allclose(got, [4.0, 8.0])


def test_a_zero_output_transposes_to_nothing() -> None:
    """eq's tangent is a zero (bool) constant: its cotangent goes nowhere."""
    from typeclasses import eq

    lin = linearize(infer_types(shax.trace(lambda x: (eq(x, x), sin(x)), f64[2])))
    transposed = transpose(lin)
    check_definitions(transposed)
    (dx,) = evaluate_linearized(transposed, [np.zeros(2)], [np.array([True, False]), np.ones(2)])[1]
    np.testing.assert_allclose(dx, np.ones(2))


# Bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "f, types, binding, why",
    [
        (lambda x: sin(x), (f64[2],), "sin x0", "sin: is not linear"),
        (lambda x: x * x, (f64[2],), "mul x0 x0", "mul: is not linear in the tangent inputs when its operand"),
        (lambda x, r: x + r, (f64[2], f64[2]), "add x0 x1", r"add: is not linear .* operand\(s\) \[0\]"),
        (lambda x, r: r / x, (f64[2], f64[2]), r"div x\d x\d", r"div: is not linear .* operand\(s\) \[1\]"),
        (lambda x: pad(x, [(1, 1)], 2.0), (f64[2],), "pad", "pad: with padding value 2.0 is affine"),
    ],
    ids=["sin", "square", "affine", "by_a_tangent", "pad_value"],
)
def test_transposing_a_definition_that_is_not_linear(f: Any, types: Any, binding: str, why: str) -> None:
    lin = linear_program(f, *types, num_residuals=len(types) - 1)
    with pytest.raises(shax.ShaxTypeError, match=rf"transpose: in `x\d+ :: f64\[\d\] = {binding}.*`: {why}"):
        transpose(lin)


def test_returning_a_residual_is_not_linear() -> None:
    lin = linear_program(lambda x, r: (x, r), f64[2], f64[2], num_residuals=1)
    with pytest.raises(shax.ShaxTypeError, match="transpose: f is not linear: it returns x1"):
        transpose(lin)


def test_transposing_an_untyped_definition() -> None:
    lin = linear_program(lambda x: x * 2.0, f64[2])
    untyped = LinearizedDefinition(lin.primal, shax.trace(lambda x: x * 2.0, f64[2]), 0)
    with pytest.raises(shax.ShaxTypeError, match="transpose: in `x0 = arg0`: the definition is untyped"):
        transpose(untyped)


def test_an_integer_tangent_input() -> None:
    lin = LinearizedDefinition(Definition("p", (), (), ()), infer_types(shax.trace(lambda x: x + x, shax.i32[2])), 0)
    with pytest.raises(shax.ShaxTypeError, match=r"transpose: in `x0 :: i32\[2\] = arg0`: a tangent input must"):
        transpose(lin)
