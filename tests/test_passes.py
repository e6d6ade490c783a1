"""The rewrite passes: the golden "After rewrites" block, one unit test group per pass,
and the original's property: over generated well-typed programs and random lists of
passes, evaluation is unchanged and the output passes `check_types`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from spec import SPECS

import shax
from shax import bool_, f32, f64, i32
from shax.core.builder import Builder
from shax.core.ir import Definition, Var
from shax.core.printing import show_float
from shax.core.types import TensorType
from shax.passes import (
    CLEANUP,
    PASSES,
    apply_passes,
    bind_arguments,
    canonicalize_dot_general,
    cleanup,
    cse,
    dce,
    fold_constants,
    fold_negations,
    forward_identities,
    lower_reductions_to_sums_of_slices,
    materialize_broadcasts,
)
from shax.primitives import (
    Add,
    Arg,
    Broadcast,
    Constant,
    Cos,
    Div,
    DotGeneral,
    Eq,
    Mul,
    Neg,
    Pad,
    ReduceSum,
    Reshape,
    Select,
    Sin,
    Slice,
    Sub,
    Transpose,
)
from shax.stages import check_types, infer_types
from shax.testing.strategies import Program, programs
from typeclasses import broadcast, sin

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "examples"))
from medium import medium  # noqa: E402

GOLDEN = ROOT / "tests" / "golden" / "medium_pipeline.txt"
REWRITES_HEADER = "After rewrites (canonicalizing `dot`s and lowering `reduce_sum` to pointwise `+` and `slice`):\n"


def stripped(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def build(arg_types: Sequence[TensorType], body: Callable[..., Any]) -> Definition:
    """A typed definition written binding by binding (no hash-consing, so repeats stay):
    `body(builder, *arg_vars)` returns the output var or a list of them."""
    b = Builder()
    args = [b.emit(Arg(k)) for k in range(len(arg_types))]
    outputs = body(b, *args)
    return infer_types(b.build("f", arg_types, outputs if isinstance(outputs, list) else [outputs]))


def sample(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    if t.dtype == bool_:
        return rng.random(t.shape) < 0.5
    if t.dtype == i32:
        return rng.integers(-3, 4, t.shape).astype(np.int32)
    return rng.uniform(0.5, 2.0, t.shape).astype(t.dtype.numpy)


def assert_same_meaning(before: Definition, after: Definition, args: Sequence[Any] | None = None) -> None:
    check_types(after)
    assert after.arg_types == before.arg_types
    if args is None:
        rng = np.random.default_rng(0)
        args = [sample(t, rng) for t in before.arg_types]
    expected, got = shax.evaluate(before, *args), shax.evaluate(after, *args)
    assert len(expected) == len(got)
    for e, g in zip(expected, got):
        g, e = np.asarray(g), np.asarray(e)
        assert TensorType.of(g) == TensorType.of(e)
        if np.issubdtype(e.dtype, np.floating):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        else:
            np.testing.assert_array_equal(g, e)


def prims(defn: Definition) -> list[type]:
    return [type(b.prim) for b in defn.bindings]


def is_numbered(defn: Definition) -> bool:
    ids = [v.id for b in defn.bindings for v in b.vars]
    return ids == list(range(len(ids)))


def typed_medium() -> Definition:
    return infer_types(shax.trace(medium, f32[6], f32[2, 2]))


# The golden transcript --------------------------------------------------------------


def test_after_rewrites_matches_golden() -> None:
    expected = GOLDEN.read_text().split(REWRITES_HEADER)[1].split("Linearized definition(s):")[0]
    rewritten = lower_reductions_to_sums_of_slices(canonicalize_dot_general(typed_medium()))
    assert stripped(str(rewritten)) == stripped(expected)


def test_apply_passes_runs_in_order_and_matches_golden() -> None:
    names = ["canonicalize_dot_general", "lower_reductions_to_sums_of_slices"]
    assert str(apply_passes(typed_medium(), names)) == str(
        lower_reductions_to_sums_of_slices(canonicalize_dot_general(typed_medium()))
    )


@pytest.mark.parametrize("name", PASSES)
def test_every_pass_keeps_medium_meaning(name: str) -> None:
    typed = typed_medium()
    x, y = np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2)
    out = PASSES[name](typed)
    assert is_numbered(out)
    assert_same_meaning(typed, out, [x, y])
    np.testing.assert_allclose(shax.evaluate(out, x, y)[0], [34.731194, 67.46239], rtol=1e-6)


# dce --------------------------------------------------------------------------------


def test_dce_drops_dead_bindings_keeps_args_and_renumbers() -> None:
    def body(b: Builder, x: Var, unused: Var) -> Var:
        b.emit(Sin(), [b.emit(Cos(), [x])])  # a dead chain
        return b.emit(Sin(), [x])

    out = dce(build([f32[3], f32[2]], body))
    assert stripped(str(out)) == stripped("""
