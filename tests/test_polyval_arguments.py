"""shax.numpy.polyval on tracers refuses a p or x that is no numeric array or number (an
object array, found by the fuzz) with a ShaxTypeError naming polyval and the user's line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp


@pytest.mark.parametrize("bad", [np.array([None], dtype=object), None, "x"])
@typeguard.suppress_type_checks
def test_a_traced_polyval_refuses_a_non_numeric_x(bad: Any) -> None:
    def f(p: Any) -> Any:
        return snp.polyval(p, bad)

    with pytest.raises(
        shax.ShaxTypeError, match=r"polyval: x must be an array or a number.*test_polyval_arguments\.py:\d+"
    ):
        shax.jit(f)(np.array([1.0, 2.0], np.float32))


def test_a_traced_polyval_of_numbers_is_numpys() -> None:
    p = np.array([3.0, 0.5, -1.0], np.float32)
    got = shax.jit(lambda p, x: snp.polyval(p, x))(p, np.float32(2.0))
    np.testing.assert_allclose(got, np.polyval(p, np.float32(2.0)), rtol=1e-6)
