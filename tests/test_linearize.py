"""Linearize: the original's numbers and printed shapes, every primitive's rule against
finite differences, properties over generated programs, and bad input."""

from __future__ import annotations

from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given
from reverse_mode import (
    DF_DX,
    F_X,
    X,
    assert_f32_close,
    check_definitions,
    check_finite_differences,
    check_linear,
    of_float_operands,
    rejecting_rough_points,
    rewritten_medium,
    spec_params,
    typed_medium,
)
from spec import SPECS

import shax
from shax import bool_, f32, f64, i32
from shax.core.ir import Var
from shax.primitives import Arg, Constant
from shax.rules.linearize import Zero, linearize_rules, residual, zero_tangent
from shax.stages import evaluate_linearized, infer_types, linearize
from shax.testing.strategies import Program, programs
from typeclasses import broadcast, cos, dot, eq, max, min, pad, reduce_sum, select, sin, slice

MEDIUMS = [pytest.param(rewritten_medium, id="rewritten"), pytest.param(typed_medium, id="typed")]


@pytest.mark.parametrize("make", MEDIUMS)
def test_the_originals_numbers(make: Any) -> None:
    lin = linearize(make())
    check_definitions(lin)
    outputs, tangents = evaluate_linearized(lin, X, X)
    assert_f32_close(outputs, [F_X])
    assert_f32_close(tangents, [DF_DX])


@pytest.mark.parametrize("make", MEDIUMS)
def test_printed_shapes_follow_the_original(make: Any) -> None:
    defn = make()
    lin = linearize(defn)
    primal, linear = lin.primal, lin.linear
    assert (primal.name, linear.name) == ("medium", "dmedium")
    assert primal.arg_types == defn.arg_types
    # The primal returns its outputs, then the residuals; dmedium takes one tangent per
    # primal argument, then the residuals, and returns one tangent per output.
    residual_types = primal.output_types()[1:]
    assert lin.num_residuals == len(residual_types) > 0
    assert primal.output_types()[0] == f32[2]
    assert linear.arg_types == (*defn.arg_types, *residual_types)
    assert linear.output_types() == (f32[2],)
    assert str(lin) == f"{primal}\n{linear}"
    assert str(linear).startswith("def dmedium(arg0 :: f32[6], \n            arg1 :: f32[2, 2], \n")


def test_the_rewritten_medium_shares_max_and_mins_weights() -> None:
    """cos x1, −sin x2, exp x7, the two reshaped dot operands, the two mul operands and
    two weights that max and min of the same operands share (min's are max's swapped):
    9 residuals, where the transcript's 11 compute each weight twice."""
    assert linearize(rewritten_medium()).num_residuals == 9


def test_residuals_cross_only_where_the_linear_program_uses_them() -> None:
    def f(x: Any, y: Any) -> Any:
        return sin(x) * 3.0 + y * y

    lin = linearize(infer_types(shax.trace(f, f64[3], f64[3])))
    # cos x for sin, y for y*y (once, though used twice); nothing for the constant 3.0
    assert lin.num_residuals == 2
    assert "cos" in str(lin.primal) and "cos" not in str(lin.linear)


@pytest.mark.parametrize("spec, case, dtype", spec_params(SPECS, [f64]))
def test_every_primitive_against_finite_differences(spec: Any, case: Any, dtype: Any) -> None:
    rng = np.random.default_rng(0)
    f, types, values = of_float_operands(spec, case, dtype, rng)
    lin = linearize(infer_types(shax.trace(f, *types)))
    check_definitions(lin)
    check_linear(lin, values, rng)
    if spec.zero_derivative:
        _, tangents = evaluate_linearized(lin, values, values)
        assert not any(np.any(t) for t in tangents)
        return
    check_finite_differences(f, lin, values, rng)


@pytest.mark.parametrize("spec, case, dtype", spec_params(SPECS, [f32]))
def test_every_primitive_in_f32(spec: Any, case: Any, dtype: Any) -> None:
    rng = np.random.default_rng(1)
    f, types, values = of_float_operands(spec, case, dtype, rng)
    lin = linearize(infer_types(shax.trace(f, *types)))
    check_definitions(lin)
    outputs, tangents = evaluate_linearized(lin, values, values)
    assert [shax.TensorType.of(np.asarray(t)) for t in tangents] == list(lin.primal.output_types()[: len(tangents)])