def f(arg0 :: f32[3],
      arg1 :: f32[2]) =
  let x0 :: f32[3] = arg0
      x1 :: f32[2] = arg1
      x2 :: f32[3] = sin x0
  in [x2]""")


def test_dce_keeps_everything_an_output_needs() -> None:
    defn = typed_medium()
    assert dce(defn) == defn
    assert str(dce(defn)) == str(defn)


# cse --------------------------------------------------------------------------------


def test_cse_merges_repeats_commuted_operands_and_equal_small_constants() -> None:
    def body(b: Builder, x: Var, y: Var) -> list[Var]:
        s1, s2 = b.emit(Sin(), [x]), b.emit(Sin(), [x])
        m1, m2 = b.emit(Mul(), [s1, y]), b.emit(Mul(), [y, s2])
        d1, d2 = b.emit(Sub(), [s1, y]), b.emit(Sub(), [y, s2])  # sub does not commute
        c1, c2 = b.emit(Constant(np.float32(2.0))), b.emit(Constant(np.float32(2.0)))
        return [b.emit(Add(), [d1, c1]), b.emit(Add(), [d2, c2]), m1, m2]

    defn = build([f32[3], f32[3]], body)
    out = cse(defn)
    assert prims(out) == [Arg, Arg, Sin, Mul, Sub, Sub, Constant, Add, Add]
    assert is_numbered(out)
    assert_same_meaning(defn, out)


def test_cse_merges_repeated_args_and_keeps_large_constants_apart() -> None:
    large = np.arange(20, dtype=np.float32)

    def body(b: Builder, x: Var) -> list[Var]:
        again = b.emit(Arg(0))
        return [b.emit(Add(), [x, b.emit(Constant(large))]), b.emit(Add(), [again, b.emit(Constant(large))])]

    out = cse(build([f32[20]], body))
    assert prims(out) == [Arg, Constant, Add, Constant, Add]
    assert out.outputs[0] != out.outputs[1]


def test_cse_and_dce_are_idempotent_on_medium() -> None:
    for p in (cse, dce):
        once = p(typed_medium())
        assert p(once) == once and str(p(once)) == str(once)


# fold_constants -----------------------------------------------------------------------


def test_fold_constants_folds_only_all_constant_bindings() -> None:
    def body(b: Builder, x: Var) -> Var:
        two, three = b.emit(Constant(np.float32(2.0))), b.emit(Constant(np.float32(3.0)))
        five = b.emit(Add(), [two, three])
        return b.emit(Mul(), [x, b.emit(Sin(), [five])])

    defn = build([f32[2]], body)
    out = fold_constants(defn)
    assert stripped(str(out)) == stripped(f"""
