"""`shax.codegen.compile_definition` computes what `shax.evaluate` computes, bit for bit:
on every spec row (every primitive, case and dtype), on generated programs and on their
reverse-mode (zipped VJP) definitions, split into parts or not. Its source reads like the
IR, and bad arguments are `ShaxTypeError`s."""

from __future__ import annotations

import gc
import linecache
import re
import zlib
from pathlib import Path
from typing import Any, TypeVar

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from spec import SPECS, Case, Spec

import shax
from shax import codegen, f32, f64, i32
from shax import primitives as P
from shax.codegen import Compiled, compile_definition
from shax.core.ir import Binding, Definition, Var
from shax.core.types import DType
from shax.stages import infer_types, linearize, transpose, zip_definitions
from shax.testing.strategies import Program, programs
from typeclasses import Floating, broadcast, cos, reduce_sum, rev, sin

ROOT = Path(__file__).resolve().parents[1]
DTYPES = [pytest.param(f64, id="f64"), pytest.param(f32, id="f32")]
A = TypeVar("A", bound=Floating)


def assert_identical(got: list[Any], expected: list[Any]) -> None:
    """Same number of results, each of the same Python type, dtype, shape and bytes."""
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert type(g) is type(e), f"{type(g).__name__} is not {type(e).__name__}"
        g, e = np.asarray(g), np.asarray(e)
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        assert g.tobytes() == e.tobytes(), f"{g} != {e}"


def compiled_equals_evaluate(defn: Definition, *args: Any) -> Compiled:
    originals = [np.array(a, copy=True) for a in args]
    compiled = compile_definition(defn)
    expected = shax.evaluate(defn, *args)
    assert_identical(compiled(*args), expected)
    assert_identical(compiled(*args), expected)  # twice: nothing it holds was overwritten
    for a, original in zip(args, originals):
        np.testing.assert_array_equal(a, original)  # arguments are never written
    return compiled


CASES = [
    pytest.param(spec, case, dtype, id=f"{spec.prim.__name__}-{case.label}-{dtype.name}")
    for spec in SPECS.values()
    for case in spec.cases
    for dtype in spec.dtypes
]


@pytest.mark.parametrize(("spec", "case", "dtype"), CASES)
def test_every_spec_row_compiles_to_what_evaluate_computes(spec: Spec, case: Case, dtype: DType) -> None:
    typed = infer_types(shax.trace(case.apply, *spec.arg_types(case, dtype)))
    rng = np.random.default_rng(zlib.crc32(f"{spec.prim.__name__}-{case.label}-{dtype.name}".encode()))
    values = spec.sample(case, dtype, rng)
    compiled_equals_evaluate(typed, *values)
    # Numbers as scalars: numpy scalars, and 0-d arrays (evaluate's form of Python numbers).
    if all(v.shape == () for v in values) and values:
        # numpy scalars (not arrays) warn when u8 negation wraps around; both sides wrap alike.
        with np.errstate(over="ignore"):
            compiled_equals_evaluate(typed, *(v[()] for v in values))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_compiled_programs_equal_evaluate(dtype: DType, data: st.DataObject) -> None:
    program = data.draw(programs(dtype), label="program")
    compiled_equals_evaluate(infer_types(shax.trace(program.fn, *program.arg_types)), *program.args)


def vjp_definition(program: Program) -> Definition:
    """The zipped VJP of a program with one output: primal args, then the cotangent."""
    typed = infer_types(shax.trace(program.fn, *program.arg_types))
    return zip_definitions(transpose(linearize(typed)))


@pytest.mark.parametrize("dtype", DTYPES)
@given(data=st.data())
def test_compiled_vjps_equal_evaluate(dtype: DType, data: st.DataObject) -> None:
    program = data.draw(programs(dtype, smooth=True, max_outputs=1), label="program")
    defn = vjp_definition(program)
    (out_type,) = infer_types(shax.trace(program.fn, *program.arg_types)).output_types()
    ct = np.linspace(-1.0, 1.0, out_type.size).reshape(out_type.shape).astype(dtype.numpy)
    compiled_equals_evaluate(defn, *program.args, ct)


