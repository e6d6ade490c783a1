"""Compiled code split into parts passes each part the names it reads: the lines reading
a call's results (`x9 = g8[1]`) read the call's list, not its operands, which may be
deleted by then (a generated program's part returned a deleted operand of a call)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import typeclasses as tc
from shax import codegen
from shax.codegen import compile_definition


@shax.subgraph
def pair(a: Any, b: Any) -> tuple[Any, Any]:
    return tc.sin(a) * 2.0, b * 3.0


def program(x: Any) -> Any:
    y = tc.cos(x) + 1.0  # read by the call only: dead after it
    u, v = pair(x, y)
    return tc.tanh(u) + v


@pytest.mark.parametrize("chunk", [1, 2, 3, 4])
def test_a_call_s_results_read_in_later_parts(chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.linspace(-1.0, 1.0, 3)
    defn = shax.xpr(program, x)
    monkeypatch.setattr(codegen.chunks, "CHUNK", chunk)
    (got,) = compile_definition(defn)(x)
    (want,) = shax.evaluate(defn, x)
    np.testing.assert_array_equal(got, want)