def f(arg0 :: f32[2]) =
  let x0 :: f32[2] = arg0
      x1 :: f32[] = fromList [] [{show_float(np.sin(np.float32(5.0)))}]
      x2 :: f32[2] = mul x0 x1
  in [x2]""")
    assert_same_meaning(defn, out)


def test_fold_constants_keeps_dtype_and_leaves_large_broadcasts() -> None:
    def body(b: Builder, x: Var) -> list[Var]:
        one = b.emit(Constant(np.int32(1)))
        small = b.emit(Broadcast((), (2, 2)), [one])
        large = b.emit(Broadcast((), (10, 10)), [one])
        return [b.emit(Eq(), [small, small]), b.emit(Add(), [x, large])]

    defn = build([i32[10, 10]], body)
    out = fold_constants(defn)
    assert prims(out) == [Arg, Constant, Broadcast, Constant, Add]
    assert out.bindings[3].prim.value.dtype == np.bool_
    assert_same_meaning(defn, out)


# forward_identities -------------------------------------------------------------------


def test_forward_identities_drops_every_identity_op() -> None:
    def body(b: Builder, x: Var, p: Var) -> list[Var]:
        y = b.emit(Reshape((2, 3)), [x])
        y = b.emit(Transpose((0, 1)), [y])
        y = b.emit(Broadcast((0, 1), (2, 3)), [y])
        y = b.emit(Slice((0, 0), (2, 3)), [y])
        y = b.emit(Pad(((0, 0), (0, 0)), 0.0), [y])
        y = b.emit(ReduceSum(()), [y])
        y = b.emit(Select(), [p, y, y])
        return [b.emit(Sin(), [y]), y]

    defn = build([f32[2, 3], bool_[2, 3]], body)
    out = forward_identities(defn)
    assert stripped(str(out)) == stripped("""