@given(programs(), st.integers(1, 4))
def test_split_into_parts_the_results_are_the_same(program: Program, chunk: int) -> None:
    typed = infer_types(shax.trace(program.fn, *program.arg_types))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codegen.chunks, "CHUNK", chunk)
        compiled = compiled_equals_evaluate(typed, *program.args)
    # A binding's statement, or a call's (its outputs are one group's, `g5 = c2(x1)`), in
    # this definition's functions, after its callees'.
    main = compiled.function.__name__
    own = compiled.source[re.search(rf"^def {main}(_part0)?\(", compiled.source, re.MULTILINE).start() :]
    statements = re.findall(r"^    [xg]\d+ = ", own, re.MULTILINE)
    assert (f"{main}_part1(" in own) == (len(statements) > chunk)
    # Each part is compiled alone, yet its lines are those of the source shown.
    lines = compiled.source.splitlines()
    functions = {n: f for n, f in compiled.function.__globals__.items() if n == main or n.startswith(f"{main}_part")}
    for name, function in functions.items():
        code = function.__code__
        assert lines[code.co_firstlineno - 1].startswith(f"def {name}(")
        for _, _, line in code.co_lines():
            assert line is None or lines[line - 1].startswith(("    ", f"def {name}("))


def medium_function() -> Any:
    from shax.tools.cli import load_function

    return load_function(f"{ROOT / 'examples' / 'medium.py'}:medium")


MEDIUM_ARGS = (np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2))


def test_medium_compiles_to_the_originals_numbers() -> None:
    typed = infer_types(shax.trace(medium_function(), f32[6], f32[2, 2]))
    compiled = compiled_equals_evaluate(typed, *MEDIUM_ARGS)
    (result,) = compiled(*MEDIUM_ARGS)
    assert result.dtype == np.float32 and result.shape == (2,)
    np.testing.assert_allclose(result, [34.731194, 67.46239], rtol=1e-6)


def test_medium_vjp_compiles_to_what_evaluate_computes() -> None:
    typed = infer_types(shax.trace(medium_function(), f32[6], f32[2, 2]))
    zipped = zip_definitions(transpose(linearize(typed)))
    compiled_equals_evaluate(zipped, *MEDIUM_ARGS, np.array([5.0, 9.0], np.float32))


def f(x: A, y: A) -> A:
    z = x + y
    return sin(z) * cos(z)


def test_source_reads_like_the_definition() -> None:
    compiled = compile_definition(infer_types(shax.trace(f, f32[()], f32[()])))
    source = compiled.source
    assert source.startswith("def f(x0, x1):\n")
    assert "    x2 = x0 + x1\n" in source
    assert "np.float32(sinf(float(x2)))" in source  # a float32 number's sin is C's sinf, as in evaluate
    assert source.rstrip().endswith("return [x5]")
    assert compiled.function.__name__ == "f"
    typed64 = infer_types(shax.trace(f, f64[3], f64[3]))
    assert "np.sin(x2)" in compile_definition(typed64).source


def test_tracebacks_show_the_generated_lines_while_it_lives() -> None:
    compiled = compile_definition(infer_types(shax.trace(f, f64[2], f64[2])))
    filename = compiled.function.__code__.co_filename
    assert "".join(linecache.getlines(filename)) == compiled.source
    del compiled
    gc.collect()
    assert linecache.getlines(filename) == []


def test_constants_are_globals_bound_once() -> None:
    def g(x: A) -> A:
        return reduce_sum(broadcast(x * 2.5 + np.arange(3.0), [1], [2, 3]), [0])

    compiled = compile_definition(infer_types(shax.trace(g, f64[3])))
    lines = compiled.source.splitlines()
    constants = [line for line in lines if line.startswith("# c")]
    assert "# c1 = fromList [] [2.5]" in constants and "# c3 = fromList [3] [0.0,1.0,2.0]" in constants
    assert "x2 = x0 * c1" in compiled.source
    assert compiled.function.__globals__["c1"] is compiled.defn.bindings[1].prim.value


def test_a_broadcast_used_elementwise_is_left_to_numpy() -> None:
    def g(x: A, y: A) -> A:
        return broadcast(x, [1], [2, 3]) * y

    compiled = compiled_equals_evaluate(infer_types(shax.trace(g, f64[3], f64[2, 3])), np.arange(3.0), np.ones((2, 3)))
    assert "broadcast_to" not in compiled.source and "x3 = x0 * x2" in compiled.source


def test_a_broadcast_a_ufunc_stretches_is_not_materialized() -> None:
    def g(x: A, m: A) -> A:
        return sin(broadcast(x, [2], [2, 3, 4])) + cos(broadcast(m, [1, 2], [2, 3, 4]))

    compiled = compiled_equals_evaluate(
        infer_types(shax.trace(g, f64[4], f64[3, 4])), np.arange(4.0), np.arange(12.0).reshape(4, 3).T
    )
    # Numpy lays out the sin of x's broadcast C-contiguously, as np.empty: it is told the shape.
    assert "np.sin(x0, out=np.empty((2, 3, 4), np.float64))" in compiled.source
    # The layout of a matrix argument is not known: its broadcast is made as evaluate makes it.
    assert "np.cos(np.broadcast_to(x3.reshape((1, 3, 4)), (2, 3, 4)))" in compiled.source


