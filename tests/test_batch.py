"""Batch: every primitive's batching rule at a sample of the batch axes of its operands
(spec rows; the sample is tests/batch_axes.py's), batched = stacked per-example evaluation
over generated programs with random in_axes and out_axes, batched dot products as one
batched dot_general, and bad input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import numpy as np
import pytest
import typeguard
from batch_axes import sampled_in_axes
from hypothesis import given
from hypothesis import strategies as st
from reverse_mode import spec_params, typed_medium
from spec import SPECS

import shax
from shax import f32, f64
from shax import primitives as P
from shax.core.ir import Definition, Var
from shax.core.types import DTYPES, TensorType
from shax.passes import cleanup
from shax.rules.batch import batch_rules
from shax.stages import batch, check_types, infer_types, linearize, transpose, zip_definitions
from shax.testing.strategies import ARG_BOUND, Program, programs
from typeclasses import broadcast, cos, dot, reduce_sum, sin

SIZE = 3


def take(x: np.ndarray, axis: int | None, b: int) -> np.ndarray:
    """Example `b` of `x`, batched along `axis` (None: shared by every example)."""
    return x if axis is None else np.take(x, b, axis=axis)


def per_example(defn: Definition, args: Sequence[np.ndarray], in_axes: Sequence[int | None], size: int) -> list[Any]:
    """Each output of `defn` for examples 0..size-1, as a list per output."""
    results = [shax.evaluate(defn, *(take(x, a, b) for x, a in zip(args, in_axes))) for b in range(size)]
    return [[np.asarray(r[j]) for r in results] for j in range(len(defn.outputs))]


def assert_same(got: Any, expected: np.ndarray) -> None:
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        tolerance = 1e-5 if expected.dtype == np.float32 else 1e-12
        scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
        np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance * scale)
    else:
        np.testing.assert_array_equal(got, expected)


def check_batched(
    defn: Definition,
    args: Sequence[np.ndarray],
    in_axes: Sequence[int | None],
    out_axes: Sequence[int | None],
    size: int = SIZE,
) -> Definition:
    """batch(defn) on the stacked `args` equals `defn` per example, stacked along out_axes."""
    batched = check_types(batch(defn, in_axes, size, out_axes))
    assert batched.name == "v" + defn.name
    got = shax.evaluate(batched, *args)
    for g, examples, axis in zip(got, per_example(defn, args, in_axes, size), out_axes):
        assert_same(g, np.stack(examples, axis=axis))
    return batched


# One check per spec row, case and dtype, at a sample of the combinations of operand
# batch axes (tests/batch_axes.py) ----------------------------------------------------------


# Bindings a batching rule adds beyond 4, a fixed number whatever the batch size: conv's
# axes merged into its batch, features or groups and split out again (a transpose and a
# reshape each); a dynamic slice at batched starts, each example's flat positions.
REARRANGING = {P.ConvGeneralDilated: 6, P.DynamicSlice: 14, P.DynamicUpdateSlice: 16}

# Every dtype a row accepts (a constant, which has no operand dtype, once).
ROW_PARAMS = [p for p in spec_params(SPECS, DTYPES) if p.values[2] in p.values[0].dtypes]


@pytest.mark.parametrize("spec, case, dtype", ROW_PARAMS)
def test_every_primitive_at_sampled_batch_axes(spec: Any, case: Any, dtype: Any) -> None:
    rng = np.random.default_rng(0)
    types = spec.arg_types(case, dtype)
    defn = infer_types(shax.trace(case.apply, *types))
    (out_type,) = defn.output_types()
    examples = [spec.sample(case, dtype, rng) for _ in range(SIZE)]
    for in_axes in sampled_in_axes(types, rng):
        args = [
            examples[0][k] if a is None else np.stack([e[k] for e in examples], axis=a) for k, a in enumerate(in_axes)
        ]
        out_axis = int(rng.integers(0, out_type.rank + 1))
        batched = check_batched(defn, args, in_axes, [out_axis])
        # Batching never repeats an operation per example (a cond on a batched index runs
        # its branches' bindings inline, each once).
        inlined = sum(len(d.bindings) for b in defn.bindings for d in b.prim.subdefinitions())
        assert len(batched.bindings) <= len(defn.bindings) + inlined + 4 + REARRANGING.get(spec.prim, 0)


# Properties over generated programs ---------------------------------------------------


@st.composite
def batched_programs(draw: Any, dtype: Any = f64) -> tuple[Program, Definition, list[Any], list[int], list[np.ndarray]]:
    """A program, its typed definition, a batch axis (or None) per argument, an output
    axis (maybe negative) per output, and stacked arguments: the program's own as
    example 0, then random ones."""
    program = draw(programs(dtype))
    defn = infer_types(shax.trace(program.fn, *program.arg_types))
    in_axes = [draw(st.one_of(st.none(), st.integers(0, t.rank))) for t in program.arg_types]
    out_axes = [draw(st.integers(-t.rank - 1, t.rank)) for t in defn.output_types()]
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    args = []
    for x, axis in zip(program.args, in_axes):
        others = [rng.uniform(-ARG_BOUND, ARG_BOUND, x.shape).astype(x.dtype) for _ in range(SIZE - 1)]
        args.append(x if axis is None else np.stack([x, *others], axis=axis))
    return program, defn, in_axes, out_axes, args


@given(batched_programs())
def test_batched_equals_stacked_examples(drawn: Any) -> None:
    _, defn, in_axes, out_axes, args = drawn
    check_batched(defn, args, in_axes, out_axes)


@given(batched_programs(f32))
def test_batched_equals_stacked_examples_in_f32(drawn: Any) -> None:
    _, defn, in_axes, out_axes, args = drawn
    check_batched(defn, args, in_axes, out_axes)


@given(batched_programs())
def test_batching_twice_is_a_double_loop(drawn: Any) -> None:
    """batch(batch(f)) over a 2 x 3 batch: the outer batch axis is 0 of every batched argument."""
    _, defn, in_axes, out_axes, args = drawn
    inner = batch(defn, in_axes, SIZE, out_axes)
    outer = batch(inner, [None if a is None else 0 for a in in_axes], 2, 0)
    twice = [x if a is None else np.stack([x, 2.0 * x]) for x, a in zip(args, in_axes)]
    got = shax.evaluate(outer, *twice)
    halves = [
        shax.evaluate(inner, *(take(x, None if a is None else 0, b) for x, a in zip(twice, in_axes))) for b in (0, 1)
    ]
    for j, g in enumerate(got):
        assert_same(g, np.stack([np.asarray(h[j]) for h in halves]))


# Particular programs ------------------------------------------------------------------


def typed(f: Any, *arg_types: TensorType) -> Definition:
    return infer_types(shax.trace(f, *arg_types))


def count(defn: Definition, prim: type[P.Primitive]) -> int:
    return sum(isinstance(b.prim, prim) for b in defn.bindings)


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 2), (0, None), (None, 0), (2, None), (None, 1)])
def test_a_batched_dot_is_one_dot_general(in_axes: tuple[int | None, int | None]) -> None:
    defn = typed(dot, f64[2, 3], f64[3, 4])
    rng = np.random.default_rng(0)
    args = [
        rng.standard_normal(t.shape if a is None else (*t.shape[:a], 50, *t.shape[a:]))
        for t, a in zip(defn.arg_types, in_axes)
    ]
    batched = check_batched(defn, args, in_axes, [0], size=50)
    assert count(batched, P.DotGeneral) == 1
    # At most one transpose, to move the batch axis of the result where out_axes says.
    assert len(batched.bindings) <= len(defn.bindings) + 1
    (dot_general,) = [b.prim for b in batched.bindings if isinstance(b.prim, P.DotGeneral)]
    both = None not in in_axes
    assert (dot_general.lhs_batch, dot_general.rhs_batch) == (((in_axes[0],), (in_axes[1],)) if both else ((), ()))


def test_the_batch_size_does_not_change_the_program() -> None:
    defn = typed_medium()
    small, large = batch(defn, [0, None], 3), batch(defn, [0, None], 300)
    assert [b.prim.name for b in small.bindings] == [b.prim.name for b in large.bindings]
    assert len(small.bindings) <= len(defn.bindings) + 3


def test_the_originals_medium_per_example() -> None:
    defn = typed_medium()
    rng = np.random.default_rng(0)
    xs = rng.uniform(1.0, 6.0, (SIZE, 6)).astype(np.float32)
    x8 = np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    batched = batch(defn, [0, None], SIZE)
    assert str(batched).startswith("def vmedium(arg0 :: f32[3, 6], \n")
    (got,) = shax.evaluate(batched, xs, x8)
    expected = [shax.evaluate(defn, x, x8)[0] for x in xs]
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    (first,) = shax.evaluate(batched, np.stack([np.arange(1, 7, dtype=np.float32)] * SIZE), x8)
    np.testing.assert_allclose(first[0], [34.731194, 67.46239], rtol=1e-6)


def test_per_example_gradients_from_the_vjp_definition() -> None:
    """Batching the zipped VJP definition of f(w, x) = Σ sin(x·w) gives per-example
    gradients, cos(x·w)·x for each w."""
    f = typed(lambda w, x: reduce_sum(sin(dot(x, w)), [0]), f64[3], f64[2, 3])
    vjp = cleanup(zip_definitions(transpose(linearize(f))))
    rng = np.random.default_rng(0)
    ws, x, ct = rng.standard_normal((SIZE, 3)), rng.standard_normal((2, 3)), np.ones(())
    batched = batch(vjp, [0, None, None], SIZE)
    got = shax.evaluate(batched, ws, x, ct)
    for b, w in enumerate(ws):
        value, dw, dx = shax.evaluate(vjp, w, x, ct)
        np.testing.assert_allclose(got[0][b], value)
        np.testing.assert_allclose(got[1][b], dw)
        np.testing.assert_allclose(got[1][b], np.cos(x @ w) @ x)
        np.testing.assert_allclose(got[2][b], dx)


def test_reductions_keep_their_own_axes() -> None:
    defn = typed(lambda x: reduce_sum(x, [0]), f64[2, 4])
    xs = np.arange(24.0).reshape(SIZE, 2, 4)
    batched = batch(defn, [0], SIZE)
    assert batched.output_types() == (f64[SIZE, 4],)
    np.testing.assert_array_equal(shax.evaluate(batched, xs)[0], xs.sum(axis=1))


def test_an_output_that_depends_on_no_batched_argument_is_broadcast() -> None:
    defn = typed(lambda x, y: (sin(y), x * 2.0), f64[2], f64[2])
    x, ys = np.array([1.0, 2.0]), np.arange(6.0).reshape(SIZE, 2)
    batched = batch(defn, [None, 0], SIZE, out_axes=[0, 1])
    assert batched.output_types() == (f64[SIZE, 2], f64[2, SIZE])
    got_sin, got_twice = shax.evaluate(batched, x, ys)
    np.testing.assert_allclose(got_sin, np.sin(ys))
    np.testing.assert_array_equal(got_twice, np.stack([x * 2.0] * SIZE, axis=1))
    # out_axes None: an unbatched output stays as it is.
    shared = batch(defn, [None, 0], SIZE, out_axes=[0, None])
    assert shared.output_types() == (f64[SIZE, 2], f64[2])


def test_nothing_batched_broadcasts_every_output() -> None:
    defn = typed(lambda x: broadcast(x, [0], [2, 2]), f64[2])
    batched = batch(defn, None, 4, out_axes=-1)
    assert batched.output_types() == (f64[2, 2, 4],)
    (got,) = shax.evaluate(batched, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(got, np.broadcast_to(np.array([[1.0, 1.0], [2.0, 2.0]])[..., None], (2, 2, 4)))


def test_negative_axes_count_from_the_end_of_the_batched_value() -> None:
    defn = typed(lambda x, y: x + y, f64[2], f64[2])
    assert batch(defn, [-1, -2], SIZE, -1).arg_types == (f64[2, SIZE], f64[SIZE, 2])
    assert batch(defn, -1, SIZE, -1).output_types() == (f64[2, SIZE],)


def test_an_unbatched_chain_is_emitted_unchanged() -> None:
    defn = typed(lambda x, y: sin(cos(y)) * x, f64[2], f64[2])
    batched = batch(defn, [0, None], SIZE)
    assert [b.prim.name for b in batched.bindings] == [b.prim.name for b in defn.bindings]
    assert [b.var.type for b in batched.bindings if b.prim.name in ("sin", "cos")] == [f64[2], f64[2]]


# Bad input -----------------------------------------------------------------------------


@pytest.fixture
def add_defn() -> Definition:
    return typed(lambda x, y: x + y, f32[2, 3], f32[3])


def test_in_axes_for_the_wrong_number_of_arguments(add_defn: Definition) -> None:
    with pytest.raises(
        shax.ShaxValueError,
        match=r"batch: in_axes=\[0\] gives an axis for 1 argument\(s\), but f has 2 \(f32\[2, 3\], f32\[3\]\)",
    ):
        batch(add_defn, [0], SIZE)


@pytest.mark.parametrize("axis", [2, -3])
def test_an_in_axis_out_of_range(add_defn: Definition, axis: int) -> None:
    message = rf"batch: in_axes\[1\] = {axis} is out of range for argument 1 :: f32\[3\]: .* one of -2..1"
    with pytest.raises(shax.ShaxValueError, match=message):
        batch(add_defn, [0, axis], SIZE)


@pytest.mark.parametrize("axis", [3, -4])
def test_an_out_axis_out_of_range(add_defn: Definition, axis: int) -> None:
    message = rf"batch: out_axes\[0\] = {axis} is out of range for output 0 :: f32\[2, 3\]: .* one of -3..2"
    with pytest.raises(shax.ShaxValueError, match=message):
        batch(add_defn, [0, 0], SIZE, [axis])


def test_out_axes_for_the_wrong_number_of_outputs(add_defn: Definition) -> None:
    with pytest.raises(
        shax.ShaxValueError,
        match=r"batch: out_axes=\[0, 0\] gives an axis for 2 output\(s\), but f has 1 \(f32\[2, 3\]\)",
    ):
        batch(add_defn, [0, 0], SIZE, [0, 0])


def test_an_unbatched_out_axis_for_a_batched_output(add_defn: Definition) -> None:
    message = r"batch: out_axes\[0\] is None, but output 0 of f :: f32\[2, 3\] depends on a batched argument"
    with pytest.raises(shax.ShaxValueError, match=message):
        batch(add_defn, [None, 0], SIZE, None)


# Without typeguard (as users run shax), the stage's own checks catch what the annotations forbid.
@typeguard.suppress_type_checks
@pytest.mark.parametrize("axes", [[0, 1.0], [0, True], [0, "0"]])
def test_an_axis_that_is_not_an_int(add_defn: Definition, axes: list[Any]) -> None:
    with pytest.raises(
        shax.ShaxValueError, match=r"batch: in_axes\[1\] must be an int or None, got .* for argument 1 :: f32\[3\]"
    ):
        batch(add_defn, axes, SIZE)


@typeguard.suppress_type_checks
@pytest.mark.parametrize("size", [-1, 2.0, True])
def test_a_bad_batch_size(add_defn: Definition, size: Any) -> None:
    with pytest.raises(shax.ShaxValueError, match="batch: the batch size must be a non-negative int"):
        batch(add_defn, 0, size)


def test_batching_an_untyped_definition() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"batch: in `x0 = arg0`: the definition is untyped"):
        batch(shax.trace(sin, f32[2]), [0], SIZE)


def test_a_definition_whose_annotations_lie() -> None:
    good = typed(sin, f32[2])
    bindings = [b if isinstance(b.prim, P.Arg) else attrs.evolve(b, vars=Var(b.var.id, f32[3])) for b in good.bindings]
    lying = attrs.evolve(good, bindings=tuple(bindings))
    with pytest.raises(shax.ShaxTypeError, match=r"batch: in `x1 :: f32\[3\] = sin x0`: the batching rule of sin gave"):
        batch(lying, [0], SIZE)
    with pytest.raises(shax.ShaxTypeError, match=r"batch: in `x1 :: f32\[3\] = sin x0`: annotated f32\[3\], but"):
        batch(lying, [None], SIZE)


def test_a_rule_that_loses_the_batch_axis_names_the_binding_and_line() -> None:
    def wrong(prim: Any, operands: Any, dims: Any) -> Any:
        return reduce_sum(operands[0], [dims[0]]), 0

    defn = typed(lambda x: sin(x), f32[2])
    message = (
        r"batch: in `x1 :: f32\[2\] = sin x0`: the batching rule of sin gave Tracer\(f32\[2\]\) with batch axis 0, "
        r"not a batch of 3 f32\[2\] \(at .*test_batch.py:\d+\)"
    )
    with batch_rules.replaced(P.Sin, wrong), pytest.raises(shax.ShaxTypeError, match=message):
        batch(defn, [0], SIZE)


def test_a_constant_has_no_operands_to_batch() -> None:
    with pytest.raises(shax.ShaxTypeError, match="fromList: has no operands"):
        constant = P.Constant(np.float32(1.0))
        batch_rules[constant](constant, [], [])
