"""Bad input the fuzz found with other seeds than CI's (tests/test_fuzz.py draws with the
CI profile's fixed one): each a ShaxError naming the operation, not Python's own error."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
import shax.numpy as snp
import typeclasses as tc
from shax.core.errors import at, named
from shax.transforms.arguments import WeakNumberError

X = np.arange(6.0).reshape(2, 3)

CASES: dict[str, tuple[Callable[[], Any], str]] = {
    "var, axes None": (lambda: tc.var(X, None), "reduce_sum: expected a list of ints"),
    "nonzero, a size beyond i32": (lambda: snp.nonzero(X, size=2**62), "nonzero: size must be from 0"),
    "adamw, a tuple as mu_dtype": (
        lambda: shax.optimizers.adamw(0.1, mu_dtype=(None, False)).init(X),
        "mu_dtype must be a float dtype",
    ),
    "traced full_like, a ragged fill": (lambda: shax.jit(lambda x: snp.full_like(x, (None, [])))(X), "full_like"),
    "traced pad, an object": (
        lambda: shax.jit(lambda x: snp.pad(x, 1, constant_values=object()))(X),
        "pad: constant_values must be numbers",
    ),
    "traced pad, a string": (
        lambda: shax.jit(lambda x: snp.pad(x, 1, constant_values=""))(X),
        "pad: constant_values must be numbers",
    ),
    "traced pad, no values": (
        lambda: shax.jit(lambda x: snp.pad(x, 1, constant_values=[]))(X),
        "pad: constant_values .* do not broadcast",
    ),
    "reduce_window, a ragged init_value": (
        lambda: shax.lax.reduce_window(X, (None, []), shax.lax.add, (1, 1), (1, 1), "VALID"),
        "init_value must be a constant scalar",
    ),
    "transpose, an empty array as an axis": (
        lambda: shax.jit(lambda a: a.transpose(np.array([], dtype=np.int64), 0))(X),
        "transpose",
    ),
    "fori_loop, an int beyond i32": (
        lambda: shax.jit(lambda x: shax.fori_loop(0, 2, lambda i, v: v + 1, x))(2**62),
        "does not fit",
    ),
    "integer power, a ragged exponent": (
        lambda: shax.jit(lambda x: x ** (None, np.zeros(0)))(np.array(1, dtype=np.int32)),
        "pow",
    ),
    "cond, an int beyond i32": (
        lambda: shax.jit(lambda p, x: shax.lax.cond(p, lambda v: v, lambda v: -v, x))(True, 2**62),
        "does not fit",
    ),
}


@typeguard.suppress_type_checks
@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_a_shax_error(case: str) -> None:
    call, message = CASES[case]
    with pytest.raises(shax.ShaxError, match=message):
        call()


def test_a_start_index_beyond_i32_is_clamped_as_every_start_is() -> None:
    out = shax.lax.dynamic_update_slice(X, X[:1] + 10.0, (2**62, 0))
    np.testing.assert_array_equal(out, np.concatenate([X[:1], X[:1] + 10.0]))


def test_an_error_with_fields_of_its_own_keeps_them_when_named_and_located() -> None:
    """`named` and `at` copy the error without calling its __init__ (WeakNumberError's
    takes the leaf's index first)."""
    error = at(named(WeakNumberError(3, "the Python int 2**62 does not fit i32"), "cond"), "f.py:7")
    assert isinstance(error, WeakNumberError) and error.index == 3
    assert str(error) == "cond: the Python int 2**62 does not fit i32 (at f.py:7)"


# What numpy or Python raises inside a shax.numpy function, on values nothing checked, leaves
# it as a ShaxError naming the function (its class: TypeError or ValueError, both ShaxErrors).
NUMPY_BOUNDARY: dict[str, tuple[Callable[[], Any], str]] = {
    "median, an axis beyond C's int": (lambda: snp.median(None, axis=2**62), "median: OverflowError"),
    "cov, aweights False": (lambda: snp.cov(None, aweights=False), "cov: "),
    "convolve, a size beyond an index": (lambda: snp.convolve("", (2**63, None)), "convolve: "),
}


@typeguard.suppress_type_checks
@pytest.mark.parametrize("case", sorted(NUMPY_BOUNDARY))
def test_numpys_own_errors_leave_shax_numpy_as_shax_errors(case: str) -> None:
    call, message = NUMPY_BOUNDARY[case]
    with pytest.raises(shax.ShaxError, match=message):
        call()