def test_dead_operands_are_overwritten_and_dead_values_deleted() -> None:
    def g(x: A) -> A:
        y = x @ x
        return cos(sin(y) + y)

    compiled = compiled_equals_evaluate(infer_types(shax.trace(g, f64[3, 3])), np.eye(3) + 0.5)
    source = compiled.source
    assert "np.matmul(x0, x0)" in source and ", out=x" in source and "del " in source


def test_bindings_no_output_needs_are_skipped() -> None:
    t = f64[2]
    defn = Definition(
        "g",
        (t,),
        (
            Binding(Var(0, t), P.Arg(0), ()),
            Binding(Var(1, t), P.Sin(), (Var(0, t),)),
            Binding(Var(2, t), P.Cos(), (Var(0, t),)),
        ),
        (Var(2),),
    )
    compiled = compiled_equals_evaluate(defn, np.array([0.5, 1.0]))
    assert "sin" not in compiled.source


def test_untyped_definitions_are_typed_first() -> None:
    untyped = shax.trace(f, f32[2], f32[2])
    compiled = compiled_equals_evaluate(untyped, np.ones(2, np.float32), np.zeros(2, np.float32))
    assert compiled.defn.is_typed


def test_arguments_are_taken_as_evaluate_takes_them() -> None:
    compiled = compile_definition(infer_types(shax.trace(f, f32[()], f32[()])))
    defn = compiled.defn
    for args in [(1.5, -2.5), (np.float32(1.5), 2), (np.array(1.5, np.float32), np.float32(0.5))]:
        assert_identical(compiled(*args), shax.evaluate(defn, *args))


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ((np.ones(2, np.float32),), ["takes 2 argument(s) (f32[2], i32[]), got 1"]),
        ((np.ones(2, np.float64), 1), ["argument 0", "f64[2]", "f32[2]"]),
        ((np.ones(3, np.float32), 1), ["argument 0", "f32[3]", "f32[2]"]),
        ((np.ones(2, np.float32), 1.5), ["argument 1", "f32[]", "i32[]"]),
        ((np.ones(2, np.float32), np.int16(1)), ["int16 is not supported"]),
        (([1.0, 2.0], 1), ["argument 0", "list"]),
    ],
    ids=["count", "dtype", "shape", "float_for_i32", "int16", "list"],
)
def test_bad_arguments_are_type_errors(args: tuple[Any, ...], fragments: list[str]) -> None:
    def g(x: Any, n: Any) -> Any:
        return x * 2.0

    compiled = compile_definition(infer_types(shax.trace(g, f32[2], i32[()])))
    with pytest.raises(shax.ShaxTypeError) as error:
        compiled(*args)  # bad call
    message = str(error.value)
    for fragment in fragments:
        assert fragment in message, message
    assert f"{Path(__file__).name}:" in message, message


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
class _Tagged(np.ndarray):
    """A user's subclass that only adds an attribute: its data is an ndarray's."""

    tag = "mine"


def test_tracers_and_matrices_are_refused_and_other_subclasses_taken_as_arrays() -> None:
    compiled = compile_definition(infer_types(shax.trace(f, f64[2, 2], f64[2, 2])))
    with pytest.raises(shax.ShaxTypeError, match="argument 0 is a tracer"):
        shax.trace(lambda x: compiled(x, x)[0], f64[2, 2])
    m = np.asmatrix(np.arange(4.0).reshape(2, 2))  # `*` of matrices is a matrix product: not f's answer
    with pytest.raises(shax.ShaxTypeError, match="numpy.matrix"):
        compiled(m, m)
    t = np.arange(4.0).reshape(2, 2).view(_Tagged)
    (result,) = compiled(t, t)
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, shax.evaluate(compiled.defn, np.asarray(t), np.asarray(t))[0])


def test_names_that_would_clash_are_changed() -> None:
    for name, expected in [
        ("<lambda>", "_lambda_"),
        ("np", "np_"),
        ("c1", "c1_"),
        ("type", "type_"),
        ("class", "_class"),
        ("", "_"),
    ]:
        defn = attrs.evolve(infer_types(shax.trace(f, f64[2], f64[2])), name=name)
        compiled = compiled_equals_evaluate(defn, np.ones(2), np.ones(2))
        assert compiled.source.startswith(f"def {expected}(x0, x1):"), compiled.source


def test_rev_of_no_axes_of_a_rank_0_value_is_an_array() -> None:
    # numpy's ufuncs make numpy scalars of rank-0 results; rev forwarding one kept it so
    out = shax.jit(lambda x: rev(sin(x), []))(np.float64(0.5))
    assert type(out) is np.ndarray and out.dtype == np.float64