def f(arg0 :: f32[2, 3],
      arg1 :: bool[2, 3]) =
  let x0 :: f32[2, 3] = arg0
      x1 :: bool[2, 3] = arg1
      x2 :: f32[2, 3] = sin x0
  in [x2, x0]""")
    assert_same_meaning(defn, out)


def test_forward_identities_drops_arithmetic_with_a_neutral_constant() -> None:
    def body(b: Builder, x: Var) -> list[Var]:
        one = b.emit(Constant(np.ones((2,), np.float32)))
        zero = b.emit(Constant(np.zeros((), np.float32)))
        y = b.emit(Mul(), [one, b.emit(Mul(), [x, one])])
        y = b.emit(Sub(), [b.emit(Add(), [zero, b.emit(Div(), [y, one])]), zero])
        # 1 / x, 0 - x and x * ones[3, 2] (which broadcasts) change the value or type.
        kept = [b.emit(Div(), [one, y]), b.emit(Sub(), [zero, y])]
        wide = b.emit(Constant(np.ones((3, 2), np.float32)))
        return [y, *kept, b.emit(Mul(), [x, wide])]

    defn = build([f32[2]], body)
    out = forward_identities(defn)
    assert out.outputs[0] == Var(0)
    assert prims(out).count(Mul) == 1 and prims(out).count(Div) == 1 and prims(out).count(Sub) == 1
    assert_same_meaning(defn, out)


def test_forward_identities_keeps_ops_that_change_values() -> None:
    def body(b: Builder, x: Var, p: Var) -> list[Var]:
        return [
            b.emit(Transpose((1, 0)), [x]),  # same type, different value
            b.emit(Reshape((9,)), [x]),
            b.emit(Broadcast((0, 1), (3, 3)), [b.emit(Slice((0, 0), (1, 3)), [x])]),
            b.emit(Pad(((0, 1), (0, 0)), 0.0), [x]),
            b.emit(ReduceSum((0,)), [x]),
            b.emit(Select(), [p, x, b.emit(Sin(), [x])]),
        ]

    defn = build([f32[3, 3], bool_[3, 3]], body)
    out = forward_identities(defn)
    assert prims(out) == prims(defn)
    assert_same_meaning(defn, out)


# fold_negations -----------------------------------------------------------------------


def test_fold_negations_lets_sums_absorb_a_cotangents_sign() -> None:
    # medium's VJP: the transpose of max - min hands min's operands -ct, which the
    # products carry into sums; folded, no negation is computed and the products merge.
    typed = typed_medium()
    vjp = shax.stages.zip_definitions(shax.stages.transpose(shax.stages.linearize(typed)))
    folded = fold_negations(vjp)
    assert Neg in prims(vjp) and Neg not in prims(folded)
    assert len(folded.bindings) < len(vjp.bindings)
    assert prims(folded).count(Mul) < prims(vjp).count(Mul)
    args = [np.arange(1, 7, dtype=np.float32), np.arange(1, 5, dtype=np.float32).reshape(2, 2), np.float32([5, 9])]
    for e, g in zip(shax.evaluate(vjp, *args), shax.evaluate(folded, *args)):
        assert e.tobytes() == g.tobytes()


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (lambda b, x, y: b.emit(Add(), [x, b.emit(Neg(), [y])]), [Sub]),  # x + -y = x - y
        (lambda b, x, y: b.emit(Add(), [b.emit(Neg(), [x]), y]), [Sub]),  # -x + y = y - x
        (lambda b, x, y: b.emit(Sub(), [x, b.emit(Neg(), [y])]), [Add]),  # x - -y = x + y
        (lambda b, x, y: b.emit(Neg(), [b.emit(Neg(), [x])]), []),  # -(-x) = x
        (lambda b, x, y: b.emit(Add(), [x, b.emit(Mul(), [b.emit(Neg(), [x]), y])]), [Mul, Sub]),
        (lambda b, x, y: b.emit(Sub(), [y, b.emit(Div(), [x, b.emit(Neg(), [y])])]), [Div, Add]),
        (lambda b, x, y: b.emit(Add(), [x, b.emit(Mul(), [b.emit(Neg(), [x]), b.emit(Neg(), [y])])]), [Mul, Add]),
        # a sign nothing absorbs is computed, as often as before: -x * y returned is -(x * y)
        (lambda b, x, y: b.emit(Mul(), [b.emit(Neg(), [x]), b.emit(Neg(), [y])]), [Neg, Neg, Mul]),
        (lambda b, x, y: b.emit(Mul(), [b.emit(Neg(), [x]), y]), [Neg, Mul]),
        (lambda b, x, y: b.emit(Add(), [b.emit(Neg(), [x]), b.emit(Neg(), [y])]), [Neg, Neg, Add]),
        # -x returned, and another -x read by a sum: the one returned is computed
        (lambda b, x, y: [b.emit(Neg(), [x]), b.emit(Add(), [y, b.emit(Neg(), [x])])], [Neg, Sub]),
    ],
)
def test_fold_negations_never_adds_a_numpy_call(body: Callable[..., Any], expected: list[type]) -> None:
    defn = build([f32[3], f32[3]], body)
    folded = fold_negations(defn)
    assert [p for p in prims(folded) if p is not Arg] == expected
    assert_same_meaning(defn, folded)


@given(program=programs(dtype=f64))
def test_fold_negations_computes_the_same_bits_with_no_more_bindings(program: Program) -> None:
    # Exact rewrites: every result equals the input's bit for bit (a NaN's sign aside).
    defn = infer_types(shax.trace(program.fn, *program.arg_types))
    vjp = shax.stages.zip_definitions(shax.stages.transpose(shax.stages.linearize(defn)))
    args = [*program.args, *(np.ones(t.shape, t.dtype.numpy) for t in vjp.arg_types[len(program.args) :])]
    for d in (defn, vjp):
        folded = fold_negations(d)
        assert len(folded.bindings) <= len(d.bindings)
        assert prims(folded).count(Neg) <= prims(d).count(Neg)
        for e, g in zip(shax.evaluate(d, *args[: len(d.arg_types)]), shax.evaluate(folded, *args[: len(d.arg_types)])):
            e, g = np.asarray(e), np.asarray(g)
            nan = np.isnan(e) if np.issubdtype(e.dtype, np.floating) else np.zeros(e.shape, bool)
            np.testing.assert_array_equal(np.isnan(g) if np.issubdtype(g.dtype, np.floating) else nan, nan)
            assert np.where(nan, 0, e).tobytes() == np.where(nan, 0, g).tobytes()


# materialize_broadcasts ---------------------------------------------------------------


def test_materialize_broadcasts_makes_numpy_broadcasting_explicit() -> None:
    def body(b: Builder, x: Var, row: Var, col: Var, s: Var) -> list[Var]:
        return [b.emit(Add(), [col, row]), b.emit(Mul(), [x, s]), b.emit(Eq(), [row, x])]

    defn = build([f32[3, 4], f32[4], f32[3, 1], f32[()]], body)
    out = materialize_broadcasts(defn)
    assert stripped(str(out)) == stripped("""
