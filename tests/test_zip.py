"""Zip: one definition running the primal, then the (transposed) linear part: the
original's numbers and shapes, zip = primal + transpose over generated programs and
every primitive, the JVP definition from an untransposed LinearizedDefinition."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from reverse_mode import (
    CT,
    DF_DX,
    DFT_CT,
    F_X,
    X,
    assert_f32_close,
    check_zip,
    of_float_operands,
    rewritten_medium,
    spec_params,
    typed_medium,
)
from spec import REVERSE_MODE_SPECS

import shax
from shax import f32, f64
from shax.core.ir import LinearizedDefinition
from shax.passes import cleanup
from shax.primitives import Arg
from shax.stages import check_types, infer_types, linearize, transpose, zip_definitions
from shax.testing.strategies import Program, programs
from typeclasses import sin

MEDIUMS = [pytest.param(rewritten_medium, id="rewritten"), pytest.param(typed_medium, id="typed")]


@pytest.mark.parametrize("make", MEDIUMS)
def test_the_originals_numbers_and_shapes(make: Any) -> None:
    zipped = zip_definitions(transpose(linearize(make())))
    check_types(zipped)
    assert zipped.name == "medium_dmediumt"
    # primal arguments, then the output cotangents; outputs, then the argument cotangents
    assert zipped.arg_types == (f32[6], f32[2, 2], f32[2])
    assert zipped.output_types() == (f32[2], f32[6], f32[2, 2])
    assert_f32_close(shax.evaluate(zipped, *X, *CT), [F_X, *DFT_CT])


def test_the_printed_zip_reads_like_the_originals() -> None:
    text = str(zip_definitions(transpose(linearize(rewritten_medium()))))
    indent = " " * len("def medium_dmediumt(")
    header = f"def medium_dmediumt(arg0 :: f32[6], \n{indent}arg1 :: f32[2, 2], \n{indent}arg2 :: f32[2]) ="
    assert text.startswith(header)
    assert text.splitlines()[-1].startswith("  in [x") and "::" not in text.splitlines()[-1]


def test_zipping_cleans_up() -> None:
    zipped = zip_definitions(transpose(linearize(rewritten_medium())))
    assert cleanup(zipped) == zipped
    # The residual arguments are gone: the two halves share the primal's variables.
    assert sorted(b.prim.index for b in zipped.bindings if isinstance(b.prim, Arg)) == [0, 1, 2]


@pytest.mark.parametrize("make", MEDIUMS)
def test_zipping_the_untransposed_gives_the_jvp(make: Any) -> None:
    jvp = zip_definitions(linearize(make()))
    assert jvp.name == "medium_dmedium"
    assert jvp.arg_types == (f32[6], f32[2, 2], f32[6], f32[2, 2])
    assert_f32_close(shax.evaluate(jvp, *X, *X), [F_X, DF_DX])


@pytest.mark.parametrize("spec, case, dtype", spec_params(REVERSE_MODE_SPECS, [f64]))
def test_every_primitive_zips(spec: Any, case: Any, dtype: Any) -> None:
    rng = np.random.default_rng(0)
    f, types, values = of_float_operands(spec, case, dtype, rng)
    lin = linearize(infer_types(shax.trace(f, *types)))
    transposed = transpose(lin)
    check_zip(zip_definitions(transposed), transposed, values, rng)
    check_zip(zip_definitions(lin), lin, values, rng)


@given(programs(dtype=f64))
def test_zip_is_primal_then_transpose(program: Program) -> None:
    lin = linearize(infer_types(shax.trace(program.fn, *program.arg_types)))
    transposed = transpose(lin)
    rng = np.random.default_rng(0)
    check_zip(zip_definitions(transposed), transposed, program.args, rng)
    check_zip(zip_definitions(lin), lin, program.args, rng)


def test_residuals_that_do_not_fit() -> None:
    lin = linearize(rewritten_medium())
    with pytest.raises(shax.ShaxValueError, match="zip_definitions: 99 residual"):
        zip_definitions(LinearizedDefinition(lin.primal, lin.linear, 99))
    with pytest.raises(shax.ShaxTypeError, match=r"transpose: medium returns residuals \(.*\) but dmedium takes"):
        other = linearize(typed_medium()).primal  # 8 residuals, of other shapes
        transpose(LinearizedDefinition(other, lin.linear, 8))
    untyped = LinearizedDefinition(shax.trace(sin, f32[2]), lin.linear, 0)
    with pytest.raises(shax.ShaxTypeError, match="zip_definitions: in `x0 = arg0`: the definition is untyped"):
        zip_definitions(untyped)


def test_stages_pause_the_collector_only_while_they_run() -> None:
    import gc

    assert gc.isenabled()
    zip_definitions(transpose(linearize(rewritten_medium())))
    assert gc.isenabled()
    with pytest.raises(shax.ShaxError):
        linearize(shax.trace(sin, f32[2]))
    assert gc.isenabled()
