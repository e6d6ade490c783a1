"""docs/adding-a-primitive.md, followed end to end on a throwaway elementwise primitive,
`thrown_cbrt` (numpy's cbrt): its typeclass function with its numpy method (one
`define_function`, the library's two steps at run time), its declaration (the family's
one call, naming its `jax.lax` export), and its spec row. Then every check the built-in
primitives pass runs on it: a rule in every table, the typeclass function implemented
and in every instance, and the spec row's tests (type against numpy, finite differences,
the inner-product test of its transpose, batching, codegen, every pass, zip and the
export to JAX). Nothing else is written for it: what the how-to leaves out is derived."""

from __future__ import annotations

import numpy as np
import pytest
import test_batch
import test_codegen
import test_export
import test_linearize
import test_passes
import test_primitives
import test_tables
import test_transpose
import test_zip
from spec import FLOATS, NONZERO, Spec, unary

import typeclasses as tc
from shax.core.primitive import implementing
from shax.core.types import f32, f64
from shax.primitives.elementwise import elementwise
from shax.primitives.pointwise import FLOATS as FLOAT_DTYPES
from shax.rules import TABLES, transpose_rules
from shax.rules.codegen import Elementwise
from typeclasses.define import define_function

# 1 and 2: the typeclass function and its numpy method (in the library: typeclasses/functions.py
# and typeclasses/numpy_instance.py)
thrown_cbrt = define_function("thrown_cbrt", np.cbrt)

# 3: the declaration, with its line of math. d(cbrt x) = dx / (3 cbrt(x)²)
ThrownCbrt = elementwise(
    thrown_cbrt, FLOAT_DTYPES, Elementwise("np.cbrt"), derivative=lambda x, out: 1.0 / (3.0 * out * out), export="cbrt"
)

# 4: its spec row (tests/spec.py), on a domain away from the pole of the derivative at 0
ROW: Spec = unary(ThrownCbrt, thrown_cbrt, NONZERO, FLOATS)
CASES = [pytest.param(case, dtype, id=f"{case.label}-{dtype.name}") for case in ROW.cases for dtype in ROW.dtypes]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_it_has_a_rule_in_every_table(table: str) -> None:
    assert TABLES[table].covers(ThrownCbrt)


def test_its_transpose_rule_is_derived_as_for_a_nonlinear_one() -> None:
    assert not test_tables.is_linear(ThrownCbrt.linearity)
    assert not transpose_rules.is_registered(ThrownCbrt)


def test_it_implements_its_typeclass_function_in_every_instance() -> None:
    assert implementing(tc.method_of(thrown_cbrt)) is ThrownCbrt
    for instance in test_tables.INSTANCES:
        assert callable(getattr(instance, tc.method_of(thrown_cbrt), None)), type(instance).__name__


def test_its_spec_row_is_consistent() -> None:
    test_primitives.test_spec_row_is_consistent(ROW)


@pytest.mark.parametrize(("case", "dtype"), CASES)
def test_its_spec_row_passes_the_row_tests(case: object, dtype: object) -> None:
    test_primitives.test_type_rule_agrees_with_numpy(ROW, case, dtype)
    test_batch.test_every_primitive_at_sampled_batch_axes(ROW, case, dtype)
    test_codegen.test_every_spec_row_compiles_to_what_evaluate_computes(ROW, case, dtype)
    test_passes.test_every_primitive_through_every_pass(ROW, case, dtype)
    if dtype == f64:
        test_linearize.test_every_primitive_against_finite_differences(ROW, case, dtype)
        test_transpose.test_every_primitive_by_the_inner_product_test(ROW, case, dtype)
        test_zip.test_every_primitive_zips(ROW, case, dtype)
    else:
        assert dtype == f32
        test_linearize.test_every_primitive_in_f32(ROW, case, dtype)


def test_it_exports_to_jax() -> None:
    pytest.importorskip("jax")
    test_export.test_every_spec_row_exports(ROW)