def f(arg0 :: f32[3, 4],
      arg1 :: f32[4],
      arg2 :: f32[3, 1],
      arg3 :: f32[]) =
  let x0 :: f32[3, 4] = arg0
      x1 :: f32[4] = arg1
      x2 :: f32[3, 1] = arg2
      x3 :: f32[] = arg3
      x4 :: f32[3, 4] = broadcast [0,1] [3,4] x2
      x5 :: f32[3, 4] = broadcast [1] [3,4] x1
      x6 :: f32[3, 4] = add x4 x5
      x7 :: f32[3, 4] = broadcast [] [3,4] x3
      x8 :: f32[3, 4] = mul x0 x7
      x9 :: f32[3, 4] = broadcast [1] [3,4] x1
      x10 :: bool[3, 4] = eq x9 x0
  in [x6, x8, x10]""")
    assert_same_meaning(defn, out)
    for binding in out.bindings:
        if binding.prim.broadcasting:
            assert all(a.type.shape == binding.var.type.shape for a in binding.args)


# canonicalize_dot_general -------------------------------------------------------------

# (lhs shape, rhs shape, (lhs contracting, rhs contracting, lhs batch, rhs batch))
DOTS = {
    "matrix product": ((2, 3), (3, 4), ((1,), (0,), (), ())),
    "vector dot, rank-0 result": ((5,), (5,), ((0,), (0,), (), ())),
    "outer product, no contracting axes": ((2,), (3,), ((), (), (), ())),
    "contracting lhs axis 0": ((3, 2), (3, 4), ((0,), (0,), (), ())),
    "several contracting axes, out of order": ((2, 3, 4), (4, 5, 3), ((2, 1), (0, 2), (), ())),
    "batch axes not leading": ((3, 2, 4), (4, 5, 2), ((2,), (0,), (1,), (2,))),
    "several batch axes": ((2, 3, 4, 5), (3, 2, 5, 6), ((3,), (2,), (0, 1), (1, 0))),
    "batch only": ((2, 3), (2, 3), ((), (), (0, 1), (0, 1))),
    "already canonical": ((2, 3, 4), (2, 4, 5), ((2,), (1,), (0,), (0,))),
}


@pytest.mark.parametrize("label", DOTS)
def test_canonicalize_dot_general(label: str) -> None:
    lhs, rhs, dims = DOTS[label]
    defn = build([f64[lhs], f64[rhs]], lambda b, x, y: b.emit(DotGeneral(*dims), [x, y]))
    out = canonicalize_dot_general(defn)
    assert_same_meaning(defn, out)
    dots = [b for b in out.bindings if isinstance(b.prim, DotGeneral)]
    assert len(dots) == 1
    assert dots[0].prim.dims == ((2,), (1,), (0,), (0,))
    assert [a.type.rank for a in dots[0].args] == [3, 3]
    assert canonicalize_dot_general(out) == out


def test_canonicalize_dot_general_emits_only_needed_transposes() -> None:
    defn = build([f32[3, 2], f32[3, 4]], lambda b, x, y: b.emit(DotGeneral((0,), (0,), (), ()), [x, y]))
    assert prims(canonicalize_dot_general(defn)) == [Arg, Arg, Transpose, Reshape, Reshape, DotGeneral, Reshape]
    canonical = build([f32[2, 3, 4], f32[2, 4, 5]], lambda b, x, y: b.emit(DotGeneral((2,), (1,), (0,), (0,)), [x, y]))
    assert str(canonicalize_dot_general(canonical)) == str(canonical)


# lower_reductions_to_sums_of_slices ---------------------------------------------------

# (operand shape, reduced axes)
REDUCTIONS = {
    "rows": ((2, 2), (0,)),
    "columns": ((2, 3), (1,)),
    "several axes, listed out of order": ((3, 2, 4), (2, 0)),
    "all axes, rank-0 result": ((2, 3), (0, 1)),
    "vector": ((5,), (0,)),
    "axis of size 1": ((1, 3), (0,)),
    "axis of size 0": ((0, 3), (0,)),
    "no axes": ((2, 3), ()),
}


@pytest.mark.parametrize("label", REDUCTIONS)
def test_lower_reductions(label: str) -> None:
    shape, axes = REDUCTIONS[label]
    defn = build([f64[shape]], lambda b, x: b.emit(ReduceSum(axes), [x]))
    out = lower_reductions_to_sums_of_slices(defn)
    assert_same_meaning(defn, out)
    assert ReduceSum not in prims(out)
    assert prims(out).count(Add) == sum(halving_adds(n) for a, n in enumerate(shape) if a in axes)


def halving_adds(n: int) -> int:
    """The adds that sum n rows by halving: one per halving, one per odd row set aside."""
    return 0 if n <= 1 else 1 + n % 2 + halving_adds(n // 2)


def test_lower_reductions_adds_rows_left_to_right() -> None:
    defn = build([f32[3]], lambda b, x: b.emit(ReduceSum((0,)), [x]))
    assert stripped(str(lower_reductions_to_sums_of_slices(defn))) == stripped("""
