"""jvp and unzip, the first two steps of "You Only Linearize Once": one forward-mode
program, split into the primal and linear programs linearize gives, and the
checkpoint policies that choose which values the linear program recomputes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from reverse_mode import rewritten_medium, typed_medium

import shax
from shax import f64
from shax.stages import check_linear, evaluate_linearized, infer_types, linearize
from shax.stages.jvp import jvp
from shax.stages.unzip import unzip
from shax.testing.strategies import Program, programs


def with_provenance(lin: shax.LinearizedDefinition) -> list[Any]:
    return [(str(b), b.source, b.origin) for d in (lin.primal, lin.linear) for b in d.bindings]


@pytest.mark.parametrize("make", [rewritten_medium, typed_medium])
def test_unzip_of_jvp_is_linearize_on_medium(make: Any) -> None:
    defn = make()
    lin, unzipped = linearize(defn), unzip(jvp(defn))
    assert str(unzipped) == str(lin)
    assert with_provenance(unzipped) == with_provenance(lin)
    assert unzipped.num_residuals == lin.num_residuals


@given(programs(dtype=f64))
def test_unzip_of_jvp_is_linearize_on_generated_programs(program: Program) -> None:
    defn = infer_types(shax.trace(program.fn, *program.arg_types))
    lin, unzipped = linearize(defn), unzip(jvp(defn))
    assert str(unzipped) == str(lin)
    check_linear(unzipped)
    got = evaluate_linearized(unzipped, program.args, program.args)
    want = evaluate_linearized(lin, program.args, program.args)
    for g, w in zip([*got[0], *got[1]], [*want[0], *want[1]]):
        np.testing.assert_array_equal(g, w)
