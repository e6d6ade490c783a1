"""check_linear: the structural linearity check of linear programs, on good programs and
on deliberately wrong linearize rules."""

from __future__ import annotations

from typing import Any

import pytest
import typeguard
from reverse_mode import rewritten_medium, typed_medium

import shax
from shax import f32, f64
from shax.rules.linearize import linearize_rules, residual
from shax.stages import check_linear, infer_types, linearize, transpose
from typeclasses import cos, sin

HERE = "test_check_linear.py"


def sin_linearized() -> shax.LinearizedDefinition:
    return linearize(infer_types(shax.trace(lambda x: sin(x) * x, f64[3])))


@pytest.mark.parametrize("make", [rewritten_medium, typed_medium])
def test_medium_its_transpose_and_a_product_are_linear(make: Any) -> None:
    lin = linearize(make())
    assert check_linear(lin) is None
    assert check_linear(transpose(lin)) is None
    assert check_linear(sin_linearized()) is None


def test_a_rule_multiplying_two_tangents_is_named_with_its_line() -> None:
    def squared(prim: Any, primals: Any, tangents: Any, out: Any) -> Any:
        return residual(cos(primals[0])) * tangents[0] * tangents[0]

    with linearize_rules.replaced(shax.primitives.Sin, squared):
        lin = sin_linearized()
    pattern = r"check_linear: d\w+ is not linear: `x\d+ :: f64\[3\] = mul x\d+ x\d+` \(from linearize rule of sin\)"
    with pytest.raises(shax.ShaxTypeError, match=pattern + r" multiplies two tangents .*" + HERE):
        check_linear(lin)


def test_a_rule_applying_a_nonlinear_function_to_a_tangent() -> None:
    def sin_of_tangent(prim: Any, primals: Any, tangents: Any, out: Any) -> Any:
        return sin(tangents[0])

    with linearize_rules.replaced(shax.primitives.Sin, sin_of_tangent):
        lin = sin_linearized()
    with pytest.raises(shax.ShaxTypeError, match=r"= sin x\d+` \(from linearize rule of sin\) applies sin to the"):
        check_linear(lin)


def test_a_rule_adding_a_residual_to_a_tangent_is_affine() -> None:
    def affine(prim: Any, primals: Any, tangents: Any, out: Any) -> Any:
        return tangents[0] + residual(cos(primals[0]))

    with linearize_rules.replaced(shax.primitives.Sin, affine):
        lin = sin_linearized()
    with pytest.raises(shax.ShaxTypeError, match=r"= add x\d+ x\d+` \(from linearize rule of sin\) adds the residual"):
        check_linear(lin)


def test_a_program_returning_a_residual_is_affine() -> None:
    defn = infer_types(shax.trace(lambda dx, r: (dx * r, r), f32[2], f32[2]))
    with pytest.raises(shax.ShaxTypeError, match=r"returns x\d+, which does not depend on the tangents"):
        check_linear(defn, 1)
    with pytest.raises(shax.ShaxTypeError, match="multiplies two tangents"):
        check_linear(defn)


@typeguard.suppress_type_checks  # wrong types on purpose: shax's own checks answer
def test_not_a_definition() -> None:
    with pytest.raises(shax.ShaxTypeError, match="check_linear"):
        check_linear(3)  # type: ignore[arg-type]
