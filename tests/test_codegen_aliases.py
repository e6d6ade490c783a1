"""Compiled code names an operation that is its operand's value (checkpoint_name) by that
operand's name: an alias of an alias keeps the value alive too (a generated VJP found
`del x5` before `return [x5]` for checkpoint_name(checkpoint_name(arctan2(...)))."""

from __future__ import annotations

from typing import Any

import numpy as np

import shax
import typeclasses as tc
from shax.codegen import compile_definition


def chained(x: Any) -> Any:
    y = shax.checkpoint_name(shax.checkpoint_name(tc.sin(x), "h"), "a")
    return y, tc.cos(shax.checkpoint_name(y, "b")) * 2.0


def test_chained_aliases_stay_alive_in_compiled_code() -> None:
    x = np.linspace(-1.0, 1.0, 4)
    defn = shax.xpr(chained, x)
    expected = shax.evaluate(defn, x)
    for got, want in zip(compile_definition(defn)(x), expected):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(shax.jit(chained)(x), expected):
        np.testing.assert_array_equal(got, want)
