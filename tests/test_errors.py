"""Bad input raises a `shax.ShaxError` that is also a TypeError or ValueError, whose
message names the operation, the types involved and the file:line of the user's code
that wrote it. Hand-built bad definitions never surface as internal errors.

The user's line of each case is marked with a `# <name>` comment at its end.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import typeguard

import shax
from shax import f32, f64, i32
from shax import primitives as P
from shax.ir import Binding, Definition, Var
from shax.stages import check_types, infer_types
from typeclasses import (
    broadcast,
    dot_general,
    eq,
    max,
    pad,
    reduce_sum,
    reshape,
    select,
    sin,
    slice,
    transpose,
)

SOURCE = Path(__file__).read_text().splitlines()


def where(marker: str) -> str:
    """`test_errors.py:<line>` of the line ending in `# <marker>`."""
    lines = [k for k, line in enumerate(SOURCE, 1) if line.rstrip().endswith(f"# {marker}")]
    assert len(lines) == 1, f"marker {marker!r} must mark exactly one line"
    return f"{Path(__file__).name}:{lines[0]}"


def check(error: BaseException, kind: type | tuple[type, ...], fragments: tuple[str, ...], marker: str | None) -> None:
    assert isinstance(error, shax.ShaxError), f"{type(error).__name__}: {error}"
    assert isinstance(error, kind), f"expected a {kind.__name__}, got {type(error).__mro__}"
    message = str(error)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    if marker is not None:
        assert where(marker) in message, f"{where(marker)} not in {message!r}"


# Operations with bad operands or static parameters, each written on a marked line.


def bad_dot(x, y):
    return dot_general(x, y, ((1,), (0,), (), ()))  # bad-dot


def bad_matmul(x, y):
    return x @ y  # bad-matmul


def bad_dot_axes(x, y):
    return dot_general(x, y, ((2,), (0,), (), ()))  # bad-dot-axes


def bad_dot_batch(x, y):
    return dot_general(x, y, ((2,), (1,), (0,), (0,)))  # bad-dot-batch


def bad_broadcast(x):
    return broadcast(x, [0], [2, 4])  # bad-broadcast


def bad_broadcast_dims(x):
    return broadcast(x, [1, 0], [3, 2])  # bad-broadcast-dims


def bad_reshape(x):
    return reshape(x, [4, 2])  # bad-reshape


def bad_add(x, y):
    return x + y  # bad-add


def bad_mul(x, y):
    return sin(x) * y  # bad-mul


def bad_max(x, y):
    return max(x, y)  # bad-max


def bad_dtypes(x, y):
    return x - y  # bad-dtypes


def bad_weak_float(x):
    return x * 1.5  # bad-weak-float


def bad_select_shapes(p, a, b):
    return select(eq(p, p), a, b)  # bad-select-shapes


def bad_select_pred(p, a, b):
    return select(p, a, b)  # bad-select-pred


def bad_select_branches(p, a, b):
    return select(eq(p, p), a, b)  # bad-select-branches


def bad_perm(x):
    return transpose(x, [0, 0])  # bad-perm


def bad_perm_length(x):
    return transpose(x, [1, 0, 2])  # bad-perm-length


def bad_slice(x):
    return slice(x, [1], [5])  # bad-slice


def bad_slice_order(x):
    return slice(x, [2], [1])  # bad-slice-order


def bad_slice_rank(x):
    return slice(x, [0], [1])  # bad-slice-rank


def bad_pad(x):
    return pad(x, [(-1, 0)], 0.0)  # bad-pad


def bad_pad_rank(x):
    return pad(x, [(1, 0)], 0.0)  # bad-pad-rank


def bad_pad_pairs(x):
    return pad(x, [1, 2], 0.0)  # bad-pad-pairs


def bad_reduce_axes(x):
    return reduce_sum(x, [2])  # bad-reduce-axes


def bad_static_parameter(x):
    return reshape(x, ["a", 2])  # bad-static-parameter


T, V = TypeError, ValueError
OPERATIONS: list[tuple[Callable[..., Any], tuple[shax.TensorType, ...], type[Exception], tuple[str, ...]]] = [
    (bad_dot, (f32[2, 3], f32[4, 5]), T, ("dot_general", "f32[2, 3]", "f32[4, 5]")),
    (bad_matmul, (f32[2, 3], f32[2, 3]), T, ("dot_general", "f32[2, 3]")),
    (bad_dot_axes, (f32[2, 3], f32[3, 4]), V, ("dot_general", "f32[2, 3]", "f32[3, 4]")),
    (bad_dot_batch, (f32[2, 3, 4], f32[5, 4, 3]), T, ("dot_general", "f32[2, 3, 4]", "f32[5, 4, 3]")),
    (bad_broadcast, (f32[3],), T, ("broadcast", "f32[3]")),
    (bad_broadcast_dims, (f32[2, 3],), T, ("broadcast", "f32[2, 3]")),
    (bad_reshape, (f32[2, 3],), T, ("reshape", "f32[2, 3]", "[4, 2]")),
    (bad_add, (f32[2, 3], f32[4]), T, ("add", "f32[2, 3]", "f32[4]")),
    (bad_mul, (f32[2], f32[3]), T, ("mul", "f32[2]", "f32[3]")),
    (bad_max, (f32[2], f32[3]), T, ("max", "f32[2]", "f32[3]")),
    (bad_dtypes, (f32[2], f64[2]), T, ("sub", "f32[2]", "f64[2]")),
    (bad_weak_float, (i32[2],), T, ("mul", "1.5", "i32")),
    (bad_select_shapes, (f32[2], f32[3], f32[3]), T, ("select", "bool[2]", "f32[3]")),
    (bad_select_pred, (f32[2], f32[2], f32[2]), T, ("select", "f32[2]", "bool")),
    (bad_select_branches, (f32[2], f32[2], f64[2]), T, ("select", "f32[2]", "f64[2]")),
    (bad_perm, (f32[2, 3],), V, ("transpose", "f32[2, 3]", "[0, 0]")),
    (bad_perm_length, (f32[2, 3],), V, ("transpose", "f32[2, 3]")),
    (bad_slice, (f32[3],), V, ("slice", "f32[3]")),
    (bad_slice_order, (f32[3],), V, ("slice", "f32[3]")),
    (bad_slice_rank, (f32[3, 2],), T, ("slice", "f32[3, 2]")),
    (bad_pad, (f32[3],), V, ("pad", "f32[3]")),
    (bad_pad_rank, (f32[3, 2],), T, ("pad", "f32[3, 2]")),
    (bad_pad_pairs, (f32[2],), V, ("pad", "[1, 2]")),
    (bad_reduce_axes, (f32[2, 3],), V, ("reduce_sum", "f32[2, 3]")),
    (bad_static_parameter, (f32[2, 3],), V, ("reshape", "'a'")),
]
BREAK_ANNOTATIONS = {bad_pad_pairs, bad_static_parameter}


@pytest.mark.parametrize(
    ("function", "types", "kind", "fragments"), [pytest.param(*case, id=case[0].__name__) for case in OPERATIONS]
)
def test_bad_operation(
    function: Callable[..., Any], types: tuple[shax.TensorType, ...], kind: type[Exception], fragments: tuple[str, ...]
) -> None:
    # These break the typeclass functions' annotations, which typeguard (on in this test
    # suite only) would report before shax's own checks.
    unguarded = typeguard.suppress_type_checks() if function in BREAK_ANNOTATIONS else contextlib.nullcontext()
    with unguarded, pytest.raises(shax.ShaxError) as info:
        shax.trace(function, *types)
    check(info.value, kind, fragments, function.__name__.replace("_", "-"))


# Arguments.


def two_args(x, y):  # two-args
    return x + y


def test_trace_with_too_few_argument_types() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2])
    check(info.value, TypeError, ("two_args", "f32[2]", "1 argument"), "two-args")


def test_trace_with_too_many_argument_types() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2], f32[2], f32[2])
    check(info.value, TypeError, ("two_args", "f32[2]", "3 argument"), "two-args")


def test_trace_with_a_non_type() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2], 3)  # trace-non-type
    check(info.value, TypeError, ("trace", "two_args", "3"), "trace-non-type")


def test_trace_with_an_unreadable_type() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(two_args, f32[2], "f32[2, x]")  # trace-unreadable-type
    check(info.value, ValueError, ("trace", "two_args", "f32[2, x]"), "trace-unreadable-type")


@pytest.fixture
def add_defn() -> Definition:
    return infer_types(shax.trace(two_args, f32[2], f32[2]))


def test_evaluate_with_the_wrong_number_of_arguments(add_defn: Definition) -> None:
    x = np.zeros(2, np.float32)
    with pytest.raises(shax.ShaxError) as info:
        shax.evaluate(add_defn, x)  # evaluate-arity
    check(info.value, TypeError, ("evaluate", "two_args", "f32[2]", "got 1"), "evaluate-arity")


def test_evaluate_with_a_non_tensor(add_defn: Definition) -> None:
    x = np.zeros(2, np.float32)
    with pytest.raises(shax.ShaxError) as info:
        shax.evaluate(add_defn, x, "a")  # evaluate-non-tensor
    check(info.value, TypeError, ("evaluate", "two_args", "f32[2]", "str"), "evaluate-non-tensor")


def test_evaluate_with_the_wrong_type(add_defn: Definition) -> None:
    x = np.zeros(2, np.float32)
    with pytest.raises(shax.ShaxError) as info:
        shax.evaluate(add_defn, x, np.zeros(3, np.float64))  # evaluate-wrong-type
    check(info.value, TypeError, ("evaluate", "two_args", "f32[2]", "f64[3]"), "evaluate-wrong-type")


def returns_a_string(x):  # returns-a-string
    return "a"


def returns_none(x):  # returns-none
    sin(x)


def test_returning_a_non_tensor() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(returns_a_string, f32[2])
    check(info.value, TypeError, ("returns_a_string", "str"), "returns-a-string")


def test_returning_nothing() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(returns_none, f32[2])
    check(info.value, TypeError, ("returns_none", "NoneType"), "returns-none")


# Tracers used where they cannot be.


def branches(x):
    if x:  # python-if
        return x
    return -x


def test_python_if_on_a_tracer() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(branches, f32[2])
    check(info.value, TypeError, ("bool()", "f32[2]"), "python-if")


def test_float_of_a_tracer() -> None:
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(lambda x: float(x), f32[()])  # float-of-tracer
    check(info.value, TypeError, ("float()", "f32[]"), "float-of-tracer")


def leak(store: list[Any]) -> Any:
    def keep(x):
        store.append(sin(x))
        return x

    shax.trace(keep, f32[2])
    return store[0]


def test_escaped_tracer_used_in_another_trace() -> None:
    escaped = leak([])

    def use(y):
        return escaped + y  # escaped-in-trace

    with pytest.raises(shax.ShaxError) as info:
        shax.trace(use, f32[2])
    check(info.value, TypeError, ("escaped", "f32[2]"), "escaped-in-trace")


def test_escaped_tracer_used_outside_any_trace() -> None:
    escaped = leak([])
    with pytest.raises(shax.ShaxError) as info:
        escaped * 2.0  # escaped-outside
    check(info.value, TypeError, ("escaped", "f32[2]"), "escaped-outside")


def test_escaped_tracer_returned_from_another_trace() -> None:
    escaped = leak([])
    with pytest.raises(shax.ShaxError) as info:
        shax.trace(lambda y: escaped, f32[2])
    check(info.value, TypeError, ("escaped", "f32[2]"), None)


# Hand-built bad definitions: only ShaxErrors, never internal errors.

X = [Var(k) for k in range(4)]
ARG = Binding(X[0], P.Arg(0), ())
BAD_DEFINITIONS: dict[str, Definition] = {
    "unbound_var": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Sin(), (X[3],))), (X[1],)),
    "arg_out_of_range": Definition("f", (f32[2],), (Binding(X[0], P.Arg(3), ()),), (X[0],)),
    "negative_arg": Definition("f", (f32[2],), (Binding(X[0], P.Arg(-1), ()),), (X[0],)),
    "too_many_operands": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Sin(), (X[0], X[0]))), (X[1],)),
    "too_few_operands": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Add(), (X[0],))), (X[1],)),
    "unbound_output": Definition("f", (f32[2],), (ARG,), (X[2],)),
    "bound_twice": Definition("f", (f32[2],), (ARG, Binding(X[0], P.Sin(), (X[0],))), (X[0],)),
    "operand_bound_later": Definition(
        "f", (f32[2],), (ARG, Binding(X[1], P.Sin(), (X[2],)), Binding(X[2], P.Cos(), (X[0],))), (X[1],)
    ),
    "ill_typed": Definition("f", (f32[2],), (ARG, Binding(X[1], P.Reshape((3,)), (X[0],))), (X[1],)),
}


def annotated(defn: Definition) -> Definition:
    """The definition with every var annotated f32[2] (for check_types)."""
    bindings = tuple(
        Binding(Var(b.var.id, f32[2]), b.prim, tuple(Var(a.id, f32[2]) for a in b.args), b.source)
        for b in defn.bindings
    )
    return Definition(defn.name, defn.arg_types, bindings, defn.outputs)


STAGES: dict[str, Callable[[Definition], Any]] = {
    "infer_types": infer_types,
    "check_types": lambda defn: check_types(annotated(defn)),
    "evaluate": lambda defn: shax.evaluate(defn, np.zeros(2, np.float32)),
}


@pytest.mark.parametrize("stage", sorted(STAGES))
@pytest.mark.parametrize("bad", sorted(BAD_DEFINITIONS))
def test_bad_definition(stage: str, bad: str) -> None:
    with pytest.raises(shax.ShaxError) as info:
        STAGES[stage](BAD_DEFINITIONS[bad])
    check(info.value, (TypeError, ValueError), (stage,), None)


def test_check_types_rejects_a_wrong_annotation() -> None:
    typed = infer_types(shax.trace(lambda x: reduce_sum(x, [0]), f32[2, 3]))
    *rest, last = typed.bindings
    wrong = Definition(
        typed.name, typed.arg_types, (*rest, Binding(Var(last.var.id, f32[2]), last.prim, last.args)), typed.outputs
    )
    with pytest.raises(shax.ShaxError) as info:
        check_types(wrong)
    check(info.value, TypeError, ("check_types", "reduce_sum", "f32[2]", "f32[3]"), None)


def test_check_types_rejects_an_untyped_definition() -> None:
    with pytest.raises(shax.ShaxError) as info:
        check_types(shax.trace(sin, f32[2]))
    check(info.value, TypeError, ("check_types", "f32[2]"), None)


# ------------------------------------------------------------------------------------------
# Entry points handed what they do not take (branch errors-api): stages, passes, evaluate
# and codegen given no Definition or the other kind, transforms given no function, vjp_fn
# and f_jvp called wrongly, bad wrt / in_axes / out_axes, optimizers and explain with bad
# settings, the command with bad arguments. Each case is a call on its own marked line.


def loss(x):
    return reduce_sum(sin(x) * x, [0])


def pair(x, y):
    return sin(x) * y


X3 = np.array([0.5, 1.0, 2.0], np.float32)
TYPED = infer_types(shax.trace(loss, f32[3]))
LIN = shax.stages.linearize(TYPED)
VJP_FN = shax.vjp(pair, X3, X3)[1]
F_JVP = shax.linearize(pair, X3, X3)[1]


def with_a_count(x):
    return sin(x), np.int32(3)


def optimizer(name: str) -> Callable[..., Any]:
    """An optimizer, for the case to call on its own line."""
    from shax import optimizers

    return getattr(optimizers, name)


A_FUNCTION = "shax.trace(f, *arg_types) makes a Definition"
NOT_A_DEFINITION = "shax.stages.linearize makes a LinearizedDefinition"
HALVES = "its halves are .primal and .linear"

ENTRY_POINTS: list[tuple[str, type[Exception], tuple[str, ...], Callable[[], Any]]] = [
    ("linearize-lin", T, ("linearize", "LinearizedDefinition", HALVES),
     lambda: shax.stages.linearize(LIN)),  # linearize-lin
    ("transpose-defn", T, ("transpose", "'loss'", NOT_A_DEFINITION),
     lambda: shax.stages.transpose(TYPED)),  # transpose-defn
    ("zip-none", T, ("zip_definitions", "NoneType"),
     lambda: shax.stages.zip_definitions(None)),  # zip-none
    ("infer-types-str", T, ("infer_types", "str", "'loss'"),
     lambda: shax.stages.infer_types("loss")),  # infer-types-str
    ("check-types-fn", T, ("check_types", A_FUNCTION),
     lambda: shax.stages.check_types(loss)),  # check-types-fn
    ("batch-lin", T, ("batch", "LinearizedDefinition"),
     lambda: shax.stages.batch(LIN, 0, 2)),  # batch-lin
    ("dce-none", T, ("dce", "NoneType"),
     lambda: shax.passes.dce(None)),  # dce-none
    ("cleanup-lin", T, ("cleanup", "LinearizedDefinition"),
     lambda: shax.passes.cleanup(LIN)),  # cleanup-lin
    ("evaluate-lin", T, ("evaluate", "LinearizedDefinition", HALVES),
     lambda: shax.evaluate(LIN, X3)),  # evaluate-lin
    ("compile-list", T, ("compile_definition", "list"),
     lambda: shax.codegen.compile_definition([TYPED])),  # compile-list
    ("eval-lin-defn", T, ("evaluate_linearized", "'loss'"),
     lambda: shax.stages.evaluate_linearized(TYPED, [X3], [X3])),  # eval-lin-defn
    ("eval-lin-array", T, ("primals", "f32[3]", "ndarray"),
     lambda: shax.stages.evaluate_linearized(LIN, X3, [X3])),  # eval-lin-array
    ("eval-lin-count", T, ("linear_args", "1 value(s) (f32[3])"),
     lambda: shax.stages.evaluate_linearized(LIN, [X3], [])),  # eval-lin-count
    ("wrt-str", T, ("linearize", "wrt", "'0'"),
     lambda: shax.stages.linearize(TYPED, wrt="0")),  # wrt-str
    ("wrt-float", V, ("linearize", "no argument 0.0", "f32[3]"),
     lambda: shax.stages.linearize(TYPED, wrt=[0.0])),  # wrt-float
    ("apply-none", T, ("apply_passes", "NoneType"),
     lambda: shax.passes.apply_passes(None, [])),  # apply-none
    ("apply-str", T, ("apply_passes", "list of pass names", "'dce'"),
     lambda: shax.passes.apply_passes(TYPED, "dce")),  # apply-str
    ("apply-int", V, ("apply_passes", "unknown pass(es) 3"),
     lambda: shax.passes.apply_passes(TYPED, [3])),  # apply-int
    ("bind-list", T, ("bind_arguments", "dict", "list"),
     lambda: shax.passes.bind_arguments(TYPED, [X3])),  # bind-list
    ("bind-index", V, ("bind_arguments", "no argument 1"),
     lambda: shax.passes.bind_arguments(TYPED, {1: X3})),  # bind-index
    ("bind-type", T, ("argument 0 of loss", "f64[3]", "f32[3]"),
     lambda: shax.passes.bind_arguments(TYPED, {0: np.ones(3)})),  # bind-type
    ("trace-none", T, ("trace", "expected a function", "NoneType"),
     lambda: shax.trace(None, f32[3])),  # trace-none
    ("trace-name", V, ("trace", "name", "3"),
     lambda: shax.trace(loss, f32[3], name=3)),  # trace-name
    ("vjp-str", T, ("vjp", "expected a function", "str"),
     lambda: shax.vjp("loss", X3)),  # vjp-str
    ("jvp-int", T, ("jvp", "expected a function", "int"),
     lambda: shax.jvp(3, (X3,), (X3,))),  # jvp-int
    ("linearize-list", T, ("linearize", "expected a function", "list"),
     lambda: shax.linearize([loss], X3)),  # linearize-list
    ("xpr-none", T, ("xpr", "expected a function", "NoneType"),
     lambda: shax.xpr(None, X3)),  # xpr-none
    ("explain-defn", T, ("explain", "expected a function", "Definition"),
     lambda: shax.explain(TYPED, f32[3])),  # explain-defn
    ("grad-none", T, ("grad", "expected a function", "NoneType"),
     lambda: shax.grad(None)),  # grad-none
    ("vmap-str", T, ("vmap", "expected a function", "str"),
     lambda: shax.vmap("loss")),  # vmap-str
    ("jit-array", T, ("jit", "expected a function", "ndarray"),
     lambda: shax.jit(X3)),  # jit-array
    ("vjp-fn-none", T, ("vjp_fn", "one cotangent", "pair", "f32[3]", "0 arguments"),
     lambda: VJP_FN()),  # vjp-fn-none
    ("vjp-fn-two", T, ("vjp_fn", "one cotangent", "2 arguments"),
     lambda: VJP_FN(X3, X3)),  # vjp-fn-two
    ("vjp-fn-dtype", T, ("vjp_fn", "cotangent", "f64[3]", "f32[3]"),
     lambda: VJP_FN(X3.astype(np.float64))),  # vjp-fn-dtype
    ("vjp-fn-shape", T, ("vjp_fn", "cotangent", "f32[4]", "f32[3]"),
     lambda: VJP_FN(np.ones(4, np.float32))),  # vjp-fn-shape
    ("vjp-fn-tree", V, ("vjp_fn", "structure", "pair"),
     lambda: VJP_FN((X3,))),  # vjp-fn-tree
    ("f-jvp-none", V, ("f_jvp", "structure", "pair", "(*, *)"),
     lambda: F_JVP()),  # f-jvp-none
    ("f-jvp-dtype", T, ("f_jvp", "tangent leaf 1", "i32[3]", "f32[3]"),
     lambda: F_JVP(X3, X3.astype(np.int32))),  # f-jvp-dtype
    ("jvp-shape", T, ("jvp", "tangent leaf 1", "f32[2]", "f32[3]"),
     lambda: shax.jvp(pair, (X3, X3), (X3, X3[:2]))),  # jvp-shape
    ("wrt-array", T, ("grad", "wrt", "array([0])"),
     lambda: shax.grad(loss, wrt=np.array([0]))),  # wrt-array
    ("wrt-nested", T, ("value_and_grad", "wrt", "[0, [1]]"),
     lambda: shax.value_and_grad(pair, wrt=[0, [1]])),  # wrt-nested
    ("wrt-bool", T, ("grad", "wrt", "True"),
     lambda: shax.grad(loss, wrt=True)),  # wrt-bool
    ("in-axes-str", V, ("vmap", "in_axes", "'0'"),
     lambda: shax.vmap(loss, in_axes="0")),  # in-axes-str
    ("in-axes-range", V, ("vmap", "in_axes", "axis 2", "f32[1, 3]"),
     lambda: shax.vmap(loss, in_axes=2)(X3[None])),  # in-axes-range
    ("in-axes-tree", V, ("vmap", "in_axes=(0,)", "2 argument"),
     lambda: shax.vmap(pair, in_axes=(0,))(X3, X3)),  # in-axes-tree
    ("out-axes-range", V, ("batch", "out_axes", "3", "f32[3]"),
     lambda: shax.vmap(sin, out_axes=3)(X3[None])),  # out-axes-range
    ("out-axes-float", V, ("vmap", "out_axes", "0.5"),
     lambda: shax.vmap(sin, out_axes=0.5)),  # out-axes-float
    ("source-bytes", T, ("jit.source", "bytes"),
     lambda: shax.jit(loss).source(b"f32[3]")),  # source-bytes
    ("source-text", V, ("jit.source", "'f32[3'"),
     lambda: shax.jit(loss).source("f32[3")),  # source-text
    ("gd-iters", V, ("gradient_descent", "iters", "-1"),
     lambda: optimizer("gradient_descent")(loss, [X3], 0.1, -1, log=None)),  # gd-iters
    ("gd-iters-float", T, ("gradient_descent", "iters", "float"),
     lambda: optimizer("gradient_descent")(loss, [X3], 0.1, 2.0)),  # gd-iters-float
    ("gd-lr", T, ("gradient_descent", "lr", "str", "'0.1'"),
     lambda: optimizer("gradient_descent")(loss, [X3], "0.1", 2)),  # gd-lr
    ("gd-lr-nan", V, ("gradient_descent", "lr", "nan"),
     lambda: optimizer("gradient_descent")(loss, [X3], float("nan"), 2)),  # gd-lr-nan
    ("gd-log", T, ("log", "'stdout'"),
     lambda: optimizer("gradient_descent")(loss, [X3], 0.1, 2, log="stdout")),  # gd-log
    ("momentum-beta", T, ("momentum", "beta", "None"),
     lambda: optimizer("momentum")(loss, [X3], 0.1, 2, beta=None)),  # momentum-beta
    ("adam-eps", V, ("adam", "eps", "inf"),
     lambda: optimizer("adam")(loss, [X3], 0.1, 2, eps=float("inf"))),  # adam-eps
    ("adam-iters", T, ("adam", "b1", "list"),
     lambda: optimizer("adam")(loss, [X3], 0.1, 10**30, b1=[0.9])),  # adam-iters
    ("seed-negative", V, ("explain", "seed", "-1"),
     lambda: shax.explain(loss, f32[3], seed=-1)),  # seed-negative
    ("seed-str", V, ("explain", "seed", "'0'"),
     lambda: shax.explain(loss, f32[3], seed="0")),  # seed-str
    ("inputs-array", T, ("explain", "inputs", "list of 1", "ndarray"),
     lambda: shax.explain(loss, f32[3], inputs=X3)),  # inputs-array
    ("inputs-strings", T, ("inputs[0]", "<U1", "f32[3]"),
     lambda: shax.explain(loss, f32[3], inputs=[["1", "2", "3"]])),  # inputs-strings
    ("tangents-complex", T, ("tangents[0]", "complex64", "f32[3]"),
     lambda: shax.explain(loss, f32[3], tangents=[X3 * 1j])),  # tangents-complex
    ("inputs-ragged", T, ("inputs[0]", "not an array"),
     lambda: shax.explain(loss, f32[3], inputs=[[1, [2, 3]]])),  # inputs-ragged
    ("cotangents-float", T, ("cotangents", "f32[]", "float"),
     lambda: shax.explain(loss, f32[3], cotangents=2.0)),  # cotangents-float
    ("cotangents-int", V, ("cotangents[1]", "i32[]"),
     lambda: shax.explain(with_a_count, f32[2], cotangents=[X3[:2], 2**40])),  # cotangents-int
    ("show-str", T, ("explain", "show", "'vjp'"),
     lambda: shax.explain(loss, f32[3]).show("vjp")),  # show-str
]  # fmt: skip


@pytest.mark.parametrize(
    ("marker", "kind", "fragments", "call"), [pytest.param(*case, id=case[0]) for case in ENTRY_POINTS]
)
def test_an_entry_point_refuses_what_it_does_not_take(
    marker: str, kind: type[Exception], fragments: tuple[str, ...], call: Callable[[], Any]
) -> None:
    # Bad input breaks the entry points' annotations, which typeguard (on in this test
    # suite only) would report before shax's own checks.
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxError) as info:
        call()
    check(info.value, kind, fragments, marker)


MEDIUM = f"{Path(__file__).resolve().parents[1] / 'examples' / 'medium.py'}:medium"
X = "[1, 2, 3, 4, 5, 6]"


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["explain", MEDIUM, "f32[6]", "f32[2,2]", "--seed", "-1"], ("explain", "seed", "-1")),
        (
            ["explain", MEDIUM, "f32[6]", "f32[2,2]", "--inputs", f'[{X}, [["a", "b"], [1, 2]]]'],
            ("inputs[1]", "f32[2, 2]"),
        ),
        (
            ["explain", MEDIUM, "f32[6]", "f32[2,2]", "--tangents", f"[{X}, [[1, 2], [3]]]"],
            ("tangents[1]", "not an array"),
        ),
        (["explain", MEDIUM, "f32[6]", "f32[2,2]", "--cotangents", "[[1, 2, 3]]"], ("cotangents[0]", "[3]", "f32[2]")),
        (["trace", f"{MEDIUM.rpartition(':')[0]}:A", "f32[6]"], ("medium.py", "no function 'A'")),
    ],
    ids=["seed", "strings", "ragged", "cotangent-shape", "not-a-function"],
)
def test_the_command_reports_bad_arguments_in_one_line(
    argv: list[str], fragments: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    from shax.cli import main

    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and err.startswith("shax: "), err
    for fragment in fragments:
        assert fragment in err, err


def test_a_dtype_is_no_list() -> None:
    # `f32[k]` is a tensor type for every k: iterating f32 by indexing would never end.
    with typeguard.suppress_type_checks(), pytest.raises(shax.ShaxError) as info:
        shax.trace(lambda x: reduce_sum(x, f32), f32[3])  # dtype-axes
    check(info.value, ValueError, ("reduce_sum", "f32"), "dtype-axes")
