"""Properties of tracing over generated well-typed programs (tests/strategies.py):
evaluating the trace equals running the function on numpy (the Haskell original's
property), inferred types check and agree with numpy, printing shows every binding."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import shax
from shax import primitives as P
from shax.core.ir import Definition
from shax.core.printing import called_definitions, show_binding, shown_names
from shax.core.types import DType, TensorType, f32, f64
from shax.stages import check_types, infer_types
from shax.testing.strategies import Program, programs

DTYPES = [pytest.param(f64, id="f64"), pytest.param(f32, id="f32")]


def as_list(result: Any, count: int) -> list[Any]:
    return list(result) if count > 1 else [result]


def assert_same(got: Any, expected: Any, declared: TensorType) -> None:
    got, expected = np.asarray(got), np.asarray(expected)
    assert (expected.shape, expected.dtype) == (declared.shape, np.dtype(declared.dtype.numpy))
    assert (got.shape, got.dtype) == (declared.shape, np.dtype(declared.dtype.numpy))
    assert np.all(np.isfinite(expected)), "the generator should keep values finite"
    rtol = 1e-5 if declared.dtype == f32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol)


def traced(program: Program) -> Definition:
    return shax.trace(program.fn, *program.arg_types)


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_evaluating_the_trace_is_running_the_function(dtype: DType, data: st.DataObject) -> None:
    program = data.draw(programs(dtype), label="program")
    expected = program.fn(*program.args)
    typed = infer_types(traced(program))
    results = shax.evaluate(typed, *program.args)
    assert len(results) == len(program.outputs) == len(typed.outputs)
    for got, want, declared in zip(results, as_list(expected, len(program.outputs)), typed.output_types()):
        assert_same(got, want, declared)


@given(programs())
def test_untyped_trace_evaluates_too(program: Program) -> None:
    expected = as_list(program.fn(*program.args), len(program.outputs))
    for got, want in zip(shax.evaluate(traced(program), *program.args), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@given(programs())
def test_inferred_types_check(program: Program) -> None:
    defn = traced(program)
    assert all(v.type is None for b in defn.bindings for v in b.vars)
    typed = infer_types(defn)
    assert typed.is_typed
    assert check_types(typed) is typed
    assert str(infer_types(typed)) == str(typed)
    assert typed.arg_types == program.arg_types
    assert [(b.vars, b.prim, b.args) for b in typed.bindings] == [(b.vars, b.prim, b.args) for b in defn.bindings]
    arg_bindings = [b for b in typed.bindings if isinstance(b.prim, P.Arg)]
    assert all(b.var.type == program.arg_types[b.prim.index] for b in arg_bindings)


@given(programs())
def test_tracing_is_deterministic(program: Program) -> None:
    assert str(traced(program)) == str(traced(program))


@given(programs())
def test_bindings_are_numbered_in_order_and_hash_consed(program: Program) -> None:
    defn = traced(program)
    ids = [v.id for b in defn.bindings for v in b.vars]
    assert ids == list(range(len(ids)))
    for binding in defn.bindings:
        assert all(a.id < binding.vars[0].id for a in binding.args)
    keys = [(b.prim.cons_key(), *(a.id for a in b.args)) for b in defn.bindings]
    assert len(set(keys)) == len(keys), "the same operation on the same operands was bound twice"
    # Every binding is reachable from the outputs: tracing emits no dead code.
    live = {v.id for v in defn.outputs}
    for binding in reversed(defn.bindings):
        if any(v.id in live for v in binding.vars):
            live.update(v.id for v in binding.vars)
            live.update(a.id for a in binding.args)
    assert live == {v.id for b in defn.bindings for v in b.vars}


BINDING_LINE = re.compile(r"^(  let |      )(\(?x(\d+)( :: (\S+\[[^\]]*\]))?.* = .*)$")


def check_printed(text: str, defn: Definition, names: dict[int, str]) -> None:
    """`text` shows `defn`'s header, every binding (with its type, if typed) and its
    outputs; definitions are named as `names` (by identity) says."""
    lines = text.split("\n")
    n = len(defn.arg_types)
    header, body, last = lines[:n], lines[n : len(lines) - 1], lines[-1]
    assert header[0].startswith(f"def {names[id(defn)]}(") and header[-1].endswith(") =")
    for k, (line, t) in enumerate(zip(header, defn.arg_types)):
        shown = line.split(f"arg{k} :: ", 1)[1].removesuffix(", ").removesuffix(") =")
        assert TensorType.parse(shown) == t
    assert len(body) == len(defn.bindings)
    for line, binding in zip(body, defn.bindings):
        match = BINDING_LINE.match(line)
        assert match is not None, line
        assert match.group(2) == show_binding(binding, names)
        assert int(match.group(3)) == binding.vars[0].id
        assert match.group(2).startswith("(") == (len(binding.vars) != 1)  # several results: a tuple
        if defn.is_typed:
            assert TensorType.parse(match.group(5)) == binding.vars[0].type
    assert last == "  in [" + ", ".join(f"x{v.id}" for v in defn.outputs) + "]"


@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "typed"])
@given(data=st.data())
def test_printing_shows_every_binding(typed: bool, data: st.DataObject) -> None:
    """Every definition it calls first (each once, callees before callers), then it."""
    program = data.draw(programs(), label="program")
    defn = traced(program)
    if typed:
        defn = infer_types(defn)
    blocks = re.split(r"\n(?=def )", str(defn))
    callees = called_definitions(defn)
    names = shown_names(defn, callees)
    assert len(set(names.values())) == len(names), "two definitions shown by one name"
    assert len(blocks) == len(callees) + 1
    for text, d in zip(blocks, [*callees, defn]):
        check_printed(text, d, names)


@given(programs(max_args=2, max_outputs=1, max_steps=4))
def test_program_repr_lists_the_steps(program: Program) -> None:
    lines = repr(program).splitlines()
    assert 1 <= len(program.arg_types) <= 2 and len(program.outputs) == 1 and len(program.steps) <= 4
    callee_lines = [line for callee in program.callees for line in callee.show()]
    assert lines[1 : 1 + len(callee_lines)] == callee_lines
    assert len(lines) == len(callee_lines) + len(program.steps) + 2
    assert lines[0].startswith("Program(" + ", ".join(map(str, program.arg_types)) + ")")
    assert lines[-1] == f"  return v{program.outputs[0]}"