@given(programs(dtype=f64))
def test_the_linear_program_is_linear(program: Program) -> None:
    lin = linearize(infer_types(shax.trace(program.fn, *program.arg_types)))
    check_definitions(lin)
    outputs, _ = evaluate_linearized(lin, program.args, program.args)
    expected = program.fn(*program.args)
    for got, want in zip(outputs, expected if isinstance(expected, tuple) else (expected,)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    check_linear(lin, program.args, np.random.default_rng(0))


@given(programs(dtype=f64, smooth=True))
def test_the_linear_program_agrees_with_finite_differences(program: Program) -> None:
    lin = linearize(infer_types(shax.trace(program.fn, *program.arg_types)))
    shax.stages.check_linear(lin)
    with rejecting_rough_points():
        check_finite_differences(program.fn, lin, program.args, np.random.default_rng(0))


@given(programs(dtype=f32))
def test_linearize_in_f32_types_check(program: Program) -> None:
    check_definitions(linearize(infer_types(shax.trace(program.fn, *program.arg_types))))


# Particular rules ------------------------------------------------------------------------


def tangent_of(f: Any, xs: list[np.ndarray], dxs: list[np.ndarray]) -> list[Any]:
    types = [shax.TensorType.of(x) for x in xs]
    return evaluate_linearized(linearize(infer_types(shax.trace(f, *types))), xs, dxs)[1]


def test_min_and_max_split_ties_half_and_half() -> None:
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([3.0, 2.0, 1.0])
    dx, dy = np.array([1.0, 10.0, 100.0]), np.array([1000.0, 10000.0, 100000.0])
    (d_max,) = tangent_of(max, [x, y], [dx, dy])
    (d_min,) = tangent_of(min, [x, y], [dx, dy])
    np.testing.assert_allclose(d_max, [1000.0, 5005.0, 100.0])
    np.testing.assert_allclose(d_min, [1.0, 5005.0, 100000.0])


def test_pow_with_a_constant_exponent_needs_no_log() -> None:
    lin = linearize(infer_types(shax.trace(lambda x: x**3.0, f64[2])))
    assert "log" not in str(lin.primal)
    (d,) = evaluate_linearized(lin, [np.array([-2.0, 0.5])], [np.ones(2)])[1]
    np.testing.assert_allclose(d, [12.0, 0.75])


def test_pow_with_a_traced_exponent() -> None:
    x, c = np.array([2.0, 0.5]), np.array([3.0, -1.0])
    (d,) = tangent_of(lambda x, c: x**c, [x, c], [np.zeros(2), np.ones(2)])
    np.testing.assert_allclose(d, np.log(x) * x**c)


def test_eq_has_zero_tangents() -> None:
    x, y = np.array([1.0, 2.0]), np.array([1.0, 3.0])
    lin = linearize(infer_types(shax.trace(lambda x, y: (select(eq(x, y), x, y), eq(x, y)), f64[2], f64[2])))
    check_definitions(lin)
    d_select, d_eq = evaluate_linearized(lin, [x, y], [np.array([5.0, 6.0]), np.array([7.0, 8.0])])[1]
    np.testing.assert_allclose(d_select, [5.0, 8.0])
    assert d_eq.dtype == np.bool_ and not d_eq.any()


def test_a_select_with_one_zero_branch_fills_it_with_zeros() -> None:
    (d,) = tangent_of(lambda x: select(eq(x, 1.0), x, 2.0), [np.array([1.0, 3.0])], [np.array([5.0, 6.0])])
    np.testing.assert_allclose(d, [5.0, 0.0])


def test_pad_with_a_value_has_a_zero_padded_tangent() -> None:
    (d,) = tangent_of(lambda x: pad(x, [(1, 2)], 7.0), [np.array([1.0, 2.0])], [np.array([3.0, 4.0])])
    np.testing.assert_allclose(d, [0.0, 3.0, 4.0, 0.0, 0.0])


def test_an_output_that_depends_on_no_input_has_a_zero_tangent() -> None:
    def f(x: Any) -> Any:
        return sin(x), cos(np.float64(1.0)) + 0.0 * reduce_sum(broadcast(np.float64(2.0), [], [3]), [0])

    lin = linearize(infer_types(shax.trace(f, f64[2])))
    check_definitions(lin)
    _, (dx, dc) = evaluate_linearized(lin, [np.zeros(2)], [np.ones(2)])
    np.testing.assert_allclose(dx, np.ones(2))
    assert dc.shape == () and dc == 0.0


def test_broadcasting_operands_of_a_sum_with_a_constant() -> None:
    """dx + 0 where the zero is the larger operand: the tangent is dx broadcast."""
    big = np.arange(6.0).reshape(2, 3)
    (d,) = tangent_of(lambda x: x + big, [np.array([1.0, 2.0, 3.0])], [np.array([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(d, np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))
    (d,) = tangent_of(lambda x: big - x, [np.array([1.0, 2.0, 3.0])], [np.array([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(d, -np.broadcast_to([1.0, 2.0, 3.0], (2, 3)))


def test_every_dot_general_linearizes() -> None:
    x, y = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    (d,) = tangent_of(dot, [x, y], [np.ones((2, 3)), np.ones((3, 4))])
    np.testing.assert_allclose(d, np.ones((2, 3)) @ y + x @ np.ones((3, 4)))


def test_slices_and_pads_of_the_tangent() -> None:
    x = np.arange(4.0)
    (d,) = tangent_of(lambda x: slice(x, [1], [3]) * slice(x, [0], [2]), [x], [np.ones(4)])
    np.testing.assert_allclose(d, x[0:2] + x[1:3])


# Symbolic zeros and residuals -------------------------------------------------------------


def test_residual_outside_linearize_is_an_error() -> None:
    with pytest.raises(shax.ShaxError, match="residual"):
        residual(np.float32(1.0))


def test_zeros_refuse_nonlinear_operations() -> None:
    import typeclasses as tc

    with pytest.raises(shax.ShaxTypeError, match="sin: a zero tangent"):
        tc.sin(Zero(f32[2]))
    with pytest.raises(shax.ShaxTypeError, match=r"div: a zero tangent \(f32\[\]\) cannot be a nonlinear operand"):
        tc.div(np.float32(1.0), Zero(f32[()]))
    assert tc.reshape(Zero(f32[2, 3]), [6]) == Zero(f32[6])
    assert tc.dot_general(Zero(f32[2, 3]), np.ones((3, 4), np.float32), ((1,), (0,), (), ())) == Zero(f32[2, 4])
    assert Zero(f64[3]) * 2.0 == Zero(f64[3]) and -Zero(f64[3]) == Zero(f64[3])


# Bad input -------------------------------------------------------------------------------


def test_linearizing_an_untyped_definition() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"linearize: in `x0 = arg0`: the definition is untyped"):
        linearize(shax.trace(sin, f32[2]))


@pytest.mark.parametrize("dtype", [i32, bool_])
def test_differentiating_with_respect_to_integer_or_bool_inputs(dtype: Any) -> None:
    defn = infer_types(shax.trace(lambda x, p: select(eq(p, p), x, x), f32[2], dtype[2]))
    message = rf"linearize: cannot differentiate f with respect to its {dtype.name}\[2\] argument 1"
    with pytest.raises(shax.ShaxTypeError, match=message):
        linearize(defn)
    # Left out of `wrt`, the argument is a constant of the linear program.
    lin = linearize(defn, wrt=[0])
    assert lin.linear.arg_types[:1] == (f32[2],)
    x, p = np.array([1.0, 2.0], np.float32), np.array([1, 0], dtype.numpy)
    outputs, tangents = evaluate_linearized(lin, [x, p], [np.array([3.0, 4.0], np.float32)])
    np.testing.assert_array_equal(tangents[0], [3.0, 4.0])


def test_linearize_with_respect_to_some_arguments() -> None:
    defn = infer_types(shax.trace(lambda x, y: x * y, f64[2], f64[2]))
    x, y, dy = np.array([1.0, 2.0]), np.array([3.0, 5.0]), np.array([0.5, 0.25])
    _, (tangent,) = evaluate_linearized(linearize(defn, wrt=[1]), [x, y], [dy])
    np.testing.assert_array_equal(tangent, x * dy)
    with pytest.raises(shax.ShaxValueError, match=r"has 2 argument\(s\), no argument 2"):
        linearize(defn, wrt=[2])
    with pytest.raises(shax.ShaxValueError, match="listed twice"):
        linearize(defn, wrt=[1, 1])


def test_a_definition_whose_annotations_lie() -> None:
    good = infer_types(shax.trace(sin, f32[2]))
    bindings = [b if isinstance(b.prim, Arg) else attrs.evolve(b, vars=Var(b.var.id, f32[3])) for b in good.bindings]
    lying = attrs.evolve(good, bindings=tuple(bindings))
    with pytest.raises(shax.ShaxTypeError, match="linearize: in `x1 :: f32\\[3\\] = sin x0`: annotated f32\\[3\\]"):
        linearize(lying)


def test_linearity_decides_the_derived_rules() -> None:
    """Constants (no operands) and eq (non-differentiable) have zero tangents; linear
    primitives are their own derivatives, bilinear ones follow the product rule."""
    for prim in (Constant(np.float32(1.0)), shax.primitives.Eq(), shax.primitives.Signum()):
        assert linearize_rules[prim] is zero_tangent
    assert not linearize_rules.is_registered(shax.primitives.Add)
    assert not linearize_rules.is_registered(shax.primitives.DotGeneral)


def test_malformed_definitions_are_named_errors() -> None:
    good = infer_types(shax.trace(sin, f32[2]))
    unbound = attrs.evolve(good, bindings=good.bindings[1:])
    with pytest.raises(
        shax.ShaxValueError, match=r"linearize: in `x1 :: f32\[2\] = sin x0`: x0 used before being bound"
    ):
        linearize(unbound)
    no_args = attrs.evolve(good, arg_types=())
    with pytest.raises(shax.ShaxValueError, match=r"linearize: in `x0 :: f32\[2\] = arg0`: sin has 0 argument"):
        linearize(no_args)
    with pytest.raises(shax.ShaxValueError, match="linearize: sin returns x7, never bound"):
        linearize(attrs.evolve(good, outputs=(Var(7),)))


def test_a_rule_must_cross_through_residual() -> None:
    """A rule that mixes a primal value into the linear program by hand is caught."""

    def by_hand(prim: Any, primals: Any, tangents: Any, out: Any) -> Any:
        return cos(primals[0]) * tangents[0]

    with (
        linearize_rules.replaced(shax.primitives.Sin, by_hand),
        pytest.raises(shax.ShaxTypeError, match="rule of sin used a primal value .* without residual"),
    ):
        linearize(infer_types(shax.trace(sin, f32[2])))