def f(arg0 :: f32[3]) =
  let x0 :: f32[3] = arg0
      x1 :: f32[1] = slice [0] [1] x0
      x2 :: f32[1] = slice [1] [2] x0
      x3 :: f32[1] = add x1 x2
      x4 :: f32[1] = slice [2] [3] x0
      x5 :: f32[1] = add x3 x4
      x6 :: f32[] = reshape [] x5
  in [x6]""")


# bind_arguments ---------------------------------------------------------------------


@pytest.mark.parametrize("k", [0, 1, 2])
def test_bind_arguments_fixes_one_argument_and_keeps_the_others_in_order(k: int) -> None:
    def f(x: Any, y: Any, z: Any) -> Any:
        return x * broadcast(sin(y), dims=[1], shape=[2, 3]) - broadcast(z, dims=[0], shape=[2, 3])

    typed = infer_types(shax.trace(f, f32[2, 3], f32[3], f32[2]))
    rng = np.random.default_rng(k)
    args = [sample(t, rng) for t in typed.arg_types]
    bound = bind_arguments(typed, {k: args[k]})
    check_types(bound)
    others = [a for j, a in enumerate(args) if j != k]
    assert bound.arg_types == tuple(t for j, t in enumerate(typed.arg_types) if j != k)
    for got, expected in zip(shax.evaluate(bound, *others), shax.evaluate(typed, *args), strict=True):
        np.testing.assert_array_equal(got, expected)


# apply_passes, cleanup and errors -----------------------------------------------------


def test_cleanup_forwards_then_merges_then_drops() -> None:
    def body(b: Builder, x: Var) -> Var:
        same = b.emit(Reshape((3,)), [x])
        b.emit(Cos(), [x])
        return b.emit(Add(), [b.emit(Sin(), [x]), b.emit(Sin(), [same])])

    out = cleanup(build([f32[3]], body))
    assert prims(out) == [Arg, Sin, Add]


def test_apply_passes_rejects_unknown_names() -> None:
    with pytest.raises(shax.ShaxValueError, match="unknown pass.*dcee.*the passes are dce, cse"):
        apply_passes(typed_medium(), ["dce", "dcee"])


@pytest.mark.parametrize("name", PASSES)
def test_a_pass_rejects_an_untyped_definition(name: str) -> None:
    untyped = shax.trace(medium, f32[6], f32[2, 2])
    with pytest.raises(shax.ShaxError, match=rf"^{name}: in `x0 = arg0`: untyped"):
        PASSES[name](untyped)


@pytest.mark.parametrize("name", PASSES)
def test_a_pass_rejects_an_ill_formed_definition(name: str) -> None:
    typed = typed_medium()
    wrong = Var(2, f32[6, 2])  # sin x1 :: f32[2, 6], annotated with the wrong shape
    bindings = [b if b.var.id != 2 else shax.Binding(wrong, b.prim, b.args) for b in typed.bindings]
    with pytest.raises(shax.ShaxTypeError, match=rf"^{name}: .*`x2 :: f32\[6, 2\] = sin x1`"):
        PASSES[name](Definition(typed.name, typed.arg_types, tuple(bindings), typed.outputs))
    unbound = Definition(typed.name, typed.arg_types, typed.bindings[1:], typed.outputs)
    with pytest.raises(shax.ShaxError, match=rf"^{name}: .*`x1 :: f32\[2, 6\] = broadcast \[1\] \[2,6\] x0`"):
        PASSES[name](unbound)


# Every primitive, through every pass ----------------------------------------------------

SPEC_CASES = [
    pytest.param(spec, case, dtype, id=f"{spec.prim.__name__}-{case.label}-{dtype.name}")
    for spec in SPECS.values()
    for case in spec.cases
    for dtype in spec.dtypes
]


@pytest.mark.parametrize(("spec", "case", "dtype"), SPEC_CASES)
def test_every_primitive_through_every_pass(spec: Any, case: Any, dtype: Any) -> None:
    defn = infer_types(shax.trace(case.apply, *spec.arg_types(case, dtype)))
    args = spec.sample(case, dtype, np.random.default_rng(0))
    for p in PASSES.values():
        assert_same_meaning(defn, p(defn), args)


# The original's property -----------------------------------------------------------------


@given(program=programs(dtype=f64), names=st.lists(st.sampled_from(sorted(PASSES)), max_size=8))
def test_passes_preserve_meaning_and_types(program: Program, names: list[str]) -> None:
    defn = infer_types(shax.trace(program.fn, *program.arg_types))
    out = apply_passes(defn, names)
    assert is_numbered(out)
    assert_same_meaning(defn, out, program.args)


def assert_same_bindings(a: Definition, b: Definition) -> None:
    # Printed, with every definition they hold: passes reach into those, and two runs
    # make equal but distinct ones, which a binding compares by identity.
    assert len(a.bindings) == len(b.bindings) and str(a) == str(b)
    assert [x.source for x in a.bindings] == [x.source for x in b.bindings]
    assert [v.type for v in a.outputs] == [v.type for v in b.outputs]


@given(program=programs(dtype=f64))
def test_cleanup_is_forward_identities_then_cse_then_dce(program: Program) -> None:
    # Traced programs, and the linear programs of their VJPs (zero tangents, broadcasts,
    # products with one): cleanup's one walk builds what the three passes build.
    defn = infer_types(shax.trace(program.fn, *program.arg_types))
    lin = shax.stages.linearize(defn)
    for d in (defn, lin.primal, lin.linear, shax.stages.transpose(lin).linear):
        assert_same_bindings(cleanup(d), apply_passes(d, CLEANUP))


def test_cleanup_forwards_before_merging_as_the_passes_do() -> None:
    # `select p a b` with b repeating a: forward_identities runs before cse merges them,
    # so the select stays (and cleanup, one walk, keeps it too).
    def body(b: Builder, x: Var) -> Var:
        p = b.emit(Eq(), [x, x])
        return b.emit(Select(), [p, b.emit(Sin(), [x]), b.emit(Sin(), [x])])

    defn = build([f32[3]], body)
    assert_same_bindings(cleanup(defn), apply_passes(defn, CLEANUP))
    assert Select in prims(cleanup(defn))


@given(program=programs(dtype=f64))
def test_dce_and_cse_are_idempotent(program: Program) -> None:
    defn = infer_types(shax.trace(program.fn, *program.arg_types))
    for p in (dce, cse):
        once = p(defn)
        twice = p(once)
        assert twice == once and str(twice) == str(once)
