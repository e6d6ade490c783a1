"""reduce_prod's derivatives at zeros, to second order: its jvp writes each ∂Π/∂x_i as a
product of the other elements (no division, no test for zeros), so differentiating it again
gives Π_{k≠i,j} x_k, which finite differences confirm with one, two and three zeros (a
generated program, gather · sin · sin · reduce_prod at 0, found it 0 where it is not)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import typeclasses as tc
from shax.testing import check_grads

CASES = [((1, 2, 1), [1]), ((3,), [0]), ((2, 3), [0, 1]), ((2, 3, 2), [2, 0]), ((5,), [0]), ((2, 3), [1])]


@pytest.mark.parametrize("zeros", [1, 2, 3])
@pytest.mark.parametrize("shape, axes", CASES, ids=[f"{s}-{a}" for s, a in CASES])
def test_second_derivatives_of_a_product_with_zeros_match_finite_differences(
    shape: tuple[int, ...], axes: list[int], zeros: int
) -> None:
    x = np.random.default_rng(len(shape) + zeros).uniform(-2.0, 2.0, shape)
    x.reshape(-1)[:zeros] = 0.0

    def f(v: Any) -> Any:
        return tc.reduce_prod(tc.sin(v) * 1.5, axes)

    check_grads(f, (x,), order=2)


def test_the_hessian_of_a_product_of_two_zeros() -> None:
    # ∂²(x₀ x₁)/∂x₀∂x₁ = 1 at (0, 0), where the first derivatives are both 0
    hessian = shax.hessian(lambda v: tc.reduce_prod(v, [0]))(np.zeros(2))
    np.testing.assert_array_equal(hessian, [[0.0, 1.0], [1.0, 0.0]])
