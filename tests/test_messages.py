"""Errors on bad input name the operation and the user's line, never an internal error:
check_grads' options and results, passes and stages handed malformed definitions,
non-callables where a function is expected, deeply nested arguments, and the wording of
messages."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest

import shax
from shax.testing import NotSmooth, check_grads

HERE = "test_messages.py:"


# check_grads: what f returns, and its options


@pytest.mark.parametrize("returned", [None, (), {}, [None]])
def test_check_grads_refuses_a_function_without_outputs(returned: Any) -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"check_grads: f returned .*no outputs.*{HERE}"):
        check_grads(lambda x: returned, (1.0,))


@pytest.mark.parametrize(
    ("x", "eps"), [(1.0, 1e300), (np.float32(1.0), 1e39), (np.ones(3, np.float32), 1e300), (np.float64(1e308), 1e308)]
)
def test_check_grads_refuses_an_eps_beyond_the_arguments_range(x: Any, eps: float) -> None:
    shown = re.escape(f"{eps:g}")
    with pytest.raises(shax.ShaxValueError, match=rf"check_grads: eps={shown} is too large: argument 0 .*{HERE}"):
        check_grads(lambda x: x * x, (x,), eps=eps)


def test_check_grads_blames_an_eps_at_which_f_overflows_not_f() -> None:
    # x ± eps is a float64, but x² there is not: the step is too large, f is smooth.
    with pytest.raises(NotSmooth, match=rf"check_grads: eps=1e\+200 is too large .*smaller eps.*{HERE}") as caught:
        check_grads(lambda x: x * x, (np.float64(1.0),), eps=1e200)
    assert "not smooth" not in str(caught.value)


def test_check_grads_still_passes_with_a_large_eps_f_takes() -> None:
    check_grads(lambda x: x * x, (np.float64(1.0),), eps=1e10)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("order", 0), ("order", 1.0), ("order", True), ("modes", "fwd"), ("modes", ()), ("modes", ("fwd", "bwd")),
        ("atol", float("nan")), ("atol", -1.0), ("rtol", float("inf")), ("rtol", "0.1"), ("eps", 0.0),
        ("eps", -1e-3), ("eps", float("inf")), ("eps", True),
    ],
)  # fmt: skip
def test_check_grads_checks_its_options(option: str, value: Any) -> None:
    with pytest.raises(shax.ShaxValueError, match=rf"check_grads: {option} must be .*{HERE}"):
        check_grads(lambda x: x * x, (1.0,), **{option: value})
